#ifndef REGATTA_SRC_DEVICES_HANDLERS_OPCUA_CLIENT_H_
#define REGATTA_SRC_DEVICES_HANDLERS_OPCUA_CLIENT_H_

// The network side of OPC UA discovery: opc.tcp URLs, a TCP reachability test, and FindServers
// over a SecurityPolicy None secure channel (HEL/ACK, OPN, MSG, CLO) with bounded waits.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/devices/handlers/opcua/codec.h"

namespace regatta::devices::opcua {

struct OpcTcpUrl {
  std::string host;  // without the brackets of an IPv6 literal
  uint16_t port = 0;
  std::string path;  // "" or starting with '/'
};
// `opc.tcp://host:port[/path]` (an IPv6 host in brackets); the port is required, as in Akri.
absl::StatusOr<OpcTcpUrl> ParseOpcTcpUrl(absl::string_view url);

// What discovery needs from the network; a fake in tests.
class DiscoveryClient {
 public:
  virtual ~DiscoveryClient() = default;
  // The applications the server (or discovery server) at `discovery_url` knows, itself included.
  virtual absl::StatusOr<std::vector<ApplicationDescription>> FindServers(
      absl::string_view discovery_url) = 0;
  // Whether a TCP connection to the URL's host and port opens within the connect timeout.
  virtual bool Reachable(absl::string_view discovery_url) = 0;
  // Whether `host` resolves to an address.
  virtual bool Resolves(absl::string_view host) = 0;
};

struct TcpClientOptions {
  // Akri tests the TCP connection with a 3 s timeout before calling FindServers.
  absl::Duration connect_timeout = absl::Seconds(3);
  // For the whole exchange once connected.
  absl::Duration exchange_timeout = absl::Seconds(5);
  // What we announce in HEL and enforce on what the server sends.
  uint32_t receive_buffer_size = 65536;
  uint32_t max_message_size = 4 * 1024 * 1024;
  uint32_t max_chunk_count = 64;
};

// Real sockets; each call opens and closes its own connection, so it is thread-safe.
class TcpDiscoveryClient final : public DiscoveryClient {
 public:
  explicit TcpDiscoveryClient(TcpClientOptions options = {}) : options_(options) {}
  absl::StatusOr<std::vector<ApplicationDescription>> FindServers(
      absl::string_view discovery_url) override;
  bool Reachable(absl::string_view discovery_url) override;
  bool Resolves(absl::string_view host) override;

 private:
  const TcpClientOptions options_;
};

}  // namespace regatta::devices::opcua

#endif  // REGATTA_SRC_DEVICES_HANDLERS_OPCUA_CLIENT_H_
