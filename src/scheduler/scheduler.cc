#include "src/scheduler/scheduler.h"

#include <algorithm>
#include <deque>
#include <functional>
#include <set>
#include <tuple>
#include <utility>
#include <variant>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/time_util.h"
#include "src/common/logging.h"
#include "src/common/pod/armada.h"
#include "src/common/status_macros.h"
#include "src/common/thread_name.h"
#include "src/scheduler/fairness/fair_share.h"
#include "src/scheduler/round/pool_round.h"
#include "src/store/list_all.h"

namespace regatta::scheduler {

using regatta::v1::Event;
using regatta::v1::EventSequence;

// ---- Publication ----------------------------------------------------------------------------

class Scheduler::Publication {
 public:
  explicit Publication(const Clock* clock, std::string user)
      : clock_(clock), user_(std::move(user)) {}

  // A new event in the sequence of (queue, job_set); `after` runs with the sequence's offset
  // once the append returns (see Publish).
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
  // Adds the job events held now, per queue and kind, to `out`.
  void CountJobEvents(std::vector<CycleReport::Published>& out) const {
    for (const Entry& e : entries_) {
      const size_t first = out.size();
      auto add = [&](const char* event, const std::string& pool) {
        for (size_t i = first; i < out.size(); ++i) {
          if (out[i].event == event && out[i].pool == pool) {
            ++out[i].count;
            return;
          }
        }
        out.push_back({e.sequence.queue(), pool, event, 1});
      };
      static const std::string kNoPool;
      for (const Event& event : e.sequence.events()) {
        switch (event.event_case()) {
          case Event::kJobRunLeased:
            add("leased", event.job_run_leased().pool());
            break;
          case Event::kJobRequeued:
            add("requeued", kNoPool);
            break;
          case Event::kJobSucceeded:
            add("succeeded", kNoPool);
            break;
          case Event::kJobFailed:
            add("failed", kNoPool);
            break;
          case Event::kJobCancelled:
            add("cancelled", kNoPool);
            break;
          case Event::kJobPreempted:
            add("preempted", kNoPool);
            break;
          case Event::kJobRejected:
            add("rejected", kNoPool);
            break;
          case Event::kJobRunLeaseExpired:
            add("lease_expired", kNoPool);
            break;
          default:
            break;
        }
      }
    }
  }
  int64_t events() const {
    int64_t n = 0;
    for (const Entry& e : entries_) n += e.sequence.events_size();
    return n;
  }

