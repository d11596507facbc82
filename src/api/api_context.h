#ifndef REGATTA_SRC_API_API_CONTEXT_H_
#define REGATTA_SRC_API_API_CONTEXT_H_

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/server_context.h"
#include "src/api/auth/authenticator.h"
#include "src/api/auth/authorizer.h"
#include "src/api/validation.h"
#include "src/common/clock.h"
#include "src/common/ids.h"
#include "src/common/secrets/sealer.h"
#include "src/eventlog/event_log.h"
#include "src/store/store.h"

namespace regatta::api {

// Everything the API services need, injected by the composition root (src/server).
struct ApiContext {
  eventlog::EventLog* log = nullptr;
  store::Store* store = nullptr;
  const auth::Authenticator* authenticator = nullptr;
  const auth::Authorizer* authorizer = nullptr;
  const Clock* clock = nullptr;
  IdGenerator* ids = nullptr;
  // Seals secret values before they reach the log (jobs' secret_env, Secrets' data) and opens
  // them for executors; null: such values are refused.
  const secrets::Sealer* sealer = nullptr;
  // Blocks until the views include the log up to `offset` (read-your-writes after queue
  // changes).
  std::function<absl::Status(int64_t offset, absl::Time deadline)> wait_for_views;
  SubmitPolicy policy;
  // Where an executor serves its run logs (host:port), or "" if it is not connected.
  std::function<std::string(absl::string_view executor_id)> executor_logs_address;
  // The credentials to dial an executor's log service with (TLS when the server has it);
  // unset: plain text.
  std::function<std::shared_ptr<grpc::ChannelCredentials>(absl::string_view executor_id)>
      executor_channel_credentials;
  // Why some of a Configuration's brokers cannot be submitted now, or "" (unset: "").
  std::function<std::string(absl::string_view configuration)> broker_errors;
  // How long a write waits for the views before answering UNAVAILABLE.
  absl::Duration view_wait_timeout = absl::Seconds(10);
  // Serve() hands the authenticated principal's name to the server's audit interceptor as the
  // trailing metadata kPrincipalTrailer, which the interceptor removes before it is sent.
  bool record_principal = false;
};

inline constexpr char kPrincipalTrailer[] = "regatta-audit-principal-bin";

// Authenticates a gRPC call from its `authorization` metadata and its caller's address.
absl::StatusOr<auth::Principal> AuthenticateCall(const ApiContext& ctx,
                                                 const grpc::ServerContext* call);

// The IP address of the call's client: the network peer, or for the REST gateway's in-process
// calls the HTTP client it names; "" for other in-process calls.
std::string CallerAddress(const grpc::ServerContext* call);

// The log's timestamp type from the injected clock.
void SetTimestamp(absl::Time time, google::protobuf::Timestamp* out);
absl::Time FromTimestamp(const google::protobuf::Timestamp& ts);

// What a sealed value is bound to: the variable of a job, the key of a Secret.
std::string SecretEnvContext(absl::string_view job_id, absl::string_view name);
std::string SecretDataContext(absl::string_view secret, absl::string_view key);

// Seals every value of the job's task.secret_env in place (FAILED_PRECONDITION without a
// sealer).
absl::Status SealSecretEnv(const ApiContext& ctx, regatta::v1::Job& job);

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_API_CONTEXT_H_
