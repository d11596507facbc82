#ifndef REGATTA_SRC_PIPELINES_SCHEDULE_CRON_H_
#define REGATTA_SRC_PIPELINES_SCHEDULE_CRON_H_

// Cron expressions as Kubeflow's ScheduledWorkflow controller reads them (robfig/cron), in UTC:
//   six fields  "sec min hour day-of-month month day-of-week"  ("0 */10 * * * *"),
//   five fields "min hour day-of-month month day-of-week"      (seconds = 0),
//   descriptors @yearly @annually @monthly @weekly @daily @midnight @hourly, and "@every 90s"
//   (a fixed delay after the previous time, any absl duration of whole seconds >= 1 s).
// Each field takes `*`, `?` (same as `*`), a value, a range `a-b`, a step `*/n`, `a-b/n` or `a/n`
// (= a-max/n), and comma lists of these. Months take JAN-DEC and days of week SUN-SAT (any case);
// day of week is 0-6 from Sunday, and 7 is also Sunday. As in robfig and Vixie cron, when both
// day of month and day of week are restricted a day matching either one matches.

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace regatta::pipelines::schedule {

class CronSchedule {
 public:
  // Errors name the field, e.g. "cron: field 'hour': 25 out of range 0-23".
  static absl::StatusOr<CronSchedule> Parse(absl::string_view spec);

  // The first time strictly after `after` (whole seconds, UTC) that matches, or
  // absl::InfiniteFuture() if none does within the next 5 years (e.g. "0 0 0 30 2 *").
  absl::Time Next(absl::Time after) const;

  const std::string& spec() const { return spec_; }
  // The delay of "@every D", zero for other expressions.
  absl::Duration every() const { return every_; }

 private:
  CronSchedule() = default;

  std::string spec_;
  // Bit i set = value i matches.
  uint64_t seconds_ = 0;
  uint64_t minutes_ = 0;
  uint64_t hours_ = 0;
  uint64_t days_of_month_ = 0;
  uint64_t months_ = 0;
  uint64_t days_of_week_ = 0;
  // The field was `*` or `?`: it does not restrict the day (see the day rule above).
  bool day_of_month_star_ = false;
  bool day_of_week_star_ = false;
  // "@every D": Next(t) = t + every_, whole seconds.
  absl::Duration every_ = absl::ZeroDuration();
};

}  // namespace regatta::pipelines::schedule

#endif  // REGATTA_SRC_PIPELINES_SCHEDULE_CRON_H_
