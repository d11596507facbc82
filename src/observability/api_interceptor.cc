#include "src/observability/api_interceptor.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/message.h"
#include "grpcpp/server_context.h"
#include "src/api/api_context.h"
#include "src/api/auth/password_limits.h"
#include "src/api/auth/principal.h"
#include "src/api/rest/errors.h"
#include "src/common/logging.h"
#include "src/observability/audit.h"

namespace regatta::observability {
namespace {

using grpc::experimental::InterceptionHookPoints;
using grpc::experimental::ServerRpcInfo;

// The caller as gRPC sees it ("ipv4:10.0.0.7:51834"); for a REST call, which reaches the
// services through the in-process channel, the HTTP client's address the gateway passed on
// ("rest:10.0.0.7").
std::string AuditPeer(const grpc::ServerContextBase& context) {
  std::string peer = context.peer();
  if (peer != "unknown" && !absl::StartsWith(peer, "inproc")) return peer;
  const auto& metadata = context.client_metadata();
  auto it = metadata.find(auth::kGatewayClientAddressMetadata);
  if (it == metadata.end() || it->second.empty()) return peer;
  return absl::StrCat("rest:", auth::NormalizeClientAddress(
                                   absl::string_view(it->second.data(), it->second.size())));
}

class ApiInterceptor : public grpc::experimental::Interceptor {
 public:
  ApiInterceptor(const InterceptorOptions* options, ServerRpcInfo* info)
      : options_(options),
        info_(info),
        method_(info->method()),
        unary_(info->type() == ServerRpcInfo::Type::UNARY),
        start_(absl::Now()),
        audited_(options->audit && IsAudited(info->method())) {}

  // A call that ends without sending a status (the client went away) still counts. The call's
  // context may be gone by now: no peer then.
  ~ApiInterceptor() override {
    if (!finished_) Finish(grpc::StatusCode::CANCELLED, "", /*with_peer=*/false);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (audited_ && !have_targets_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      // Every service here is protobuf: the received message is the request's Message.
      if (void* message = methods->GetRecvMessage(); message != nullptr) {
        targets_ = AuditTargets(*static_cast<google::protobuf::Message*>(message));
      }
      have_targets_ = true;
    }
    if (audited_ && unary_ &&
        methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_MESSAGE)) {
      // What the call created (a run's id, ...); null if already serialized.
      if (const void* message = methods->GetSendMessage(); message != nullptr) {
        result_ = AuditResult(*static_cast<const google::protobuf::Message*>(message));
      }
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      std::string principal;
      if (std::multimap<std::string, std::string>* trailers = methods->GetSendTrailingMetadata();
          trailers != nullptr) {
        auto [first, last] = trailers->equal_range(api::kPrincipalTrailer);
        if (first != last) principal = first->second;
        trailers->erase(first, last);
      }
      if (!finished_) Finish(methods->GetSendStatus().error_code(), principal, true);
    }
    methods->Proceed();
  }

 private:
  void Finish(grpc::StatusCode code, const std::string& principal, bool with_peer) {
    finished_ = true;
    if (options_->metrics != nullptr) {
      options_->metrics->ObserveRequest(method_, code, unary_, absl::Now() - start_);
    }
    if (!audited_) return;
    std::string peer;
    if (auto* context = info_->server_context(); with_peer && context != nullptr) {
      peer = AuditPeer(*context);
    }
    const std::string line = LogLineOf(
        "audit", AuditLine(method_, principal, targets_, result_, rest::GrpcCodeName(code), peer));
    if (options_->audit_sink) {
      options_->audit_sink(line);
    } else {
      spdlog::info("{}", line);
    }
  }

  const InterceptorOptions* const options_;
  ServerRpcInfo* const info_;
  const char* const method_;
  const bool unary_;
  const absl::Time start_;
  const bool audited_;
  bool have_targets_ = false;
  bool finished_ = false;
  AuditFields targets_;
  AuditFields result_;
};

}  // namespace

grpc::experimental::Interceptor* ApiInterceptorFactory::CreateServerInterceptor(
    ServerRpcInfo* info) {
  return new ApiInterceptor(&options_, info);
}

}  // namespace regatta::observability
