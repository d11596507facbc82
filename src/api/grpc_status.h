#ifndef REGATTA_SRC_API_GRPC_STATUS_H_
#define REGATTA_SRC_API_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace regatta::api {

// absl and gRPC share the canonical code numbering, so the code maps one to one. What clients
// may see of a status (no internal text, bounded size) is decided where it leaves the server,
// for every call alike: src/api/status_interceptor.h.
inline grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

inline absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_GRPC_STATUS_H_
