#include "src/pipelines/schedule/controller.h"

#include <algorithm>
#include <map>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/pipelines/schedule/schedule.h"
#include "tests/unit/pipelines_schedule/utc.h"

namespace regatta::pipelines::schedule {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// A store that is both the source and the creator; it dedups runs by id, as the real store does.
class FakeStore : public RecurringRunSource, public ScheduledRunCreator {
 public:
  struct Run {
    std::string recurring_run_id;
    std::string display_name;
    absl::Time scheduled_time;
    bool active = true;
  };

  void Put(regatta::v1::RecurringRun recurring_run) {
    absl::MutexLock lock(&mu_);
    recurring_runs_[recurring_run.id()] = std::move(recurring_run);
  }
  void SetEnabled(const std::string& id, bool enabled) {
    absl::MutexLock lock(&mu_);
    recurring_runs_[id].set_enabled(enabled);
  }
  // False: last_scheduled_time is never recorded (a store lagging behind the controller).
  void set_records_last_scheduled_time(bool value) {
    absl::MutexLock lock(&mu_);
    records_last_scheduled_time_ = value;
  }
  void FinishOldestActive() {
    absl::MutexLock lock(&mu_);
    for (const std::string& id : creation_order_) {
      if (runs_[id].active) {
        runs_[id].active = false;
        return;
      }
    }
  }
  void FinishAll() {
    absl::MutexLock lock(&mu_);
    for (auto& [id, run] : runs_) run.active = false;
  }
  // Scheduled times of the runs in the order they were created.
  std::vector<absl::Time> CreatedTimes() {
    absl::MutexLock lock(&mu_);
    std::vector<absl::Time> out;
    for (const std::string& id : creation_order_) out.push_back(runs_[id].scheduled_time);
    return out;
  }
  std::map<std::string, Run> Runs() {
    absl::MutexLock lock(&mu_);
    return runs_;
  }
  int create_calls() {
    absl::MutexLock lock(&mu_);
    return create_calls_;
  }

  absl::StatusOr<std::vector<regatta::v1::RecurringRun>> ListEnabledRecurringRuns() override {
    absl::MutexLock lock(&mu_);
    std::vector<regatta::v1::RecurringRun> out;
    for (const auto& [id, recurring_run] : recurring_runs_) {
      if (recurring_run.enabled()) out.push_back(recurring_run);
    }
    return out;
  }
  absl::StatusOr<int> CountActiveRuns(absl::string_view recurring_run_id) override {
    absl::MutexLock lock(&mu_);
    int active = 0;
    for (const auto& [id, run] : runs_) {
      if (run.active && run.recurring_run_id == recurring_run_id) ++active;
    }
    return active;
  }
  absl::Status CreateScheduledRun(const regatta::v1::RecurringRun& recurring_run,
                                  absl::string_view run_id, absl::string_view display_name,
                                  absl::Time scheduled_time) override {
    absl::MutexLock lock(&mu_);
    ++create_calls_;
    if (runs_.contains(std::string(run_id))) {
      return absl::AlreadyExistsError(absl::StrCat("run ", run_id));
    }
    runs_[std::string(run_id)] =
        Run{recurring_run.id(), std::string(display_name), scheduled_time, true};
    creation_order_.push_back(std::string(run_id));
    if (records_last_scheduled_time_) {
      *recurring_runs_[recurring_run.id()].mutable_last_scheduled_time() =
          ToTimestamp(scheduled_time);
    }
    return absl::OkStatus();
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, regatta::v1::RecurringRun> recurring_runs_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, Run> runs_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> creation_order_ ABSL_GUARDED_BY(mu_);
  bool records_last_scheduled_time_ ABSL_GUARDED_BY(mu_) = true;
  int create_calls_ ABSL_GUARDED_BY(mu_) = 0;
};

regatta::v1::RecurringRun TenMinuteRun(absl::Time create_time, int max_concurrency) {
  regatta::v1::RecurringRun run;
  run.set_id("rr-1");
  run.set_display_name("every-ten");
  run.mutable_cron()->set_cron("0 */10 * * * *");
  *run.mutable_create_time() = ToTimestamp(create_time);
  run.set_max_concurrency(max_concurrency);
  run.set_enabled(true);
  return run;
}

class ControllerTest : public ::testing::Test {
 protected:
  ControllerTest() : clock_(Utc(2026, 3, 1, 10)), controller_(&clock_, &store_, &store_) {}

