// The REST routes of the device layer: DeviceService (configurations, instances, services,
// secrets, config maps). A path's {id} is the resource's name.
#include "src/api/rest/gateway.h"

namespace regatta::rest {

HttpResponse Gateway::HandleDeviceRoute(const HttpRequest& request, const RouteMatch& match,
                                        const QueryParams& query) {
  using Stub = regatta::v1::DeviceService::Stub;
  constexpr bool kBody = true;
  constexpr bool kQuery = false;
  auto call = [&](auto method, bool from_body, const char* path_field = nullptr) {
    return Forward(request, match, query, devices_.get(), method, from_body, path_field);
  };
  switch (match.id) {
    case RouteId::kApplyConfiguration:
      return call(&Stub::ApplyConfiguration, kBody);
    case RouteId::kListConfigurations:
      return call(&Stub::ListConfigurations, kQuery);
    case RouteId::kGetConfiguration:
      return call(&Stub::GetConfiguration, kQuery, "name");
    case RouteId::kDeleteConfiguration:
      return call(&Stub::DeleteConfiguration, kQuery, "name");
    case RouteId::kListInstances:
      return call(&Stub::ListInstances, kQuery);
    case RouteId::kGetInstance:
      return call(&Stub::GetInstance, kQuery, "name");
    case RouteId::kListServices:
      return call(&Stub::ListServices, kQuery);
    case RouteId::kGetService:
      return call(&Stub::GetService, kQuery, "name");
    case RouteId::kApplySecret:
      return call(&Stub::ApplySecret, kBody);
    case RouteId::kListSecrets:
      return call(&Stub::ListSecrets, kQuery);
    case RouteId::kGetSecret:
      return call(&Stub::GetSecret, kQuery, "name");
    case RouteId::kDeleteSecret:
      return call(&Stub::DeleteSecret, kQuery, "name");
    case RouteId::kApplyConfigMap:
      return call(&Stub::ApplyConfigMap, kBody);
    case RouteId::kListConfigMaps:
      return call(&Stub::ListConfigMaps, kQuery);
    case RouteId::kGetConfigMap:
      return call(&Stub::GetConfigMap, kQuery, "name");
    case RouteId::kDeleteConfigMap:
      return call(&Stub::DeleteConfigMap, kQuery, "name");
    default:
      break;
  }
  return ErrorResponse(grpc::StatusCode::INTERNAL, "unhandled device route");
}

}  // namespace regatta::rest
