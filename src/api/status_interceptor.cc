#include "src/api/status_interceptor.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "src/common/error_text.h"
#include "src/common/logging.h"

namespace regatta::api {
namespace {

using grpc::experimental::InterceptionHookPoints;

// Enough of an internal error's text for the operator's log, not a 15 MB line.
constexpr size_t kMaxLoggedMessageBytes = 16 * 1024;

absl::string_view InternalKind(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::INTERNAL:
      return "internal error";
    case grpc::StatusCode::UNKNOWN:
      return "unknown error";
    case grpc::StatusCode::DATA_LOSS:
      return "data loss";
    default:
      return "";
  }
}

class StatusHygieneInterceptor final : public grpc::experimental::Interceptor {
 public:
  StatusHygieneInterceptor(grpc::experimental::ServerRpcInfo* info, IdGenerator* ids)
      : method_(info->method() != nullptr ? info->method() : ""),
        // For these the one request message is parsed before the handler runs; a stream's
        // reads are the handler's business (a null message there is the end of the stream).
        single_request_(info->type() == grpc::experimental::ServerRpcInfo::Type::UNARY ||
                        info->type() == grpc::experimental::ServerRpcInfo::Type::SERVER_STREAMING),
        ids_(ids) {}

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (single_request_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE) &&
        methods->GetRecvMessage() == nullptr) {
      unparsable_request_ = true;
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      const grpc::Status status = methods->GetSendStatus();
      if (unparsable_request_ && status.error_code() == grpc::StatusCode::INTERNAL) {
        // The handler never ran: the status is gRPC's deserialization failure.
        methods->ModifySendStatus(grpc::Status(
            grpc::StatusCode::INVALID_ARGUMENT,
            absl::StrCat("request: the bytes are not a valid request message for ", method_)));
      } else if (!status.ok()) {
        methods->ModifySendStatus(PublicStatus(status, method_, ids_));
      }
    }
    methods->Proceed();
  }

 private:
  const std::string method_;
  const bool single_request_;
  IdGenerator* ids_;
  bool unparsable_request_ = false;
};

class StatusHygieneFactory final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit StatusHygieneFactory(IdGenerator* ids) : ids_(ids) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new StatusHygieneInterceptor(info, ids_);
  }

 private:
  IdGenerator* ids_;
};

}  // namespace

grpc::Status PublicStatus(const grpc::Status& status, absl::string_view method, IdGenerator* ids) {
  if (status.ok()) return status;
  const absl::string_view kind = InternalKind(status.error_code());
  if (kind.empty()) {
    if (status.error_message().size() <= kMaxStatusMessageBytes) return status;
    return grpc::Status(status.error_code(),
                        Abbreviate(status.error_message(), kMaxStatusMessageBytes),
                        status.error_details());
  }
  const std::string reference = ids->NewId();
  LOG_ERROR("rpc failed", "method", method, "code", static_cast<int>(status.error_code()),
            "reference", reference, "error",
            Abbreviate(status.error_message(), kMaxLoggedMessageBytes));
  return grpc::Status(status.error_code(),
                      absl::StrCat(kind, " (reference ", reference,
                                   "); the server log has the details under this reference"));
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
NewStatusHygieneInterceptorFactory(IdGenerator* ids) {
  return std::make_unique<StatusHygieneFactory>(ids);
}

}  // namespace regatta::api
