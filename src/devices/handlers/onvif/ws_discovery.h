#ifndef REGATTA_SRC_DEVICES_HANDLERS_ONVIF_WS_DISCOVERY_H_
#define REGATTA_SRC_DEVICES_HANDLERS_ONVIF_WS_DISCOVERY_H_

// WS-Discovery over UDP: one Probe for NetworkVideoTransmitters to the multicast group, then
// every ProbeMatch that arrives (unicast, to the probing socket) until the timeout.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/devices/handlers/onvif/soap.h"

namespace regatta::devices::onvif {

inline constexpr absl::string_view kWsDiscoveryGroup = "239.255.255.250";
inline constexpr int kWsDiscoveryPort = 3702;

struct ProbeOptions {
  // Where the Probe goes: the WS-Discovery group (a unicast address works too).
  std::string address = std::string(kWsDiscoveryGroup);
  int port = kWsDiscoveryPort;
  // The IPv4 address of the interface multicast leaves by (IP_MULTICAST_IF); empty: the
  // kernel's choice (the default route's). Tests use 127.0.0.1.
  std::string interface;
};

// "239.255.255.250:3702" → address and port; INVALID_ARGUMENT naming `flag` otherwise.
absl::Status ParseProbeAddress(absl::string_view flag, absl::string_view text,
                               ProbeOptions& options);

// Sends one Probe and collects ProbeMatches for `timeout`. Replies that are not ProbeMatches,
// answer another Probe or cannot be read are skipped (and logged). UNAVAILABLE when the socket
// cannot be set up or the Probe cannot be sent.
absl::StatusOr<std::vector<ProbeMatch>> ProbeCameras(const ProbeOptions& options,
                                                     absl::Duration timeout);

// A fresh "urn:uuid:..." (random, version 4) for a message.
std::string NewMessageId();

}  // namespace regatta::devices::onvif

#endif  // REGATTA_SRC_DEVICES_HANDLERS_ONVIF_WS_DISCOVERY_H_
