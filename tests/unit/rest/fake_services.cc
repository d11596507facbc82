#include "tests/unit/rest/fake_services.h"

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/server_builder.h"
#include "gtest/gtest.h"

namespace regatta::rest::testing {
namespace v1 = regatta::v1;

void Recorder::Record(grpc::ServerContext* context, const std::string& method,
                      const google::protobuf::Message& request) {
  RecordedCall call;
  call.method = method;
  call.request.reset(request.New());
  call.request->CopyFrom(request);
  const auto& metadata = context->client_metadata();
  if (auto it = metadata.find("authorization"); it != metadata.end()) {
    call.authorization.assign(it->second.data(), it->second.size());
  }
  absl::MutexLock lock(&mu_);
  calls_.push_back(std::move(call));
}

void Recorder::FailNext(grpc::Status status) {
  absl::MutexLock lock(&mu_);
  failures_.push_back(std::move(status));
}

void Recorder::HangNext() {
  absl::MutexLock lock(&mu_);
  hang_next_ = true;
}

grpc::Status Recorder::TakeFailure(grpc::ServerContext* context) {
  bool hang;
  {
    absl::MutexLock lock(&mu_);
    hang = hang_next_;
    hang_next_ = false;
  }
  if (hang) {
    const absl::Time give_up = absl::Now() + absl::Seconds(30);
    while (!context->IsCancelled() && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(5));
    return grpc::Status(grpc::StatusCode::CANCELLED, "hung until cancelled");
  }
  absl::MutexLock lock(&mu_);
  if (failures_.empty()) return grpc::Status::OK;
  grpc::Status status = failures_.front();
  failures_.pop_front();
  return status;
}

std::vector<RecordedCall> Recorder::Calls() {
  absl::MutexLock lock(&mu_);
  return calls_;
}

RecordedCall Recorder::Last() {
  absl::MutexLock lock(&mu_);
  if (calls_.empty()) {
    ADD_FAILURE() << "no gRPC call was made";
    return RecordedCall{"", std::make_shared<v1::GetQueueRequest>(), ""};
  }
  return calls_.back();
}

size_t Recorder::Count() {
  absl::MutexLock lock(&mu_);
  return calls_.size();
}

// ---- Queues -----------------------------------------------------------------------------------

namespace {
void FillQueue(const std::string& name, v1::Queue* out) {
  out->set_name(name);
  out->set_priority_factor(1);
  out->mutable_create_time()->set_seconds(1'700'000'000);
}
}  // namespace

grpc::Status FakeQueueService::CreateQueue(grpc::ServerContext* c, const v1::CreateQueueRequest* r,
                                           v1::Queue* out) {
  recorder_->Record(c, "CreateQueue", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  *out = r->queue();
  out->mutable_create_time()->set_seconds(1'700'000'000);
  return grpc::Status::OK;
}

grpc::Status FakeQueueService::UpdateQueue(grpc::ServerContext* c, const v1::UpdateQueueRequest* r,
                                           v1::Queue* out) {
  recorder_->Record(c, "UpdateQueue", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  *out = r->queue();
  return grpc::Status::OK;
}

grpc::Status FakeQueueService::DeleteQueue(grpc::ServerContext* c, const v1::DeleteQueueRequest* r,
                                           v1::DeleteQueueResponse* out) {
  recorder_->Record(c, "DeleteQueue", *r);
  return recorder_->TakeFailure(c);
}

grpc::Status FakeQueueService::GetQueue(grpc::ServerContext* c, const v1::GetQueueRequest* r,
                                        v1::Queue* out) {
  recorder_->Record(c, "GetQueue", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  FillQueue(r->name(), out);
  return grpc::Status::OK;
}

grpc::Status FakeQueueService::ListQueues(grpc::ServerContext* c, const v1::ListQueuesRequest* r,
                                          v1::ListQueuesResponse* out) {
  recorder_->Record(c, "ListQueues", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  FillQueue("a", out->add_queues());
  FillQueue("b", out->add_queues());
  out->set_next_page_token("next");
  return grpc::Status::OK;
}

grpc::Status FakeQueueService::CordonQueue(grpc::ServerContext* c, const v1::CordonQueueRequest* r,
                                           v1::Queue* out) {
  recorder_->Record(c, "CordonQueue", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  FillQueue(r->name(), out);
  out->set_cordoned(true);
  return grpc::Status::OK;
}

grpc::Status FakeQueueService::UncordonQueue(grpc::ServerContext* c,
                                             const v1::CordonQueueRequest* r, v1::Queue* out) {
  recorder_->Record(c, "UncordonQueue", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  FillQueue(r->name(), out);
  return grpc::Status::OK;
}

// ---- Submit -----------------------------------------------------------------------------------

grpc::Status FakeSubmitService::SubmitJobs(grpc::ServerContext* c, const v1::SubmitJobsRequest* r,
                                           v1::SubmitJobsResponse* out) {
  recorder_->Record(c, "SubmitJobs", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  for (int i = 0; i < r->items_size(); ++i) {
    v1::SubmitJobsResponseItem* item = out->add_items();
    item->set_job_id(absl::StrCat("job-", i + 1));
    item->set_client_id(r->items(i).client_id());
  }
  return grpc::Status::OK;
}

grpc::Status FakeSubmitService::CancelJobs(grpc::ServerContext* c, const v1::CancelJobsRequest* r,
                                           v1::CancelJobsResponse* out) {
  recorder_->Record(c, "CancelJobs", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  *out->mutable_cancel_requested_ids() = r->job_ids();
  return grpc::Status::OK;
}

grpc::Status FakeSubmitService::CancelJobSet(grpc::ServerContext* c,
                                             const v1::CancelJobSetRequest* r,
                                             v1::CancelJobSetResponse* out) {
  recorder_->Record(c, "CancelJobSet", *r);
  return recorder_->TakeFailure(c);
}

grpc::Status FakeSubmitService::ReprioritizeJobs(grpc::ServerContext* c,
                                                 const v1::ReprioritizeJobsRequest* r,
                                                 v1::ReprioritizeJobsResponse* out) {
  recorder_->Record(c, "ReprioritizeJobs", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  *out->mutable_reprioritized_ids() = r->job_ids();
  return grpc::Status::OK;
}

grpc::Status FakeSubmitService::PreemptJobs(grpc::ServerContext* c, const v1::PreemptJobsRequest* r,
                                            v1::PreemptJobsResponse* out) {
  recorder_->Record(c, "PreemptJobs", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  *out->mutable_preempt_requested_ids() = r->job_ids();
  return grpc::Status::OK;
}

// The bulk calls answer with the number of priority-class filters, so a test can tell the
// body reached the service.
grpc::Status FakeSubmitService::CancelQueue(grpc::ServerContext* c, const v1::CancelQueueRequest* r,
                                            v1::CancelQueueResponse* out) {
  recorder_->Record(c, "CancelQueue", *r);
  out->set_cancel_requested_count(r->priority_classes_size());
  return recorder_->TakeFailure(c);
}

grpc::Status FakeSubmitService::PreemptQueue(grpc::ServerContext* c,
                                             const v1::PreemptQueueRequest* r,
                                             v1::PreemptQueueResponse* out) {
  recorder_->Record(c, "PreemptQueue", *r);
  out->set_preempt_requested_count(r->priority_classes_size());
  return recorder_->TakeFailure(c);
}

grpc::Status FakeSubmitService::CancelOnExecutor(grpc::ServerContext* c,
                                                 const v1::CancelOnExecutorRequest* r,
                                                 v1::CancelOnExecutorResponse* out) {
  recorder_->Record(c, "CancelOnExecutor", *r);
  out->set_cancel_requested_count(r->priority_classes_size());
  return recorder_->TakeFailure(c);
}

grpc::Status FakeSubmitService::PreemptOnExecutor(grpc::ServerContext* c,
                                                  const v1::PreemptOnExecutorRequest* r,
                                                  v1::PreemptOnExecutorResponse* out) {
  recorder_->Record(c, "PreemptOnExecutor", *r);
  out->set_preempt_requested_count(r->priority_classes_size());
  return recorder_->TakeFailure(c);
}

// ---- Jobs -------------------------------------------------------------------------------------

grpc::Status FakeJobService::GetJobStatus(grpc::ServerContext* c, const v1::GetJobStatusRequest* r,
                                          v1::GetJobStatusResponse* out) {
  recorder_->Record(c, "GetJobStatus", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  for (const std::string& id : r->job_ids()) {
    (*out->mutable_states())[id] = v1::JOB_STATE_RUNNING;
  }
  return grpc::Status::OK;
}

grpc::Status FakeJobService::GetJobDetails(grpc::ServerContext* c,
                                           const v1::GetJobDetailsRequest* r,
                                           v1::GetJobDetailsResponse* out) {
  recorder_->Record(c, "GetJobDetails", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  for (const std::string& id : r->job_ids()) {
    v1::JobDetails& details = (*out->mutable_jobs())[id];
    details.mutable_summary()->set_job_id(id);
    details.mutable_summary()->set_state(v1::JOB_STATE_SUCCEEDED);
    if (r->expand_spec()) details.mutable_job()->set_id(id);
  }
  return grpc::Status::OK;
}

grpc::Status FakeJobService::ListJobs(grpc::ServerContext* c, const v1::ListJobsRequest* r,
                                      v1::ListJobsResponse* out) {
  recorder_->Record(c, "ListJobs", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  v1::JobSummary* job = out->add_jobs();
  job->set_job_id("job-1");
  job->set_queue(r->queue());
  job->set_state(v1::JOB_STATE_QUEUED);
  out->set_next_page_token("page-2");
  return grpc::Status::OK;
}

grpc::Status FakeJobService::GetJobLogs(grpc::ServerContext* c, const v1::GetJobLogsRequest* r,
                                        grpc::ServerWriter<v1::LogChunk>* writer) {
  recorder_->Record(c, "GetJobLogs", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  {
    absl::MutexLock lock(&mu_);
    ++active_logs_;
  }
  auto finish = [&](grpc::Status status, bool was_cancelled) {
    absl::MutexLock lock(&mu_);
    --active_logs_;
    if (was_cancelled) ++cancelled_logs_;
    return status;
  };
  size_t next = 0;
  int64_t offset = 0;
  for (bool first = true;; first = false) {
    std::vector<std::string> fresh;
    bool ended;
    grpc::Status failure;
    {
      absl::MutexLock lock(&mu_);
      // Wakes on news or after a short wait, to notice cancellation.
      auto news = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return log_.size() > next || log_ended_;
      };
      if (!first) mu_.AwaitWithTimeout(absl::Condition(&news), absl::Milliseconds(10));
      fresh.assign(log_.begin() + next, log_.end());
      next = log_.size();
      ended = log_ended_;
      failure = log_failure_;
    }
    for (std::string& data : fresh) {
      v1::LogChunk chunk;
      offset += static_cast<int64_t>(data.size());
      chunk.set_data(std::move(data));
      chunk.set_next_offset(offset);
      if (!writer->Write(chunk)) return finish(grpc::Status::CANCELLED, true);
    }
    if (!failure.ok()) return finish(failure, false);
    if (ended || !r->follow()) {
      // The last chunk carries no data, like the executor's.
      v1::LogChunk last;
      last.set_next_offset(offset);
      last.set_end(ended);
      writer->Write(last);
      return finish(grpc::Status::OK, false);
    }
    if (c->IsCancelled()) return finish(grpc::Status::CANCELLED, true);
  }
}

void FakeJobService::set_log(std::vector<std::string> chunks) {
  absl::MutexLock lock(&mu_);
  log_ = std::move(chunks);
}

void FakeJobService::AppendLog(std::string chunk) {
  absl::MutexLock lock(&mu_);
  log_.push_back(std::move(chunk));
}

void FakeJobService::EndLog() {
  absl::MutexLock lock(&mu_);
  log_ended_ = true;
}

void FakeJobService::FailLogAfterData(grpc::Status status) {
  absl::MutexLock lock(&mu_);
  log_failure_ = std::move(status);
}

bool FakeJobService::WaitForActiveLogs(int n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto cond = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return active_logs_ == n; };
  return mu_.AwaitWithTimeout(absl::Condition(&cond), timeout);
}

bool FakeJobService::WaitForCancelledLogs(int n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto cond = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancelled_logs_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&cond), timeout);
}

// ---- Events -----------------------------------------------------------------------------------

std::vector<v1::JobSetEvent> FakeEventService::CannedEvents() {
  std::vector<v1::JobSetEvent> events;
  const v1::JobEventType types[] = {v1::JOB_EVENT_TYPE_SUBMITTED, v1::JOB_EVENT_TYPE_QUEUED,
                                    v1::JOB_EVENT_TYPE_RUNNING};
  for (int i = 0; i < 3; ++i) {
    v1::JobSetEvent event;
    event.set_id(absl::StrCat(i + 1, "-0"));
    event.set_job_id("job-1");
    event.set_type(types[i]);
    event.mutable_created()->set_seconds(1'700'000'000 + i);
    events.push_back(event);
  }
  return events;
}

void FakeEventService::set_canned(bool canned) {
  absl::MutexLock lock(&mu_);
  canned_ = canned;
}

void FakeEventService::Push(const v1::JobSetEvent& event) {
  absl::MutexLock lock(&mu_);
  pushed_.push_back(event);
}

grpc::Status FakeEventService::GetJobSetEvents(grpc::ServerContext* c,
                                               const v1::JobSetEventsRequest* r,
                                               grpc::ServerWriter<v1::JobSetEvent>* writer) {
  recorder_->Record(c, "GetJobSetEvents", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  bool canned;
  size_t next_pushed;
  {
    absl::MutexLock lock(&mu_);
    ++active_;
    canned = canned_;
    next_pushed = pushed_.size();
  }
  auto finish = [&](grpc::Status status, bool was_cancelled) {
    absl::MutexLock lock(&mu_);
    --active_;
    if (was_cancelled) ++cancelled_;
    return status;
  };
  if (canned) {
    bool past_from = r->from_id().empty();
    for (v1::JobSetEvent event : CannedEvents()) {
      if (!past_from) {
        past_from = event.id() == r->from_id();
        continue;
      }
      event.set_queue(r->queue());
      event.set_job_set(r->job_set());
      if (!writer->Write(event)) return finish(grpc::Status::CANCELLED, true);
    }
  }
  if (!r->watch()) return finish(grpc::Status::OK, false);
  while (!c->IsCancelled()) {
    std::vector<v1::JobSetEvent> fresh;
    {
      absl::MutexLock lock(&mu_);
      // Wakes on a push or after a short wait, to notice cancellation.
      auto has_fresh = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return pushed_.size() > next_pushed;
      };
      mu_.AwaitWithTimeout(absl::Condition(&has_fresh), absl::Milliseconds(10));
      fresh.assign(pushed_.begin() + next_pushed, pushed_.end());
      next_pushed = pushed_.size();
    }
    for (v1::JobSetEvent& event : fresh) {
      if (!writer->Write(event)) break;
    }
  }
  return finish(grpc::Status::CANCELLED, true);
}

int FakeEventService::active() {
  absl::MutexLock lock(&mu_);
  return active_;
}

int FakeEventService::cancelled() {
  absl::MutexLock lock(&mu_);
  return cancelled_;
}

bool FakeEventService::WaitForActive(int n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto cond = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return active_ == n; };
  return mu_.AwaitWithTimeout(absl::Condition(&cond), timeout);
}

bool FakeEventService::WaitForCancelled(int n, absl::Duration timeout) {
  absl::MutexLock lock(&mu_);
  auto cond = [this, n]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return cancelled_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&cond), timeout);
}

// ---- Server -----------------------------------------------------------------------------------

grpc::Status FakePipelineService::CreatePipeline(grpc::ServerContext* c,
                                                 const v1::CreatePipelineRequest* r,
                                                 v1::CreatePipelineResponse* out) {
  recorder_->Record(c, "CreatePipeline", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  out->mutable_pipeline()->set_name(r->name());
  out->mutable_pipeline()->set_id("p-1");
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::GetPipeline(grpc::ServerContext* c,
                                              const v1::GetPipelineRequest* r, v1::Pipeline* out) {
  recorder_->Record(c, "GetPipeline", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  out->set_id(r->pipeline());
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::ListPipelines(grpc::ServerContext* c,
                                                const v1::ListPipelinesRequest* r,
                                                v1::ListPipelinesResponse* out) {
  recorder_->Record(c, "ListPipelines", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::DeletePipeline(grpc::ServerContext* c,
                                                 const v1::DeletePipelineRequest* r,
                                                 v1::DeletePipelineResponse* out) {
  recorder_->Record(c, "DeletePipeline", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::CreatePipelineVersion(grpc::ServerContext* c,
                                                        const v1::CreatePipelineVersionRequest* r,
                                                        v1::PipelineVersion* out) {
  recorder_->Record(c, "CreatePipelineVersion", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::GetPipelineVersion(grpc::ServerContext* c,
                                                     const v1::GetPipelineVersionRequest* r,
                                                     v1::PipelineVersion* out) {
  recorder_->Record(c, "GetPipelineVersion", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::ListPipelineVersions(grpc::ServerContext* c,
                                                       const v1::ListPipelineVersionsRequest* r,
                                                       v1::ListPipelineVersionsResponse* out) {
  recorder_->Record(c, "ListPipelineVersions", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::DeletePipelineVersion(grpc::ServerContext* c,
                                                        const v1::DeletePipelineVersionRequest* r,
                                                        v1::DeletePipelineVersionResponse* out) {
  recorder_->Record(c, "DeletePipelineVersion", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::CreateExperiment(grpc::ServerContext* c,
                                                   const v1::CreateExperimentRequest* r,
                                                   v1::Experiment* out) {
  recorder_->Record(c, "CreateExperiment", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::GetExperiment(grpc::ServerContext* c,
                                                const v1::GetExperimentRequest* r,
                                                v1::Experiment* out) {
  recorder_->Record(c, "GetExperiment", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::ListExperiments(grpc::ServerContext* c,
                                                  const v1::ListExperimentsRequest* r,
                                                  v1::ListExperimentsResponse* out) {
  recorder_->Record(c, "ListExperiments", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::ArchiveExperiment(grpc::ServerContext* c,
                                                    const v1::ArchiveExperimentRequest* r,
                                                    v1::Experiment* out) {
  recorder_->Record(c, "ArchiveExperiment", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::UnarchiveExperiment(grpc::ServerContext* c,
                                                      const v1::ArchiveExperimentRequest* r,
                                                      v1::Experiment* out) {
  recorder_->Record(c, "UnarchiveExperiment", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::DeleteExperiment(grpc::ServerContext* c,
                                                   const v1::DeleteExperimentRequest* r,
                                                   v1::DeleteExperimentResponse* out) {
  recorder_->Record(c, "DeleteExperiment", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::GetArtifact(grpc::ServerContext* c,
                                              const v1::GetArtifactRequest* r,
                                              v1::PipelineArtifact* out) {
  recorder_->Record(c, "GetArtifact", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::ListArtifacts(grpc::ServerContext* c,
                                                const v1::ListArtifactsRequest* r,
                                                v1::ListArtifactsResponse* out) {
  recorder_->Record(c, "ListArtifacts", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::GetArtifactLineage(grpc::ServerContext* c,
                                                     const v1::GetArtifactLineageRequest* r,
                                                     v1::ArtifactLineageResponse* out) {
  recorder_->Record(c, "GetArtifactLineage", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  out->mutable_artifact()->set_id(r->artifact_id());
  out->mutable_producer()->set_task_state(v1::PIPELINE_TASK_STATE_CACHED);
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::ListCacheEntries(grpc::ServerContext* c,
                                                   const v1::ListCacheEntriesRequest* r,
                                                   v1::ListCacheEntriesResponse* out) {
  recorder_->Record(c, "ListCacheEntries", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakePipelineService::PruneCache(grpc::ServerContext* c, const v1::PruneCacheRequest* r,
                                             v1::PruneCacheResponse* out) {
  recorder_->Record(c, "PruneCache", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::CreateRun(grpc::ServerContext* c, const v1::CreateRunRequest* r,
                                       v1::PipelineRun* out) {
  recorder_->Record(c, "CreateRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::GetRun(grpc::ServerContext* c, const v1::GetRunRequest* r,
                                    v1::PipelineRun* out) {
  recorder_->Record(c, "GetRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  out->set_id(r->run_id());
  out->set_state(v1::PIPELINE_RUN_STATE_RUNNING);
  return grpc::Status::OK;
}

grpc::Status FakeRunService::ListRuns(grpc::ServerContext* c, const v1::ListRunsRequest* r,
                                      v1::ListRunsResponse* out) {
  recorder_->Record(c, "ListRuns", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::TerminateRun(grpc::ServerContext* c, const v1::RunIdRequest* r,
                                          v1::PipelineRun* out) {
  recorder_->Record(c, "TerminateRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::RetryRun(grpc::ServerContext* c, const v1::RunIdRequest* r,
                                      v1::PipelineRun* out) {
  recorder_->Record(c, "RetryRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::ArchiveRun(grpc::ServerContext* c, const v1::RunIdRequest* r,
                                        v1::PipelineRun* out) {
  recorder_->Record(c, "ArchiveRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::UnarchiveRun(grpc::ServerContext* c, const v1::RunIdRequest* r,
                                          v1::PipelineRun* out) {
  recorder_->Record(c, "UnarchiveRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::DeleteRun(grpc::ServerContext* c, const v1::RunIdRequest* r,
                                       v1::DeleteRunResponse* out) {
  recorder_->Record(c, "DeleteRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::CreateRecurringRun(grpc::ServerContext* c,
                                                const v1::CreateRecurringRunRequest* r,
                                                v1::RecurringRun* out) {
  recorder_->Record(c, "CreateRecurringRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::GetRecurringRun(grpc::ServerContext* c,
                                             const v1::RecurringRunIdRequest* r,
                                             v1::RecurringRun* out) {
  recorder_->Record(c, "GetRecurringRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::ListRecurringRuns(grpc::ServerContext* c,
                                               const v1::ListRecurringRunsRequest* r,
                                               v1::ListRecurringRunsResponse* out) {
  recorder_->Record(c, "ListRecurringRuns", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::EnableRecurringRun(grpc::ServerContext* c,
                                                const v1::RecurringRunIdRequest* r,
                                                v1::RecurringRun* out) {
  recorder_->Record(c, "EnableRecurringRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::DisableRecurringRun(grpc::ServerContext* c,
                                                 const v1::RecurringRunIdRequest* r,
                                                 v1::RecurringRun* out) {
  recorder_->Record(c, "DisableRecurringRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeRunService::DeleteRecurringRun(grpc::ServerContext* c,
                                                const v1::RecurringRunIdRequest* r,
                                                v1::DeleteRecurringRunResponse* out) {
  recorder_->Record(c, "DeleteRecurringRun", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::ApplyConfiguration(grpc::ServerContext* c,
                                                   const v1::ApplyConfigurationRequest* r,
                                                   v1::Configuration* out) {
  recorder_->Record(c, "ApplyConfiguration", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  *out = r->configuration();
  out->set_generation(1);
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::ListConfigurations(grpc::ServerContext* c,
                                                   const v1::ListConfigurationsRequest* r,
                                                   v1::ListConfigurationsResponse* out) {
  recorder_->Record(c, "ListConfigurations", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::GetConfiguration(grpc::ServerContext* c,
                                                 const v1::GetConfigurationRequest* r,
                                                 v1::Configuration* out) {
  recorder_->Record(c, "GetConfiguration", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  out->set_name(r->name());
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::DeleteConfiguration(grpc::ServerContext* c,
                                                    const v1::DeleteConfigurationRequest* r,
                                                    v1::DeleteConfigurationResponse* out) {
  recorder_->Record(c, "DeleteConfiguration", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::ListInstances(grpc::ServerContext* c,
                                              const v1::ListInstancesRequest* r,
                                              v1::ListInstancesResponse* out) {
  recorder_->Record(c, "ListInstances", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::GetInstance(grpc::ServerContext* c, const v1::GetInstanceRequest* r,
                                            v1::Instance* out) {
  recorder_->Record(c, "GetInstance", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  out->set_name(r->name());
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::ListServices(grpc::ServerContext* c,
                                             const v1::ListServicesRequest* r,
                                             v1::ListServicesResponse* out) {
  recorder_->Record(c, "ListServices", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  v1::Service* service = out->add_services();
  service->set_name("cams-svc");
  service->set_kind(v1::SERVICE_KIND_CONFIGURATION);
  v1::ServiceEndpoint* endpoint = service->add_endpoints();
  endpoint->set_address("node-a");
  (*endpoint->mutable_ports())["rtsp"] = 8554;
  endpoint->set_ready(true);
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::GetService(grpc::ServerContext* c, const v1::GetServiceRequest* r,
                                           v1::Service* out) {
  recorder_->Record(c, "GetService", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  out->set_name(r->name());
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::ApplySecret(grpc::ServerContext* c, const v1::ApplySecretRequest* r,
                                            v1::Secret* out) {
  recorder_->Record(c, "ApplySecret", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::ListSecrets(grpc::ServerContext* c, const v1::ListSecretsRequest* r,
                                            v1::ListSecretsResponse* out) {
  recorder_->Record(c, "ListSecrets", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::GetSecret(grpc::ServerContext* c, const v1::GetSecretRequest* r,
                                          v1::Secret* out) {
  recorder_->Record(c, "GetSecret", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  out->set_name(r->name());
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::DeleteSecret(grpc::ServerContext* c,
                                             const v1::DeleteSecretRequest* r,
                                             v1::DeleteSecretResponse* out) {
  recorder_->Record(c, "DeleteSecret", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::ApplyConfigMap(grpc::ServerContext* c,
                                               const v1::ApplyConfigMapRequest* r,
                                               v1::ConfigMap* out) {
  recorder_->Record(c, "ApplyConfigMap", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::ListConfigMaps(grpc::ServerContext* c,
                                               const v1::ListConfigMapsRequest* r,
                                               v1::ListConfigMapsResponse* out) {
  recorder_->Record(c, "ListConfigMaps", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::GetConfigMap(grpc::ServerContext* c,
                                             const v1::GetConfigMapRequest* r, v1::ConfigMap* out) {
  recorder_->Record(c, "GetConfigMap", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  out->set_name(r->name());
  return grpc::Status::OK;
}

grpc::Status FakeDeviceService::DeleteConfigMap(grpc::ServerContext* c,
                                                const v1::DeleteConfigMapRequest* r,
                                                v1::DeleteConfigMapResponse* out) {
  recorder_->Record(c, "DeleteConfigMap", *r);
  if (auto s = recorder_->TakeFailure(c); !s.ok()) return s;
  return grpc::Status::OK;
}

FakeApi::FakeApi() {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&queues_);
  builder.RegisterService(&submit_);
  builder.RegisterService(&jobs_);
  builder.RegisterService(&events_);
  builder.RegisterService(&pipelines_);
  builder.RegisterService(&runs_);
  builder.RegisterService(&devices_);
  server_ = builder.BuildAndStart();
  channel_ = server_->InProcessChannel(grpc::ChannelArguments());
}

FakeApi::~FakeApi() {
  // Watching handlers run until cancelled; a deadline makes Shutdown cancel them.
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
  server_->Wait();
}

}  // namespace regatta::rest::testing
