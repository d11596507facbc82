#include "src/scheduler/scheduler.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/scheduler/round/round.h"

namespace regatta::scheduler {

using regatta::v1::Event;
using regatta::v1::EventSequence;

// ---- Publication ----------------------------------------------------------------------------

class Scheduler::Publication {
 public:
  explicit Publication(const Clock* clock, std::string user)
      : clock_(clock), user_(std::move(user)) {}

  // A new event in the sequence of (queue, job_set); `after` runs with the sequence's offset
  // once the append is durable.
  Event* Add(const std::string& queue, const std::string& job_set,
             std::function<void(int64_t)> after) {
    auto [it, inserted] = index_.try_emplace(std::make_pair(queue, job_set), entries_.size());
    if (inserted) {
      entries_.emplace_back();
      EventSequence& seq = entries_.back().sequence;
      seq.set_queue(queue);
      seq.set_job_set(job_set);
      seq.set_user_id(user_);
    }
    Entry& entry = entries_[it->second];
    Event* event = entry.sequence.add_events();
    *event->mutable_created() = google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(
        absl::ToUnixMicros(clock_->Now()));
    if (after) entry.after.push_back(std::move(after));
    return event;
  }

  bool empty() const { return entries_.empty(); }
  int64_t events() const {
    int64_t n = 0;
    for (const Entry& e : entries_) n += e.sequence.events_size();
    return n;
  }

  // Appends everything (durably), then runs the callbacks.
  absl::Status Publish(eventlog::EventLog* log) {
    if (entries_.empty()) return absl::OkStatus();
    std::vector<EventSequence> sequences;
    sequences.reserve(entries_.size());
    for (Entry& e : entries_) sequences.push_back(e.sequence);
    ASSIGN_OR_RETURN(std::vector<int64_t> offsets, log->Append(std::move(sequences)));
    for (size_t i = 0; i < entries_.size() && i < offsets.size(); ++i) {
      for (auto& after : entries_[i].after) after(offsets[i]);
    }
    entries_.clear();
    index_.clear();
    return absl::OkStatus();
  }

 private:
  struct Entry {
    EventSequence sequence;
    std::vector<std::function<void(int64_t)>> after;
  };
  const Clock* clock_;
  std::string user_;
  std::vector<Entry> entries_;
  std::map<std::pair<std::string, std::string>, size_t> index_;
};

// ---- Helpers --------------------------------------------------------------------------------

namespace {

regatta::v1::Error MakeError(regatta::v1::ErrorReason reason, std::string message,
                             std::string category, bool terminal) {
  regatta::v1::Error e;
  e.set_reason(reason);
  e.set_message(std::move(message));
  e.set_category(std::move(category));
  e.set_terminal(terminal);
  return e;
}

// Whether the decision pass may act on the job: a queued job is the scheduling pass's, unless
// its cancellation was requested.
bool MayNeedDecision(const JobRecord& job) {
  return !job.terminal() && (job.cancel_requested || job.preempt_requested ||
                             job.state != regatta::v1::JOB_STATE_QUEUED);
}

// Walks a queue's queued set in order (jobs leased earlier in the transaction are gone from
// it), building the round's view of each job as the round pulls it.
class QueuedIterator : public RoundJobIterator {
 public:
  explicit QueuedIterator(JobDb::Txn::QueuedCursor cursor) : cursor_(std::move(cursor)) {}

  const RoundJob* Next() override {
    const JobRecord* job = cursor_.Next();
    if (job == nullptr) return nullptr;
    RoundJob& round = pulled_.emplace_back();
    round.id = job->id;
    round.priority_class_priority = job->priority_class_priority;
    round.requests = job->requests();
    round.task = job->tmpl->round.task;
    round.avoid_nodes = job->AvoidNodes();
    return &round;
  }

