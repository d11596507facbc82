#ifndef REGATTA_SRC_API_SERVE_H_
#define REGATTA_SRC_API_SERVE_H_

#include <type_traits>
#include <utility>

#include "grpcpp/server_context.h"
#include "src/api/api_context.h"
#include "src/api/grpc_status.h"

namespace regatta::api {

// The shape of every unary handler: authenticate the call, run the transport-neutral `core`
// with the principal, and copy its result (absl::Status or StatusOr<Response>) into the reply.
template <typename Response, typename Core>
grpc::Status Serve(const ApiContext* ctx, grpc::ServerContext* call, Response* response,
                   Core core) {
  absl::StatusOr<auth::Principal> principal = AuthenticateCall(*ctx, call);
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  if (ctx->record_principal) call->AddTrailingMetadata(kPrincipalTrailer, principal->name);
  auto result = core(*principal);
  if constexpr (std::is_same_v<decltype(result), absl::Status>) {
    return ToGrpcStatus(result);
  } else {
    if (!result.ok()) return ToGrpcStatus(result.status());
    *response = std::move(*result);
    return grpc::Status::OK;
  }
}

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_SERVE_H_