  // Appends everything, then runs the callbacks. The append only waits for the commit: a
  // machine crash can lose the tail of the cycle's decisions, and the next scheduler decides
  // them again from the durable log. Executors act on leases, cancellations and preemptions
  // only once they are durable: the executor API waits for that before it sends them (except
  // to the executor embedded in the server's process, which such a crash ends too). This keeps
  // an fsync off the cycle and off a pipeline chain's path.
  absl::Status Publish(eventlog::EventLog* log) {
    if (entries_.empty()) return absl::OkStatus();
    std::vector<EventSequence> sequences;
    sequences.reserve(entries_.size());
    for (Entry& e : entries_) sequences.push_back(e.sequence);
    ASSIGN_OR_RETURN(std::vector<int64_t> offsets, log->AppendVisible(std::move(sequences)));
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

// Whether an ingested change may leave the scheduler something to decide or place. What only
// echoes a cycle's own leases and outcomes, or an executor's progress, does not.
bool ChangeNeedsCycle(const store::Mutation& mutation) {
  if (const auto* state = std::get_if<store::JobSetState>(&mutation)) {
    return state->state == regatta::v1::JOB_STATE_QUEUED;  // requeued: placed again
  }
  if (const auto* run = std::get_if<store::RunSetState>(&mutation)) {
    return store::IsTerminal(run->state);  // an outcome to decide, room freed
  }
  return !std::holds_alternative<store::RunInsert>(mutation) &&
         !std::holds_alternative<store::PipelineChange>(mutation);
}

const char* CodeName(UnschedulableCode code) {
  switch (code) {
    case UnschedulableCode::kNoNodeMatches:
      return "NO_NODE_MATCHES";
    case UnschedulableCode::kNoRoom:
      return "NO_ROOM";
    case UnschedulableCode::kQueueFractionLimit:
      return "QUEUE_FRACTION_LIMIT";
    case UnschedulableCode::kRoundLimit:
      return "ROUND_LIMIT";
    case UnschedulableCode::kRateLimited:
      return "RATE_LIMITED";
    case UnschedulableCode::kGangIncomplete:
      return "GANG_INCOMPLETE";
    case UnschedulableCode::kGangDoesNotFit:
      return "GANG_DOES_NOT_FIT";
    case UnschedulableCode::kQueueCordoned:
      return "QUEUE_CORDONED";
    case UnschedulableCode::kExecutorFull:
      return "EXECUTOR_FULL";
    case UnschedulableCode::kTimeBudget:
      return "TIME_BUDGET";
  }
  return "UNSCHEDULABLE";
}

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
      job_db_([this](absl::string_view pc) { return PriorityOf(pc); }) {}

Scheduler::~Scheduler() { Stop(); }

int32_t Scheduler::PriorityOf(absl::string_view priority_class) const {
  auto it = options_.policy.priority_classes.find(std::string(priority_class));
  return it == options_.policy.priority_classes.end() ? 0 : it->second.priority;
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

void Scheduler::ViewsMoved(const store::IngestBatch& batch) {
  bool needs_cycle = false;
  bool devices_changed = false;
  {
    absl::MutexLock lock(&submitted_mu_);
    for (const store::OffsetMutation& m : batch.mutations) {
      devices_changed |= std::holds_alternative<store::DeviceChange>(m.mutation);
      needs_cycle |= NeedsCycleLocked(m);
    }
  }
  if (devices_changed) NotifyDevicesChanged();
  absl::MutexLock lock(&mu_);
  views_told_offset_ = std::max(views_told_offset_, batch.to_offset);
  if (needs_cycle) {
    if (options_.views_wake_delay <= absl::ZeroDuration()) {
      wake_now_ = true;
    } else {
      wake_at_ = std::min(wake_at_, absl::Now() + options_.views_wake_delay);
    }
  }
}

bool Scheduler::NeedsCycle(const store::OffsetMutation& m) {
  absl::MutexLock lock(&submitted_mu_);
  return NeedsCycleLocked(m);
}

bool Scheduler::NeedsCycleLocked(const store::OffsetMutation& m) {
  if (const auto* insert = std::get_if<store::JobInsert>(&m.mutation)) {
    // A job handed over at submit is placed (or woke a cycle) already.
    return !submitted_specs_.contains(insert->job.id());
  }
  return ChangeNeedsCycle(m.mutation);
}

void Scheduler::AcceptSubmitted(int64_t offset,
                                std::vector<std::shared_ptr<const regatta::v1::Job>> jobs) {
  if (!ready()) return;  // not leading: the views bring them to whoever leads
  {
    absl::MutexLock lock(&submitted_mu_);
    for (std::shared_ptr<const regatta::v1::Job>& spec : jobs) {
      SubmittedJob job{offset, std::move(spec)};
      submitted_specs_.insert_or_assign(job.spec->id(), job);
      submitted_new_.push_back(std::move(job));
    }
  }
  // Only now: a cycle woken earlier could miss them, and their views rows wake nobody.
  absl::MutexLock lock(&mu_);
  wake_now_ = true;
}

std::shared_ptr<const regatta::v1::Job> Scheduler::SubmittedSpec(absl::string_view job_id) const {
  absl::MutexLock lock(&submitted_mu_);
  auto it = submitted_specs_.find(job_id);
  return it == submitted_specs_.end() ? nullptr : it->second.spec;
}

void Scheduler::ApplySubmitted(JobDb::Txn& txn, absl::flat_hash_set<std::string>& touched) {
  std::vector<SubmittedJob> submitted;
  {
    absl::MutexLock lock(&submitted_mu_);
    submitted.swap(submitted_new_);
    absl::erase_if(submitted_specs_,
                   [this](const auto& entry) { return entry.second.offset <= views_offset_; });
  }
  for (const SubmittedJob& job : submitted) {
    // Held already (its views row came first), or the views hold it: nothing to add.
    if (job.offset <= views_offset_ || txn.FindJob(job.spec->id()) != nullptr) continue;
    const JobRecord* record =
        txn.ApplyJobRow(store::SubmittedJobRow(*job.spec), views_offset_, job.spec.get());
    if (record != nullptr && MayNeedDecision(*record)) touched.insert(record->id);
  }
}

absl::Status Scheduler::Initialize() {
  const int64_t term = leader_->LeaderToken();
  if (term == 0) return absl::UnavailableError("not the scheduling leader");
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
  // A new term loads everything again: what an earlier term held may have ended meanwhile.
  job_db_.Reset();
  revisit_.clear();
  views_offset_ = 0;
  absl::flat_hash_set<std::string> touched;
  RETURN_IF_ERROR(Sync(touched));
  revisit_.insert(touched.begin(), touched.end());
  started_at_ = clock_->Now();
  LOG_INFO("scheduler loaded its job database", "jobs", job_db_.size(), "views_offset",
           views_offset_);
  term_ = term;
  absl::MutexLock lock(&mu_);
  ready_ = true;
  return absl::OkStatus();
}

void Scheduler::StepDown() {
  LOG_WARN("scheduler lost leadership; it stops deciding until it leads again", "term", term_);
  term_ = 0;
  job_db_.Reset();
  revisit_.clear();
  instances_generation_ = 0;
  if (reports_ != nullptr) reports_->SetReady(false);
  {
    absl::MutexLock lock(&mu_);
    ready_ = false;
  }
  absl::MutexLock lock(&submitted_mu_);
  submitted_new_.clear();
  submitted_specs_.clear();
}

absl::Status Scheduler::Start() {
  // A replica that does not lead yet starts its loop and catches up when it becomes leader.
  if (leader_->LeaderToken() != 0) RETURN_IF_ERROR(Initialize());
  thread_ = std::thread([this] {
    SetThreadName("rg-scheduler");
    Loop();
  });
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
      wake_now_ = false;
      wake_at_ = absl::InfiniteFuture();
    }
    // A new term (or the first) starts with the catch-up rule; a replica that does not lead
    // waits for leadership.
    const int64_t token = leader_->LeaderToken();
    if (token == 0) {
      if (term_ != 0) StepDown();
      leader_->AwaitLeadership(absl::Now() + options_.cycle_period);
      continue;
    }
    const bool new_term = token != term_;
    absl::Status status = new_term ? Initialize() : RunCycle();
    if (status.ok() && new_term) continue;  // the term's first cycle at once
    if (!status.ok()) {
      LOG_WARN("scheduling cycle failed; retrying", "error", status.ToString());
      absl::SleepFor(backoff);
      backoff = std::min(backoff * 2, absl::Seconds(5));
      continue;
    }
    backoff = absl::Milliseconds(50);
    // Sleep until the views take a change that needs a cycle (views_wake_delay later), a
    // submit is handed over (at once), an executor reports (by the end of the 10 ms slice), or
    // the cycle period passes.
    // Views that move without ViewsMoved (nobody observes the ingest) are noticed by the end
    // of the slice too.
    const absl::Time deadline = absl::Now() + options_.cycle_period;
    while (absl::Now() < deadline) {
      int64_t views_told = 0;
      {
        absl::MutexLock lock(&mu_);
        const absl::Time until =
            std::min({deadline, absl::Now() + absl::Milliseconds(10), wake_at_});
        // A wake_at_ set earlier than `until` while this waits ends the wait, to wait again.
        auto woken = [this, until]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
          return stopping_ || wake_now_ || wake_at_ < until;
        };
        const bool signalled = mu_.AwaitWithDeadline(absl::Condition(&woken), until);
        if (stopping_ || wake_now_) break;
        if (signalled) continue;  // wake_at_ moved earlier
        if (wake_ || absl::Now() >= wake_at_) break;
        views_told = views_told_offset_;
      }
      if (wait_for_views_(std::max(views_offset_, views_told) + 1, absl::InfinitePast()).ok()) {
        break;
      }
    }
  }
}

absl::Status Scheduler::RunCycle() {
  if (!on_cycle_) return Cycle(nullptr);
  const absl::Time start = absl::Now();
  CycleReport report;
  absl::Status status = Cycle(&report);
  report.duration = absl::Now() - start;
  report.ok = status.ok();
  if (!report.ok) report.published.clear();
  on_cycle_(report);
  return status;
}

absl::Status Scheduler::Cycle(CycleReport* report) {
  absl::flat_hash_set<std::string> touched = std::move(revisit_);
  revisit_.clear();
  if (absl::Status s = Sync(touched); !s.ok()) {
    revisit_ = std::move(touched);
    return s;
  }
  // Everything the cycle decides goes into one append: outcomes of ended runs, expired
  // runs of lost executors, and new leases. A job requeued here is placed in the next cycle,
  // which follows at once because the append moves the views.
  // The cycle's changes to the JobDb (expired runs, decisions, leases) become visible only
  // once their events are in the log (durable if executors act on them; see Publish); a
  // failed append aborts them all.
  Publication out(clock_, options_.user_id);
  std::unique_ptr<JobDb::Txn> txn = job_db_.Begin();
  ExpireLostExecutors(out, touched, *txn);
  Decide(touched, out, *txn);
  std::unique_ptr<DeviceSlots> devices = LoadDeviceSlots(out, *txn);
  const int64_t decided = out.events();
  Schedule(out, *txn, devices.get(), report);
  const int64_t leased = out.events() - decided;
  // A cycle that stopped placing at a limit of its own (leases per cycle, time budget) goes on
  // at once; one that placed nothing more is done until something changes.
  const bool more_to_place = leased > 0 && !txn->QueuedQueues().empty();
  if (leader_->LeaderToken() != term_) {
    // Leadership moved during the cycle: nothing decided here may be published.
    txn->Abort();
    StepDown();
    return absl::AbortedError("scheduling leadership lost during the cycle");
  }
  if (report != nullptr) out.CountJobEvents(report->published);
  if (absl::Status s = out.Publish(log_); !s.ok()) {
    txn->Abort();
    revisit_ = std::move(touched);
    return s;
  }
  txn->Compact(views_offset_);
  txn->Commit();
  if (reports_ != nullptr) reports_->SetReady(true);
  absl::MutexLock lock(&mu_);
  wake_now_ |= more_to_place;
  ++stats_.cycles;
  stats_.decisions += decided;
  stats_.leases += leased;
  return absl::OkStatus();
}

void Scheduler::ApplyQueueRows(const std::vector<store::SchedulerQueueRow>& rows) {
  for (const store::SchedulerQueueRow& row : rows) {
    if (row.deleted) {
      queues_.erase(row.queue.name());
      continue;
    }
    QueueInfo& info = queues_[row.queue.name()];
    info.weight = WeightForPriorityFactor(row.queue.priority_factor());
    info.cordoned = row.queue.cordoned();
    info.class_limits.clear();
    for (const auto& [pc, limits] : row.queue.resource_limits_by_priority_class()) {
      info.class_limits[pc] = std::map<std::string, double>(
          limits.maximum_resource_fraction().begin(), limits.maximum_resource_fraction().end());
    }
  }
}

absl::Status Scheduler::Sync(absl::flat_hash_set<std::string>& touched) {
  // The views' rows are facts: committed whatever the cycle decides later. The first load fills
  // the empty JobDb in bulk, streamed in chunks so that a million rows never sit in memory at
  // once next to the JobDb they become.
  std::unique_ptr<JobDb::Txn> txn = job_db_.Begin(/*bulk_load=*/job_db_.size() == 0);
  auto note = [&](const JobRecord* job) {
    if (job != nullptr && MayNeedDecision(*job)) touched.insert(job->id);
  };
  // A new job's template comes from the store's templates, made once per template id; jobs
  // stored before templates existed read their full specs, in chunks, at the end.
  absl::flat_hash_map<int64_t, regatta::v1::Job> template_specs;
  absl::flat_hash_map<int64_t, std::shared_ptr<const JobSpecTemplate>> templates;
  std::vector<store::SchedulerJobRow> need_spec;
  std::vector<store::SchedulerRunRow> runs_of_jobs_needing_spec;
  int64_t offset = views_offset_;
  constexpr size_t kRowsPerChunk = 4096;
  auto apply_chunk = [&](store::SchedulerDelta& chunk) -> absl::Status {
    offset = chunk.offset;
    txn->Reserve(chunk.jobs_in_load);
    ApplyQueueRows(chunk.queues);
    template_specs.merge(chunk.templates);
    for (const store::SchedulerJobRow& row : chunk.jobs) {
      auto template_if_new = [&]() -> std::shared_ptr<const JobSpecTemplate> {
        if (store::IsTerminal(row.state)) return nullptr;
        auto spec = template_specs.find(row.template_id);
        if (spec == template_specs.end()) {
          need_spec.push_back(row);
          return nullptr;
        }
        std::shared_ptr<const JobSpecTemplate>& made = templates[row.template_id];
        if (made == nullptr) made = job_db_.Template(spec->second, row.priority_class);
        return made;
      };
      note(txn->ApplyJobRow(row, chunk.offset, template_if_new));
    }
    for (store::SchedulerRunRow& row : chunk.runs) {
      if (txn->ApplyRunRow(row, chunk.offset)) {
        note(txn->FindJob(row.job_id));
      } else if (!need_spec.empty()) {
        runs_of_jobs_needing_spec.push_back(std::move(row));  // the job may come below
      }
    }
    return absl::OkStatus();
  };
  // The first load reads on a thread of its own, a chunk ahead; a cycle's small delta is read
  // here (a thread per cycle would cost more than the read).
  RETURN_IF_ERROR(views_offset_ == 0
                      ? store::StreamSchedulerDeltaAhead(*store_, options_.views_consumer,
                                                         views_offset_, kRowsPerChunk, apply_chunk)
                      : store_->StreamSchedulerDelta(options_.views_consumer, views_offset_,
                                                     kRowsPerChunk, apply_chunk));
  constexpr size_t kSpecChunk = 10'000;
  for (size_t start = 0; start < need_spec.size(); start += kSpecChunk) {
    const size_t end = std::min(need_spec.size(), start + kSpecChunk);
    std::vector<std::string> ids;
    for (size_t i = start; i < end; ++i) ids.push_back(need_spec[i].job_id);
    ASSIGN_OR_RETURN(std::vector<regatta::v1::Job> specs, store_->GetJobSpecs(ids));
    absl::flat_hash_map<absl::string_view, const regatta::v1::Job*> by_id;
    for (const regatta::v1::Job& spec : specs) by_id.emplace(spec.id(), &spec);
    for (size_t i = start; i < end; ++i) {
      const store::SchedulerJobRow& row = need_spec[i];
      auto it = by_id.find(row.job_id);
      if (it != by_id.end()) note(txn->ApplyJobRow(row, offset, it->second));
    }
  }
  for (const store::SchedulerRunRow& row : runs_of_jobs_needing_spec) {
    if (txn->ApplyRunRow(row, offset)) note(txn->FindJob(row.job_id));
  }
  views_offset_ = offset;
  ApplySubmitted(*txn, touched);
  txn->Commit();
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
      if (on_executor_lost_) on_executor_lost_(e);
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
    if (pod::ArmadaFailFast(job->tmpl->spec.annotations())) {
      // Armada's failFast: a run that fails (to start, or at all) is never retried.
      auto* e = out.Add(queue, job_set, record(Decision::kFailed, regatta::v1::JOB_STATE_FAILED))
                    ->mutable_job_failed();
      e->set_job_id(job_id);
      *e->mutable_error() = error;
      if (!error.terminal()) {
        e->mutable_error()->set_terminal(true);
        e->mutable_error()->set_message(absl::StrCat(error.message(), " (not retried: the job is ",
                                                     pod::kArmadaFailFastAnnotation, ")"));
      }
      continue;
    }
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

PoolRoundConfig Scheduler::RoundConfigFor(const std::string& pool) const {
  std::vector<std::string> names;
  PoolRoundConfig config = MakePoolRoundConfig(options_.policy, pool, &names);
  // The JobDb numbers priority classes as it meets them; the round indexes them the same way.
  // A class the policy does not know counts as not preemptible at PriorityOf's priority.
  std::vector<PriorityClass> by_index;
  for (const std::string& name : job_db_.priority_class_names()) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it != names.end()) {
      by_index.push_back(config.priority_classes[it - names.begin()]);
    } else {
      by_index.push_back(PriorityClass{name, PriorityOf(name), /*preemptible=*/false, {}});
    }
  }
  if (by_index.empty()) by_index.push_back(PriorityClass{"default", 0, false, {}});
  config.priority_classes = std::move(by_index);
  return config;
}

