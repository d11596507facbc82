#ifndef REGATTA_SRC_CLI_CLIENT_H_
#define REGATTA_SRC_CLI_CLIENT_H_

// The gRPC side of the CLI: one channel to the server, the authorization metadata and the
// per-call deadline. Kept thin; everything else in src/cli is pure logic.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "regatta/v1/device_service.grpc.pb.h"
#include "regatta/v1/event_service.grpc.pb.h"
#include "regatta/v1/job_service.grpc.pb.h"
#include "regatta/v1/pipeline_service.grpc.pb.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "regatta/v1/report_service.grpc.pb.h"
#include "regatta/v1/run_service.grpc.pb.h"
#include "regatta/v1/submit_service.grpc.pb.h"
#include "src/common/tls/tls.h"

namespace regatta::cli {

inline constexpr char kDefaultServer[] = "127.0.0.1:50051";
inline constexpr int kMaxReceiveMessageBytes = 64 << 20;

struct ClientOptions {
  std::string server = kDefaultServer;  // host:port
  std::string token;                    // bearer token
  std::string user;                     // basic auth, with password
  std::string password;
  absl::Duration timeout = absl::Seconds(30);  // deadline of unary calls
  // --tls-ca, --tls-cert, --tls-key, --tls-server-name; an https:// server turns TLS on too.
  tls::ClientTlsOptions tls;
};

// The gRPC target of --server ("http://", "grpc://" and "https://" prefixes and a trailing
// slash dropped) and whether it asks for TLS (https://).
absl::StatusOr<std::pair<std::string, bool>> ServerTarget(absl::string_view server);

// A channel to `target` with the client's TLS settings (`https` turns TLS on).
absl::StatusOr<std::shared_ptr<grpc::Channel>> ServerChannel(const std::string& target, bool https,
                                                             const tls::ClientTlsOptions& tls);

// The value of the "authorization" header: "Bearer T", "Basic base64(U:P)", or "" for none.
// INVALID_ARGUMENT when both a token and a user are given, or a user without a password.
absl::StatusOr<std::string> AuthorizationHeader(const ClientOptions& options);

// gRPC codes and absl codes share their numbers (both are google.rpc.Code).
absl::Status FromGrpcStatus(const grpc::Status& status);

class Client {
 public:
  static absl::StatusOr<std::unique_ptr<Client>> Create(const ClientOptions& options);

  // A context carrying the authorization header, with a deadline `timeout` from now unless it
  // is infinite.
  std::unique_ptr<grpc::ClientContext> NewContext(absl::Duration timeout) const;
  std::unique_ptr<grpc::ClientContext> UnaryContext() const { return NewContext(timeout_); }

  regatta::v1::QueueService::Stub& queues() { return *queues_; }
  regatta::v1::SubmitService::Stub& submit() { return *submit_; }
  regatta::v1::JobService::Stub& jobs() { return *jobs_; }
  regatta::v1::EventService::Stub& events() { return *events_; }
  regatta::v1::SchedulingReportService::Stub& reports() { return *reports_; }
  regatta::v1::PipelineService::Stub& pipelines() { return *pipelines_; }
  regatta::v1::RunService::Stub& runs() { return *runs_; }
  regatta::v1::DeviceService::Stub& devices() { return *devices_; }

 private:
  Client() = default;

  std::string authorization_;
  absl::Duration timeout_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<regatta::v1::QueueService::Stub> queues_;
  std::unique_ptr<regatta::v1::SubmitService::Stub> submit_;
  std::unique_ptr<regatta::v1::JobService::Stub> jobs_;
  std::unique_ptr<regatta::v1::EventService::Stub> events_;
  std::unique_ptr<regatta::v1::SchedulingReportService::Stub> reports_;
  std::unique_ptr<regatta::v1::PipelineService::Stub> pipelines_;
  std::unique_ptr<regatta::v1::RunService::Stub> runs_;
  std::unique_ptr<regatta::v1::DeviceService::Stub> devices_;
};

// One unary call of `stub` with the client's deadline and credentials.
template <typename Stub, typename Req, typename Resp>
absl::StatusOr<Resp> CallUnary(const Client& client, Stub& stub,
                               grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&,
                                                            Resp*),
                               const Req& request) {
  Resp response;
  auto context = client.UnaryContext();
  absl::Status status = FromGrpcStatus((stub.*method)(context.get(), request, &response));
  if (!status.ok()) return status;
  return response;
}

// Every page of a listing (following next_page_token), merged into the first response;
// `rows(response)` is the repeated field of its rows.
template <typename Stub, typename Req, typename Resp, typename Rows>
absl::StatusOr<Resp> CallAllPages(const Client& client, Stub& stub,
                                  grpc::Status (Stub::*method)(grpc::ClientContext*, const Req&,
                                                               Resp*),
                                  Req request, Rows rows) {
  Resp all;
  do {
    absl::StatusOr<Resp> page = CallUnary(client, stub, method, request);
    if (!page.ok()) return page.status();
    for (auto& row : *rows(*page)) *rows(all)->Add() = std::move(row);
    if (page->next_page_token() == request.page_token()) break;  // a server bug; do not spin
    request.set_page_token(page->next_page_token());
  } while (!request.page_token().empty());
  return all;
}

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_CLIENT_H_
