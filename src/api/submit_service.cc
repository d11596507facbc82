#include "src/api/submit_service.h"

#include <map>
#include <set>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/api/grpc_status.h"
#include "src/api/serve.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"

namespace regatta::api {
namespace {

using regatta::v1::Event;
using regatta::v1::EventSequence;
using regatta::v1::JobState;

EventSequence NewSequence(const auth::Principal& principal, absl::string_view queue,
                          absl::string_view job_set) {
  EventSequence seq;
  seq.set_queue(std::string(queue));
  seq.set_job_set(std::string(job_set));
  seq.set_user_id(principal.name);
  for (const std::string& g : principal.groups) seq.add_groups(g);
  return seq;
}

absl::StatusOr<regatta::v1::Queue> LoadQueueForRequest(store::Store& store,
                                                       absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError("queue: required");
  absl::StatusOr<regatta::v1::Queue> queue = store.GetQueue(name);
  if (absl::IsNotFound(queue.status())) {
    return absl::InvalidArgumentError(absl::StrCat("queue: queue \"", name, "\" does not exist"));
  }
  return queue;
}

// The states a cancel may select: INVALID_ARGUMENT naming states[i] otherwise.
absl::Status CheckCancellableStates(const google::protobuf::RepeatedField<int>& states) {
  for (int i = 0; i < states.size(); ++i) {
    JobState s = static_cast<JobState>(states[i]);
    if (s != regatta::v1::JOB_STATE_QUEUED && s != regatta::v1::JOB_STATE_LEASED &&
        s != regatta::v1::JOB_STATE_PENDING && s != regatta::v1::JOB_STATE_RUNNING) {
      return absl::InvalidArgumentError(
          absl::StrCat("states[", i, "]: ", regatta::v1::JobState_Name(s),
                       " cannot be cancelled (use QUEUED, LEASED, PENDING or RUNNING)"));
    }
  }
  return absl::OkStatus();
}

// Preemption stops a run, so only jobs with one qualify (Armada leaves queued jobs alone).
const std::vector<JobState>& PreemptibleStates() {
  static const auto* states =
      new std::vector<JobState>{regatta::v1::JOB_STATE_LEASED, regatta::v1::JOB_STATE_PENDING,
                                regatta::v1::JOB_STATE_RUNNING};
  return *states;
}

}  // namespace

absl::Mutex& SubmitService::DedupLock(absl::string_view queue) {
  return dedup_locks_[absl::HashOf(queue) % dedup_locks_.size()];
}

absl::StatusOr<regatta::v1::Queue> SubmitService::CheckSubmit(
    const auth::Principal& principal, const regatta::v1::SubmitJobsRequest& request) {
  // Authorize against the queue's permissions, then validate every item (all or nothing).
  ASSIGN_OR_RETURN(regatta::v1::Queue queue, LoadQueueForRequest(*ctx_->store, request.queue()));
  RETURN_IF_ERROR(ctx_->authorizer->CheckQueueVerb(principal, queue, auth::QueueVerb::kSubmit));
  if (queue.cordoned()) {
    return absl::FailedPreconditionError(
        absl::StrCat("queue \"", queue.name(), "\" is cordoned and accepts no new jobs"));
  }
  RETURN_IF_ERROR(ValidateSubmitRequest(request, ctx_->policy));
  return queue;
}

absl::StatusOr<regatta::v1::ValidateSubmitResponse> SubmitService::Validate(
    const auth::Principal& principal, const regatta::v1::SubmitJobsRequest& request) {
  ASSIGN_OR_RETURN(regatta::v1::Queue queue, CheckSubmit(principal, request));
  std::vector<std::string> client_ids;
  for (const auto& item : request.items()) {
    if (!item.client_id().empty()) client_ids.push_back(item.client_id());
  }
  absl::flat_hash_map<std::string, std::string> known;
  if (!client_ids.empty()) {
    // A read without the dedup lock: the count is advice, the submit decides.
    ASSIGN_OR_RETURN(known, ctx_->store->LookupClientIds(queue.name(), client_ids));
  }
  regatta::v1::ValidateSubmitResponse response;
  for (const auto& item : request.items()) {
    const bool duplicate = !item.client_id().empty() && !known.emplace(item.client_id(), "").second;
    if (duplicate) {
      response.set_duplicates(response.duplicates() + 1);
    } else {
      response.set_new_jobs(response.new_jobs() + 1);
    }
  }
  return response;
}

absl::StatusOr<regatta::v1::SubmitJobsResponse> SubmitService::Submit(
    const auth::Principal& principal, const regatta::v1::SubmitJobsRequest& request,
    eventlog::AppendWait wait, std::vector<EventSequence> also) {
  ASSIGN_OR_RETURN(regatta::v1::Queue queue, CheckSubmit(principal, request));

  // Deduplicate by client id: against the queue's stored ids and within this request.
  std::vector<std::string> client_ids;
  for (const auto& item : request.items()) {
    if (!item.client_id().empty()) client_ids.push_back(item.client_id());
  }
  std::optional<absl::MutexLock> dedup_lock;
  absl::flat_hash_map<std::string, std::string> known;
  if (!client_ids.empty()) {
    dedup_lock.emplace(&DedupLock(queue.name()));
    ASSIGN_OR_RETURN(known, ctx_->store->LookupClientIds(queue.name(), client_ids));
  }

  regatta::v1::SubmitJobsResponse response;
  EventSequence seq = NewSequence(principal, queue.name(), request.job_set());
  std::vector<std::pair<std::string, std::string>> new_client_ids;
  const absl::Time now = ctx_->clock->Now();
  for (const auto& item : request.items()) {
    auto* out = response.add_items();
    out->set_client_id(item.client_id());
    if (!item.client_id().empty()) {
      auto it = known.find(item.client_id());
      if (it != known.end()) {
        out->set_job_id(it->second);
        out->set_duplicate(true);
        continue;
      }
    }
    Event* event = seq.add_events();
    SetTimestamp(now, event->mutable_created());
    regatta::v1::Job* job = event->mutable_submit_job()->mutable_job();
    job->set_id(ctx_->ids->NewId());
    job->set_queue(queue.name());
    job->set_job_set(request.job_set());
    job->set_owner(principal.name);
    for (const std::string& g : principal.groups) job->add_groups(g);
    job->set_client_id(item.client_id());
    job->set_priority(item.priority());
    job->set_priority_class(item.priority_class());
    *job->mutable_labels() = item.labels();
    *job->mutable_annotations() = item.annotations();
    *job->mutable_task() = item.task();
    if (item.has_gang()) *job->mutable_gang() = item.gang();
    if (item.has_retry_policy()) *job->mutable_retry_policy() = item.retry_policy();
    job->set_namespace_(item.namespace_());
    *job->mutable_services() = item.services();
    *job->mutable_ingress() = item.ingress();
    NormalizeJob(*job, ctx_->policy);
    RETURN_IF_ERROR(SealSecretEnv(*ctx_, *job));
    SetTimestamp(now, job->mutable_submit_time());
    out->set_job_id(job->id());
    if (!item.client_id().empty()) {
      known.emplace(item.client_id(), job->id());
      new_client_ids.emplace_back(item.client_id(), job->id());
    }
  }
  if (seq.events_size() == 0) {  // every item was a duplicate
    if (!also.empty()) {
      RETURN_IF_ERROR(wait == eventlog::AppendWait::kVisible
                          ? ctx_->log->AppendVisible(std::move(also)).status()
                          : ctx_->log->Append(std::move(also)).status());
    }
    return response;
  }

  std::vector<std::shared_ptr<const regatta::v1::Job>> jobs;
  const bool hand_over = on_submitted_ && seq.events_size() <= kMaxJobsHandedOver;
  if (hand_over) {
    jobs.reserve(seq.events_size());
    for (const Event& event : seq.events()) {
      jobs.push_back(std::make_shared<const regatta::v1::Job>(event.submit_job().job()));
    }
  }
  std::vector<EventSequence> batch;
  batch.reserve(1 + also.size());
  batch.push_back(std::move(seq));
  for (EventSequence& more : also) batch.push_back(std::move(more));
  if (wait == eventlog::AppendWait::kVisible) {
    // Not durable yet: a client id stored now could outlive a submit lost in a machine crash
    // and make its retry a "duplicate" of nothing. The ingester records these ids instead.
    ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ctx_->log->AppendVisible(std::move(batch)));
    if (hand_over) on_submitted_(offsets.front(), std::move(jobs));
    return response;
  }
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets, ctx_->log->Append(std::move(batch)));
  if (hand_over) on_submitted_(offsets.front(), std::move(jobs));
  if (!new_client_ids.empty()) {
    // The jobs are durable already; losing the ids only weakens dedup for a retry, so a failure
    // here is reported in the log but the submit still succeeds.
    absl::Status stored = ctx_->store->StoreClientIds(queue.name(), new_client_ids);
    if (!stored.ok()) LOG_ERROR("storing client ids failed", "error", stored.ToString());
  }
  return response;
}

