#ifndef REGATTA_SRC_PIPELINES_SCHEDULE_CONTROLLER_H_
#define REGATTA_SRC_PIPELINES_SCHEDULE_CONTROLLER_H_

// The recurring-run controller: on each tick, for every enabled recurring run, creates the runs
// whose scheduled time has come (schedule.h), never letting more than max_concurrency of its runs
// be active. Run ids are deterministic (ScheduledRunId), so controllers racing over one store
// create each run once: the loser gets ALREADY_EXISTS and moves on. A max_concurrency below 1
// counts as 1.

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "regatta/v1/pipelines.pb.h"
#include "src/common/clock.h"

namespace regatta::pipelines::schedule {

// Where recurring runs and their runs' states come from (the store's views).
class RecurringRunSource {
 public:
  virtual ~RecurringRunSource() = default;
  // Enabled recurring runs, with last_scheduled_time as last recorded (it may lag behind the
  // runs this controller created; the controller keeps its own, later view).
  virtual absl::StatusOr<std::vector<regatta::v1::RecurringRun>> ListEnabledRecurringRuns() = 0;
  // Runs created by this recurring run that are not in a terminal state.
  virtual absl::StatusOr<int> CountActiveRuns(absl::string_view recurring_run_id) = 0;
};

// Creates a run of a recurring run's pipeline version with its parameters, under `run_id`, and
// records `scheduled_time` as the recurring run's last_scheduled_time.
class ScheduledRunCreator {
 public:
  virtual ~ScheduledRunCreator() = default;
  // OK, or ALREADY_EXISTS if a run with `run_id` exists (another controller made it); any
  // other error is retried on a later tick.
  virtual absl::Status CreateScheduledRun(const regatta::v1::RecurringRun& recurring_run,
                                          absl::string_view run_id, absl::string_view display_name,
                                          absl::Time scheduled_time) = 0;
};

struct RecurringRunControllerOptions {
  // The longest the background loop sleeps between ticks (it also wakes at the next scheduled
  // time and on Wake()); bounds how late it notices recurring runs created or runs finished.
  absl::Duration poll_interval = absl::Seconds(10);
};

class RecurringRunController {
 public:
  struct TickResult {
    int runs_created = 0;
    // Scheduled times another controller had already created (ALREADY_EXISTS).
    int runs_already_existing = 0;
    // The earliest time a recurring run has something to schedule (absl::InfiniteFuture() if
    // none); a time in the past means runs are waiting for a concurrency slot.
    absl::Time next_due = absl::InfiniteFuture();
  };

  RecurringRunController(const Clock* clock, RecurringRunSource* source,
                         ScheduledRunCreator* creator, RecurringRunControllerOptions options = {});
  ~RecurringRunController();
  RecurringRunController(const RecurringRunController&) = delete;
  RecurringRunController& operator=(const RecurringRunController&) = delete;

  // Creates what is due now. Errors of one recurring run (a bad cron, a failed create) are
  // logged and leave the others unaffected; the error returned is the source's.
  absl::StatusOr<TickResult> Tick();

  // Runs Tick in a background thread until Stop (idempotent; Stop returns promptly).
  void Start();
  void Stop();
  // Makes the background loop tick now (e.g. a recurring run was created or a run finished).
  void Wake();

 private:
  void Loop();
  // Creates the due runs of one recurring run; updates result and the view of its last time.
  absl::Status TickOne(const regatta::v1::RecurringRun& recurring_run, absl::Time now,
                       TickResult& result);

  const Clock* clock_;
  RecurringRunSource* source_;
  ScheduledRunCreator* creator_;
  RecurringRunControllerOptions options_;

  absl::Mutex tick_mu_;  // one Tick at a time
  // recurring run id -> the latest scheduled time created (by us or found existing); ahead of
  // the source's last_scheduled_time until the store records it.
  absl::flat_hash_map<std::string, absl::Time> last_scheduled_ ABSL_GUARDED_BY(tick_mu_);

  absl::Mutex loop_mu_;
  bool stopping_ ABSL_GUARDED_BY(loop_mu_) = false;
  bool woken_ ABSL_GUARDED_BY(loop_mu_) = false;
  std::optional<std::thread> thread_;  // touched by Start/Stop only
};

}  // namespace regatta::pipelines::schedule

#endif  // REGATTA_SRC_PIPELINES_SCHEDULE_CONTROLLER_H_
