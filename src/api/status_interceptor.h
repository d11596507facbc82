#ifndef REGATTA_SRC_API_STATUS_INTERCEPTOR_H_
#define REGATTA_SRC_API_STATUS_INTERCEPTOR_H_

#include <memory>

#include "absl/strings/string_view.h"
#include "grpcpp/support/server_interceptor.h"
#include "grpcpp/support/status.h"
#include "src/common/ids.h"

namespace regatta::api {

// What a client may see of a failed call's status:
// - INTERNAL, UNKNOWN and DATA_LOSS say what went wrong inside the server (SQL, file paths,
//   library text): the message is logged with a reference id and the client gets a generic
//   message naming that reference;
// - every other message is capped at kMaxStatusMessageBytes (messages may echo input).
// `method` is for the log line. `ids` makes the reference (a ULID in production).
grpc::Status PublicStatus(const grpc::Status& status, absl::string_view method, IdGenerator* ids);

// A server interceptor applying PublicStatus to every status the gRPC server sends, and
// answering INVALID_ARGUMENT (gRPC itself says INTERNAL) when a request's bytes do not parse as
// the method's request message. `ids` must outlive the server.
std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewStatusHygieneInterceptorFactory(IdGenerator* ids);

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_STATUS_INTERCEPTOR_H_
