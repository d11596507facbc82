#include "src/scheduler/reports.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace regatta::scheduler {
namespace {

JobReason Reason(const std::string& pool, const std::string& text) {
  return JobReason{pool, "NO_ROOM", text, absl::UnixEpoch()};
}

TEST(SchedulingReportsTest, KeepsTheLatestReasonPerPoolUntilForgotten) {
  SchedulingReports reports;
  reports.SetJobReason("j1", Reason("p1", "old"));
  reports.SetJobReason("j1", Reason("p1", "new"));
  reports.SetJobReason("j1", Reason("p2", "other pool"));
  std::vector<JobReason> reasons = reports.ReasonsFor("j1");
  ASSERT_EQ(reasons.size(), 2u);
  EXPECT_EQ(reasons[0].pool, "p1");
  EXPECT_EQ(reasons[0].reason, "new");
  EXPECT_EQ(reasons[1].reason, "other pool");
  reports.ForgetJob("j1");
  EXPECT_TRUE(reports.ReasonsFor("j1").empty());
  EXPECT_TRUE(reports.ReasonsFor("never-seen").empty());
}

TEST(SchedulingReportsTest, ForgetsTheOldestJobsBeyondItsBound) {
  SchedulingReports reports(/*max_jobs=*/3);
  for (int i = 0; i < 5; ++i) reports.SetJobReason(absl::StrCat("j", i), Reason("p", "r"));
  EXPECT_TRUE(reports.ReasonsFor("j0").empty());
  EXPECT_TRUE(reports.ReasonsFor("j1").empty());
  for (int i = 2; i < 5; ++i) EXPECT_EQ(reports.ReasonsFor(absl::StrCat("j", i)).size(), 1u);
}

TEST(SchedulingReportsTest, ChurnOfForgottenJobsDoesNotEvictLiveOnes) {
  SchedulingReports reports(/*max_jobs=*/3);
  reports.SetJobReason("a", Reason("p", "r"));
  reports.SetJobReason("b", Reason("p", "r"));
  // Each churned job is forgotten before the next arrives: never more than 3 live jobs.
  for (int i = 0; i < 1000; ++i) {
    reports.SetJobReason(absl::StrCat("k", i), Reason("p", "r"));
    reports.ForgetJob(absl::StrCat("k", i));
  }
  EXPECT_EQ(reports.ReasonsFor("a").size(), 1u);
  EXPECT_EQ(reports.ReasonsFor("b").size(), 1u);
  EXPECT_TRUE(reports.ReasonsFor("k999").empty());
}

TEST(SchedulingReportsTest, PoolQueuesAreReplacedAndListedByQueue) {
  SchedulingReports reports;
  QueueShareReport a{.queue = "a", .pool = "p2", .fair_share = 0.5};
  QueueShareReport b{.queue = "b", .pool = "p2", .fair_share = 0.5};
  QueueShareReport a1{.queue = "a", .pool = "p1", .fair_share = 1};
  reports.SetPoolQueues("p2", {a, b});
  reports.SetPoolQueues("p1", {a1});
  std::vector<QueueShareReport> all = reports.Queues();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].queue, "a");
  EXPECT_EQ(all[0].pool, "p1");
  EXPECT_EQ(all[1].queue, "a");
  EXPECT_EQ(all[1].pool, "p2");
  EXPECT_EQ(all[2].queue, "b");
  // The next cycle in p2 had only b active.
  reports.SetPoolQueues("p2", {b});
  EXPECT_EQ(reports.Queues("a").size(), 1u);
  EXPECT_EQ(reports.Queues("b").size(), 1u);
  EXPECT_FALSE(reports.ready());
  reports.SetReady(true);
  EXPECT_TRUE(reports.ready());
}

}  // namespace
}  // namespace regatta::scheduler