absl::StatusOr<std::vector<store::JobLocation>> SubmitService::ResolveJobs(
    const std::vector<std::string>& ids, absl::string_view queue, absl::string_view job_set) {
  if (ids.empty()) return absl::InvalidArgumentError("job_ids: at least one job id is required");
  ASSIGN_OR_RETURN(std::vector<store::JobLocation> found, ctx_->store->GetJobLocations(ids));
  if (found.size() < std::set<std::string>(ids.begin(), ids.end()).size()) {
    // Maybe submitted a moment ago: let the views catch up with the log, then look again.
    RETURN_IF_ERROR(
        ctx_->wait_for_views(ctx_->log->LastOffset(), absl::Now() + ctx_->view_wait_timeout));
    ASSIGN_OR_RETURN(found, ctx_->store->GetJobLocations(ids));
  }
  std::set<std::string> found_ids;
  for (const auto& loc : found) found_ids.insert(loc.job_id);
  std::vector<std::string> missing;
  for (const std::string& id : ids) {
    if (!found_ids.count(id)) missing.push_back(id);
  }
  if (!missing.empty()) {
    if (missing.size() > 5) missing.resize(5);
    return absl::NotFoundError(
        absl::StrCat("job_ids: no such job: ", absl::StrJoin(missing, ", ")));
  }
  for (const auto& loc : found) {
    if (!queue.empty() && loc.queue != queue) {
      return absl::InvalidArgumentError(absl::StrCat("job_ids: job ", loc.job_id, " is in queue \"",
                                                     loc.queue, "\", not \"", queue, "\""));
    }
    if (!job_set.empty() && loc.job_set != job_set) {
      return absl::InvalidArgumentError(absl::StrCat("job_ids: job ", loc.job_id,
                                                     " is in job set \"", loc.job_set, "\", not \"",
                                                     job_set, "\""));
    }
  }
  return found;
}

