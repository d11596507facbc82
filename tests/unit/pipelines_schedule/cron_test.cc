#include "src/pipelines/schedule/cron.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/pipelines_schedule/utc.h"

namespace regatta::pipelines::schedule {
namespace {

using ::testing::HasSubstr;

absl::Time NextOf(absl::string_view spec, absl::Time after) {
  absl::StatusOr<CronSchedule> cron = CronSchedule::Parse(spec);
  EXPECT_TRUE(cron.ok()) << cron.status();
  return cron.ok() ? cron->Next(after) : absl::InfinitePast();
}

std::string ParseError(absl::string_view spec) {
  absl::StatusOr<CronSchedule> cron = CronSchedule::Parse(spec);
  EXPECT_FALSE(cron.ok()) << spec;
  return cron.ok() ? "" : std::string(cron.status().message());
}

TEST(CronParse, ErrorsNameTheField) {
  EXPECT_EQ(ParseError("0 0 25 * * *"), "cron: field 'hour': 25 out of range 0-23");
  EXPECT_EQ(ParseError("60 * * * * *"), "cron: field 'second': 60 out of range 0-59");
  EXPECT_EQ(ParseError("* * 0 * *"), "cron: field 'day of month': 0 out of range 1-31");
  EXPECT_EQ(ParseError("0 0 0 1 13 *"), "cron: field 'month': 13 out of range 1-12");
  EXPECT_EQ(ParseError("0 0 0 * * FUN"), "cron: field 'day of week': 'FUN' is not a value");
  EXPECT_EQ(ParseError("0 0 5-3 * * *"), "cron: field 'hour': range 5-3 runs backwards");
  EXPECT_EQ(ParseError("0 */0 * * * *"),
            "cron: field 'minute': step '0' is not a positive integer");
  EXPECT_EQ(ParseError("0 1,,2 * * * *"), "cron: field 'minute': empty list item in '1,,2'");
  EXPECT_THAT(ParseError("* * * *"), HasSubstr("got 4"));
  EXPECT_THAT(ParseError("* * * * * * *"), HasSubstr("got 7"));
  EXPECT_THAT(ParseError(""), HasSubstr("empty"));
  EXPECT_THAT(ParseError("@fortnightly"), HasSubstr("unknown descriptor '@fortnightly'"));
  EXPECT_THAT(ParseError("@every 500ms"), HasSubstr("whole number of seconds"));
  EXPECT_THAT(ParseError("@every soon"), HasSubstr("not a duration"));
}

TEST(CronNext, SixFieldsWithSeconds) {
  EXPECT_EQ(NextOf("0 */10 * * * *", Utc(2026, 3, 1, 10, 3, 7)), Utc(2026, 3, 1, 10, 10, 0));
  EXPECT_EQ(NextOf("30 */10 * * * *", Utc(2026, 3, 1, 10, 10, 0)), Utc(2026, 3, 1, 10, 10, 30));
  // Strictly after: a matching time is not its own next.
  EXPECT_EQ(NextOf("0 */10 * * * *", Utc(2026, 3, 1, 10, 10, 0)), Utc(2026, 3, 1, 10, 20, 0));
  // Sub-second `after` rounds to the next whole second.
  EXPECT_EQ(NextOf("* * * * * *", Utc(2026, 3, 1) + absl::Milliseconds(500)),
            Utc(2026, 3, 1, 0, 0, 1));
}

TEST(CronNext, FiveFieldsHaveNoSeconds) {
  EXPECT_EQ(NextOf("*/5 * * * *", Utc(2026, 3, 1, 10, 3, 7)), Utc(2026, 3, 1, 10, 5, 0));
  EXPECT_EQ(NextOf("15 14 * * *", Utc(2026, 3, 1, 14, 15, 0)), Utc(2026, 3, 2, 14, 15, 0));
}

TEST(CronNext, MonthEndsAndYearEnd) {
  // The 31st skips April and June.
  EXPECT_EQ(NextOf("0 0 0 31 * *", Utc(2026, 4, 1)), Utc(2026, 5, 31));
  EXPECT_EQ(NextOf("0 0 0 31 * *", Utc(2026, 5, 31)), Utc(2026, 7, 31));
  EXPECT_EQ(NextOf("0 0 0 1 * *", Utc(2026, 12, 31, 23, 59, 59)), Utc(2027, 1, 1));
  EXPECT_EQ(NextOf("59 59 23 * * *", Utc(2026, 12, 31, 12)), Utc(2026, 12, 31, 23, 59, 59));
}

TEST(CronNext, LeapYears) {
  EXPECT_EQ(NextOf("0 0 12 29 2 *", Utc(2023, 3, 1)), Utc(2024, 2, 29, 12));
  EXPECT_EQ(NextOf("0 0 12 29 2 *", Utc(2024, 2, 29, 12)), Utc(2028, 2, 29, 12));
  // 2100 is not a leap year: from 2096 the next is 2104, beyond the 5-year search.
  EXPECT_EQ(NextOf("0 0 12 29 2 *", Utc(2096, 3, 1)), absl::InfiniteFuture());
  // The last day of February in a leap year, then in a common year.
  EXPECT_EQ(NextOf("0 0 0 28-29 2 *", Utc(2024, 2, 28, 1)), Utc(2024, 2, 29));
  EXPECT_EQ(NextOf("0 0 0 28-29 2 *", Utc(2025, 2, 1)), Utc(2025, 2, 28));
  EXPECT_EQ(NextOf("0 0 0 28-29 2 *", Utc(2025, 2, 28)), Utc(2026, 2, 28));
}

TEST(CronNext, ImpossibleDateNeverFires) {
  EXPECT_EQ(NextOf("0 0 0 30 2 *", Utc(2026, 1, 1)), absl::InfiniteFuture());
}

TEST(CronNext, RangesStepsAndLists) {
  EXPECT_EQ(NextOf("0 0 9-17/4 * * *", Utc(2026, 3, 1, 9, 0, 1)), Utc(2026, 3, 1, 13));
  EXPECT_EQ(NextOf("0 0 9-17/4 * * *", Utc(2026, 3, 1, 17, 0, 1)), Utc(2026, 3, 2, 9));
  // "a/n" runs from a to the field's maximum.
  EXPECT_EQ(NextOf("0 5/20 * * * *", Utc(2026, 3, 1, 10, 5)), Utc(2026, 3, 1, 10, 25));
  EXPECT_EQ(NextOf("0 5/20 * * * *", Utc(2026, 3, 1, 10, 45)), Utc(2026, 3, 1, 11, 5));
  EXPECT_EQ(NextOf("0 0 1,13,22 * * *", Utc(2026, 3, 1, 13)), Utc(2026, 3, 1, 22));
  EXPECT_EQ(NextOf("0 0 1,13,22 * * *", Utc(2026, 3, 1, 22)), Utc(2026, 3, 2, 1));
  EXPECT_EQ(NextOf("0 0 0 1-2,15 * *", Utc(2026, 3, 2)), Utc(2026, 3, 15));
}

TEST(CronNext, NamesAndQuestionMark) {
  // 2026-03-01 is a Sunday.
  EXPECT_EQ(NextOf("0 30 9 ? * MON-FRI", Utc(2026, 3, 1)), Utc(2026, 3, 2, 9, 30));
  EXPECT_EQ(NextOf("0 30 9 ? * mon-fri", Utc(2026, 3, 6, 10)), Utc(2026, 3, 9, 9, 30));
  EXPECT_EQ(NextOf("0 0 0 1 jul,Dec ?", Utc(2026, 3, 1)), Utc(2026, 7, 1));
  EXPECT_EQ(NextOf("0 0 0 1 jul,Dec ?", Utc(2026, 7, 1)), Utc(2026, 12, 1));
  // 0 and 7 are both Sunday.
  EXPECT_EQ(NextOf("0 0 0 * * 7", Utc(2026, 3, 2)), Utc(2026, 3, 8));
  EXPECT_EQ(NextOf("0 0 0 * * 0", Utc(2026, 3, 2)), Utc(2026, 3, 8));
  EXPECT_EQ(NextOf("0 0 0 * * SUN", Utc(2026, 3, 2)), Utc(2026, 3, 8));
}

TEST(CronNext, DayOfMonthOrDayOfWeekWhenBothRestricted) {
  // Both restricted: the 13th or any Friday. 2026-03-06 is a Friday, 2026-03-13 too.
  EXPECT_EQ(NextOf("0 0 0 13 * FRI", Utc(2026, 3, 1)), Utc(2026, 3, 6));
  EXPECT_EQ(NextOf("0 0 0 10 * FRI", Utc(2026, 3, 7)), Utc(2026, 3, 10));
  // Day of week restricted, day of month `*`: only Fridays.
  EXPECT_EQ(NextOf("0 0 0 * * FRI", Utc(2026, 3, 7)), Utc(2026, 3, 13));
  // A stepped star restricts: the 1st, 16th and 31st, or Mondays (2026-03-02).
  EXPECT_EQ(NextOf("0 0 0 */15 * MON", Utc(2026, 3, 1)), Utc(2026, 3, 2));
}

TEST(CronNext, Descriptors) {
  EXPECT_EQ(NextOf("@hourly", Utc(2026, 3, 1, 10, 0, 1)), Utc(2026, 3, 1, 11));
  EXPECT_EQ(NextOf("@daily", Utc(2026, 3, 1, 10)), Utc(2026, 3, 2));
  EXPECT_EQ(NextOf("@midnight", Utc(2026, 3, 1, 10)), Utc(2026, 3, 2));
  EXPECT_EQ(NextOf("@weekly", Utc(2026, 3, 2)), Utc(2026, 3, 8));
  EXPECT_EQ(NextOf("@monthly", Utc(2026, 3, 2)), Utc(2026, 4, 1));
  EXPECT_EQ(NextOf("@yearly", Utc(2026, 3, 2)), Utc(2027, 1, 1));
  EXPECT_EQ(NextOf("@annually", Utc(2026, 3, 2)), Utc(2027, 1, 1));
  EXPECT_EQ(NextOf("@every 90s", Utc(2026, 3, 1, 10) + absl::Milliseconds(250)),
            Utc(2026, 3, 1, 10, 1, 30));
  EXPECT_EQ(NextOf("@every 1h30m", Utc(2026, 3, 1, 10)), Utc(2026, 3, 1, 11, 30));
}

}  // namespace
}  // namespace regatta::pipelines::schedule
