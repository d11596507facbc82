#include "src/pipelines/schedule/schedule.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/pipelines/schedule/uuid5.h"
#include "tests/unit/pipelines_schedule/utc.h"

namespace regatta::pipelines::schedule {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

regatta::v1::RecurringRun CronRun(absl::string_view cron, absl::Time create_time) {
  regatta::v1::RecurringRun run;
  run.set_id("rr-1");
  run.set_display_name("nightly");
  run.mutable_cron()->set_cron(std::string(cron));
  *run.mutable_create_time() = ToTimestamp(create_time);
  run.set_max_concurrency(1);
  run.set_enabled(true);
  return run;
}

regatta::v1::RecurringRun PeriodicRun(absl::Duration interval, absl::Time create_time) {
  regatta::v1::RecurringRun run = CronRun("", create_time);
  run.mutable_periodic()->mutable_interval()->set_seconds(absl::ToInt64Seconds(interval));
  return run;
}

Schedule MustCreate(const regatta::v1::RecurringRun& run) {
  absl::StatusOr<Schedule> schedule = Schedule::Create(run);
  EXPECT_TRUE(schedule.ok()) << schedule.status();
  return *std::move(schedule);
}

TEST(Timestamps, RoundTripAndUnsetIsNullopt) {
  const absl::Time t = Utc(2026, 3, 1, 10) + absl::Nanoseconds(123);
  EXPECT_EQ(OptionalTime(ToTimestamp(t)), t);
  EXPECT_EQ(OptionalTime(google::protobuf::Timestamp()), std::nullopt);
}

TEST(ScheduleCreate, Errors) {
  regatta::v1::RecurringRun run = CronRun("0 0 25 * * *", Utc(2026, 3, 1));
  EXPECT_EQ(Schedule::Create(run).status().message(), "cron: field 'hour': 25 out of range 0-23");

  run = PeriodicRun(absl::ZeroDuration(), Utc(2026, 3, 1));
  EXPECT_THAT(Schedule::Create(run).status().message(), HasSubstr("periodic.interval"));
  run.mutable_periodic()->mutable_interval()->set_seconds(5);
  run.mutable_periodic()->mutable_interval()->set_nanos(1000);
  EXPECT_THAT(Schedule::Create(run).status().message(), HasSubstr("periodic.interval"));
  // Issue 21: an interval past absl::Duration's range made the next run time infinite.
  run.mutable_periodic()->mutable_interval()->set_nanos(0);
  run.mutable_periodic()->mutable_interval()->set_seconds(INT64_MAX);
  EXPECT_THAT(Schedule::Create(run).status().message(), HasSubstr("periodic.interval"));

  run = CronRun("@hourly", Utc(2026, 3, 1));
  *run.mutable_start_time() = ToTimestamp(Utc(2026, 3, 2));
  *run.mutable_end_time() = ToTimestamp(Utc(2026, 3, 1));
  EXPECT_EQ(Schedule::Create(run).status().message(), "end_time: before start_time");

  run.clear_cron();
  run.clear_end_time();
  EXPECT_THAT(Schedule::Create(run).status().message(), HasSubstr("trigger"));
}

TEST(ScheduleNextTime, IntervalCountsFromCreateTimeWithoutStartTime) {
  // Created at 10:00:07.5: the grid is floored to 10:00:07.
  Schedule schedule = MustCreate(
      PeriodicRun(absl::Minutes(15), Utc(2026, 3, 1, 10, 0, 7) + absl::Milliseconds(500)));
  EXPECT_EQ(schedule.NextTime(Utc(2026, 3, 1)), Utc(2026, 3, 1, 10, 15, 7));
  EXPECT_EQ(schedule.NextTime(Utc(2026, 3, 1, 10, 15, 7)), Utc(2026, 3, 1, 10, 30, 7));
  EXPECT_EQ(schedule.NextTime(Utc(2026, 3, 1, 10, 16)), Utc(2026, 3, 1, 10, 30, 7));
  EXPECT_EQ(schedule.NextTime(Utc(2026, 3, 2, 10, 16)), Utc(2026, 3, 2, 10, 30, 7));
}

TEST(ScheduleNextTime, IntervalCountsFromStartTimeWhenSet) {
  regatta::v1::RecurringRun run = PeriodicRun(absl::Hours(1), Utc(2026, 3, 1, 10, 0, 7));
  *run.mutable_start_time() = ToTimestamp(Utc(2026, 3, 5, 8, 30));
  Schedule schedule = MustCreate(run);
  // Nothing before start_time; the first run is one interval after it, as in Kubeflow.
  EXPECT_EQ(schedule.NextTime(Utc(2026, 3, 1)), Utc(2026, 3, 5, 9, 30));
  EXPECT_EQ(schedule.NextTime(Utc(2026, 3, 5, 9, 30)), Utc(2026, 3, 5, 10, 30));
}

TEST(ScheduleNextTime, CronBoundedByStartAndEnd) {
  regatta::v1::RecurringRun run = CronRun("0 0 * * * *", Utc(2026, 3, 1));
  *run.mutable_start_time() = ToTimestamp(Utc(2026, 3, 2, 6));
  *run.mutable_end_time() = ToTimestamp(Utc(2026, 3, 2, 8));
  Schedule schedule = MustCreate(run);
  // Strictly after start_time (Kubeflow: Next(start_time)), end_time inclusive.
  EXPECT_EQ(schedule.NextTime(Utc(2026, 3, 1)), Utc(2026, 3, 2, 7));
  EXPECT_EQ(schedule.NextTime(Utc(2026, 3, 2, 7)), Utc(2026, 3, 2, 8));
  EXPECT_EQ(schedule.NextTime(Utc(2026, 3, 2, 8)), absl::InfiniteFuture());
}

TEST(ScheduleLatestTime, FindsTheLatestInTheWindow) {
  Schedule schedule = MustCreate(CronRun("0 */10 * * * *", Utc(2026, 3, 1)));
  EXPECT_EQ(schedule.LatestTime(Utc(2026, 3, 1, 10), Utc(2026, 3, 1, 11, 5)), Utc(2026, 3, 1, 11));
  EXPECT_EQ(schedule.LatestTime(Utc(2026, 3, 1, 10), Utc(2026, 3, 1, 11)), Utc(2026, 3, 1, 11));
  EXPECT_EQ(schedule.LatestTime(Utc(2026, 3, 1, 10), Utc(2026, 3, 1, 10, 9)), std::nullopt);
  EXPECT_EQ(schedule.LatestTime(Utc(2026, 3, 1, 10, 9, 59), Utc(2026, 3, 1, 10, 10)),
            Utc(2026, 3, 1, 10, 10));
}

TEST(DueTimes, CatchUpGivesEveryMissedTimeOldestFirst) {
  // Paused an hour with a 10-minute cron: six runs.
  regatta::v1::RecurringRun run = CronRun("0 */10 * * * *", Utc(2026, 3, 1, 9));
  absl::StatusOr<std::vector<absl::Time>> due =
      DueTimes(run, Utc(2026, 3, 1, 10), Utc(2026, 3, 1, 11, 5), 100);
  ASSERT_TRUE(due.ok()) << due.status();
  EXPECT_THAT(
      *due, ElementsAre(Utc(2026, 3, 1, 10, 10), Utc(2026, 3, 1, 10, 20), Utc(2026, 3, 1, 10, 30),
                        Utc(2026, 3, 1, 10, 40), Utc(2026, 3, 1, 10, 50), Utc(2026, 3, 1, 11, 0)));
  // At most `max`, still the oldest.
  due = DueTimes(run, Utc(2026, 3, 1, 10), Utc(2026, 3, 1, 11, 5), 2);
  EXPECT_THAT(*due, ElementsAre(Utc(2026, 3, 1, 10, 10), Utc(2026, 3, 1, 10, 20)));
  due = DueTimes(run, Utc(2026, 3, 1, 10), Utc(2026, 3, 1, 11, 5), 0);
  EXPECT_THAT(*due, IsEmpty());
}

TEST(DueTimes, NoCatchupGivesOnlyTheLatest) {
  regatta::v1::RecurringRun run = CronRun("0 */10 * * * *", Utc(2026, 3, 1, 9));
  run.set_no_catchup(true);
  absl::StatusOr<std::vector<absl::Time>> due =
      DueTimes(run, Utc(2026, 3, 1, 10), Utc(2026, 3, 1, 11, 5), 100);
  ASSERT_TRUE(due.ok()) << due.status();
  EXPECT_THAT(*due, ElementsAre(Utc(2026, 3, 1, 11)));
  due = DueTimes(run, Utc(2026, 3, 1, 11), Utc(2026, 3, 1, 11, 5), 100);
  EXPECT_THAT(*due, IsEmpty());
}

TEST(DueTimes, NoCatchupAfterAYearOfAnEverySecondCronIsQuick) {
  regatta::v1::RecurringRun run = CronRun("* * * * * *", Utc(2025, 1, 1));
  run.set_no_catchup(true);
  const absl::Time started = absl::Now();
  absl::StatusOr<std::vector<absl::Time>> due =
      DueTimes(run, Utc(2025, 1, 1), Utc(2026, 3, 1, 10) + absl::Milliseconds(300), 1);
  EXPECT_THAT(*due, ElementsAre(Utc(2026, 3, 1, 10)));
  // Walking 36M seconds one by one would take seconds; the windowed search takes microseconds.
  EXPECT_LT(absl::Now() - started, absl::Milliseconds(200));
}

TEST(DueTimes, BaselineIsLastThenStartThenCreateTime) {
  regatta::v1::RecurringRun run = CronRun("0 0 * * * *", Utc(2026, 3, 1, 10, 30));
  // No last time: from create_time.
  EXPECT_THAT(*DueTimes(run, std::nullopt, Utc(2026, 3, 1, 12, 30), 10),
              ElementsAre(Utc(2026, 3, 1, 11), Utc(2026, 3, 1, 12)));
  // A start_time before create_time is caught up from, as in Kubeflow.
  *run.mutable_start_time() = ToTimestamp(Utc(2026, 3, 1, 8, 30));
  EXPECT_THAT(*DueTimes(run, std::nullopt, Utc(2026, 3, 1, 11, 30), 10),
              ElementsAre(Utc(2026, 3, 1, 9), Utc(2026, 3, 1, 10), Utc(2026, 3, 1, 11)));
  // The last scheduled time wins over both.
  EXPECT_THAT(*DueTimes(run, Utc(2026, 3, 1, 10), Utc(2026, 3, 1, 11, 30), 10),
              ElementsAre(Utc(2026, 3, 1, 11)));
  // The recurring run's own last_scheduled_time is not consulted: the caller passes it.
  run.clear_start_time();
  run.clear_create_time();
  EXPECT_EQ(DueTimes(run, std::nullopt, Utc(2026, 3, 1, 11, 30), 10).status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(DueTimes, EndTimeStopsTheSchedule) {
  regatta::v1::RecurringRun run = CronRun("0 0 * * * *", Utc(2026, 3, 1));
  *run.mutable_end_time() = ToTimestamp(Utc(2026, 3, 1, 2, 30));
  EXPECT_THAT(*DueTimes(run, std::nullopt, Utc(2026, 3, 2), 10),
              ElementsAre(Utc(2026, 3, 1, 1), Utc(2026, 3, 1, 2)));
  run.set_no_catchup(true);
  EXPECT_THAT(*DueTimes(run, std::nullopt, Utc(2026, 3, 2), 10), ElementsAre(Utc(2026, 3, 1, 2)));
}

TEST(DueTimes, PeriodicCatchUpAndNoCatchupStayOnTheGrid) {
  regatta::v1::RecurringRun run = PeriodicRun(absl::Minutes(20), Utc(2026, 3, 1, 10));
  EXPECT_THAT(*DueTimes(run, std::nullopt, Utc(2026, 3, 1, 11, 5), 10),
              ElementsAre(Utc(2026, 3, 1, 10, 20), Utc(2026, 3, 1, 10, 40), Utc(2026, 3, 1, 11)));
  run.set_no_catchup(true);
  EXPECT_THAT(*DueTimes(run, std::nullopt, Utc(2026, 3, 1, 11, 5), 10),
              ElementsAre(Utc(2026, 3, 1, 11)));
}

TEST(DueTimes, EveryDescriptorIsOnTheGridWhateverTheQueryTime) {
  regatta::v1::RecurringRun run = CronRun("@every 7m", Utc(2026, 3, 1, 10));
  run.set_no_catchup(true);
  // Two controllers looking at different times agree on the grid 10:00 + k * 7m.
  EXPECT_THAT(*DueTimes(run, std::nullopt, Utc(2026, 3, 1, 10, 30), 10),
              ElementsAre(Utc(2026, 3, 1, 10, 28)));
  EXPECT_THAT(*DueTimes(run, std::nullopt, Utc(2026, 3, 1, 10, 34, 59), 10),
              ElementsAre(Utc(2026, 3, 1, 10, 28)));
  run.set_no_catchup(false);
  EXPECT_THAT(*DueTimes(run, Utc(2026, 3, 1, 10, 14), Utc(2026, 3, 1, 10, 30), 10),
              ElementsAre(Utc(2026, 3, 1, 10, 21), Utc(2026, 3, 1, 10, 28)));
}

TEST(ScheduledRuns, DisplayNameAndId) {
  regatta::v1::RecurringRun run = CronRun("@daily", Utc(2026, 3, 1));
  EXPECT_EQ(ScheduledRunDisplayName(run, Utc(2024, 2, 29, 12)), "nightly-20240229120000");
  run.clear_display_name();
  EXPECT_EQ(ScheduledRunDisplayName(run, Utc(2024, 2, 29, 12)), "rr-1-20240229120000");
  // Python: uuid.uuid5(uuid.UUID(kScheduledRunNamespace), "rr-1/nightly-20240229120000").
  EXPECT_EQ(ScheduledRunId("rr-1", "nightly-20240229120000"),
            "ba72ce62-5e8a-5c46-a145-3997a42a4a60");
  EXPECT_NE(ScheduledRunId("rr-1", "nightly-20240229120001"),
            ScheduledRunId("rr-1", "nightly-20240229120000"));
}

TEST(Uuid5, KnownVectors) {
  // Python: uuid.uuid5(uuid.NAMESPACE_DNS, "python.org").
  EXPECT_EQ(FormatUuid(Uuid5(*ParseUuid("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), "python.org")),
            "886313e1-3b8a-5372-9b90-0c9aee199e5d");
  // Python: uuid.uuid5(uuid.NAMESPACE_URL, "https://example.com/ä") (UTF-8 name).
  EXPECT_EQ(FormatUuid(Uuid5(*ParseUuid("6BA7B811-9DAD-11D1-80B4-00C04FD430C8"),
                             "https://example.com/\xc3\xa4")),
            "afdef7ba-7312-5e42-ac2d-ed60cef58139");
}

TEST(Uuid5, ParseErrors) {
  EXPECT_FALSE(ParseUuid("6ba7b810-9dad-11d1-80b4-00c04fd430c").ok());
  EXPECT_FALSE(ParseUuid("6ba7b810x9dad-11d1-80b4-00c04fd430c8").ok());
  EXPECT_FALSE(ParseUuid("6ba7b810-9dad-11d1-80b4-00c04fd430cg").ok());
}

}  // namespace
}  // namespace regatta::pipelines::schedule