absl::Status SubmitService::AuthorizeJobs(const auth::Principal& principal,
                                          const std::vector<store::JobLocation>& jobs,
                                          auth::QueueVerb verb) {
  std::set<std::string> queues;
  for (const auto& loc : jobs) queues.insert(loc.queue);
  for (const std::string& name : queues) {
    ASSIGN_OR_RETURN(regatta::v1::Queue queue, LoadQueueForRequest(*ctx_->store, name));
    RETURN_IF_ERROR(ctx_->authorizer->CheckQueueVerb(principal, queue, verb));
  }
  return absl::OkStatus();
}

absl::Status SubmitService::PublishPerJobSet(
    const auth::Principal& principal, absl::Span<const store::JobLocation> jobs,
    const std::function<void(const store::JobLocation&, Event&)>& make) {
  // A bulk request may cover a million jobs of one job set: cap each sequence well under the
  // log's record limit (and the ingester's batch) by starting a new one every so many events.
  constexpr int kMaxEventsPerSequence = 10'000;
  std::map<std::pair<std::string, std::string>, std::vector<EventSequence>> by_job_set;
  const absl::Time now = ctx_->clock->Now();
  for (const auto& loc : jobs) {
    std::vector<EventSequence>& seqs = by_job_set[std::make_pair(loc.queue, loc.job_set)];
    if (seqs.empty() || seqs.back().events_size() >= kMaxEventsPerSequence) {
      seqs.push_back(NewSequence(principal, loc.queue, loc.job_set));
    }
    Event* event = seqs.back().add_events();
    SetTimestamp(now, event->mutable_created());
    make(loc, *event);
  }
  if (by_job_set.empty()) return absl::OkStatus();
  std::vector<EventSequence> batch;
  for (auto& [key, seqs] : by_job_set) {
    for (EventSequence& seq : seqs) batch.push_back(std::move(seq));
  }
  return ctx_->log->Append(std::move(batch)).status();
}

