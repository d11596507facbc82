#ifndef REGATTA_SRC_API_REST_ERRORS_H_
#define REGATTA_SRC_API_REST_ERRORS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"
#include "src/api/rest/http_message.h"

namespace regatta::rest {

// The HTTP status for a gRPC code, as grpc-gateway maps it.
int HttpStatusForGrpcCode(grpc::StatusCode code);

// "INVALID_ARGUMENT" for 3; "UNKNOWN" for codes outside the gRPC range.
absl::string_view GrpcCodeName(grpc::StatusCode code);

// The JSON error body: {"code": <number>, "status": "<NAME>", "message": "..."}.
std::string ErrorJson(grpc::StatusCode code, absl::string_view message);

// An error response whose HTTP status follows from the gRPC code.
HttpResponse ErrorResponse(grpc::StatusCode code, absl::string_view message);
// An error response with an explicit HTTP status (404/405/413/431 raised by the gateway itself).
HttpResponse ErrorResponse(int http_status, grpc::StatusCode code, absl::string_view message);

HttpResponse ErrorResponse(const grpc::Status& status);
HttpResponse ErrorResponse(const absl::Status& status);

}  // namespace regatta::rest

#endif  // REGATTA_SRC_API_REST_ERRORS_H_
