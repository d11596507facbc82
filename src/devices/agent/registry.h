#ifndef REGATTA_SRC_DEVICES_AGENT_REGISTRY_H_
#define REGATTA_SRC_DEVICES_AGENT_REGISTRY_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "akri/discovery/v0/discovery.pb.h"

namespace regatta::devices {

// One place a discovery handler serves.
struct HandlerEndpoint {
  std::string endpoint;  // a socket path (UDS) or host:port (NETWORK)
  v0::RegisterDiscoveryHandlerRequest::EndpointType type = v0::RegisterDiscoveryHandlerRequest::UDS;
  bool shared = false;
  bool operator==(const HandlerEndpoint&) const = default;
};

// The handlers registered on one node: handler name → endpoints. A name may have several
// endpoints (several handler processes, or Akri's network handlers). Not thread-safe: the agent
// guards it.
class HandlerRegistry {
 public:
  enum class Change { kNone, kAdded, kUpdated };

  // INVALID_ARGUMENT naming the field of a registration that cannot be served.
  static absl::Status Validate(const v0::RegisterDiscoveryHandlerRequest& request);

  // Adds or updates the endpoint of a valid registration.
  Change Register(const v0::RegisterDiscoveryHandlerRequest& request);
  // Whether the endpoint was registered under `name`.
  bool Drop(const std::string& name, const std::string& endpoint);

  std::vector<HandlerEndpoint> Endpoints(const std::string& name) const;
  const HandlerEndpoint* Find(const std::string& name, const std::string& endpoint) const;

 private:
  std::map<std::string, std::map<std::string, HandlerEndpoint>> handlers_;
};

// The gRPC target of an endpoint: "unix:<path>" or host:port (Akri prefixes http://).
std::string EndpointTarget(const HandlerEndpoint& endpoint);

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_AGENT_REGISTRY_H_