absl::StatusOr<regatta::v1::CancelJobsResponse> SubmitService::Cancel(
    const auth::Principal& principal, const regatta::v1::CancelJobsRequest& request) {
  std::vector<std::string> ids(request.job_ids().begin(), request.job_ids().end());
  ASSIGN_OR_RETURN(auto jobs, ResolveJobs(ids, request.queue(), request.job_set()));
  RETURN_IF_ERROR(AuthorizeJobs(principal, jobs, auth::QueueVerb::kCancel));
  std::vector<store::JobLocation> active;
  for (auto& loc : jobs) {
    if (!store::IsTerminal(loc.state)) active.push_back(std::move(loc));
  }
  RETURN_IF_ERROR(PublishPerJobSet(principal, active, [&](const auto& loc, Event& e) {
    e.mutable_cancel_job()->set_job_id(loc.job_id);
    e.mutable_cancel_job()->set_reason(request.reason());
  }));
  regatta::v1::CancelJobsResponse response;
  for (const auto& loc : active) response.add_cancel_requested_ids(loc.job_id);
  return response;
}

absl::Status SubmitService::CancelSet(const auth::Principal& principal,
                                      const regatta::v1::CancelJobSetRequest& request) {
  ASSIGN_OR_RETURN(regatta::v1::Queue queue, LoadQueueForRequest(*ctx_->store, request.queue()));
  RETURN_IF_ERROR(ctx_->authorizer->CheckQueueVerb(principal, queue, auth::QueueVerb::kCancel));
  if (request.job_set().empty()) return absl::InvalidArgumentError("job_set: required");
  RETURN_IF_ERROR(CheckCancellableStates(request.states()));
  EventSequence seq = NewSequence(principal, queue.name(), request.job_set());
  Event* event = seq.add_events();
  SetTimestamp(ctx_->clock->Now(), event->mutable_created());
  auto* cancel = event->mutable_cancel_job_set();
  *cancel->mutable_states() = request.states();
  cancel->set_reason(request.reason());
  std::vector<EventSequence> batch;
  batch.push_back(std::move(seq));
  return ctx_->log->Append(std::move(batch)).status();
}

