#ifndef REGATTA_SRC_OBSERVABILITY_API_INTERCEPTOR_H_
#define REGATTA_SRC_OBSERVABILITY_API_INTERCEPTOR_H_

#include <functional>
#include <string>

#include "grpcpp/support/server_interceptor.h"
#include "src/observability/metrics.h"

namespace regatta::observability {

struct InterceptorOptions {
  // Counts every call by method and code, with durations of unary calls; null: no metrics.
  Metrics* metrics = nullptr;
  // One structured "audit" line per state-changing call (IsAudited), with who made it (the
  // principal the service's Serve() recorded; see ApiContext::record_principal), what, on
  // which queue / job / run, and the resulting code. Calls refused before or by authorization
  // are audited too.
  bool audit = true;
  // Where audit lines go; unset: the process log (LOG_INFO, JSON with logging.format=json).
  std::function<void(const std::string& line)> audit_sink;
};

// The server interceptor every gRPC call passes, REST calls included (the REST gateway calls
// the services through the server's in-process channel). It also strips the principal trailer
// (api::kPrincipalTrailer) so it never reaches a client.
class ApiInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit ApiInterceptorFactory(InterceptorOptions options) : options_(std::move(options)) {}

  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override;

 private:
  const InterceptorOptions options_;
};

}  // namespace regatta::observability

#endif  // REGATTA_SRC_OBSERVABILITY_API_INTERCEPTOR_H_
