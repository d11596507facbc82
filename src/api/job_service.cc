#include "src/api/job_service.h"

#include <thread>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "regatta/v1/executor_service.grpc.pb.h"
#include "src/api/grpc_status.h"
#include "src/api/read_access.h"
#include "src/api/serve.h"
#include "src/api/validation.h"
#include "src/common/status_macros.h"

namespace regatta::api {
namespace {

absl::Status CheckIds(const google::protobuf::RepeatedPtrField<std::string>& ids) {
  if (ids.empty()) return absl::InvalidArgumentError("job_ids: at least one job id is required");
  if (ids.size() > JobService::kMaxIdsPerRequest) {
    return absl::InvalidArgumentError(absl::StrCat(
        "job_ids: ", ids.size(), " ids, over the limit of ", JobService::kMaxIdsPerRequest));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<regatta::v1::GetJobStatusResponse> JobService::Status(
    const auth::Principal& principal, const regatta::v1::GetJobStatusRequest& request) {
  RETURN_IF_ERROR(CheckIds(request.job_ids()));
  std::vector<std::string> ids(request.job_ids().begin(), request.job_ids().end());
  ASSIGN_OR_RETURN(auto found, ctx_->store->GetJobLocations(ids));
  ReadAccess access(*ctx_, principal);
  for (const auto& loc : found) {
    RETURN_IF_ERROR(access.Check(loc.queue, absl::StrCat("job ", loc.job_id)));
  }
  regatta::v1::GetJobStatusResponse response;
  auto& states = *response.mutable_states();
  for (const std::string& id : ids) states[id] = regatta::v1::JOB_STATE_UNSPECIFIED;
  for (const auto& loc : found) states[loc.job_id] = loc.state;
  return response;
}

absl::StatusOr<regatta::v1::GetJobDetailsResponse> JobService::Details(
    const auth::Principal& principal, const regatta::v1::GetJobDetailsRequest& request) {
  RETURN_IF_ERROR(CheckIds(request.job_ids()));
  std::vector<std::string> ids(request.job_ids().begin(), request.job_ids().end());
  ASSIGN_OR_RETURN(auto details, ctx_->store->GetJobDetails(ids, request.expand_spec()));
  ReadAccess access(*ctx_, principal);
  regatta::v1::GetJobDetailsResponse response;
  for (auto& d : details) {
    RETURN_IF_ERROR(access.Check(d.summary().queue(), absl::StrCat("job ", d.summary().job_id())));
    std::string id = d.summary().job_id();
    (*response.mutable_jobs())[id] = std::move(d);
  }
  return response;
}

absl::StatusOr<regatta::v1::ListJobsResponse> JobService::List(
    const auth::Principal& principal, const regatta::v1::ListJobsRequest& request) {
  if (request.page_size() < 0 || request.page_size() > kMaxPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size: must be between 0 and ", kMaxPageSize));
  }
  RETURN_IF_ERROR(ValidateListJobsRequest(request));
  store::JobFilter filter;
  filter.queue = request.queue();
  filter.job_set = request.job_set();
  for (int s : request.states()) filter.states.push_back(static_cast<regatta::v1::JobState>(s));
  filter.owner = request.owner();
  filter.namespace_ = request.namespace_();
  for (const auto& [k, v] : request.labels()) filter.labels.emplace_back(k, v);
  if (request.order_by().empty() || request.order_by() == "submit_time") {
    filter.newest_first = false;
  } else if (request.order_by() == "-submit_time") {
    filter.newest_first = true;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("order_by: unknown order \"", request.order_by(),
                                                   "\" (submit_time or -submit_time)"));
  }
  const int limit = request.page_size() == 0 ? kDefaultPageSize : request.page_size();
  filter.limit = limit + 1;  // one more tells whether another page exists
  filter.after_job_id = request.page_token();
  regatta::v1::ListJobsResponse response;
  // Only queues the caller may read: one named queue is checked, a list across queues is
  // restricted to the readable ones in the query itself.
  ReadAccess access(*ctx_, principal);
  if (!filter.queue.empty()) {
    RETURN_IF_ERROR(access.Check(filter.queue, "the jobs"));
  } else if (!access.All()) {
    ASSIGN_OR_RETURN(filter.queues, access.ReadableQueues());
    if (filter.queues.empty()) return response;
  }
  ASSIGN_OR_RETURN(auto jobs, ctx_->store->ListJobs(filter));
  for (int i = 0; i < static_cast<int>(jobs.size()) && i < limit; ++i) {
    *response.add_jobs() = std::move(jobs[i]);
  }
  if (static_cast<int>(jobs.size()) > limit) {
    response.set_next_page_token(response.jobs(limit - 1).job_id());
  }
  return response;
}

grpc::Status JobService::GetJobStatus(grpc::ServerContext* call,
                                      const regatta::v1::GetJobStatusRequest* request,
                                      regatta::v1::GetJobStatusResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) { return Status(p, *request); });
}

grpc::Status JobService::GetJobDetails(grpc::ServerContext* call,
                                       const regatta::v1::GetJobDetailsRequest* request,
                                       regatta::v1::GetJobDetailsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return Details(p, *request); });
}