 private:
  JobDb::Txn::QueuedCursor cursor_;
  std::deque<RoundJob> pulled_;  // stable addresses for the round
};

}  // namespace

// ---- Scheduler ------------------------------------------------------------------------------

Scheduler::Scheduler(eventlog::EventLog* log, store::Store* store, WaitForViewsFn wait_for_views,
                     ExecutorRegistry* executors, const Clock* clock, IdGenerator* ids,
                     SchedulerOptions options)
    : log_(log),
      store_(store),
      wait_for_views_(std::move(wait_for_views)),
      executors_(executors),
      clock_(clock),
      ids_(ids),
      options_(std::move(options)),
      job_db_([this](absl::string_view pc) { return PriorityOf(pc); }) {
  for (const auto& [name, multiplier] : options_.resource_multipliers) {
    multipliers_[ResourceNames::Global().Intern(name)] = multiplier;
  }
}

Scheduler::~Scheduler() { Stop(); }

int32_t Scheduler::PriorityOf(absl::string_view priority_class) const {
  auto it = options_.priority_classes.find(std::string(priority_class));
  return it == options_.priority_classes.end() ? 0 : it->second;
}

bool Scheduler::ready() const {
  absl::MutexLock lock(&mu_);
  return ready_;
}

Scheduler::Stats Scheduler::stats() const {
  absl::MutexLock lock(&mu_);
  return stats_;
}

void Scheduler::Wake() {
  absl::MutexLock lock(&mu_);
  wake_ = true;
}

absl::Status Scheduler::Initialize() {
  // Catch-up rule: a new leader publishes a marker and schedules only once the views include
  // it, so every decision of an earlier leader is loaded first.
  EventSequence marker;
  marker.set_user_id(options_.user_id);
  Event* event = marker.add_events();
  *event->mutable_created() =
      google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(clock_->Now()));
  event->mutable_partition_marker()->set_group_id(ids_->NewId());
  std::vector<EventSequence> sequences;
  sequences.push_back(std::move(marker));
  ASSIGN_OR_RETURN(std::vector<int64_t> offsets, log_->Append(std::move(sequences)));
  RETURN_IF_ERROR(wait_for_views_(offsets.front(), absl::InfiniteFuture()));
  views_offset_ = 0;
  absl::flat_hash_set<std::string> touched;
  RETURN_IF_ERROR(Sync(touched));
  revisit_.insert(touched.begin(), touched.end());
  started_at_ = clock_->Now();
  LOG_INFO("scheduler loaded its job database", "jobs", job_db_.size(), "views_offset",
           views_offset_);
  absl::MutexLock lock(&mu_);
  ready_ = true;
  return absl::OkStatus();
}

absl::Status Scheduler::Start() {
  RETURN_IF_ERROR(Initialize());
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void Scheduler::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (thread_.joinable()) thread_.join();
}

void Scheduler::Loop() {
  absl::Duration backoff = absl::Milliseconds(50);
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (stopping_) return;
      wake_ = false;
    }
    absl::Status status = RunCycle();
    if (!status.ok()) {
      LOG_WARN("scheduling cycle failed; retrying", "error", status.ToString());
      absl::SleepFor(backoff);
      backoff = std::min(backoff * 2, absl::Seconds(5));
      continue;
    }
    backoff = absl::Milliseconds(50);
    // Sleep until the views move, an executor reports, or the cycle period passes. The views
    // wait is sliced so a wake-up is seen within a few milliseconds.
    const absl::Time deadline = absl::Now() + options_.cycle_period;
    while (absl::Now() < deadline) {
      {
        absl::MutexLock lock(&mu_);
        if (stopping_ || wake_) break;
      }
      if (wait_for_views_(views_offset_ + 1,
                          std::min(deadline, absl::Now() + absl::Milliseconds(10)))
              .ok()) {
        break;
      }
    }
  }
}

