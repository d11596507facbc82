#include "src/api/api_context.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/api/auth/password_limits.h"
#include "src/api/auth/principal.h"
#include "src/common/status_macros.h"

namespace regatta::api {
namespace {

absl::string_view Metadata(const grpc::ServerContext* call, absl::string_view key) {
  const auto& metadata = call->client_metadata();
  auto it = metadata.find(grpc::string_ref(key.data(), key.size()));
  if (it == metadata.end()) return "";
  return absl::string_view(it->second.data(), it->second.size());
}

}  // namespace

std::string CallerAddress(const grpc::ServerContext* call) {
  const std::string peer = call->peer();
  // Only the REST gateway's in-process calls may say who their client is. gRPC 1.51 names the
  // peer of an in-process call "unknown" (later versions "inproc"); network peers are
  // "ipv4:...", "ipv6:..." (or "unix:...") and cannot pass for one.
  if (peer == "unknown" || absl::StartsWith(peer, "inproc")) {
    return auth::NormalizeClientAddress(Metadata(call, auth::kGatewayClientAddressMetadata));
  }
  return auth::ClientAddressFromPeer(peer);
}

absl::StatusOr<auth::Principal> AuthenticateCall(const ApiContext& ctx,
                                                 const grpc::ServerContext* call) {
  return ctx.authenticator->Authenticate(Metadata(call, "authorization"), CallerAddress(call));
}

void SetTimestamp(absl::Time time, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(time);
  out->set_seconds(nanos / 1'000'000'000);
  out->set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
}

absl::Time FromTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

std::string SecretEnvContext(absl::string_view job_id, absl::string_view name) {
  return absl::StrCat("job/", job_id, "/env/", name);
}

std::string SecretDataContext(absl::string_view secret, absl::string_view key) {
  return absl::StrCat("secret/", secret, "/", key);
}

absl::Status SealSecretEnv(const ApiContext& ctx, regatta::v1::Job& job) {
  auto& secret_env = *job.mutable_task()->mutable_secret_env();
  if (secret_env.empty()) return absl::OkStatus();
  if (ctx.sealer == nullptr) {
    return absl::FailedPreconditionError(
        "task.secret_env: this server has no secrets key to seal the values with");
  }
  for (auto& [name, value] : secret_env) {
    ASSIGN_OR_RETURN(value, ctx.sealer->Seal(value, SecretEnvContext(job.id(), name)));
  }
  return absl::OkStatus();
}

}  // namespace regatta::api
