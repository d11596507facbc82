#include "src/scheduler/jobdb/job_db.h"

#include <algorithm>
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

QueuedEntry EntryOf(const JobRecord& job) {
  return QueuedEntry{-job.priority_class_priority, job.priority,
                     absl::ToUnixMicros(job.submit_time), &job};
}

const std::string& Empty() {
  static const std::string* const empty = new std::string();
  return *empty;
}

}  // namespace

// ---- JobRecord ----------------------------------------------------------------------------------

JobRecord::JobRecord(const JobRecord& other)
    : id(other.id),
      queue_name(other.queue_name),
      job_set_name(other.job_set_name),
      tmpl(other.tmpl),
      submit_time(other.submit_time),
      decision_offset(other.decision_offset),
      priority(other.priority),
      priority_class_priority(other.priority_class_priority),
      state(other.state),
      decision(other.decision),
      cancel_requested(other.cancel_requested),
      preempt_requested(other.preempt_requested),
      deleted(other.deleted),
      extras(other.extras ? std::make_unique<JobExtras>(*other.extras) : nullptr),
      runs(other.runs) {}

const std::string& JobRecord::gang_id() const { return extras ? extras->gang_id : Empty(); }
const std::string& JobRecord::cancel_reason() const {
  return extras ? extras->cancel_reason : Empty();
}
const std::string& JobRecord::preempt_reason() const {
  return extras ? extras->preempt_reason : Empty();
}

bool JobRecord::holds_resources() const {
  return std::any_of(runs.begin(), runs.end(), [](const RunRecord& r) { return r.active(); });
}

int JobRecord::retryable_failures() const {
  int n = 0;
  for (const RunRecord& run : runs) n += RetryableEnd(run) ? 1 : 0;
  return n;
}

std::vector<std::string> JobRecord::AvoidNodes() const {
  std::vector<std::string> nodes;
  for (const RunRecord& run : runs) {
    if (RetryableEnd(run) && !run.node_id.empty()) nodes.push_back(run.node_id);
  }
  return nodes;
}

namespace {

JobExtras& MutableExtras(JobRecord& job) {
  if (job.extras == nullptr) job.extras = std::make_unique<JobExtras>();
  return *job.extras;
}

void SetExtra(JobRecord& job, std::string JobExtras::*field, const std::string& value) {
  if (value.empty() && job.extras == nullptr) return;
  MutableExtras(job).*field = value;
}

}  // namespace

const std::string* StringPool::Find(absl::string_view s) const {
  auto it = strings_.find(s);
  return it == strings_.end() ? nullptr : &*it;
}

const std::string* StringPool::Intern(absl::string_view s) {
  auto it = strings_.find(s);
  if (it == strings_.end()) it = strings_.emplace(s).first;
  return &*it;
}

// ---- JobDb: committed state ---------------------------------------------------------------------

JobDb::JobDb(PriorityClassLookup priority_of) : priority_of_(std::move(priority_of)) {}

JobDb::~JobDb() = default;

std::unique_ptr<JobDb::Txn> JobDb::Begin(bool bulk_load) {
  return std::make_unique<Txn>(this, bulk_load);
}

void JobDb::Reset() {
  absl::MutexLock lock(&mu_);
  holding_.clear();
  terminal_.clear();
  gangs_.clear();
  queues_.clear();
  active_by_executor_.clear();
  job_of_run_.clear();
  jobs_.clear();
  ++version_;
}

JobRecord* JobDb::FindCommitted(absl::string_view job_id) const {
  auto it = jobs_.find(job_id);
  return it == jobs_.end() ? nullptr : it->get();
}

const JobRecord* JobDb::FindJob(absl::string_view job_id) const { return FindCommitted(job_id); }

const JobRecord* JobDb::FindJobByRun(absl::string_view run_id) const {
  auto it = job_of_run_.find(run_id);
  return it == job_of_run_.end() ? nullptr : it->second;
}