void Scheduler::ReportPoolRound(const std::string& pool, const PoolRoundResult& result,
                                absl::Time now) {
  if (reports_ == nullptr) return;
  for (const Lease& lease : result.leases) reports_->ForgetJob(lease.job_id);
  for (const Unschedulable& u : result.unschedulable) {
    reports_->SetJobReason(u.job_id, JobReason{pool, CodeName(u.code), std::string(u.reason), now});
  }
  std::vector<QueueShareReport> shares;
  for (const QueueReport& q : result.queues) {
    QueueShareReport share;
    share.queue = q.queue;
    share.pool = pool;
    share.weight = q.weight;
    share.fair_share = q.fair_share;
    share.adjusted_fair_share = q.adjusted_fair_share;
    share.demand_share = q.demand_share;
    share.actual_share = q.share_after;
    share.leased = q.leased;
    share.preempted = q.preempted;
    share.stop_reason = q.stop_reason;
    share.time = now;
    shares.push_back(std::move(share));
  }
  reports_->SetPoolQueues(pool, std::move(shares));
}

std::vector<DeviceClaim> Scheduler::DeviceClaimsOf(absl::string_view run_id) const {
  absl::MutexLock lock(&claims_mu_);
  auto it = device_claims_.find(run_id);
  return it == device_claims_.end() ? std::vector<DeviceClaim>() : it->second;
}