  RecurringRunController::TickResult MustTick(RecurringRunController& controller) {
    absl::StatusOr<RecurringRunController::TickResult> result = controller.Tick();
    EXPECT_TRUE(result.ok()) << result.status();
    return result.ok() ? *result : RecurringRunController::TickResult{};
  }

  FakeClock clock_;
  FakeStore store_;
  RecurringRunController controller_;
};

TEST_F(ControllerTest, NothingBeforeTheFirstTimeThenOneRunPerTime) {
  store_.Put(TenMinuteRun(Utc(2026, 3, 1, 10), 1));
  auto result = MustTick(controller_);
  EXPECT_EQ(result.runs_created, 0);
  EXPECT_EQ(result.next_due, Utc(2026, 3, 1, 10, 10));

  clock_.Set(Utc(2026, 3, 1, 10, 10));
  result = MustTick(controller_);
  EXPECT_EQ(result.runs_created, 1);
  EXPECT_EQ(result.next_due, Utc(2026, 3, 1, 10, 20));
  std::map<std::string, FakeStore::Run> runs = store_.Runs();
  ASSERT_THAT(runs, SizeIs(1));
  const std::string display_name = "every-ten-20260301101000";
  EXPECT_EQ(runs.begin()->first, ScheduledRunId("rr-1", display_name));
  EXPECT_EQ(runs.begin()->second.display_name, display_name);
  // The same time is not scheduled twice.
  EXPECT_EQ(MustTick(controller_).runs_created, 0);
}

TEST_F(ControllerTest, CatchUpCreatesEveryMissedRunOldestFirst) {
  store_.Put(TenMinuteRun(Utc(2026, 3, 1, 10), 10));
  // The server was down for an hour.
  clock_.Set(Utc(2026, 3, 1, 11, 5));
  EXPECT_EQ(MustTick(controller_).runs_created, 6);
  EXPECT_THAT(store_.CreatedTimes(), ElementsAre(Utc(2026, 3, 1, 10, 10), Utc(2026, 3, 1, 10, 20),
                                                 Utc(2026, 3, 1, 10, 30), Utc(2026, 3, 1, 10, 40),
                                                 Utc(2026, 3, 1, 10, 50), Utc(2026, 3, 1, 11, 0)));
  EXPECT_EQ(MustTick(controller_).runs_created, 0);
}

TEST_F(ControllerTest, NoCatchupCreatesOnlyTheLatestMissedRun) {
  regatta::v1::RecurringRun run = TenMinuteRun(Utc(2026, 3, 1, 10), 10);
  run.set_no_catchup(true);
  store_.Put(run);
  clock_.Set(Utc(2026, 3, 1, 11, 5));
  EXPECT_EQ(MustTick(controller_).runs_created, 1);
  EXPECT_THAT(store_.CreatedTimes(), ElementsAre(Utc(2026, 3, 1, 11)));
  clock_.Set(Utc(2026, 3, 1, 11, 10));
  EXPECT_EQ(MustTick(controller_).runs_created, 1);
  EXPECT_THAT(store_.CreatedTimes(), ElementsAre(Utc(2026, 3, 1, 11), Utc(2026, 3, 1, 11, 10)));
}

TEST_F(ControllerTest, MaxConcurrencyHoldsAndMissedTimesWaitForASlot) {
  store_.Put(TenMinuteRun(Utc(2026, 3, 1, 10), 2));
  clock_.Set(Utc(2026, 3, 1, 11, 5));
  auto result = MustTick(controller_);
  EXPECT_EQ(result.runs_created, 2);
  // The third time is due already, waiting for a slot.
  EXPECT_EQ(result.next_due, Utc(2026, 3, 1, 10, 30));
  EXPECT_EQ(MustTick(controller_).runs_created, 0);

  store_.FinishOldestActive();
  EXPECT_EQ(MustTick(controller_).runs_created, 1);
  EXPECT_EQ(MustTick(controller_).runs_created, 0);
  EXPECT_EQ(*store_.CountActiveRuns("rr-1"), 2);

  store_.FinishAll();
  EXPECT_EQ(MustTick(controller_).runs_created, 2);
  store_.FinishAll();
  EXPECT_EQ(MustTick(controller_).runs_created, 1);
  store_.FinishAll();
  EXPECT_EQ(MustTick(controller_).runs_created, 0);
  EXPECT_THAT(store_.CreatedTimes(), ElementsAre(Utc(2026, 3, 1, 10, 10), Utc(2026, 3, 1, 10, 20),
                                                 Utc(2026, 3, 1, 10, 30), Utc(2026, 3, 1, 10, 40),
                                                 Utc(2026, 3, 1, 10, 50), Utc(2026, 3, 1, 11, 0)));
}

TEST_F(ControllerTest, NoCatchupWithAFullSlotRunsTheLatestTimeWhenItFrees) {
  regatta::v1::RecurringRun run = TenMinuteRun(Utc(2026, 3, 1, 10), 1);
  run.set_no_catchup(true);
  store_.Put(run);
  clock_.Set(Utc(2026, 3, 1, 10, 10));
  EXPECT_EQ(MustTick(controller_).runs_created, 1);
  clock_.Set(Utc(2026, 3, 1, 10, 45));
  EXPECT_EQ(MustTick(controller_).runs_created, 0);
  store_.FinishAll();
  EXPECT_EQ(MustTick(controller_).runs_created, 1);
  EXPECT_THAT(store_.CreatedTimes(), ElementsAre(Utc(2026, 3, 1, 10, 10), Utc(2026, 3, 1, 10, 40)));
}

TEST_F(ControllerTest, OwnViewIsUsedWhileTheStoreLags) {
  store_.set_records_last_scheduled_time(false);
  store_.Put(TenMinuteRun(Utc(2026, 3, 1, 10), 5));
  clock_.Set(Utc(2026, 3, 1, 10, 30));
  EXPECT_EQ(MustTick(controller_).runs_created, 3);
  store_.FinishAll();
  auto result = MustTick(controller_);
  EXPECT_EQ(result.runs_created, 0);
  EXPECT_EQ(result.runs_already_existing, 0);
  EXPECT_EQ(store_.create_calls(), 3);
}

TEST_F(ControllerTest, TwoControllersCreateEachRunOnce) {
  // The store lags, so neither controller learns from the other except through ALREADY_EXISTS.
  store_.set_records_last_scheduled_time(false);
  store_.Put(TenMinuteRun(Utc(2026, 3, 1, 10), 100));
  RecurringRunController other(&clock_, &store_, &store_);
  clock_.Set(Utc(2026, 3, 1, 11, 5));
  EXPECT_EQ(MustTick(controller_).runs_created, 6);
  auto result = MustTick(other);
  EXPECT_EQ(result.runs_created, 0);
  EXPECT_EQ(result.runs_already_existing, 6);
  EXPECT_THAT(store_.Runs(), SizeIs(6));
}

TEST_F(ControllerTest, TwoControllersRacingInThreadsCreateEachRunOnce) {
  regatta::v1::RecurringRun run = TenMinuteRun(Utc(2026, 3, 1, 10), 1000);
  run.set_id("rr-race");
  store_.Put(run);
  store_.Put(TenMinuteRun(Utc(2026, 3, 1, 10), 1000));
  RecurringRunController other(&clock_, &store_, &store_);
  auto race = [this](RecurringRunController* controller) {
    for (int i = 0; i < 200; ++i) {
      EXPECT_TRUE(controller->Tick().ok());
      clock_.Advance(absl::Minutes(1));
    }
  };
  std::thread a(race, &controller_);
  std::thread b(race, &other);
  a.join();
  b.join();
  const absl::Time end = clock_.Now();
  EXPECT_TRUE(controller_.Tick().ok());
  EXPECT_TRUE(other.Tick().ok());

  // Every 10-minute time from 10:10 to the end, once per recurring run.
  const int expected = static_cast<int>((end - Utc(2026, 3, 1, 10)) / absl::Minutes(10));
  std::map<std::string, std::vector<absl::Time>> times;
  for (const auto& [id, created] : store_.Runs()) {
    times[created.recurring_run_id].push_back(created.scheduled_time);
  }
  for (const char* id : {"rr-1", "rr-race"}) {
    std::vector<absl::Time>& list = times[id];
    std::sort(list.begin(), list.end());
    ASSERT_THAT(list, SizeIs(expected)) << id;
    for (int i = 0; i < expected; ++i) {
      EXPECT_EQ(list[i], Utc(2026, 3, 1, 10) + (i + 1) * absl::Minutes(10)) << id;
    }
  }
}

TEST_F(ControllerTest, DisabledRecurringRunsCreateNothing) {
  regatta::v1::RecurringRun run = TenMinuteRun(Utc(2026, 3, 1, 10), 10);
  run.set_enabled(false);
  store_.Put(run);
  clock_.Set(Utc(2026, 3, 1, 11, 5));
  EXPECT_EQ(MustTick(controller_).runs_created, 0);
  EXPECT_THAT(store_.Runs(), IsEmpty());

  // Re-enabled without catch-up: only the latest missed time.
  run.set_enabled(true);
  run.set_no_catchup(true);
  store_.Put(run);
  EXPECT_EQ(MustTick(controller_).runs_created, 1);
  EXPECT_THAT(store_.CreatedTimes(), ElementsAre(Utc(2026, 3, 1, 11)));
}

TEST_F(ControllerTest, PeriodicRunsFollowTheClock) {
  regatta::v1::RecurringRun run = TenMinuteRun(Utc(2026, 3, 1, 10), 1);
  run.mutable_periodic()->mutable_interval()->set_seconds(15 * 60);
  store_.Put(run);
  for (int i = 0; i < 4; ++i) {
    clock_.Advance(absl::Minutes(15));
    EXPECT_EQ(MustTick(controller_).runs_created, 1);
    store_.FinishAll();
  }
  EXPECT_THAT(store_.CreatedTimes(), ElementsAre(Utc(2026, 3, 1, 10, 15), Utc(2026, 3, 1, 10, 30),
                                                 Utc(2026, 3, 1, 10, 45), Utc(2026, 3, 1, 11)));
}

TEST_F(ControllerTest, ABadRecurringRunDoesNotBlockTheOthers) {
  regatta::v1::RecurringRun bad = TenMinuteRun(Utc(2026, 3, 1, 10), 1);
  bad.set_id("rr-bad");
  bad.mutable_cron()->set_cron("0 0 25 * * *");
  store_.Put(bad);
  store_.Put(TenMinuteRun(Utc(2026, 3, 1, 10), 1));
  clock_.Set(Utc(2026, 3, 1, 10, 10));
  EXPECT_EQ(MustTick(controller_).runs_created, 1);
}

TEST_F(ControllerTest, BackgroundLoopCreatesRunsAndStopsPromptly) {
  RecurringRunControllerOptions options;
  options.poll_interval = absl::Milliseconds(10);
  RecurringRunController controller(&clock_, &store_, &store_, options);
  store_.Put(TenMinuteRun(Utc(2026, 3, 1, 10), 1));
  controller.Start();
  clock_.Set(Utc(2026, 3, 1, 10, 10));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (store_.Runs().empty() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_THAT(store_.CreatedTimes(), ElementsAre(Utc(2026, 3, 1, 10, 10)));

  const absl::Time stop_started = absl::Now();
  controller.Stop();
  EXPECT_LT(absl::Now() - stop_started, absl::Seconds(1));
  // Stopped: no more runs however far the clock moves.
  clock_.Set(Utc(2026, 3, 1, 12));
  store_.FinishAll();
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_THAT(store_.Runs(), SizeIs(1));
}

TEST_F(ControllerTest, WakeTicksWithoutWaitingForThePollInterval) {
  RecurringRunControllerOptions options;
  options.poll_interval = absl::Hours(1);
  RecurringRunController controller(&clock_, &store_, &store_, options);
  controller.Start();
  // Created after the first tick: only a Wake makes the loop see it before an hour passes.
  absl::SleepFor(absl::Milliseconds(20));
  store_.Put(TenMinuteRun(Utc(2026, 3, 1, 9, 55), 1));
  controller.Wake();
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (store_.Runs().empty() && absl::Now() < deadline) absl::SleepFor(absl::Milliseconds(5));
  EXPECT_THAT(store_.CreatedTimes(), ElementsAre(Utc(2026, 3, 1, 10)));
  controller.Stop();
}

}  // namespace
}  // namespace regatta::pipelines::schedule
