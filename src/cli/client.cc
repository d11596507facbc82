#include "src/cli/client.h"

#include <chrono>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "src/common/status_macros.h"

namespace regatta::cli {

absl::StatusOr<std::string> AuthorizationHeader(const ClientOptions& options) {
  if (!options.token.empty() && !options.user.empty()) {
    return absl::InvalidArgumentError(
        "give either --token ($REGATTA_TOKEN) or --user/--password ($REGATTA_USER), not both");
  }
  if (!options.token.empty()) return absl::StrCat("Bearer ", options.token);
  if (!options.user.empty()) {
    if (options.password.empty()) {
      return absl::InvalidArgumentError("--user needs --password (or $REGATTA_PASSWORD)");
    }
    return absl::StrCat("Basic ",
                        absl::Base64Escape(absl::StrCat(options.user, ":", options.password)));
  }
  if (!options.password.empty()) {
    return absl::InvalidArgumentError("--password needs --user (or $REGATTA_USER)");
  }
  return std::string();
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()), status.error_message());
}

absl::StatusOr<std::pair<std::string, bool>> ServerTarget(absl::string_view server) {
  // Accept a URL-ish address too, since that is what `regatta up` users tend to paste.
  absl::string_view target = server;
  const bool https = absl::ConsumePrefix(&target, "https://");
  if (!https && !absl::ConsumePrefix(&target, "http://")) absl::ConsumePrefix(&target, "grpc://");
  target = absl::StripSuffix(target, "/");
  if (target.empty()) return absl::InvalidArgumentError("--server is empty");
  return std::make_pair(std::string(target), https);
}

absl::StatusOr<std::shared_ptr<grpc::Channel>> ServerChannel(const std::string& target, bool https,
                                                             const tls::ClientTlsOptions& tls) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(kMaxReceiveMessageBytes);
  tls::ClientTlsOptions effective = tls;
  effective.enabled = effective.enabled || https;
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::ChannelCredentials> credentials,
                   tls::ClientCredentials(effective, &args));
  return grpc::CreateCustomChannel(target, credentials, args);
}

absl::StatusOr<std::unique_ptr<Client>> Client::Create(const ClientOptions& options) {
  std::unique_ptr<Client> client(new Client());
  ASSIGN_OR_RETURN(client->authorization_, AuthorizationHeader(options));
  client->timeout_ = options.timeout;
  ASSIGN_OR_RETURN(auto target, ServerTarget(options.server));
  ASSIGN_OR_RETURN(client->channel_, ServerChannel(target.first, target.second, options.tls));
  client->queues_ = regatta::v1::QueueService::NewStub(client->channel_);
  client->submit_ = regatta::v1::SubmitService::NewStub(client->channel_);
  client->jobs_ = regatta::v1::JobService::NewStub(client->channel_);
  client->events_ = regatta::v1::EventService::NewStub(client->channel_);
  client->reports_ = regatta::v1::SchedulingReportService::NewStub(client->channel_);
  client->pipelines_ = regatta::v1::PipelineService::NewStub(client->channel_);
  client->runs_ = regatta::v1::RunService::NewStub(client->channel_);
  client->devices_ = regatta::v1::DeviceService::NewStub(client->channel_);
  return client;
}

std::unique_ptr<grpc::ClientContext> Client::NewContext(absl::Duration timeout) const {
  auto context = std::make_unique<grpc::ClientContext>();
  if (!authorization_.empty()) context->AddMetadata("authorization", authorization_);
  if (timeout != absl::InfiniteDuration()) {
    context->set_deadline(absl::ToChronoTime(absl::Now() + timeout));
  }
  return context;
}

}  // namespace regatta::cli
