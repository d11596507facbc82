#include "src/pipelines/schedule/schedule.h"

#include <algorithm>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/common/status_macros.h"
#include "src/pipelines/schedule/uuid5.h"

namespace regatta::pipelines::schedule {
namespace {

absl::Time FloorToSecond(absl::Time t) { return absl::FromUnixSeconds(absl::ToUnixSeconds(t)); }

}  // namespace

std::optional<absl::Time> OptionalTime(const google::protobuf::Timestamp& timestamp) {
  if (timestamp.seconds() == 0 && timestamp.nanos() == 0) return std::nullopt;
  return absl::FromUnixSeconds(timestamp.seconds()) + absl::Nanoseconds(timestamp.nanos());
}

google::protobuf::Timestamp ToTimestamp(absl::Time time) {
  google::protobuf::Timestamp out;
  const int64_t seconds = absl::ToUnixSeconds(time);
  out.set_seconds(seconds);
  out.set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(time - absl::FromUnixSeconds(seconds))));
  return out;
}

absl::StatusOr<Schedule> Schedule::Create(const regatta::v1::RecurringRun& recurring_run) {
  Schedule schedule;
  std::optional<absl::Time> start = OptionalTime(recurring_run.start_time());
  std::optional<absl::Time> end = OptionalTime(recurring_run.end_time());
  if (start) schedule.start_ = *start;
  if (end) schedule.end_ = *end;
  if (start && end && *end < *start) {
    return absl::InvalidArgumentError("end_time: before start_time");
  }
  switch (recurring_run.trigger_case()) {
    case regatta::v1::RecurringRun::kCron: {
      ASSIGN_OR_RETURN(CronSchedule cron, CronSchedule::Parse(recurring_run.cron().cron()));
      // "@every D" goes on the periodic grid: a delay after whatever time a controller looks
      // from would let two controllers (or one without catch-up) pick different times.
      if (cron.every() > absl::ZeroDuration()) {
        schedule.interval_ = cron.every();
      } else {
        schedule.cron_ = std::move(cron);
      }
      break;
    }
    case regatta::v1::RecurringRun::kPeriodic: {
      const auto& interval = recurring_run.periodic().interval();
      schedule.interval_ = absl::Seconds(interval.seconds()) + absl::Nanoseconds(interval.nanos());
      // Whole seconds: scheduled runs are named by the second.
      // At most ten years: past that the period arithmetic leaves absl::Duration's range.
      if (schedule.interval_ < absl::Seconds(1) || interval.nanos() != 0 ||
          interval.seconds() > int64_t{10} * 366 * 24 * 3600) {
        return absl::InvalidArgumentError(
            "periodic.interval: must be a whole number of seconds, from 1s to 10 years");
      }
      break;
    }
    case regatta::v1::RecurringRun::TRIGGER_NOT_SET:
      return absl::InvalidArgumentError("trigger: neither cron nor periodic is set");
  }
  if (!schedule.cron_) {
    std::optional<absl::Time> anchor = start ? start : OptionalTime(recurring_run.create_time());
    if (anchor) schedule.anchor_ = FloorToSecond(*anchor);
  }
  return schedule;
}

absl::Time Schedule::NextUnbounded(absl::Time after) const {
  if (cron_) return cron_->Next(after);
  if (after == absl::InfiniteFuture()) return absl::InfiniteFuture();
  if (after < anchor_) return anchor_ + interval_;
  absl::Duration remainder;  // this abseil writes it unconditionally
  const int64_t periods = absl::IDivDuration(after - anchor_, interval_, &remainder);
  return anchor_ + (periods + 1) * interval_;
}

absl::Time Schedule::NextTime(absl::Time after) const {
  // Strictly after start_time, as Kubeflow counts from it.
  const absl::Time next = NextUnbounded(std::max(after, start_));
  return next > end_ ? absl::InfiniteFuture() : next;
}

std::optional<absl::Time> Schedule::LatestTime(absl::Time after, absl::Time until) const {
  // Search backwards from `until` in doubling windows so that a long pause does not walk every
  // missed time of a dense schedule; then walk forward within the first window holding a time.
  for (absl::Duration window = absl::Seconds(1);; window *= 2) {
    const absl::Time from = until - window > after ? until - window : after;
    absl::Time latest = NextTime(from);
    if (latest <= until) {
      for (absl::Time next = NextTime(latest); next <= until; next = NextTime(next)) latest = next;
      return latest;
    }
    if (from == after) return std::nullopt;
  }
}

std::optional<absl::Time> ScheduleBaseline(const regatta::v1::RecurringRun& recurring_run,
                                           std::optional<absl::Time> last_scheduled_time) {
  if (last_scheduled_time) return last_scheduled_time;
  if (auto start = OptionalTime(recurring_run.start_time())) return start;
  return OptionalTime(recurring_run.create_time());
}

absl::StatusOr<std::vector<absl::Time>> DueTimes(const regatta::v1::RecurringRun& recurring_run,
                                                 std::optional<absl::Time> last_scheduled_time,
                                                 absl::Time now, int max) {
  ASSIGN_OR_RETURN(Schedule schedule, Schedule::Create(recurring_run));
  std::optional<absl::Time> baseline = ScheduleBaseline(recurring_run, last_scheduled_time);
  if (!baseline) {
    return absl::FailedPreconditionError(
        "recurring run has no last_scheduled_time, start_time nor create_time to count from");
  }
  std::vector<absl::Time> due;
  if (max <= 0) return due;
  if (recurring_run.no_catchup()) {
    if (auto latest = schedule.LatestTime(*baseline, now)) due.push_back(*latest);
    return due;
  }
  for (absl::Time t = schedule.NextTime(*baseline); t <= now && static_cast<int>(due.size()) < max;
       t = schedule.NextTime(t)) {
    due.push_back(t);
  }
  return due;
}

std::string ScheduledRunDisplayName(const regatta::v1::RecurringRun& recurring_run,
                                    absl::Time scheduled_time) {
  const std::string& name =
      recurring_run.display_name().empty() ? recurring_run.id() : recurring_run.display_name();
  return absl::StrCat(name, "-",
                      absl::FormatTime("%Y%m%d%H%M%S", scheduled_time, absl::UTCTimeZone()));
}

std::string ScheduledRunId(absl::string_view recurring_run_id, absl::string_view display_name) {
  static const UuidBytes name_space = *ParseUuid(kScheduledRunNamespace);
  return FormatUuid(Uuid5(name_space, absl::StrCat(recurring_run_id, "/", display_name)));
}

}  // namespace regatta::pipelines::schedule