absl::Status Scheduler::RunCycle() {
  absl::flat_hash_set<std::string> touched = std::move(revisit_);
  revisit_.clear();
  if (absl::Status s = Sync(touched); !s.ok()) {
    revisit_ = std::move(touched);
    return s;
  }
  // Everything the cycle decides goes into one durable append: outcomes of ended runs, expired
  // runs of lost executors, and new leases. A job requeued here is placed in the next cycle,
  // which follows at once because the append moves the views.
  // The cycle's changes to the JobDb (expired runs, decisions, leases) become visible only
  // once their events are durable; a failed append aborts them all.
  Publication out(clock_, options_.user_id);
  std::unique_ptr<JobDb::Txn> txn = job_db_.Begin();
  ExpireLostExecutors(out, touched, *txn);
  Decide(touched, out, *txn);
  const int64_t decided = out.events();
  Schedule(out, *txn);
  const int64_t leased = out.events() - decided;
  if (absl::Status s = out.Publish(log_); !s.ok()) {
    txn->Abort();
    revisit_ = std::move(touched);
    return s;
  }
  txn->Compact(views_offset_);
  txn->Commit();
  absl::MutexLock lock(&mu_);
  ++stats_.cycles;
  stats_.decisions += decided;
  stats_.leases += leased;
  return absl::OkStatus();
}

absl::Status Scheduler::Sync(absl::flat_hash_set<std::string>& touched) {
  ASSIGN_OR_RETURN(store::SchedulerDelta delta,
                   store_->LoadSchedulerDelta(options_.views_consumer, views_offset_));
  for (const store::SchedulerQueueRow& row : delta.queues) {
    if (row.deleted) {
      queues_.erase(row.queue.name());
      continue;
    }
    QueueInfo& info = queues_[row.queue.name()];
    const double factor = row.queue.priority_factor();
    info.weight = factor > 0 ? 1.0 / factor : 1.0;
    info.cordoned = row.queue.cordoned();
  }
  // The views' rows are facts: committed whatever the cycle decides later. The first load fills
  // the empty JobDb in bulk.
  std::unique_ptr<JobDb::Txn> txn = job_db_.Begin(/*bulk_load=*/job_db_.size() == 0);
  txn->Reserve(delta.jobs.size());
  auto note = [&](const JobRecord* job) {
    if (job != nullptr && MayNeedDecision(*job)) touched.insert(job->id);
  };
  // A new job's template comes from the store's templates, made once per template id; jobs
  // stored before templates existed read their full specs, in chunks.
  absl::flat_hash_map<int64_t, std::shared_ptr<const JobSpecTemplate>> templates;
  std::vector<const store::SchedulerJobRow*> need_spec;
  for (const store::SchedulerJobRow& row : delta.jobs) {
    auto template_if_new = [&]() -> std::shared_ptr<const JobSpecTemplate> {
      if (store::IsTerminal(row.state)) return nullptr;
      auto spec = delta.templates.find(row.template_id);
      if (spec == delta.templates.end()) {
        need_spec.push_back(&row);
        return nullptr;
      }
      std::shared_ptr<const JobSpecTemplate>& made = templates[row.template_id];
      if (made == nullptr) made = job_db_.Template(spec->second, row.priority_class);
      return made;
    };
    note(txn->ApplyJobRow(row, delta.offset, template_if_new));
  }
  constexpr size_t kSpecChunk = 10'000;
  for (size_t start = 0; start < need_spec.size(); start += kSpecChunk) {
    const size_t end = std::min(need_spec.size(), start + kSpecChunk);
    std::vector<std::string> ids;
    for (size_t i = start; i < end; ++i) ids.push_back(need_spec[i]->job_id);
    ASSIGN_OR_RETURN(std::vector<regatta::v1::Job> specs, store_->GetJobSpecs(ids));
    absl::flat_hash_map<absl::string_view, const regatta::v1::Job*> by_id;
    for (const regatta::v1::Job& spec : specs) by_id.emplace(spec.id(), &spec);
    for (size_t i = start; i < end; ++i) {
      const store::SchedulerJobRow& row = *need_spec[i];
      auto it = by_id.find(row.job_id);
      if (it != by_id.end()) note(txn->ApplyJobRow(row, delta.offset, it->second));
    }
  }
  for (const store::SchedulerRunRow& row : delta.runs) {
    if (txn->ApplyRunRow(row, delta.offset)) note(txn->FindJob(row.job_id));
  }
  txn->Commit();
  views_offset_ = delta.offset;
  return absl::OkStatus();
}