absl::StatusOr<regatta::v1::ReprioritizeJobsResponse> SubmitService::Reprioritize(
    const auth::Principal& principal, const regatta::v1::ReprioritizeJobsRequest& request) {
  std::vector<store::JobLocation> jobs;
  if (request.job_ids().empty()) {
    // The whole job set: every job the log holds so far, so let the views catch up first.
    if (request.queue().empty() || request.job_set().empty()) {
      return absl::InvalidArgumentError(
          "job_ids: give job ids, or queue and job_set to reprioritize a whole job set");
    }
    ASSIGN_OR_RETURN(regatta::v1::Queue queue, LoadQueueForRequest(*ctx_->store, request.queue()));
    RETURN_IF_ERROR(
        ctx_->authorizer->CheckQueueVerb(principal, queue, auth::QueueVerb::kReprioritize));
    RETURN_IF_ERROR(
        ctx_->wait_for_views(ctx_->log->LastOffset(), absl::Now() + ctx_->view_wait_timeout));
    ASSIGN_OR_RETURN(jobs, ctx_->store->GetJobSetJobs(request.queue(), request.job_set(), {}));
  } else {
    std::vector<std::string> ids(request.job_ids().begin(), request.job_ids().end());
    ASSIGN_OR_RETURN(jobs, ResolveJobs(ids, request.queue(), request.job_set()));
    RETURN_IF_ERROR(AuthorizeJobs(principal, jobs, auth::QueueVerb::kReprioritize));
    std::erase_if(jobs, [](const auto& loc) { return store::IsTerminal(loc.state); });
  }
  RETURN_IF_ERROR(PublishPerJobSet(principal, jobs, [&](const auto& loc, Event& e) {
    e.mutable_reprioritize_job()->set_job_id(loc.job_id);
    e.mutable_reprioritize_job()->set_new_priority(request.new_priority());
  }));
  regatta::v1::ReprioritizeJobsResponse response;
  for (const auto& loc : jobs) response.add_reprioritized_ids(loc.job_id);
  return response;
}

absl::StatusOr<regatta::v1::PreemptJobsResponse> SubmitService::Preempt(
    const auth::Principal& principal, const regatta::v1::PreemptJobsRequest& request) {
  std::vector<std::string> ids(request.job_ids().begin(), request.job_ids().end());
  ASSIGN_OR_RETURN(auto jobs, ResolveJobs(ids, request.queue(), request.job_set()));
  RETURN_IF_ERROR(AuthorizeJobs(principal, jobs, auth::QueueVerb::kPreempt));
  std::erase_if(jobs, [](const auto& loc) { return store::IsTerminal(loc.state); });
  RETURN_IF_ERROR(PublishPerJobSet(principal, jobs, [&](const auto& loc, Event& e) {
    e.mutable_preempt_job()->set_job_id(loc.job_id);
    e.mutable_preempt_job()->set_reason(request.reason());
  }));
  regatta::v1::PreemptJobsResponse response;
  for (const auto& loc : jobs) response.add_preempt_requested_ids(loc.job_id);
  return response;
}

// ---- Bulk: a whole queue, executor or node ------------------------------------------------

absl::StatusOr<regatta::v1::Queue> SubmitService::LoadTargetQueue(const auth::Principal& principal,
                                                                  absl::string_view name,
                                                                  auth::QueueVerb verb) {
  if (name.empty()) return absl::InvalidArgumentError("queue: required");
  absl::StatusOr<regatta::v1::Queue> queue = ctx_->store->GetQueue(name);
  if (absl::IsNotFound(queue.status())) {
    // The queue is what the call addresses (REST: /v1/queues/{name}:cancel), so NOT_FOUND.
    return absl::NotFoundError(absl::StrCat("queue: queue \"", name, "\" does not exist"));
  }
  if (!queue.ok()) return queue.status();
  RETURN_IF_ERROR(ctx_->authorizer->CheckQueueVerb(principal, *queue, verb));
  return queue;
}