grpc::Status JobService::ListJobs(grpc::ServerContext* call,
                                  const regatta::v1::ListJobsRequest* request,
                                  regatta::v1::ListJobsResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) { return List(p, *request); });
}

std::shared_ptr<grpc::Channel> JobService::ExecutorChannel(const std::string& address,
                                                           absl::string_view executor_id) {
  // One insecure credentials object, so that the cache below keeps its channels.
  static const auto* const kInsecure =
      new std::shared_ptr<grpc::ChannelCredentials>(grpc::InsecureChannelCredentials());
  std::shared_ptr<grpc::ChannelCredentials> credentials =
      ctx_->executor_channel_credentials ? ctx_->executor_channel_credentials(executor_id)
                                         : *kInsecure;
  absl::MutexLock lock(&channels_mu_);
  auto& [made_with, channel] = channels_[address];
  if (channel == nullptr || made_with != credentials) {
    channel = grpc::CreateChannel(address, credentials);
    made_with = std::move(credentials);
  }
  return channel;
}

absl::Status JobService::StreamLogs(const auth::Principal& principal,
                                    const regatta::v1::GetJobLogsRequest& request,
                                    const std::function<bool(const regatta::v1::LogChunk&)>& sink,
                                    const std::function<bool()>& cancelled) {
  if (request.job_id().empty()) return absl::InvalidArgumentError("job_id: must not be empty");
  if (request.tail_lines() < 0) return absl::InvalidArgumentError("tail_lines: must be >= 0");
  ASSIGN_OR_RETURN(auto details, ctx_->store->GetJobDetails({request.job_id()}, false));
  if (details.empty()) {
    return absl::NotFoundError(absl::StrCat("job ", request.job_id(), " not found"));
  }
  const regatta::v1::JobDetails& job = details.front();
  ReadAccess access(*ctx_, principal);
  RETURN_IF_ERROR(
      access.Check(job.summary().queue(), absl::StrCat("the logs of job ", request.job_id())));
  const regatta::v1::JobRunDetails* run = nullptr;
  for (const auto& r : job.runs()) {
    if (request.run_id().empty() || r.run_id() == request.run_id()) run = &r;
  }
  if (run == nullptr) {
    if (!request.run_id().empty()) {
      return absl::NotFoundError(
          absl::StrCat("run_id: job ", request.job_id(), " has no run ", request.run_id()));
    }
    return absl::FailedPreconditionError(
        absl::StrCat("job ", request.job_id(), " has not run yet (state ",
                     regatta::v1::JobState_Name(job.summary().state()), ")"));
  }
  const std::string address =
      ctx_->executor_logs_address ? ctx_->executor_logs_address(run->executor_id()) : "";
  if (address.empty()) {
    return absl::UnavailableError(absl::StrCat("the logs of run ", run->run_id(),
                                               " live on executor ", run->executor_id(),
                                               ", which is not connected or serves no logs"));
  }
  auto stub =
      regatta::v1::ExecutorLogService::NewStub(ExecutorChannel(address, run->executor_id()));
  grpc::ClientContext context;
  regatta::v1::ReadRunLogRequest read;
  read.set_run_id(run->run_id());
  read.set_follow(request.follow());
  read.set_tail_lines(request.tail_lines());
  auto reader = stub->ReadRunLog(&context, read);
  // Follow until the run ends, the caller goes away, or the executor does.
  bool done = false;
  absl::Mutex mu;
  std::thread watchdog([&] {
    absl::MutexLock lock(&mu);
    auto finished = [&done] { return done; };
    while (!mu.AwaitWithTimeout(absl::Condition(&finished), absl::Milliseconds(200))) {
      if (cancelled()) {
        context.TryCancel();
        break;
      }
    }
  });
  regatta::v1::LogChunk chunk;
  bool sink_open = true;
  while (sink_open && reader->Read(&chunk)) sink_open = sink(chunk);
  if (!sink_open) context.TryCancel();
  grpc::Status status = reader->Finish();
  {
    absl::MutexLock lock(&mu);
    done = true;
  }
  watchdog.join();
  if (!sink_open || cancelled()) return absl::OkStatus();
  if (!status.ok()) {
    return absl::Status(
        static_cast<absl::StatusCode>(status.error_code()),
        absl::StrCat("executor ", run->executor_id(), ": ", status.error_message()));
  }
  return absl::OkStatus();
}

grpc::Status JobService::GetJobLogs(grpc::ServerContext* call,
                                    const regatta::v1::GetJobLogsRequest* request,
                                    grpc::ServerWriter<regatta::v1::LogChunk>* writer) {
  absl::StatusOr<auth::Principal> principal = AuthenticateCall(*ctx_, call);
  if (!principal.ok()) return ToGrpcStatus(principal.status());
  return ToGrpcStatus(StreamLogs(
      *principal, *request,
      [writer](const regatta::v1::LogChunk& chunk) { return writer->Write(chunk); },
      [call] { return call->IsCancelled(); }));
}

}  // namespace regatta::api