void Scheduler::ExpireLostExecutors(Publication& out, absl::flat_hash_set<std::string>& touched,
                                    JobDb::Txn& txn) {
  const absl::Time now = clock_->Now();
  absl::flat_hash_set<std::string> live;
  absl::flat_hash_set<std::string> lost;
  for (const ExecutorState& e : executors_->Snapshot()) {
    if (now - e.last_seen > options_.executor_timeout) {
      LOG_WARN("executor lost: no lease request within the executor timeout", "executor", e.id,
               "last_seen", absl::FormatTime(e.last_seen), "timeout",
               absl::FormatDuration(options_.executor_timeout));
      executors_->Remove(e.id);
      lost.insert(e.id);
    } else {
      live.insert(e.id);
    }
  }
  // Executors not heard from since this scheduler started get the same timeout, counted from
  // the start; the scan for their runs runs at most once a second.
  const bool grace_over = now - started_at_ > options_.executor_timeout;
  if (lost.empty() && !(grace_over && now - last_expiry_scan_ >= absl::Seconds(1))) return;
  last_expiry_scan_ = now;
  std::vector<std::string> expired;
  // A restarted executor that no longer holds a run it had acknowledged (its state did not
  // survive, e.g. the machine crashed) has lost it. Checked one executor timeout after the
  // restart, so runs it finished and reported before are in the views by then.
  absl::flat_hash_map<std::string, const ExecutorState*> restarted;
  std::vector<ExecutorState> snapshot = executors_->Snapshot();
  for (const ExecutorState& e : snapshot) {
    if (live.contains(e.id) && now - e.incarnation_since > options_.executor_timeout) {
      restarted[e.id] = &e;
    }
  }
  txn.ForEachActiveRun([&](const JobRecord& job, const RunRecord& run) {
    auto it = restarted.find(run.executor_id);
    if (it == restarted.end() || run.state == regatta::v1::RUN_STATE_LEASED ||
        run.leased_time >= it->second->incarnation_since || it->second->runs.contains(run.run_id)) {
      return;
    }
    Event* event = out.Add(job.queue(), job.job_set(), nullptr);
    event->mutable_job_run_lease_expired()->set_job_id(job.id);
    event->mutable_job_run_lease_expired()->set_run_id(run.run_id);
    touched.insert(job.id);
    expired.push_back(run.run_id);
    LOG_WARN("run expired: its executor restarted without it", "job", job.id, "run", run.run_id,
             "executor", run.executor_id);
  });
  txn.ForEachActiveRun([&](const JobRecord& job, const RunRecord& run) {
    if (live.contains(run.executor_id)) return;
    if (!grace_over && !lost.contains(run.executor_id)) return;
    Event* event = out.Add(job.queue(), job.job_set(), nullptr);
    event->mutable_job_run_lease_expired()->set_job_id(job.id);
    event->mutable_job_run_lease_expired()->set_run_id(run.run_id);
    touched.insert(job.id);
    expired.push_back(run.run_id);
    LOG_WARN("run expired: its executor is lost", "job", job.id, "run", run.run_id, "executor",
             run.executor_id);
  });
  // Recorded after the scan (recording changes the runs being iterated); the decision pass
  // below then requeues or fails the jobs in the same publication.
  for (const std::string& run_id : expired) {
    txn.RecordRunState(
        run_id, regatta::v1::RUN_STATE_LEASE_EXPIRED,
        MakeError(regatta::v1::ERROR_REASON_LEASE_EXPIRED, "the executor stopped reporting the run",
                  "Infrastructure", false));
  }
  if (!expired.empty()) {
    absl::MutexLock lock(&mu_);
    stats_.expired_runs += static_cast<int64_t>(expired.size());
  }
}

