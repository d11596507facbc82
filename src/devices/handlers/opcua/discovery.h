#ifndef REGATTA_SRC_DEVICES_HANDLERS_OPCUA_DISCOVERY_H_
#define REGATTA_SRC_DEVICES_HANDLERS_OPCUA_DISCOVERY_H_

// OPC UA discovery as Akri's opcua handler does it: the discovery details name discovery URLs
// (servers or Local Discovery Servers); FindServers on each lists the servers it knows; every
// application of type Server whose name passes the applicationNames filter becomes a device
// whose id is its discovery URL.
//
//   discoveryDetails: |
//     opcuaDiscoveryMethod:
//       standard:
//         discoveryUrls: [opc.tcp://10.0.0.5:4840/]   # default [opc.tcp://localhost:4840/]
//     applicationNames:          # optional
//       action: Include          # or Exclude; default Include
//       items: [Boiler 1]

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "akri/discovery/v0/discovery.pb.h"
#include "src/devices/handlers/opcua/client.h"

namespace regatta::devices::opcua {

inline constexpr char kHandlerName[] = "opcua";
// The broker's environment variable with the server's discovery URL (Akri's name).
inline constexpr char kDiscoveryUrlProperty[] = "OPCUA_DISCOVERY_URL";
// An OPC UA server on the network can be reached from several nodes.
inline constexpr bool kSharedDevices = true;
// The Local Discovery Server of the node, when no discovery URL is given.
inline constexpr char kDefaultDiscoveryUrl[] = "opc.tcp://localhost:4840/";

// Akri's FilterList.
struct FilterList {
  enum class Action { kInclude, kExclude };
  Action action = Action::kInclude;
  std::vector<std::string> items;
};
// No filter includes everything; Include keeps only the items, Exclude all but them.
bool ShouldInclude(const std::optional<FilterList>& filter, absl::string_view item);

struct OpcuaDiscoveryDetails {
  std::vector<std::string> discovery_urls;
  std::optional<FilterList> application_names;
};
// INVALID_ARGUMENT naming the field (discoveryDetails.opcuaDiscoveryMethod.standard.
// discoveryUrls[1]: ...) on bad details; unknown fields are errors too.
absl::StatusOr<OpcuaDiscoveryDetails> ParseOpcuaDiscoveryDetails(absl::string_view details);

struct DiscoveryResult {
  // Discovery URLs of the servers found, in the order found, without duplicates.
  std::vector<std::string> server_urls;
  // Why a discovery URL or a server was left out (unreachable, not parseable), for the log.
  std::vector<std::string> problems;
};
// FindServers on every discovery URL (one that fails is skipped, as in Akri). For each
// application of type Server that passes the name filter: its first opc.tcp discovery URL (else
// its first), with the host replaced by the queried URL's when it does not resolve (as Akri);
// a server announced at another address than the one asked must accept a TCP connection.
DiscoveryResult DiscoverServers(const OpcuaDiscoveryDetails& details, DiscoveryClient& client);

// One device per URL: id = the URL, property OPCUA_DISCOVERY_URL = the URL.
std::vector<v0::Device> ServerDevices(const std::vector<std::string>& server_urls);

}  // namespace regatta::devices::opcua

#endif  // REGATTA_SRC_DEVICES_HANDLERS_OPCUA_DISCOVERY_H_
