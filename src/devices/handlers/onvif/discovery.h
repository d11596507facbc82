#ifndef REGATTA_SRC_DEVICES_HANDLERS_ONVIF_DISCOVERY_H_
#define REGATTA_SRC_DEVICES_HANDLERS_ONVIF_DISCOVERY_H_

// One ONVIF discovery pass, as Akri's handler does it: probe, drop cameras by scope, keep the
// device service URLs that answer GetSystemDateAndTime, drop by uuid, ask each for its IP and
// MAC (GetNetworkInterfaces, with the camera's credentials) and drop by IP and MAC.
//
// Each device is one device service URL of a camera:
//   id          <service URL>-<uuid>
//   properties  ONVIF_DEVICE_SERVICE_URL, ONVIF_DEVICE_UUID, and ONVIF_DEVICE_IP_ADDRESS and
//               ONVIF_DEVICE_MAC_ADDRESS when GetNetworkInterfaces answered

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "akri/discovery/v0/discovery.pb.h"
#include "src/common/clock.h"
#include "src/devices/handlers/onvif/credentials.h"
#include "src/devices/handlers/onvif/details.h"
#include "src/devices/handlers/onvif/soap.h"
#include "src/devices/handlers/onvif/ws_discovery.h"

namespace regatta::devices::onvif {

inline constexpr absl::string_view kServiceUrlProperty = "ONVIF_DEVICE_SERVICE_URL";
inline constexpr absl::string_view kUuidProperty = "ONVIF_DEVICE_UUID";
inline constexpr absl::string_view kIpAddressProperty = "ONVIF_DEVICE_IP_ADDRESS";
inline constexpr absl::string_view kMacAddressProperty = "ONVIF_DEVICE_MAC_ADDRESS";

// What a pass needs from the network; the real one below, fakes in tests.
class OnvifNetwork {
 public:
  virtual ~OnvifNetwork() = default;
  virtual absl::StatusOr<std::vector<ProbeMatch>> Probe(absl::Duration timeout) = 0;
  // GetSystemDateAndTime (unauthenticated): OK when the device service answers.
  virtual absl::Status CheckResponding(const std::string& service_url) = 0;
  virtual absl::StatusOr<IpAndMac> GetIpAndMac(const std::string& service_url,
                                               const std::optional<Credential>& credential) = 0;
};

struct NetworkOptions {
  ProbeOptions probe;
  // Each SOAP call to a camera (Akri: 1 s).
  absl::Duration http_timeout = absl::Seconds(1);
};

// WS-Discovery over UDP and SOAP over HTTP; `clock` dates the UsernameTokens.
class UdpHttpNetwork final : public OnvifNetwork {
 public:
  UdpHttpNetwork(NetworkOptions options, const Clock* clock)
      : options_(std::move(options)), clock_(clock) {}
  absl::StatusOr<std::vector<ProbeMatch>> Probe(absl::Duration timeout) override;
  absl::Status CheckResponding(const std::string& service_url) override;
  absl::StatusOr<IpAndMac> GetIpAndMac(const std::string& service_url,
                                       const std::optional<Credential>& credential) override;

 private:
  const NetworkOptions options_;
  const Clock* const clock_;
};

// One pass; the devices sorted by id. An error only when the probe itself fails; a camera that
// does not answer is left out.
absl::StatusOr<std::vector<v0::Device>> DiscoverCameras(const OnvifDiscoveryDetails& details,
                                                        const CredentialStore& credentials,
                                                        OnvifNetwork& network);

}  // namespace regatta::devices::onvif

#endif  // REGATTA_SRC_DEVICES_HANDLERS_ONVIF_DISCOVERY_H_