std::unique_ptr<DeviceSlots> Scheduler::LoadDeviceSlots(Publication& out, JobDb::Txn& txn) {
  // The generation before the read: a change ingested during it is read again next cycle.
  const uint64_t generation = device_generation_.load();
  if (!track_device_changes_.load() || generation != instances_generation_) {
    absl::StatusOr<std::vector<regatta::v1::Instance>> listed =
        store::ListAll<regatta::v1::Instance>([this](const store::PageRequest& page) {
          store::InstanceFilter filter;
          filter.page = page;
          return store_->ListInstances(filter);
        });
    if (!listed.ok()) {
      LOG_WARN("cannot read the Instances; no device is scheduled this cycle", "error",
               listed.status().ToString());
      instances_generation_ = 0;
      return nullptr;
    }
    instances_ = *std::move(listed);
    instances_generation_ = generation;
  }
  const std::vector<regatta::v1::Instance>& instances = instances_;
  auto active = [&](absl::string_view run_id) {
    const RunRecord* run = txn.FindRun(run_id);
    return run != nullptr && run->active();
  };
  // Slot -> holder of the views, to release those no longer active.
  std::vector<std::tuple<std::string, std::string, std::string>> stale;
  absl::flat_hash_set<std::string> shown;
  for (const regatta::v1::Instance& instance : instances) {
    for (const auto& [slot, holder] : instance.device_usage()) {
      if (holder.empty()) continue;
      const std::string key = absl::StrCat(slot, "/", holder);
      shown.insert(key);
      if (!active(holder) && !releases_in_flight_.contains(key)) {
        stale.emplace_back(instance.name(), slot, holder);
      }
    }
  }
  // A release the views show done (the slot free or held by another) is no longer in flight.
  for (auto it = releases_in_flight_.begin(); it != releases_in_flight_.end();) {
    auto here = it++;
    if (!shown.contains(*here)) releases_in_flight_.erase(here);
  }
  auto slots = std::make_unique<DeviceSlots>(instances);
  for (const regatta::v1::Instance& instance : instances) {
    for (const auto& [slot, holder] : instance.device_usage()) {
      if (!holder.empty() && active(holder)) slots->Hold(slot, holder);
    }
  }
  {
    absl::MutexLock lock(&claims_mu_);
    for (auto it = device_claims_.begin(); it != device_claims_.end();) {
      auto here = it++;
      if (!active(here->first)) device_claims_.erase(here);
    }
    for (const auto& [run_id, claims] : device_claims_) {
      for (const DeviceClaim& claim : claims) slots->Hold(claim.slot, run_id);
    }
  }
  for (auto& [instance, slot, holder] : stale) {
    const std::string key = absl::StrCat(slot, "/", holder);
    auto* released = out.Add("", "", [this, key](int64_t) { releases_in_flight_.insert(key); })
                         ->mutable_device_slot_released();
    released->set_instance_name(instance);
    released->set_slot(slot);
    released->set_holder(holder);
  }
  return slots;
}

