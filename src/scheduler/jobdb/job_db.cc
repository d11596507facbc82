#include "src/scheduler/jobdb/job_db.h"

#include <utility>

#include "src/common/logging.h"

namespace regatta::scheduler {
namespace {

bool RetryableEnd(const RunRecord& run) {
  switch (run.state) {
    case regatta::v1::RUN_STATE_LEASE_EXPIRED:
    case regatta::v1::RUN_STATE_LEASE_RETURNED:
      return true;
    case regatta::v1::RUN_STATE_FAILED:
      return !run.error.has_value() || !run.error->terminal();
    default:
      return false;
  }
}

ResourceList RequestsOf(const regatta::v1::Job& job) {
  std::vector<std::pair<std::string, std::string>> entries(
      job.task().resources().requests().begin(), job.task().resources().requests().end());
  absl::StatusOr<ResourceList> list = ResourceList::FromStrings(entries);
  if (!list.ok()) {
    // Validated at submit; a bad stored spec schedules as if it requested nothing extra.
    LOG_WARN("job has unparseable resource requests", "job", job.id(), "error",
             list.status().ToString());
    return ResourceList();
  }
  return *std::move(list);
}

}  // namespace

int JobRecord::retryable_failures() const {
  int n = 0;
  for (const RunRecord& run : runs) n += RetryableEnd(run) ? 1 : 0;
  return n;
}

JobDb::QueuedKey QueuedKeyOf(const JobRecord& job) {
  return JobDb::QueuedKey{-job.priority_class_priority, job.priority, job.submit_time, job.id};
}

JobDb::JobDb(PriorityClassLookup priority_of) : priority_of_(std::move(priority_of)) {}

JobRecord* JobDb::Mutable(absl::string_view job_id) {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

const JobRecord* JobDb::FindJob(absl::string_view job_id) const {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->second.get();
}

const JobRecord* JobDb::FindJobByRun(absl::string_view run_id) const {
  auto it = job_of_run_.find(run_id);
  return it == job_of_run_.end() ? nullptr : FindJob(it->second);
}

const RunRecord* JobDb::FindRun(absl::string_view run_id) const {
  const JobRecord* job = FindJobByRun(run_id);
  if (job == nullptr) return nullptr;
  for (const RunRecord& run : job->runs) {
    if (run.run_id == run_id) return &run;
  }
  return nullptr;
}

std::vector<std::string> JobDb::ActiveRunsOf(absl::string_view executor_id) const {
  auto it = active_by_executor_.find(executor_id);
  if (it == active_by_executor_.end()) return {};
  return std::vector<std::string>(it->second.begin(), it->second.end());
}

void JobDb::IndexRun(const RunRecord& run) {
  if (run.active()) {
    active_by_executor_[run.executor_id].insert(run.run_id);
    return;
  }
  auto it = active_by_executor_.find(run.executor_id);
  if (it == active_by_executor_.end()) return;
  it->second.erase(run.run_id);
  if (it->second.empty()) active_by_executor_.erase(it);
}

void JobDb::IndexQueued(JobRecord& job) {
  if (job.state == regatta::v1::JOB_STATE_QUEUED && !job.cancel_requested) {
    queued_[job.queue].insert(QueuedKeyOf(job));
  }
}

void JobDb::RemoveQueued(const JobRecord& job) {
  auto it = queued_.find(job.queue);
  if (it == queued_.end()) return;
  it->second.erase(QueuedKeyOf(job));
  if (it->second.empty()) queued_.erase(it);
}

void JobDb::RefreshRoundJob(JobRecord& job) {
  RoundJob& r = job.round_job;
  r.id = job.id;
  r.priority_class_priority = job.priority_class_priority;
  r.task = &job.spec->task();
  r.avoid_nodes.clear();
  for (const RunRecord& run : job.runs) {
    if (RetryableEnd(run) && !run.node_id.empty()) r.avoid_nodes.push_back(run.node_id);
  }
}

void JobDb::Bump() { ++version_; }

bool JobDb::ApplyJobRow(const store::SchedulerJobRow& row, int64_t views_offset,
                        std::shared_ptr<const regatta::v1::Job> spec) {
  absl::MutexLock lock(&mu_);
  JobRecord* job = Mutable(row.job_id);
  if (job == nullptr) {
    if (spec == nullptr) return false;
    auto record = std::make_unique<JobRecord>();
    job = record.get();
    job->id = row.job_id;
    job->queue = row.queue;
    job->job_set = row.job_set;
    job->priority_class = row.priority_class;
    job->priority_class_priority = priority_of_(row.priority_class);
    job->submit_time = row.submit_time;
    job->spec = std::move(spec);
    job->round_job.requests = RequestsOf(*job->spec);
    jobs_.emplace(row.job_id, std::move(record));
  } else {
    RemoveQueued(*job);
  }
  job->priority = row.priority;
  job->cancel_requested = row.cancel_requested;
  job->cancel_reason = row.cancel_reason;
  job->preempt_requested = row.preempt_requested;
  job->preempt_reason = row.preempt_reason;
  // Until the views include the scheduler's latest decision, the decision holds the state.
  if (job->decision == Decision::kNone || views_offset >= job->decision_offset) {
    job->state = row.state;
    job->decision = Decision::kNone;
    job->decision_offset = 0;
  }
  RefreshRoundJob(*job);
  IndexQueued(*job);
  Bump();
  return true;
}

bool JobDb::ApplyRunRow(const store::SchedulerRunRow& row, int64_t views_offset) {
  absl::MutexLock lock(&mu_);
  JobRecord* job = Mutable(row.job_id);
  if (job == nullptr) return false;
  RunRecord* run = nullptr;
  for (RunRecord& r : job->runs) {
    if (r.run_id == row.run_id) run = &r;
  }
  if (run == nullptr) {
    job->runs.push_back(RunRecord{row.run_id, row.job_id, row.executor_id, row.node_id, row.pool,
                                  row.state, row.leased_time, row.error});
    job_of_run_[row.run_id] = row.job_id;
    IndexRun(job->runs.back());
  } else if (store::IsTerminal(row.state) || !store::IsTerminal(run->state)) {
    // The views win, except that a run the scheduler has just ended (e.g. expired) does not
    // come back to life from an older row.
    run->state = row.state;
    run->error = row.error;
    IndexRun(*run);
  }
  RefreshRoundJob(*job);
  Bump();
  return true;
}

void JobDb::RecordLease(absl::string_view job_id, RunRecord run, int64_t offset) {
  absl::MutexLock lock(&mu_);
  JobRecord* job = Mutable(job_id);
  if (job == nullptr) return;
  RemoveQueued(*job);
  job_of_run_[run.run_id] = job->id;
  job->runs.push_back(std::move(run));
  IndexRun(job->runs.back());
  job->state = regatta::v1::JOB_STATE_LEASED;
  job->decision = Decision::kLeased;
  job->decision_offset = offset;
  Bump();
}

void JobDb::RecordJobDecision(absl::string_view job_id, Decision decision,
                              regatta::v1::JobState new_state, int64_t offset) {
  absl::MutexLock lock(&mu_);
  JobRecord* job = Mutable(job_id);
  if (job == nullptr) return;
  RemoveQueued(*job);
  job->state = new_state;
  job->decision = decision;
  job->decision_offset = offset;
  RefreshRoundJob(*job);
  IndexQueued(*job);
  Bump();
}

void JobDb::RecordRunState(absl::string_view run_id, regatta::v1::RunState state,
                           std::optional<regatta::v1::Error> error) {
  absl::MutexLock lock(&mu_);
  auto it = job_of_run_.find(run_id);
  if (it == job_of_run_.end()) return;
  JobRecord* job = Mutable(it->second);
  if (job == nullptr) return;
  for (RunRecord& run : job->runs) {
    if (run.run_id == run_id && !store::IsTerminal(run.state)) {
      run.state = state;
      run.error = std::move(error);
      IndexRun(run);
    }
  }
  RefreshRoundJob(*job);
  Bump();
}

void JobDb::Clear() {
  absl::MutexLock lock(&mu_);
  jobs_.clear();
  job_of_run_.clear();
  active_by_executor_.clear();
  queued_.clear();
  Bump();
}

void JobDb::Compact(int64_t views_offset) {
  std::vector<std::string> drop;
  for (const auto& [id, job] : jobs_) {
    if (!job->terminal() || views_offset < job->decision_offset) continue;
    bool holds = false;
    for (const RunRecord& run : job->runs) holds = holds || run.active();
    if (!holds) drop.push_back(id);
  }
  if (drop.empty()) return;
  absl::MutexLock lock(&mu_);
  for (const std::string& id : drop) {
    auto it = jobs_.find(id);
    RemoveQueued(*it->second);
    for (const RunRecord& run : it->second->runs) {
      job_of_run_.erase(run.run_id);
      RunRecord ended = run;
      ended.state = regatta::v1::RUN_STATE_CANCELLED;
      IndexRun(ended);
    }
    jobs_.erase(it);
  }
  Bump();
}

int64_t JobDb::Version() const {
  absl::MutexLock lock(&mu_);
  return version_;
}

int64_t JobDb::WaitForChange(int64_t seen, absl::Time deadline) const {
  absl::MutexLock lock(&mu_);
  auto changed = [this, seen]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return version_ != seen; };
  mu_.AwaitWithDeadline(absl::Condition(&changed), deadline);
  return version_;
}

}  // namespace regatta::scheduler
