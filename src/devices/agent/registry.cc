#include "src/devices/agent/registry.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "src/devices/protocol/sockets.h"

namespace regatta::devices {

absl::Status HandlerRegistry::Validate(const v0::RegisterDiscoveryHandlerRequest& request) {
  if (request.name().empty()) return absl::InvalidArgumentError("name: empty");
  if (request.endpoint().empty()) return absl::InvalidArgumentError("endpoint: empty");
  switch (request.endpoint_type()) {
    case v0::RegisterDiscoveryHandlerRequest::UDS:
      if (!absl::StartsWith(request.endpoint(), "/")) {
        return absl::InvalidArgumentError(absl::StrCat(
            "endpoint: '", request.endpoint(), "' must be an absolute socket path (type UDS)"));
      }
      return CheckSocketPath("endpoint", request.endpoint());
    case v0::RegisterDiscoveryHandlerRequest::NETWORK: {
      absl::string_view address = request.endpoint();
      if (!absl::ConsumePrefix(&address, "http://")) absl::ConsumePrefix(&address, "https://");
      if (address.empty() || !absl::StrContains(address, ':')) {
        return absl::InvalidArgumentError(
            absl::StrCat("endpoint: '", request.endpoint(), "' must be host:port (type NETWORK)"));
      }
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("endpoint_type: unknown value ", request.endpoint_type()));
  }
}

HandlerRegistry::Change HandlerRegistry::Register(
    const v0::RegisterDiscoveryHandlerRequest& request) {
  HandlerEndpoint endpoint{request.endpoint(), request.endpoint_type(), request.shared()};
  auto& endpoints = handlers_[request.name()];
  auto it = endpoints.find(request.endpoint());
  if (it == endpoints.end()) {
    endpoints.emplace(request.endpoint(), endpoint);
    return Change::kAdded;
  }
  if (it->second == endpoint) return Change::kNone;
  it->second = endpoint;
  return Change::kUpdated;
}

bool HandlerRegistry::Drop(const std::string& name, const std::string& endpoint) {
  auto it = handlers_.find(name);
  if (it == handlers_.end()) return false;
  bool dropped = it->second.erase(endpoint) > 0;
  if (it->second.empty()) handlers_.erase(it);
  return dropped;
}

std::vector<HandlerEndpoint> HandlerRegistry::Endpoints(const std::string& name) const {
  std::vector<HandlerEndpoint> out;
  auto it = handlers_.find(name);
  if (it == handlers_.end()) return out;
  for (const auto& [_, endpoint] : it->second) out.push_back(endpoint);
  return out;
}

const HandlerEndpoint* HandlerRegistry::Find(const std::string& name,
                                             const std::string& endpoint) const {
  auto it = handlers_.find(name);
  if (it == handlers_.end()) return nullptr;
  auto found = it->second.find(endpoint);
  return found == it->second.end() ? nullptr : &found->second;
}

std::string EndpointTarget(const HandlerEndpoint& endpoint) {
  if (endpoint.type == v0::RegisterDiscoveryHandlerRequest::UDS) {
    return UdsAddress(endpoint.endpoint);
  }
  absl::string_view address = endpoint.endpoint;
  if (!absl::ConsumePrefix(&address, "http://")) absl::ConsumePrefix(&address, "https://");
  return std::string(address);
}

}  // namespace regatta::devices
