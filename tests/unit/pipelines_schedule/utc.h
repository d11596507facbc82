#ifndef REGATTA_TESTS_UNIT_PIPELINES_SCHEDULE_UTC_H_
#define REGATTA_TESTS_UNIT_PIPELINES_SCHEDULE_UTC_H_

#include "absl/time/civil_time.h"
#include "absl/time/time.h"

namespace regatta::pipelines::schedule {

inline absl::Time Utc(int year, int month, int day, int hour = 0, int minute = 0, int second = 0) {
  return absl::FromCivil(absl::CivilSecond(year, month, day, hour, minute, second),
                         absl::UTCTimeZone());
}

}  // namespace regatta::pipelines::schedule

#endif  // REGATTA_TESTS_UNIT_PIPELINES_SCHEDULE_UTC_H_
