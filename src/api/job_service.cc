#include "src/api/job_service.h"

#include "absl/strings/str_cat.h"
#include "src/api/serve.h"
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
    const regatta::v1::GetJobStatusRequest& request) {
  RETURN_IF_ERROR(CheckIds(request.job_ids()));
  std::vector<std::string> ids(request.job_ids().begin(), request.job_ids().end());
  ASSIGN_OR_RETURN(auto found, ctx_->store->GetJobLocations(ids));
  regatta::v1::GetJobStatusResponse response;
  auto& states = *response.mutable_states();
  for (const std::string& id : ids) states[id] = regatta::v1::JOB_STATE_UNSPECIFIED;
  for (const auto& loc : found) states[loc.job_id] = loc.state;
  return response;
}

absl::StatusOr<regatta::v1::GetJobDetailsResponse> JobService::Details(
    const regatta::v1::GetJobDetailsRequest& request) {
  RETURN_IF_ERROR(CheckIds(request.job_ids()));
  std::vector<std::string> ids(request.job_ids().begin(), request.job_ids().end());
  ASSIGN_OR_RETURN(auto details, ctx_->store->GetJobDetails(ids, request.expand_spec()));
  regatta::v1::GetJobDetailsResponse response;
  for (auto& d : details) {
    std::string id = d.summary().job_id();
    (*response.mutable_jobs())[id] = std::move(d);
  }
  return response;
}

absl::StatusOr<regatta::v1::ListJobsResponse> JobService::List(
    const regatta::v1::ListJobsRequest& request) {
  if (request.page_size() < 0 || request.page_size() > kMaxPageSize) {
    return absl::InvalidArgumentError(
        absl::StrCat("page_size: must be between 0 and ", kMaxPageSize));
  }
  store::JobFilter filter;
  filter.queue = request.queue();
  filter.job_set = request.job_set();
  for (int s : request.states()) filter.states.push_back(static_cast<regatta::v1::JobState>(s));
  filter.owner = request.owner();
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
  ASSIGN_OR_RETURN(auto jobs, ctx_->store->ListJobs(filter));
  regatta::v1::ListJobsResponse response;
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
  return Serve(ctx_, call, response, [&](const auth::Principal&) { return Status(*request); });
}

grpc::Status JobService::GetJobDetails(grpc::ServerContext* call,
                                       const regatta::v1::GetJobDetailsRequest* request,
                                       regatta::v1::GetJobDetailsResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal&) { return Details(*request); });
}

grpc::Status JobService::ListJobs(grpc::ServerContext* call,
                                  const regatta::v1::ListJobsRequest* request,
                                  regatta::v1::ListJobsResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal&) { return List(*request); });
}

}  // namespace regatta::api
