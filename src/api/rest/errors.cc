#include "src/api/rest/errors.h"

#include "nlohmann/json.hpp"
#include "src/common/error_text.h"

namespace regatta::rest {

int HttpStatusForGrpcCode(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return 200;
    case grpc::StatusCode::INVALID_ARGUMENT:
    case grpc::StatusCode::FAILED_PRECONDITION:
    case grpc::StatusCode::OUT_OF_RANGE:
      return 400;
    case grpc::StatusCode::UNAUTHENTICATED:
      return 401;
    case grpc::StatusCode::PERMISSION_DENIED:
      return 403;
    case grpc::StatusCode::NOT_FOUND:
      return 404;
    case grpc::StatusCode::ALREADY_EXISTS:
    case grpc::StatusCode::ABORTED:
      return 409;
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return 429;
    case grpc::StatusCode::UNIMPLEMENTED:
      return 501;
    case grpc::StatusCode::UNAVAILABLE:
      return 503;
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return 504;
    default:
      return 500;
  }
}

absl::string_view GrpcCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::UNKNOWN:
      return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

std::string ErrorJson(grpc::StatusCode code, absl::string_view message) {
  const absl::string_view name = GrpcCodeName(code);
  // The gRPC server caps its messages; this also bounds what the gateway says itself.
  nlohmann::json body = {{"code", static_cast<int>(code)},
                         {"status", std::string(name.data(), name.size())},
                         {"message", Abbreviate(message, kMaxStatusMessageBytes)}};
  // Messages may echo client input; replace invalid UTF-8 rather than throw.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

HttpResponse ErrorResponse(int http_status, grpc::StatusCode code, absl::string_view message) {
  HttpResponse response;
  response.status = http_status;
  response.content_type = "application/json";
  response.body = ErrorJson(code, message);
  return response;
}

HttpResponse ErrorResponse(grpc::StatusCode code, absl::string_view message) {
  return ErrorResponse(HttpStatusForGrpcCode(code), code, message);
}

HttpResponse ErrorResponse(const grpc::Status& status) {
  return ErrorResponse(status.error_code(), status.error_message());
}

HttpResponse ErrorResponse(const absl::Status& status) {
  // absl and gRPC share the canonical code numbers.
  return ErrorResponse(static_cast<grpc::StatusCode>(status.code()), status.message());
}

}  // namespace regatta::rest