void Scheduler::Schedule(Publication& out, JobDb::Txn& txn, DeviceSlots* devices,
                         CycleReport* report) {
  const std::vector<std::string> queued_queues = txn.QueuedQueues();
  if (queued_queues.empty()) return;  // nothing to place, so nothing worth preempting either
  const absl::Time now = clock_->Now();
  // Live executors' nodes, by pool.
  std::map<std::string, std::vector<Node>> pools;
  absl::flat_hash_map<std::string, int> capacity;
  for (ExecutorState& e : executors_->Snapshot()) {
    if (now - e.last_seen > options_.executor_timeout) continue;
    capacity[e.id] = std::max(0, e.max_runs_to_lease - e.leased_since_report);
    for (Node& node : e.nodes) pools[node.pool].push_back(std::move(node));
  }
  if (pools.empty()) return;
  if (devices != nullptr) {
    for (auto& [pool, nodes] : pools) devices->AddAllocatable(nodes, ResourceNames::Global());
  }
  // Queues holding resources in each pool take part in its round (their share counts, and
  // fair-share preemption may take from them) even with nothing queued.
  std::map<std::string, std::set<std::string>> pool_queues;
  txn.ForEachActiveRun([&](const JobRecord& job, const RunRecord& run) {
    pool_queues[run.pool].insert(job.queue());
  });
  if (!global_tokens_.has_value()) {
    global_tokens_.emplace(options_.policy.rate_limit.rate, options_.policy.rate_limit.burst, now);
  }

  // Jobs no node of a pool could ever hold, with that pool's reason: rejected once that is true
  // of every pool (see RejectUnschedulable).
  absl::flat_hash_map<std::string, std::map<std::string, std::string>> never_fits;
  int budget = options_.max_leases_per_cycle;
  for (auto& [pool, nodes] : pools) {
    if (budget <= 0) break;
    absl::flat_hash_map<absl::string_view, int> node_index;
    for (int i = 0; i < static_cast<int>(nodes.size()); ++i) node_index[nodes[i].id] = i;
    const std::vector<RunningJob> running = txn.RunningJobs(pool, [&](absl::string_view id) {
      auto it = node_index.find(id);
      return it == node_index.end() ? -1 : it->second;
    });
    PoolRoundInput input;
    input.pool = pool;
    input.nodes = &nodes;
    input.running = &running;
    input.config = RoundConfigFor(pool);
    input.config.max_new_jobs = budget;
    input.config.executor_capacity = capacity;
    input.config.time_budget = options_.cycle_time_budget;
    input.config.global_tokens = global_tokens_->Available(now);
    std::set<std::string> names(queued_queues.begin(), queued_queues.end());
    names.insert(pool_queues[pool].begin(), pool_queues[pool].end());
    for (const std::string& name : names) {
      auto info = queues_.find(name);
      if (info == queues_.end()) continue;  // deleted: its jobs are being cancelled
      auto bucket = queue_tokens_.find(name);
      if (bucket == queue_tokens_.end()) {
        bucket = queue_tokens_
                     .try_emplace(name, options_.policy.queue_rate_limit.rate,
                                  options_.policy.queue_rate_limit.burst, now)
                     .first;
      }
      if (!bucket->second.unlimited()) {
        input.config.queue_tokens[name] = bucket->second.Available(now);
      }
      QueueInput q;
      q.name = name;
      q.weight = info->second.weight;
      q.cordoned = info->second.cordoned;
      const std::vector<std::string>& classes = job_db_.priority_class_names();
      for (const auto& [pc, limits] : info->second.class_limits) {
        auto cls = std::find(classes.begin(), classes.end(), pc);
        if (cls == classes.end()) continue;  // no job of that class seen yet
        auto& out = q.max_fraction_by_class[static_cast<int>(cls - classes.begin())];
        for (const auto& [resource, fraction] : limits) {
          out[ResourceNames::Global().Intern(resource)] = fraction;
        }
      }
      q.queued_demand = txn.QueuedDemand(name);
      q.jobs = txn.QueuedJobs(name);
      input.queues.push_back(std::move(q));
    }
    PoolRoundResult result = SchedulePool(std::move(input));
    ReportPoolRound(pool, result, now);
    if (report != nullptr) report->rounds.push_back({pool, result.stats.jobs_considered});
    for (const Unschedulable& u : result.unschedulable) {
      const JobRecord* job = txn.FindJob(u.job_id);
      // A device no node sees now may appear later: such a job waits instead of failing.
      if (job != nullptr && RequestsDevices(job->requests(), ResourceNames::Global())) continue;
      if (u.code == UnschedulableCode::kNoNodeMatches) {
        never_fits[u.job_id][pool] = std::string(u.reason);
      }
    }
    for (const Preemption& p : result.preemptions) {
      const JobRecord* job = txn.FindJob(p.job_id);
      const RunRecord* run = job == nullptr ? nullptr : job->latest_run();
      if (run == nullptr || !run->active()) continue;
      const std::string job_id = job->id;
      auto* e = out.Add(job->queue(), job->job_set(),
                        [&txn, job_id](int64_t offset) {
                          txn.RecordJobDecision(job_id, Decision::kPreempted,
                                                regatta::v1::JOB_STATE_PREEMPTED, offset);
                        })
                    ->mutable_job_preempted();
      e->set_job_id(job_id);
      e->set_run_id(run->run_id);
      e->set_preempting_job_id(p.caused_by_job);
      e->set_preempting_queue(p.caused_by_queue);
      e->set_reason(p.reason);
    }
    // Concrete slots for the leases that ask for devices, a gang all or nothing; a lease
    // without its slots is dropped and its job stays queued.
    absl::flat_hash_map<absl::string_view, std::vector<DeviceClaim>> claims;
    absl::flat_hash_map<absl::string_view, std::string> run_ids;
    absl::flat_hash_set<std::string> unclaimed_gangs;
    for (const Lease& lease : result.leases) {
      const JobRecord* job = txn.FindJob(lease.job_id);
      if (job == nullptr || lease.node_index < 0 ||
          lease.node_index >= static_cast<int>(nodes.size()) ||
          !RequestsDevices(job->requests(), ResourceNames::Global())) {
        continue;
      }
      const std::string run_id = ids_->NewId();
      std::optional<std::vector<DeviceClaim>> claim =
          devices == nullptr ? std::nullopt
                             : devices->Claim(job->requests(), nodes[lease.node_index].id, run_id,
                                              ResourceNames::Global());
      if (!claim) {
        unclaimed_gangs.insert(job->gang_id().empty() ? job->id : job->gang_id());
        continue;
      }
      claims[lease.job_id] = *std::move(claim);
      run_ids[lease.job_id] = run_id;
    }
    for (const Lease& lease : result.leases) {
      const JobRecord* job = txn.FindJob(lease.job_id);
      if (job == nullptr) continue;
      if (unclaimed_gangs.contains(job->gang_id().empty() ? job->id : job->gang_id())) {
        if (auto it = claims.find(lease.job_id); it != claims.end()) {
          devices->Unclaim(it->second);
          claims.erase(it);
        }
      }
    }
    for (const Lease& lease : result.leases) {
      const JobRecord* job = txn.FindJob(lease.job_id);
      if (job == nullptr || lease.node_index < 0 ||
          lease.node_index >= static_cast<int>(nodes.size())) {
        continue;
      }
      if (unclaimed_gangs.contains(job->gang_id().empty() ? job->id : job->gang_id())) continue;
      const Node& node = nodes[lease.node_index];
      capacity[node.executor_id] -= 1;
      --budget;
      global_tokens_->Take(1);
      if (auto bucket = queue_tokens_.find(lease.queue); bucket != queue_tokens_.end()) {
        bucket->second.Take(1);
      }
      RunRecord run;
      auto claimed_run = run_ids.find(lease.job_id);
      run.run_id = claimed_run != run_ids.end() ? claimed_run->second : ids_->NewId();
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
      if (auto claim = claims.find(lease.job_id); claim != claims.end()) {
        // In the lease's append: the claim is durable exactly when the lease is.
        std::vector<DeviceClaim> held = claim->second;
        const std::string run_id = run.run_id;
        for (size_t i = 0; i < held.size(); ++i) {
          std::function<void(int64_t)> after;
          if (i + 1 == held.size()) {
            after = [this, run_id, held](int64_t) {
              absl::MutexLock lock(&claims_mu_);
              device_claims_[run_id] = held;
            };
          }
          auto* claimed = out.Add("", "", std::move(after))->mutable_device_slot_claimed();
          claimed->set_instance_name(held[i].instance);
          claimed->set_slot(held[i].slot);
          claimed->set_holder(run_id);
          claimed->set_node(node.id);
        }
      }
      // Leased in the transaction at once: later pools' queues no longer offer the job.
      txn.RecordLease(job_id, std::move(run), /*offset=*/0);
    }
  }
  RejectUnschedulable(never_fits, pools, now, out, txn);
}

