#ifndef REGATTA_SRC_DEVICES_HANDLERS_ONVIF_SOAP_H_
#define REGATTA_SRC_DEVICES_HANDLERS_ONVIF_SOAP_H_

// The SOAP messages the ONVIF handler sends and reads: the WS-Discovery Probe for
// NetworkVideoTransmitters and its ProbeMatches, the device service's GetSystemDateAndTime
// (liveness, unauthenticated) and GetNetworkInterfaces (IP and MAC; WS-UsernameToken when the
// discovery properties hold credentials for the camera).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace regatta::devices::onvif {

inline constexpr absl::string_view kSoapEnvelopeNs = "http://www.w3.org/2003/05/soap-envelope";
inline constexpr absl::string_view kAddressingNs =
    "http://schemas.xmlsoap.org/ws/2004/08/addressing";
inline constexpr absl::string_view kDiscoveryNs = "http://schemas.xmlsoap.org/ws/2005/04/discovery";
inline constexpr absl::string_view kNetworkWsdlNs = "http://www.onvif.org/ver10/network/wsdl";
inline constexpr absl::string_view kDeviceWsdlNs = "http://www.onvif.org/ver10/device/wsdl";
inline constexpr absl::string_view kSchemaNs = "http://www.onvif.org/ver10/schema";
inline constexpr absl::string_view kProbeAction =
    "http://schemas.xmlsoap.org/ws/2005/04/discovery/Probe";
inline constexpr absl::string_view kProbeMatchesAction =
    "http://schemas.xmlsoap.org/ws/2005/04/discovery/ProbeMatches";
inline constexpr absl::string_view kNetworkVideoTransmitter = "NetworkVideoTransmitter";

// ---- WS-Discovery

// A Probe for dn:NetworkVideoTransmitter with this MessageID ("urn:uuid:...").
std::string ProbeMessage(absl::string_view message_id);

struct Probe {
  std::string message_id;
  std::vector<std::string> types;  // local names, e.g. NetworkVideoTransmitter
};
// Reads a Probe (the simulated camera's side); INVALID_ARGUMENT if it is not one.
absl::StatusOr<Probe> ParseProbe(absl::string_view xml);

struct ProbeMatch {
  std::string endpoint_address;     // as sent, e.g. urn:uuid:3fa1fe68-...
  std::string uuid;                 // without urn:/uuid:, lower case (Akri's device uuid)
  std::vector<std::string> xaddrs;  // device service URLs
  std::vector<std::string> scopes;
  std::vector<std::string> types;  // local names
};
struct ProbeMatches {
  std::string relates_to;  // the Probe's MessageID
  std::vector<ProbeMatch> matches;
};
absl::StatusOr<ProbeMatches> ParseProbeMatches(absl::string_view xml);

// The ProbeMatches reply to `probe_message_id` (the simulated camera's side).
std::string ProbeMatchesMessage(absl::string_view message_id, absl::string_view probe_message_id,
                                const ProbeMatch& match);

// "urn:uuid:ABC" → "abc", as Akri names a camera's uuid.
std::string NormalizeUuid(absl::string_view endpoint_address);

// ---- WS-UsernameToken (PasswordDigest profile)

struct UsernameToken {
  std::string username;
  std::string password_digest;  // base64(SHA-1(nonce + created + password))
  std::string nonce;            // base64
  std::string created;          // e.g. 2026-11-30T02:00:00Z
};
// base64(SHA-1(nonce + created + password)) with the raw nonce bytes.
std::string PasswordDigest(absl::string_view nonce, absl::string_view created,
                           absl::string_view password);
// A token with a fresh 16-byte nonce, created `now`.
UsernameToken MakeUsernameToken(absl::string_view username, absl::string_view password,
                                absl::Time now);
std::string FormatCreated(absl::Time time);

// ---- Device service

inline constexpr absl::string_view kGetSystemDateAndTime = "GetSystemDateAndTime";
inline constexpr absl::string_view kGetNetworkInterfaces = "GetNetworkInterfaces";

// A SOAP 1.2 request for device service operation `operation` (a body without parameters),
// with a Security header when `token` is set.
std::string DeviceRequest(absl::string_view operation,
                          const std::optional<UsernameToken>& token = std::nullopt);
// The SOAP action of a device service operation, for the Content-Type header.
std::string DeviceAction(absl::string_view operation);

struct IpAndMac {
  std::string ip;
  std::string mac;
};
// The first interface's IPv4 address (manual, DHCP or link-local) and hardware address from a
// GetNetworkInterfacesResponse; an error names what is missing or the fault's reason.
absl::StatusOr<IpAndMac> ParseNetworkInterfaces(absl::string_view xml);

// An error carrying the reason of a SOAP Fault in `xml`, OK when `xml` is not a fault.
absl::Status CheckSoapFault(absl::string_view xml);

}  // namespace regatta::devices::onvif

#endif  // REGATTA_SRC_DEVICES_HANDLERS_ONVIF_SOAP_H_