namespace {
const RunRecord* RunOf(const JobRecord* job, absl::string_view run_id) {
  if (job == nullptr) return nullptr;
  for (const RunRecord& run : job->runs) {
    if (run.run_id == run_id) return &run;
  }
  return nullptr;
}
}  // namespace

const RunRecord* JobDb::FindRun(absl::string_view run_id) const {
  return RunOf(FindJobByRun(run_id), run_id);
}

const RunRecord* JobRecord::run(absl::string_view run_id) const { return RunOf(this, run_id); }

void JobDb::ForEachActiveRunOf(
    absl::string_view executor_id,
    absl::FunctionRef<void(const JobRecord&, const RunRecord&)> fn) const {
  auto it = active_by_executor_.find(executor_id);
  if (it == active_by_executor_.end()) return;
  for (const JobRecord* job : it->second) {
    for (const RunRecord& run : job->runs) {
      if (run.active() && run.executor_id == executor_id) fn(*job, run);
    }
  }
}

std::vector<std::string> JobDb::ActiveRunsOf(absl::string_view executor_id) const {
  std::vector<std::string> out;
  ForEachActiveRunOf(executor_id,
                     [&](const JobRecord&, const RunRecord& run) { out.push_back(run.run_id); });
  return out;
}

void JobDb::ForEachJob(absl::FunctionRef<void(const JobRecord&)> fn) const {
  for (const auto& job : jobs_) fn(*job);
}

ResourceList JobDb::QueuedDemand(absl::string_view queue) const {
  // By name, not through the string pool: readers may call this while the writer interns.
  for (const auto& [name, index] : queues_) {
    if (*name == queue) return index.demand;
  }
  return ResourceList();
}