void Scheduler::RejectUnschedulable(
    const absl::flat_hash_map<std::string, std::map<std::string, std::string>>& never_fits,
    const std::map<std::string, std::vector<Node>>& pools, absl::Time now, Publication& out,
    JobDb::Txn& txn) {
  // Executors that were down when the scheduler started must have had time to report their
  // nodes: until then a job may fit a pool the scheduler does not know yet.
  if (never_fits.empty() || now - started_at_ < options_.executor_timeout) return;
  // A cordoned node still counts: cordons are lifted, and rejecting every job that only fits
  // nodes under maintenance would be wrong. Decided once per spec template.
  absl::flat_hash_map<const JobSpecTemplate*, bool> fits_cordoned;
  auto fits_some_cordoned_node = [&](const JobRecord& job) {
    auto [it, inserted] = fits_cordoned.try_emplace(job.tmpl.get(), false);
    if (!inserted) return it->second;
    for (const auto& [pool, nodes] : pools) {
      for (const Node& node : nodes) {
        if (!node.unschedulable) continue;
        Node uncordoned = node;
        uncordoned.unschedulable = false;
        if (MatchNodeStatically(*job.tmpl->round.task, job.requests(), uncordoned).matches) {
          return it->second = true;
        }
      }
    }
    return false;
  };
  for (const auto& [job_id, reasons] : never_fits) {
    // Some pool could hold it, or did not look at it this cycle.
    if (reasons.size() < pools.size()) continue;
    const JobRecord* job = txn.FindJob(job_id);
    if (job == nullptr || job->state != regatta::v1::JOB_STATE_QUEUED) continue;
    if (fits_some_cordoned_node(*job)) continue;
    std::vector<std::string> ids = {job_id};
    if (!job->gang_id().empty()) {
      // A gang with a member that can never run can never run: reject it whole.
      ids.clear();
      for (const JobRecord* member : txn.GangMembers(job->queue(), job->gang_id())) {
        if (member->state == regatta::v1::JOB_STATE_QUEUED) ids.push_back(member->id);
      }
    }
    for (const std::string& id : ids) {
      const JobRecord* member = txn.FindJob(id);
      if (member == nullptr || member->decision == Decision::kRejected) continue;
      auto* e = out.Add(member->queue(), member->job_set(),
                        [&txn, id](int64_t offset) {
                          txn.RecordJobDecision(id, Decision::kRejected,
                                                regatta::v1::JOB_STATE_REJECTED, offset);
                        })
                    ->mutable_job_rejected();
      e->set_job_id(id);
      for (const auto& [pool, reason] : reasons) (*e->mutable_reasons_by_pool())[pool] = reason;
      e->set_message(absl::StrCat("no node of any pool can ever run it (", reasons.size(),
                                  reasons.size() == 1 ? " pool" : " pools", " checked)"));
      if (reports_ != nullptr) reports_->ForgetJob(id);
    }
  }
}

}  // namespace regatta::scheduler