void Scheduler::Decide(const absl::flat_hash_set<std::string>& touched, Publication& out,
                       JobDb::Txn& txn) {
  for (const std::string& job_id : touched) {
    const JobRecord* job = txn.FindJob(job_id);
    if (job == nullptr || job->terminal()) continue;
    if (job->decision != Decision::kNone && views_offset_ < job->decision_offset) continue;
    const RunRecord* run = job->latest_run();
    const std::string queue = job->queue();
    const std::string job_set = job->job_set();
    auto record = [&txn, job_id](Decision d, regatta::v1::JobState s) {
      return [&txn, job_id, d, s](int64_t offset) { txn.RecordJobDecision(job_id, d, s, offset); };
    };

    if (job->cancel_requested) {
      auto* e =
          out.Add(queue, job_set, record(Decision::kCancelled, regatta::v1::JOB_STATE_CANCELLED))
              ->mutable_job_cancelled();
      e->set_job_id(job_id);
      e->set_reason(job->cancel_reason().empty() ? "cancelled on request" : job->cancel_reason());
      continue;
    }
    if (job->preempt_requested && run != nullptr && run->active()) {
      auto* e =
          out.Add(queue, job_set, record(Decision::kPreempted, regatta::v1::JOB_STATE_PREEMPTED))
              ->mutable_job_preempted();
      e->set_job_id(job_id);
      e->set_run_id(run->run_id);
      e->set_reason(job->preempt_reason().empty() ? "preempted on request" : job->preempt_reason());
      continue;
    }
    const bool running = job->state == regatta::v1::JOB_STATE_LEASED ||
                         job->state == regatta::v1::JOB_STATE_PENDING ||
                         job->state == regatta::v1::JOB_STATE_RUNNING;
    if (!running || run == nullptr || run->active()) continue;

    if (run->state == regatta::v1::RUN_STATE_SUCCEEDED) {
      out.Add(queue, job_set, record(Decision::kSucceeded, regatta::v1::JOB_STATE_SUCCEEDED))
          ->mutable_job_succeeded()
          ->set_job_id(job_id);
      continue;
    }
    // The run failed, expired or was returned: requeue within the retry policy.
    const regatta::v1::Error error = run->error.value_or(
        MakeError(regatta::v1::ERROR_REASON_INTERNAL,
                  absl::StrCat("run ended in state ", regatta::v1::RunState_Name(run->state)),
                  "Infrastructure", false));
    const regatta::v1::RetryPolicy& policy = job->retry_policy();
    bool retryable = !error.terminal();
    if (error.terminal() && error.exit_code() != 0) {
      retryable =
          std::find(policy.retry_on_exit_codes().begin(), policy.retry_on_exit_codes().end(),
                    error.exit_code()) != policy.retry_on_exit_codes().end();
    }
    const int max_retries = policy.max_retries() > 0 ? static_cast<int>(policy.max_retries())
                                                     : options_.default_max_retries;
    int failures = job->retryable_failures();
    if (error.terminal() && retryable) ++failures;  // a retried exit code counts too
    if (!retryable) {
      auto* e = out.Add(queue, job_set, record(Decision::kFailed, regatta::v1::JOB_STATE_FAILED))
                    ->mutable_job_failed();
      e->set_job_id(job_id);
      *e->mutable_error() = error;
      continue;
    }
    if (failures > max_retries) {
      auto* e = out.Add(queue, job_set, record(Decision::kFailed, regatta::v1::JOB_STATE_FAILED))
                    ->mutable_job_failed();
      e->set_job_id(job_id);
      *e->mutable_error() =
          MakeError(regatta::v1::ERROR_REASON_MAX_RETRIES_EXCEEDED,
                    absl::StrCat("gave up after ", failures, " failed runs (max retries ",
                                 max_retries, "); last: ", error.message()),
                    error.category(), true);
      continue;
    }
    auto* e = out.Add(queue, job_set, record(Decision::kRequeued, regatta::v1::JOB_STATE_QUEUED))
                  ->mutable_job_requeued();
    e->set_job_id(job_id);
    for (const std::string& node : job->AvoidNodes()) e->add_avoid_nodes(node);
  }
}

