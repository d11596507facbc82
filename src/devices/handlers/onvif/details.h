#ifndef REGATTA_SRC_DEVICES_HANDLERS_ONVIF_DETAILS_H_
#define REGATTA_SRC_DEVICES_HANDLERS_ONVIF_DETAILS_H_

// The ONVIF handler's discovery details, as Akri's ONVIF handler reads them:
//
//   ipAddresses: {action: Include, items: [10.0.0.1]}    # from GetNetworkInterfaces
//   macAddresses: {action: Exclude, items: ["00:11:22:33:44:55"]}
//   scopes: {items: [onvif://www.onvif.org/name/GateCam]} # from the ProbeMatch
//   uuids: {items: [3fa1fe68-b915-4053-a3e1-a8294833fe3c]} # EndpointReference, no urn:uuid:
//   discoveryTimeoutSeconds: 1                           # how long to collect ProbeMatches

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace regatta::devices::onvif {

enum class FilterAction { kInclude, kExclude };

// Akri's FilterList: `action` defaults to Include; `items` is required.
struct FilterList {
  FilterAction action = FilterAction::kInclude;
  std::vector<std::string> items;
};

struct OnvifDiscoveryDetails {
  std::optional<FilterList> ip_addresses;
  std::optional<FilterList> mac_addresses;
  std::optional<FilterList> scopes;
  std::optional<FilterList> uuids;
  int discovery_timeout_seconds = 1;
};

inline constexpr int kMaxDiscoveryTimeoutSeconds = 300;

// INVALID_ARGUMENT naming the field (e.g. `discoveryDetails.scopes.action: ...`) for an unknown
// key or a bad value. Empty details mean every default (no filters, 1 s).
absl::StatusOr<OnvifDiscoveryDetails> ParseOnvifDiscoveryDetails(absl::string_view yaml);

// Whether a filter drops a camera, with Akri's semantics: no filter keeps it; an Exclude filter
// without items keeps it; otherwise a camera whose value is unknown (`values` nullopt, e.g.
// GetNetworkInterfaces failed) is dropped; Include keeps it only when an item matches one of
// `values`, Exclude drops it when one does.
bool FilteredOut(const std::optional<FilterList>& filter,
                 const std::optional<std::vector<std::string>>& values,
                 const std::function<bool(absl::string_view value, absl::string_view item)>& match);

// The matchers Akri uses: addresses and uuids compare case-insensitively; a scope matches exactly.
bool EqualsIgnoringCase(absl::string_view value, absl::string_view item);
bool EqualsExactly(absl::string_view value, absl::string_view item);

}  // namespace regatta::devices::onvif

#endif  // REGATTA_SRC_DEVICES_HANDLERS_ONVIF_DETAILS_H_