absl::StatusOr<int32_t> SubmitService::PublishForSelected(const auth::Principal& principal,
                                                          const store::JobSelector& selector,
                                                          BulkAction action,
                                                          absl::string_view reason) {
  // Every job the log holds so far, including one submitted a moment ago.
  RETURN_IF_ERROR(
      ctx_->wait_for_views(ctx_->log->LastOffset(), absl::Now() + ctx_->view_wait_timeout));
  // Chunks bound both the rows and the events held in memory at once: each is published (one
  // log append) before the next is read.
  constexpr size_t kJobsPerAppend = 100'000;
  size_t published = 0;
  RETURN_IF_ERROR(ctx_->store->StreamJobs(
      selector, kJobsPerAppend, [&](std::vector<store::JobLocation>& chunk) -> absl::Status {
        RETURN_IF_ERROR(PublishPerJobSet(principal, chunk, [&](const auto& loc, Event& e) {
          if (action == BulkAction::kCancel) {
            e.mutable_cancel_job()->set_job_id(loc.job_id);
            e.mutable_cancel_job()->set_reason(std::string(reason));
          } else {
            e.mutable_preempt_job()->set_job_id(loc.job_id);
            e.mutable_preempt_job()->set_reason(std::string(reason));
          }
        }));
        published += chunk.size();
        return absl::OkStatus();
      }));
  return static_cast<int32_t>(published);
}

absl::StatusOr<regatta::v1::CancelQueueResponse> SubmitService::CancelAllInQueue(
    const auth::Principal& principal, const regatta::v1::CancelQueueRequest& request) {
  ASSIGN_OR_RETURN(regatta::v1::Queue queue,
                   LoadTargetQueue(principal, request.queue(), auth::QueueVerb::kCancel));
  RETURN_IF_ERROR(ValidatePriorityClassFilter(request.priority_classes(), ctx_->policy));
  RETURN_IF_ERROR(CheckCancellableStates(request.states()));
  store::JobSelector selector{.queues = {queue.name()}};
  selector.priority_classes.assign(request.priority_classes().begin(),
                                   request.priority_classes().end());
  for (int s : request.states()) selector.states.push_back(static_cast<JobState>(s));
  ASSIGN_OR_RETURN(int32_t count,
                   PublishForSelected(principal, selector, BulkAction::kCancel, request.reason()));
  regatta::v1::CancelQueueResponse response;
  response.set_cancel_requested_count(count);
  return response;
}

absl::StatusOr<regatta::v1::PreemptQueueResponse> SubmitService::PreemptAllInQueue(
    const auth::Principal& principal, const regatta::v1::PreemptQueueRequest& request) {
  ASSIGN_OR_RETURN(regatta::v1::Queue queue,
                   LoadTargetQueue(principal, request.queue(), auth::QueueVerb::kPreempt));
  RETURN_IF_ERROR(ValidatePriorityClassFilter(request.priority_classes(), ctx_->policy));
  store::JobSelector selector{.queues = {queue.name()}, .states = PreemptibleStates()};
  selector.priority_classes.assign(request.priority_classes().begin(),
                                   request.priority_classes().end());
  ASSIGN_OR_RETURN(int32_t count,
                   PublishForSelected(principal, selector, BulkAction::kPreempt, request.reason()));
  regatta::v1::PreemptQueueResponse response;
  response.set_preempt_requested_count(count);
  return response;
}

namespace {

// CancelOnExecutorRequest and PreemptOnExecutorRequest carry the same selection.
template <typename Request>
absl::StatusOr<store::JobSelector> ExecutorSelector(const Request& request,
                                                    const SubmitPolicy& policy) {
  if (request.executor_id().empty()) return absl::InvalidArgumentError("executor_id: required");
  RETURN_IF_ERROR(ValidatePriorityClassFilter(request.priority_classes(), policy));
  store::JobSelector selector{.executor_id = request.executor_id(), .node_id = request.node_id()};
  selector.queues.assign(request.queues().begin(), request.queues().end());
  selector.priority_classes.assign(request.priority_classes().begin(),
                                   request.priority_classes().end());
  return selector;
}

}  // namespace