void Scheduler::Schedule(Publication& out, JobDb::Txn& txn) {
  const std::vector<std::string> queued_queues = txn.QueuedQueues();
  if (queued_queues.empty()) return;
  const absl::Time now = clock_->Now();
  // Live executors' nodes, by pool.
  std::map<std::string, std::vector<Node>> pools;
  absl::flat_hash_map<std::string, std::pair<std::string, size_t>> node_index;
  absl::flat_hash_map<std::string, int> capacity;
  for (ExecutorState& e : executors_->Snapshot()) {
    if (now - e.last_seen > options_.executor_timeout) continue;
    capacity[e.id] = std::max(0, e.max_runs_to_lease - e.leased_since_report);
    for (Node& node : e.nodes) {
      std::vector<Node>& nodes = pools[node.pool];
      node_index[node.id] = {node.pool, nodes.size()};
      nodes.push_back(std::move(node));
    }
  }
  if (pools.empty()) return;
  // What active runs hold, per node and per (pool, queue).
  std::map<std::pair<std::string, std::string>, ResourceList> queue_allocated;
  txn.ForEachActiveRun([&](const JobRecord& job, const RunRecord& run) {
    queue_allocated[{run.pool, job.queue()}].Add(job.requests());
    if (auto it = node_index.find(run.node_id); it != node_index.end()) {
      pools[it->second.first][it->second.second].allocated.Add(job.requests());
    }
  });

  int budget = options_.max_leases_per_cycle;
  for (auto& [pool, nodes] : pools) {
    if (budget <= 0) break;
    RoundInput input;
    input.nodes = &nodes;
    for (const std::string& queue : queued_queues) {
      auto info = queues_.find(queue);
      if (info == queues_.end() || info->second.cordoned) continue;
      RoundQueue q;
      q.name = queue;
      q.weight = info->second.weight;
      if (auto a = queue_allocated.find({pool, queue}); a != queue_allocated.end()) {
        q.allocated = a->second;
      }
      q.jobs = std::make_unique<QueuedIterator>(txn.Cursor(queue));
      input.queues.push_back(std::move(q));
    }
    if (input.queues.empty()) continue;
    // Deterministic queue order whatever the hash map's.
    std::sort(input.queues.begin(), input.queues.end(),
              [](const RoundQueue& a, const RoundQueue& b) { return a.name < b.name; });
    input.config.resource_multipliers = multipliers_;
    input.config.max_assignments = budget;
    input.config.executor_capacity = capacity;
    input.config.time_budget = options_.cycle_time_budget;
    RoundResult result = ScheduleRound(std::move(input));
    for (const Assignment& a : result.assignments) {
      const JobRecord* job = txn.FindJob(a.job_id);
      if (job == nullptr || a.node_index < 0 || a.node_index >= static_cast<int>(nodes.size())) {
        continue;
      }
      const Node& node = nodes[a.node_index];
      capacity[node.executor_id] -= 1;
      --budget;
      RunRecord run;
      run.run_id = ids_->NewId();
      run.job_id = job->id;
      run.executor_id = node.executor_id;
      run.node_id = node.id;
      run.pool = pool;
      run.state = regatta::v1::RUN_STATE_LEASED;
      run.leased_time = now;
      const std::string job_id = job->id;
      const std::string executor_id = node.executor_id;
      Event* event =
          out.Add(job->queue(), job->job_set(), [this, &txn, job_id, executor_id](int64_t offset) {
            txn.SetDecisionOffset(job_id, offset);
            executors_->NoteLeased(executor_id, 1);
          });
      auto* leased = event->mutable_job_run_leased();
      leased->set_job_id(job_id);
      leased->set_run_id(run.run_id);
      leased->set_executor_id(executor_id);
      leased->set_node_id(node.id);
      leased->set_pool(pool);
      leased->set_scheduled_at_priority(job->priority_class_priority);
      // Leased in the transaction at once: later pools' queues no longer offer the job.
      txn.RecordLease(job_id, std::move(run), /*offset=*/0);
    }
  }
}

}  // namespace regatta::scheduler