size_t JobDb::template_count() const {
  size_t n = 0;
  for (const auto& [key, tmpl] : templates_) n += tmpl.expired() ? 0 : 1;
  return n;
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

int JobDb::PriorityClassIndex(absl::string_view name) {
  auto [it, inserted] = priority_class_index_.try_emplace(name, priority_classes_.size());
  if (inserted) priority_classes_.emplace_back(name);
  return it->second;
}

std::shared_ptr<const JobSpecTemplate> JobDb::Template(const regatta::v1::Job& spec,
                                                       absl::string_view priority_class) {
  regatta::v1::Job part = store::SchedulingSpec(spec);
  part.set_priority_class(std::string(priority_class));
  const std::string key = store::SerializeDeterministic(part);
  std::weak_ptr<const JobSpecTemplate>& slot = templates_[key];
  if (std::shared_ptr<const JobSpecTemplate> shared = slot.lock()) return shared;
  auto tmpl = std::make_shared<JobSpecTemplate>();
  tmpl->spec = std::move(part);
  tmpl->round.requests = RequestsOf(spec);
  tmpl->round.task = &tmpl->spec.task();
  tmpl->round.priority_class = PriorityClassIndex(priority_class);
  tmpl->round.gang_cardinality = std::max<uint32_t>(1, spec.gang().cardinality());
  tmpl->round.gang_node_uniformity_label = spec.gang().node_uniformity_label();
  tmpl->priority_class_priority = priority_of_(priority_class);
  slot = tmpl;
  // Templates of jobs that are gone leave expired entries; sweep them as the table doubles.
  if (templates_.size() > 2 * templates_swept_at_ + 64) {
    absl::erase_if(templates_, [](const auto& entry) { return entry.second.expired(); });
    templates_swept_at_ = templates_.size();
  }
  return tmpl;
}

void JobDb::Index(JobRecord* job) {
  if (job->queued()) {
    QueueIndex& q = queues_[job->queue_name];
    q.queued.insert(EntryOf(*job));
    q.demand.Add(job->requests());
  }
  bool holds = false;
  for (const RunRecord& run : job->runs) {
    job_of_run_[run.run_id] = job;
    if (run.active()) {
      holds = true;
      active_by_executor_[run.executor_id].insert(job);
    }
  }
  if (holds) holding_.insert(job);
  if (job->terminal()) terminal_.insert(job);
  if (!job->gang_id().empty()) gangs_[GangKey(job->queue_name, job->gang_id())].push_back(job);
}

void JobDb::Unindex(JobRecord* job) {
  if (job->queued()) {
    auto it = queues_.find(job->queue_name);
    it->second.queued.erase(EntryOf(*job));
    it->second.demand.Subtract(job->requests());
    if (it->second.queued.empty()) queues_.erase(it);
  }
  for (const RunRecord& run : job->runs) {
    job_of_run_.erase(run.run_id);
    if (!run.active()) continue;
    auto it = active_by_executor_.find(run.executor_id);
    if (it == active_by_executor_.end()) continue;
    it->second.erase(job);
    if (it->second.empty()) active_by_executor_.erase(it);
  }
  holding_.erase(job);
  terminal_.erase(job);
  if (!job->gang_id().empty()) {
    auto it = gangs_.find(GangKey(job->queue_name, job->gang_id()));
    if (it != gangs_.end()) {
      std::erase(it->second, job);
      if (it->second.empty()) gangs_.erase(it);
    }
  }
}

// ---- Txn: changes -------------------------------------------------------------------------------

JobDb::Txn::Txn(JobDb* db, bool bulk_load) : db_(db), bulk_(bulk_load) {
  if (db_->writing_ || (bulk_ && !db_->jobs_.empty())) {
    LOG_ERROR("JobDb write transaction misused: a second one open, or a bulk load not on empty");
    std::abort();
  }
  db_->writing_ = true;
  if (bulk_) db_->mu_.Lock();
}

JobDb::Txn::~Txn() {
  if (!done_) Abort();
}

void JobDb::Txn::Finish() {
  done_ = true;
  db_->writing_ = false;
  if (bulk_) db_->mu_.Unlock();
}

void JobDb::Txn::Abort() {
  if (done_) return;
  if (bulk_) {
    // The JobDb was empty: empty again. Templates go with the records.
    db_->queues_.clear();
    db_->job_of_run_.clear();
    db_->active_by_executor_.clear();
    db_->gangs_.clear();
    db_->holding_.clear();
    db_->terminal_.clear();
    db_->jobs_.clear();
  }
  overlay_.clear();
  queued_.clear();
  demand_.clear();
  runs_.clear();
  gangs_.clear();
  Finish();
}

void JobDb::Txn::Commit() {
  if (done_) return;
  if (bulk_) {
    ++db_->version_;
  } else if (!overlay_.empty()) {
    absl::MutexLock lock(&db_->mu_);
    for (auto it = overlay_.begin(); it != overlay_.end();) {
      auto node = overlay_.extract(it++);
      std::unique_ptr<JobRecord>& changed = node.value();
      JobRecord* committed = db_->FindCommitted(changed->id);
      if (committed != nullptr) db_->Unindex(committed);
      if (changed->deleted) {
        if (committed != nullptr) db_->jobs_.erase(changed->id);
        continue;
      }
      if (committed != nullptr) {
        // In place: a job keeps its record's address while it lives.
        *committed = std::move(*changed);
      } else {
        committed = db_->jobs_.insert(std::move(changed)).first->get();
      }
      db_->Index(committed);
    }
    ++db_->version_;
  }
  queued_.clear();
  demand_.clear();
  runs_.clear();
  gangs_.clear();
  Finish();
}

const std::string* JobDb::Txn::QueueKey(absl::string_view queue) const {
  return db_->strings_.Find(queue);
}

ResourceList& JobDb::Txn::Demand(const std::string* queue) {
  auto [it, inserted] = demand_.try_emplace(queue);
  if (inserted) {
    auto committed = db_->queues_.find(queue);
    if (committed != db_->queues_.end()) it->second = committed->second.demand;
  }
  return it->second;
}

JobRecord* JobDb::Txn::BeginChange(absl::string_view job_id) {
  if (bulk_) {
    JobRecord* job = db_->FindCommitted(job_id);
    if (job != nullptr) db_->Unindex(job);
    return job;
  }
  if (auto it = overlay_.find(job_id); it != overlay_.end()) {
    JobRecord* job = it->get();
    if (job->deleted) return nullptr;
    if (job->queued()) {
      queued_[job->queue_name].erase(EntryOf(*job));
      Demand(job->queue_name).Subtract(job->requests());
    }
    return job;
  }
  const JobRecord* committed = db_->FindCommitted(job_id);
  if (committed == nullptr) return nullptr;
  JobRecord* job = overlay_.insert(std::make_unique<JobRecord>(*committed)).first->get();
  // The committed entry is hidden from now on; its demand leaves the queue's total.
  if (job->queued()) Demand(job->queue_name).Subtract(job->requests());
  return job;
}

void JobDb::Txn::EndChange(JobRecord* job) {
  if (bulk_) {
    if (job->deleted) {
      db_->jobs_.erase(job->id);
    } else {
      db_->Index(job);
    }
    return;
  }
  if (job->deleted || !job->queued()) return;
  queued_[job->queue_name].insert(EntryOf(*job));
  Demand(job->queue_name).Add(job->requests());
}

const JobRecord* JobDb::Txn::ApplyJobRow(const store::SchedulerJobRow& row, int64_t views_offset,
                                         TemplateFn template_if_new) {
  return ApplyJobRow(row, views_offset, template_if_new, row.gang_id);
}

const JobRecord* JobDb::Txn::ApplyJobRow(const store::SchedulerJobRow& row, int64_t views_offset,
                                         const regatta::v1::Job* spec) {
  auto make_template = [&]() -> std::shared_ptr<const JobSpecTemplate> {
    return spec == nullptr ? nullptr : db_->Template(*spec, row.priority_class);
  };
  return ApplyJobRow(
      row, views_offset, make_template,
      !row.gang_id.empty() || spec == nullptr ? absl::string_view(row.gang_id) : spec->gang().id());
}

void JobDb::Txn::Reserve(size_t jobs) {
  if (bulk_) db_->jobs_.reserve(jobs);
}

const JobRecord* JobDb::Txn::ApplyJobRow(const store::SchedulerJobRow& row, int64_t views_offset,
                                         TemplateFn template_if_new, absl::string_view gang_id) {
  auto init_new = [&](JobRecord& record, std::shared_ptr<const JobSpecTemplate> tmpl) {
    record.id = row.job_id;
    record.queue_name = db_->strings_.Intern(row.queue);
    record.job_set_name = db_->strings_.Intern(row.job_set);
    record.priority_class_priority = tmpl->priority_class_priority;
    record.tmpl = std::move(tmpl);
    record.submit_time = row.submit_time;
    if (!gang_id.empty()) MutableExtras(record).gang_id = std::string(gang_id);
  };
  JobRecord* job = nullptr;
  if (bulk_) {
    // One probe of the (million-slot) table: a new job's record is made in its slot.
    bool created = false;
    auto it = db_->jobs_.lazy_emplace(absl::string_view(row.job_id), [&](const auto& construct) {
      created = true;
      construct(std::make_unique<JobRecord>());
    });
    job = it->get();
    if (!created) {
      db_->Unindex(job);
    } else {
      job->id = row.job_id;  // the slot's key, before anything else touches the table
      std::shared_ptr<const JobSpecTemplate> tmpl = template_if_new();
      if (tmpl == nullptr) {
        db_->jobs_.erase(it);
        return nullptr;
      }
      init_new(*job, std::move(tmpl));
    }
  } else {
    job = BeginChange(row.job_id);
    if (job == nullptr) {
      std::shared_ptr<const JobSpecTemplate> tmpl = template_if_new();
      if (tmpl == nullptr) return nullptr;
      auto record = std::make_unique<JobRecord>();
      init_new(*record, std::move(tmpl));
      if (auto it = overlay_.find(row.job_id); it != overlay_.end()) overlay_.erase(it);
      job = overlay_.insert(std::move(record)).first->get();
      if (!job->gang_id().empty()) {
        gangs_[GangKey(job->queue_name, job->gang_id())].push_back(job);
      }
    }
  }
  job->priority = row.priority;
  job->cancel_requested = row.cancel_requested;
  SetExtra(*job, &JobExtras::cancel_reason, row.cancel_reason);
  job->preempt_requested = row.preempt_requested;
  SetExtra(*job, &JobExtras::preempt_reason, row.preempt_reason);
  // Until the views include the scheduler's latest decision, the decision holds the state.
  if (job->decision == Decision::kNone || views_offset >= job->decision_offset) {
    job->state = row.state;
    job->decision = Decision::kNone;
    job->decision_offset = 0;
  }
  EndChange(job);
  return job;
}

bool JobDb::Txn::ApplyRunRow(const store::SchedulerRunRow& row, int64_t views_offset) {
  (void)views_offset;
  JobRecord* job = BeginChange(row.job_id);
  if (job == nullptr) return false;
  RunRecord* run = nullptr;
  for (RunRecord& r : job->runs) {
    if (r.run_id == row.run_id) run = &r;
  }
  if (run == nullptr) {
    job->runs.push_back(RunRecord{row.run_id, row.job_id, row.executor_id, row.node_id, row.pool,
                                  row.state, row.leased_time, row.error});
    if (!bulk_) runs_[row.run_id] = job;
  } else if (store::IsTerminal(row.state) || !store::IsTerminal(run->state)) {
    // The views win, except that a run the scheduler has just ended (e.g. expired) does not
    // come back to life from an older row.
    run->state = row.state;
    run->error = row.error;
  }
  EndChange(job);
  return true;
}

void JobDb::Txn::RecordLease(absl::string_view job_id, RunRecord run, int64_t offset) {
  JobRecord* job = BeginChange(job_id);
  if (job == nullptr) return;
  if (!bulk_) runs_[run.run_id] = job;
  job->runs.push_back(std::move(run));
  job->state = regatta::v1::JOB_STATE_LEASED;
  job->decision = Decision::kLeased;
  job->decision_offset = offset;
  EndChange(job);
}

void JobDb::Txn::RecordJobDecision(absl::string_view job_id, Decision decision,
                                   regatta::v1::JobState new_state, int64_t offset) {
  JobRecord* job = BeginChange(job_id);
  if (job == nullptr) return;
  job->state = new_state;
  job->decision = decision;
  job->decision_offset = offset;
  EndChange(job);
}

void JobDb::Txn::SetDecisionOffset(absl::string_view job_id, int64_t offset) {
  JobRecord* job = BeginChange(job_id);
  if (job == nullptr) return;
  job->decision_offset = offset;
  EndChange(job);
}

void JobDb::Txn::RecordRunState(absl::string_view run_id, regatta::v1::RunState state,
                                std::optional<regatta::v1::Error> error) {
  const JobRecord* found = FindJobByRun(run_id);
  if (found == nullptr) return;
  JobRecord* job = BeginChange(found->id);
  for (RunRecord& run : job->runs) {
    if (run.run_id == run_id && !store::IsTerminal(run.state)) {
      run.state = state;
      run.error = std::move(error);
    }
  }
  EndChange(job);
}

void JobDb::Txn::Compact(int64_t views_offset) {
  auto droppable = [views_offset](const JobRecord& job) {
    return !job.deleted && job.terminal() && views_offset >= job.decision_offset &&
           !job.holds_resources();
  };
  std::vector<std::string> drop;
  for (const JobRecord* job : db_->terminal_) {
    if (!overlay_.contains(job->id) && droppable(*job)) drop.push_back(job->id);
  }
  for (const auto& job : overlay_) {
    if (droppable(*job)) drop.push_back(job->id);
  }
  for (const std::string& id : drop) {
    JobRecord* job = BeginChange(id);
    job->deleted = true;
    EndChange(job);
  }
}

// ---- Txn: reads ---------------------------------------------------------------------------------

const JobRecord* JobDb::Txn::FindJob(absl::string_view job_id) const {
  if (auto it = overlay_.find(job_id); it != overlay_.end()) {
    return (*it)->deleted ? nullptr : it->get();
  }
  return db_->FindCommitted(job_id);
}

const JobRecord* JobDb::Txn::FindJobByRun(absl::string_view run_id) const {
  if (auto it = runs_.find(run_id); it != runs_.end()) return it->second;
  const JobRecord* committed = db_->FindJobByRun(run_id);
  return committed == nullptr ? nullptr : FindJob(committed->id);
}

const RunRecord* JobDb::Txn::FindRun(absl::string_view run_id) const {
  return RunOf(FindJobByRun(run_id), run_id);
}

size_t JobDb::Txn::size() const {
  size_t n = db_->jobs_.size();
  for (const auto& job : overlay_) {
    const bool committed = db_->FindCommitted(job->id) != nullptr;
    if (job->deleted && committed) --n;
    if (!job->deleted && !committed) ++n;
  }
  return n;
}

void JobDb::Txn::ForEachJob(absl::FunctionRef<void(const JobRecord&)> fn) const {
  for (const auto& job : db_->jobs_) {
    if (!overlay_.contains(job->id)) fn(*job);
  }
  for (const auto& job : overlay_) {
    if (!job->deleted) fn(*job);
  }
}

std::vector<std::string> JobDb::Txn::QueuedQueues() const {
  std::vector<std::string> names;
  auto add_if_queued = [&](const std::string* queue) {
    if (Cursor(*queue).Next() != nullptr) names.push_back(*queue);
  };
  for (const auto& [queue, index] : db_->queues_) add_if_queued(queue);
  for (const auto& [queue, set] : queued_) {
    if (!db_->queues_.contains(queue)) add_if_queued(queue);
  }
  std::sort(names.begin(), names.end());
  return names;
}

JobDb::Txn::QueuedCursor JobDb::Txn::Cursor(absl::string_view queue) const {
  static const QueuedSet* const kNone = new QueuedSet();
  const std::string* key = QueueKey(queue);
  auto committed = db_->queues_.find(key);
  auto changed = queued_.find(key);
  return QueuedCursor(this, committed == db_->queues_.end() ? kNone : &committed->second.queued,
                      changed == queued_.end() ? kNone : &changed->second);
}

std::vector<const JobRecord*> JobDb::Txn::Queued(absl::string_view queue) const {
  std::vector<const JobRecord*> jobs;
  QueuedCursor cursor = Cursor(queue);
  while (const JobRecord* job = cursor.Next()) jobs.push_back(job);
  return jobs;
}

ResourceList JobDb::Txn::QueuedDemand(absl::string_view queue) const {
  const std::string* key = QueueKey(queue);
  if (auto it = demand_.find(key); it != demand_.end()) return it->second;
  auto it = db_->queues_.find(key);
  return it == db_->queues_.end() ? ResourceList() : it->second.demand;
}

JobDb::Txn::QueuedCursor::QueuedCursor(const Txn* txn, const QueuedSet* committed,
                                       const QueuedSet* changed)
    : txn_(txn),
      a_(committed->begin()),
      a_end_(committed->end()),
      b_(changed->begin()),
      b_end_(changed->end()) {}

const JobRecord* JobDb::Txn::QueuedCursor::Next() {
  // Committed entries of jobs the transaction changed are stale: the overlay's set has them.
  while (a_ != a_end_ && txn_->overlay_.contains(a_->job->id)) ++a_;
  if (a_ == a_end_ && b_ == b_end_) return nullptr;
  if (b_ == b_end_ || (a_ != a_end_ && *a_ < *b_)) return (a_++)->job;
  return (b_++)->job;
}

namespace {

// Hands the scheduling algorithm QueuedJob views of records, built as it pulls them.
class TxnQueuedJobIterator : public QueuedJobIterator {
 public:
  explicit TxnQueuedJobIterator(JobDb::Txn::QueuedCursor cursor) : cursor_(std::move(cursor)) {}

  const QueuedJob* Next() override {
    const JobRecord* job = cursor_.Next();
    if (job == nullptr) return nullptr;
    Pulled& p = pulled_.emplace_back();
    p.avoid_nodes = job->AvoidNodes();
    p.job.id = job->id;
    p.job.tmpl = &job->tmpl->round;
    p.job.gang_id = job->gang_id();
    p.job.avoid_nodes = p.avoid_nodes.empty() ? nullptr : &p.avoid_nodes;
    return &p.job;
  }

 private:
  struct Pulled {
    QueuedJob job;
    std::vector<std::string> avoid_nodes;
  };
  JobDb::Txn::QueuedCursor cursor_;
  std::deque<Pulled> pulled_;  // stable addresses for the round
};

}  // namespace

std::unique_ptr<QueuedJobIterator> JobDb::Txn::QueuedJobs(absl::string_view queue) const {
  return std::make_unique<TxnQueuedJobIterator>(Cursor(queue));
}

std::vector<const JobRecord*> JobDb::Txn::GangMembers(absl::string_view queue,
                                                      absl::string_view gang_id) const {
  std::vector<const JobRecord*> members;
  const GangKey key(QueueKey(queue), std::string(gang_id));
  if (auto it = db_->gangs_.find(key); it != db_->gangs_.end()) {
    for (const JobRecord* committed : it->second) {
      if (const JobRecord* job = FindJob(committed->id)) members.push_back(job);
    }
  }
  if (auto it = gangs_.find(key); it != gangs_.end()) {
    for (const JobRecord* job : it->second) {
      if (!job->deleted) members.push_back(job);
    }
  }
  return members;
}

void JobDb::Txn::ForEachActiveRun(
    absl::FunctionRef<void(const JobRecord&, const RunRecord&)> fn) const {
  auto each_active = [&fn](const JobRecord& job) {
    for (const RunRecord& run : job.runs) {
      if (run.active()) fn(job, run);
    }
  };
  for (const JobRecord* job : db_->holding_) {
    if (!overlay_.contains(job->id)) each_active(*job);
  }
  for (const auto& job : overlay_) {
    if (!job->deleted) each_active(*job);
  }
}

std::vector<RunningJob> JobDb::Txn::RunningJobs(
    absl::string_view pool, absl::FunctionRef<int(absl::string_view node_id)> node_index) const {
  std::vector<RunningJob> running;
  ForEachActiveRun([&](const JobRecord& job, const RunRecord& run) {
    if (run.pool != pool) return;
    const int index = node_index(run.node_id);
    if (index < 0) return;
    // A preempted job's room went to its preemptor in the round that preempted it (as in
    // Armada); its run only has the termination grace left. Counting it again, once the views
    // say PREEMPTED, would over-commit the node and make the next round preempt again.
    if (job.state == regatta::v1::JOB_STATE_PREEMPTED) return;
    const bool leaving = job.terminal() || job.decision == Decision::kCancelled ||
                         job.cancel_requested || job.preempt_requested;
    running.push_back(RunningJob{job.id, job.queue(), &job.tmpl->round, job.gang_id(), index,
                                 run.leased_time, leaving});
  });
  return running;
}

}  // namespace regatta::scheduler