absl::StatusOr<regatta::v1::CancelOnExecutorResponse> SubmitService::CancelAllOnExecutor(
    const auth::Principal& principal, const regatta::v1::CancelOnExecutorRequest& request) {
  ASSIGN_OR_RETURN(store::JobSelector selector, ExecutorSelector(request, ctx_->policy));
  // An executor runs jobs of many queues: only a global permission spans them.
  RETURN_IF_ERROR(ctx_->authorizer->CheckGlobal(principal, auth::GlobalPermission::kCancelAnyJobs));
  ASSIGN_OR_RETURN(int32_t count,
                   PublishForSelected(principal, selector, BulkAction::kCancel, request.reason()));
  regatta::v1::CancelOnExecutorResponse response;
  response.set_cancel_requested_count(count);
  return response;
}

absl::StatusOr<regatta::v1::PreemptOnExecutorResponse> SubmitService::PreemptAllOnExecutor(
    const auth::Principal& principal, const regatta::v1::PreemptOnExecutorRequest& request) {
  ASSIGN_OR_RETURN(store::JobSelector selector, ExecutorSelector(request, ctx_->policy));
  selector.states = PreemptibleStates();
  RETURN_IF_ERROR(
      ctx_->authorizer->CheckGlobal(principal, auth::GlobalPermission::kPreemptAnyJobs));
  ASSIGN_OR_RETURN(int32_t count,
                   PublishForSelected(principal, selector, BulkAction::kPreempt, request.reason()));
  regatta::v1::PreemptOnExecutorResponse response;
  response.set_preempt_requested_count(count);
  return response;
}

// ---- gRPC adapters ----------------------------------------------------------------------------

grpc::Status SubmitService::SubmitJobs(grpc::ServerContext* call,
                                       const regatta::v1::SubmitJobsRequest* request,
                                       regatta::v1::SubmitJobsResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) { return Submit(p, *request); });
}

grpc::Status SubmitService::ValidateSubmit(grpc::ServerContext* call,
                                           const regatta::v1::SubmitJobsRequest* request,
                                           regatta::v1::ValidateSubmitResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return Validate(p, *request); });
}

grpc::Status SubmitService::CancelJobs(grpc::ServerContext* call,
                                       const regatta::v1::CancelJobsRequest* request,
                                       regatta::v1::CancelJobsResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal& p) { return Cancel(p, *request); });
}

grpc::Status SubmitService::CancelJobSet(grpc::ServerContext* call,
                                         const regatta::v1::CancelJobSetRequest* request,
                                         regatta::v1::CancelJobSetResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return CancelSet(p, *request); });
}

grpc::Status SubmitService::ReprioritizeJobs(grpc::ServerContext* call,
                                             const regatta::v1::ReprioritizeJobsRequest* request,
                                             regatta::v1::ReprioritizeJobsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return Reprioritize(p, *request); });
}

grpc::Status SubmitService::PreemptJobs(grpc::ServerContext* call,
                                        const regatta::v1::PreemptJobsRequest* request,
                                        regatta::v1::PreemptJobsResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return Preempt(p, *request); });
}

grpc::Status SubmitService::CancelQueue(grpc::ServerContext* call,
                                        const regatta::v1::CancelQueueRequest* request,
                                        regatta::v1::CancelQueueResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return CancelAllInQueue(p, *request); });
}

grpc::Status SubmitService::PreemptQueue(grpc::ServerContext* call,
                                         const regatta::v1::PreemptQueueRequest* request,
                                         regatta::v1::PreemptQueueResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return PreemptAllInQueue(p, *request); });
}

grpc::Status SubmitService::CancelOnExecutor(grpc::ServerContext* call,
                                             const regatta::v1::CancelOnExecutorRequest* request,
                                             regatta::v1::CancelOnExecutorResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return CancelAllOnExecutor(p, *request); });
}

grpc::Status SubmitService::PreemptOnExecutor(grpc::ServerContext* call,
                                              const regatta::v1::PreemptOnExecutorRequest* request,
                                              regatta::v1::PreemptOnExecutorResponse* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return PreemptAllOnExecutor(p, *request); });
}

}  // namespace regatta::api
