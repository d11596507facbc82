#include "src/pipelines/schedule/controller.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/pipelines/schedule/schedule.h"

namespace regatta::pipelines::schedule {

RecurringRunController::RecurringRunController(const Clock* clock, RecurringRunSource* source,
                                               ScheduledRunCreator* creator,
                                               RecurringRunControllerOptions options)
    : clock_(clock), source_(source), creator_(creator), options_(options) {}

RecurringRunController::~RecurringRunController() { Stop(); }

absl::StatusOr<RecurringRunController::TickResult> RecurringRunController::Tick() {
  absl::MutexLock lock(&tick_mu_);
  ASSIGN_OR_RETURN(std::vector<regatta::v1::RecurringRun> recurring_runs,
                   source_->ListEnabledRecurringRuns());
  const absl::Time now = clock_->Now();
  TickResult result;
  absl::flat_hash_set<std::string> listed;
  for (const regatta::v1::RecurringRun& recurring_run : recurring_runs) {
    if (!recurring_run.enabled()) continue;
    listed.insert(recurring_run.id());
    absl::Status status = TickOne(recurring_run, now, result);
    if (!status.ok()) {
      LOG_WARN("recurring run not scheduled", "recurring_run", recurring_run.id(), "error",
               status.ToString());
    }
  }
  // Forget deleted and disabled ones; re-enabled ones continue from the store's record.
  absl::erase_if(last_scheduled_, [&](const auto& entry) { return !listed.contains(entry.first); });
  return result;
}

absl::Status RecurringRunController::TickOne(const regatta::v1::RecurringRun& recurring_run,
                                             absl::Time now, TickResult& result) {
  ASSIGN_OR_RETURN(Schedule schedule, Schedule::Create(recurring_run));
  std::optional<absl::Time> last = OptionalTime(recurring_run.last_scheduled_time());
  if (auto it = last_scheduled_.find(recurring_run.id());
      it != last_scheduled_.end() && (!last || it->second > *last)) {
    last = it->second;
  }
  if (!ScheduleBaseline(recurring_run, last)) {
    // Nothing to count from (no create_time): start from when this controller first saw it.
    last = now;
    last_scheduled_[recurring_run.id()] = now;
  }

  ASSIGN_OR_RETURN(int active, source_->CountActiveRuns(recurring_run.id()));
  const int slots = std::max(1, recurring_run.max_concurrency()) - active;
  ASSIGN_OR_RETURN(std::vector<absl::Time> due, DueTimes(recurring_run, last, now, slots));
  for (absl::Time scheduled_time : due) {
    const std::string display_name = ScheduledRunDisplayName(recurring_run, scheduled_time);
    const std::string run_id = ScheduledRunId(recurring_run.id(), display_name);
    absl::Status created =
        creator_->CreateScheduledRun(recurring_run, run_id, display_name, scheduled_time);
    if (created.ok()) {
      ++result.runs_created;
      LOG_INFO("scheduled run created", "recurring_run", recurring_run.id(), "run", run_id,
               "display_name", display_name);
    } else if (absl::IsAlreadyExists(created)) {
      ++result.runs_already_existing;
    } else {
      return created;
    }
    last = scheduled_time;
    last_scheduled_[recurring_run.id()] = scheduled_time;
  }

  const absl::Time next = schedule.NextTime(*ScheduleBaseline(recurring_run, last));
  // Without catch-up a time waiting for a slot is replaced by the latest one when the slot frees.
  result.next_due = std::min(result.next_due, next);
  return absl::OkStatus();
}

void RecurringRunController::Start() {
  if (thread_) return;
  {
    absl::MutexLock lock(&loop_mu_);
    stopping_ = false;
  }
  thread_.emplace([this] { Loop(); });
}

void RecurringRunController::Stop() {
  if (!thread_) return;
  {
    absl::MutexLock lock(&loop_mu_);
    stopping_ = true;
  }
  thread_->join();
  thread_.reset();
}

void RecurringRunController::Wake() {
  absl::MutexLock lock(&loop_mu_);
  woken_ = true;
}

void RecurringRunController::Loop() {
  while (true) {
    absl::StatusOr<TickResult> result = Tick();
    absl::Duration sleep = options_.poll_interval;
    if (!result.ok()) {
      LOG_WARN("recurring run tick failed", "error", result.status().ToString());
    } else {
      // A due time in the past waits for a run to finish: poll for that.
      const absl::Duration until_due = result->next_due - clock_->Now();
      if (until_due > absl::ZeroDuration()) sleep = std::min(sleep, until_due);
    }
    absl::MutexLock lock(&loop_mu_);
    auto stop_or_wake = [this]()
                            ABSL_SHARED_LOCKS_REQUIRED(loop_mu_) { return stopping_ || woken_; };
    loop_mu_.AwaitWithTimeout(absl::Condition(&stop_or_wake), sleep);
    if (stopping_) return;
    woken_ = false;
  }
}

}  // namespace regatta::pipelines::schedule
