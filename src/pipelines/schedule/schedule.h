#ifndef REGATTA_SRC_PIPELINES_SCHEDULE_SCHEDULE_H_
#define REGATTA_SRC_PIPELINES_SCHEDULE_SCHEDULE_H_

// When a recurring run (regatta.v1.RecurringRun) creates runs, following Kubeflow's
// ScheduledWorkflow controller:
// - Scheduled times come strictly after a baseline: the last scheduled time, else start_time,
//   else create_time (so a start_time in the past is caught up from, as in Kubeflow), and never
//   after end_time.
// - Cron triggers (see cron.h) are evaluated in UTC.
// - Periodic triggers (and cron "@every D", unlike robfig's delay after the previous run) form a
// fixed grid anchor + k * interval (k >= 1), the anchor being
//   start_time if set, else create_time, else the Unix epoch, floored to the second. Unlike
//   Kubeflow, which counts from the previous run (and from "now" after a pause without catch-up),
//   the grid makes every controller compute the same times, hence the same run ids.
// - With catch-up every missed time runs, oldest first; with no_catchup only the latest.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/timestamp.pb.h"
#include "regatta/v1/pipelines.pb.h"
#include "src/pipelines/schedule/cron.h"

namespace regatta::pipelines::schedule {

// Unset (all zero) timestamps are std::nullopt.
std::optional<absl::Time> OptionalTime(const google::protobuf::Timestamp& timestamp);
google::protobuf::Timestamp ToTimestamp(absl::Time time);

class Schedule {
 public:
  // Errors name the field: "cron: field 'hour': ...", "periodic.interval: ...", "end_time: ...".
  static absl::StatusOr<Schedule> Create(const regatta::v1::RecurringRun& recurring_run);

  // The first scheduled time strictly after `after`, not before start_time nor after end_time;
  // absl::InfiniteFuture() if there is none.
  absl::Time NextTime(absl::Time after) const;
  // The latest scheduled time in (after, until], if any.
  std::optional<absl::Time> LatestTime(absl::Time after, absl::Time until) const;

 private:
  Schedule() = default;
  absl::Time NextUnbounded(absl::Time after) const;

  std::optional<CronSchedule> cron_;
  absl::Duration interval_ = absl::ZeroDuration();
  absl::Time anchor_ = absl::UnixEpoch();
  absl::Time start_ = absl::InfinitePast();
  absl::Time end_ = absl::InfiniteFuture();
};

// The time scheduled times follow when the controller has not scheduled any yet:
// last_scheduled_time, else start_time, else create_time; nullopt if none is set.
std::optional<absl::Time> ScheduleBaseline(const regatta::v1::RecurringRun& recurring_run,
                                           std::optional<absl::Time> last_scheduled_time);

// The scheduled times due at `now` after `last_scheduled_time` (nullopt: the recurring run's own
// baseline, see ScheduleBaseline), oldest first, at most `max`: all of them with catch-up, only
// the latest with no_catchup. FailedPrecondition if there is no baseline at all.
absl::StatusOr<std::vector<absl::Time>> DueTimes(const regatta::v1::RecurringRun& recurring_run,
                                                 std::optional<absl::Time> last_scheduled_time,
                                                 absl::Time now, int max);

// "<display name, else id>-<YYYYMMDDhhmmss of the scheduled time, UTC>".
std::string ScheduledRunDisplayName(const regatta::v1::RecurringRun& recurring_run,
                                    absl::Time scheduled_time);

// UUIDv5 of `recurring_run_id + "/" + display_name` in kScheduledRunNamespace, lower-case
// 8-4-4-4-12: two controllers scheduling the same time produce the same id.
std::string ScheduledRunId(absl::string_view recurring_run_id, absl::string_view display_name);
// A fixed random namespace (generated once) for scheduled run ids; never change it, or ids of
// runs already created stop matching.
inline constexpr absl::string_view kScheduledRunNamespace = "20f62853-e07a-49d6-951f-ed1907272bb9";

}  // namespace regatta::pipelines::schedule

#endif  // REGATTA_SRC_PIPELINES_SCHEDULE_SCHEDULE_H_
