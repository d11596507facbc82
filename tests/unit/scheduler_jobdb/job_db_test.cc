// The scheduler's in-memory JobDb: indexing, queued order, decisions against the views, runs,
// retries, compaction and change notification.
#include "src/scheduler/jobdb/job_db.h"

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::scheduler {
namespace {

namespace v1 = regatta::v1;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

const absl::Time kT0 = absl::FromUnixSeconds(1'700'000'000);

int32_t PriorityOf(absl::string_view priority_class) {
  if (priority_class == "urgent") return 1000;
  if (priority_class == "batch") return -10;
  return 0;
}

std::shared_ptr<const v1::Job> Spec(const std::string& id,
                                    std::vector<std::pair<std::string, std::string>> requests = {
                                        {"cpu", "2"}, {"memory", "1Gi"}}) {
  auto job = std::make_shared<v1::Job>();
  job->set_id(id);
  for (const auto& [name, quantity] : requests) {
    (*job->mutable_task()->mutable_resources()->mutable_requests())[name] = quantity;
  }
  return job;
}

store::SchedulerJobRow Row(const std::string& id, v1::JobState state = v1::JOB_STATE_QUEUED,
                           uint32_t priority = 0, const std::string& priority_class = "",
                           absl::Time submit_time = kT0) {
  store::SchedulerJobRow row;
  row.job_id = id;
  row.queue = "q";
  row.job_set = "s";
  row.state = state;
  row.priority = priority;
  row.priority_class = priority_class;
  row.submit_time = submit_time;
  return row;
}

store::SchedulerRunRow RunRow(const std::string& run_id, const std::string& job_id,
                              v1::RunState state, const std::string& executor = "e1",
                              const std::string& node = "n1") {
  store::SchedulerRunRow row;
  row.run_id = run_id;
  row.job_id = job_id;
  row.executor_id = executor;
  row.node_id = node;
  row.pool = "default";
  row.state = state;
  row.leased_time = kT0;
  return row;
}

v1::Error Failure(bool terminal) {
  v1::Error error;
  error.set_message(terminal ? "bad command" : "node lost");
  error.set_terminal(terminal);
  return error;
}

class JobDbTest : public ::testing::Test {
 protected:
  // Adds a job from a row with a spec of its own.
  void Add(const store::SchedulerJobRow& row, int64_t views_offset = 1) {
    ASSERT_TRUE(db_.ApplyJobRow(row, views_offset, Spec(row.job_id)));
  }

  std::vector<std::string> Queued(const std::string& queue = "q") const {
    std::vector<std::string> ids;
    auto it = db_.queued().find(queue);
    if (it == db_.queued().end()) return ids;
    for (const JobDb::QueuedKey& key : it->second) ids.push_back(key.id);
    return ids;
  }

  JobDb db_{PriorityOf};
};

// ---- Jobs -------------------------------------------------------------------------------------

TEST_F(JobDbTest, NewJobWithSpecIsIndexedAndItsRequestsParsed) {
  const int64_t version = db_.Version();
  auto spec = Spec("j1", {{"cpu", "250m"}, {"memory", "64Mi"}, {"nvidia.com/gpu", "1"}});
  ASSERT_TRUE(db_.ApplyJobRow(Row("j1", v1::JOB_STATE_QUEUED, 3, "urgent"), 5, spec));
  EXPECT_GT(db_.Version(), version);
  EXPECT_EQ(db_.size(), 1u);

  const JobRecord* job = db_.FindJob("j1");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->queue, "q");
  EXPECT_EQ(job->job_set, "s");
  EXPECT_EQ(job->state, v1::JOB_STATE_QUEUED);
  EXPECT_EQ(job->priority, 3u);
  EXPECT_EQ(job->priority_class_priority, 1000);
  EXPECT_EQ(job->submit_time, kT0);
  EXPECT_EQ(job->spec, spec);
  EXPECT_EQ(job->decision, Decision::kNone);
  EXPECT_THAT(Queued(), ElementsAre("j1"));

  const RoundJob& round = job->round_job;
  EXPECT_EQ(round.id, "j1");
  EXPECT_EQ(round.priority_class_priority, 1000);
  EXPECT_EQ(round.task, &spec->task());
  EXPECT_EQ(round.requests.Get(ResourceNames::kCpu), Quantity::FromMilli(250));
  EXPECT_EQ(round.requests.Get(ResourceNames::kMemory), Quantity::FromUnits(64 << 20));
  EXPECT_EQ(round.requests.Get(ResourceNames::kGpu), Quantity::FromUnits(1));
  EXPECT_THAT(round.avoid_nodes, IsEmpty());
}

TEST_F(JobDbTest, UnparseableStoredRequestsScheduleAsNothing) {
  // Submit validates requests; a stored spec that still does not parse must not stop the JobDb.
  ASSERT_TRUE(db_.ApplyJobRow(Row("j"), 1, Spec("j", {{"cpu", "lots"}})));
  EXPECT_TRUE(db_.FindJob("j")->round_job.requests.IsZero());
  EXPECT_THAT(Queued(), ElementsAre("j"));
}

TEST_F(JobDbTest, UnknownJobWithoutSpecIsIgnored) {
  const int64_t version = db_.Version();
  EXPECT_FALSE(db_.ApplyJobRow(Row("j1"), 1, nullptr));
  EXPECT_EQ(db_.FindJob("j1"), nullptr);
  EXPECT_EQ(db_.size(), 0u);
  EXPECT_TRUE(db_.queued().empty());
  EXPECT_EQ(db_.Version(), version);

  // A known job needs no spec: the row updates it.
  Add(Row("j1"));
  EXPECT_TRUE(db_.ApplyJobRow(Row("j1", v1::JOB_STATE_QUEUED, 7), 2, nullptr));
  EXPECT_EQ(db_.FindJob("j1")->priority, 7u);
  EXPECT_NE(db_.FindJob("j1")->spec, nullptr);
}

TEST_F(JobDbTest, QueuedOrderIsClassPriorityThenPriorityThenSubmitTimeThenId) {
  Add(Row("late-low-prio", v1::JOB_STATE_QUEUED, 1, "", kT0 + absl::Seconds(200)));
  Add(Row("b-same", v1::JOB_STATE_QUEUED, 1, "", kT0 + absl::Seconds(100)));
  Add(Row("a-same", v1::JOB_STATE_QUEUED, 1, "", kT0 + absl::Seconds(100)));
  Add(Row("prio-0", v1::JOB_STATE_QUEUED, 0, "", kT0 + absl::Seconds(500)));
  Add(Row("urgent", v1::JOB_STATE_QUEUED, 9, "urgent", kT0 + absl::Seconds(900)));
  Add(Row("batch", v1::JOB_STATE_QUEUED, 0, "batch", kT0));
  // Priority-class priority high first; then job priority low first; then older first; then id.
  EXPECT_THAT(Queued(),
              ElementsAre("urgent", "prio-0", "a-same", "b-same", "late-low-prio", "batch"));

  // Other queues have sets of their own.
  store::SchedulerJobRow other = Row("other");
  other.queue = "q2";
  Add(other);
  EXPECT_THAT(Queued("q2"), ElementsAre("other"));
  EXPECT_EQ(Queued().size(), 6u);
}

TEST_F(JobDbTest, PriorityChangeReSorts) {
  Add(Row("a", v1::JOB_STATE_QUEUED, 1));
  Add(Row("b", v1::JOB_STATE_QUEUED, 2));
  Add(Row("c", v1::JOB_STATE_QUEUED, 3));
  EXPECT_THAT(Queued(), ElementsAre("a", "b", "c"));
  ASSERT_TRUE(db_.ApplyJobRow(Row("c", v1::JOB_STATE_QUEUED, 0), 2, nullptr));
  EXPECT_THAT(Queued(), ElementsAre("c", "a", "b"));  // no stale key left behind
  ASSERT_TRUE(db_.ApplyJobRow(Row("a", v1::JOB_STATE_QUEUED, 9), 3, nullptr));
  EXPECT_THAT(Queued(), ElementsAre("c", "b", "a"));
}

TEST_F(JobDbTest, CancelRequestedAndNonQueuedJobsAreNotInTheQueuedSet) {
  Add(Row("a"));
  Add(Row("b"));
  Add(Row("running", v1::JOB_STATE_RUNNING));
  EXPECT_THAT(Queued(), ElementsAre("a", "b"));

  store::SchedulerJobRow cancel = Row("a");
  cancel.cancel_requested = true;
  cancel.cancel_reason = "not needed";
  ASSERT_TRUE(db_.ApplyJobRow(cancel, 2, nullptr));
  EXPECT_THAT(Queued(), ElementsAre("b"));
  EXPECT_TRUE(db_.FindJob("a")->cancel_requested);
  EXPECT_EQ(db_.FindJob("a")->cancel_reason, "not needed");

  ASSERT_TRUE(db_.ApplyJobRow(Row("b", v1::JOB_STATE_CANCELLED), 3, nullptr));
  // The last queued job gone: no empty set is left for the queue.
  EXPECT_EQ(db_.queued().count("q"), 0u);
}

// ---- Decisions against the views --------------------------------------------------------------

TEST_F(JobDbTest, DecisionHoldsTheStateUntilTheViewsCatchUp) {
  Add(Row("j"), 10);
  RunRecord run{"r1", "j", "e1", "n1", "default", v1::RUN_STATE_LEASED, kT0, std::nullopt};
  db_.RecordLease("j", run, /*offset=*/20);
  const JobRecord* job = db_.FindJob("j");
  EXPECT_EQ(job->state, v1::JOB_STATE_LEASED);
  EXPECT_EQ(job->decision, Decision::kLeased);
  EXPECT_EQ(job->decision_offset, 20);
  EXPECT_THAT(Queued(), IsEmpty());
  EXPECT_THAT(db_.ActiveRunsOf("e1"), ElementsAre("r1"));
  EXPECT_EQ(db_.FindJobByRun("r1"), job);

  // A row from views older than the decision does not undo it, though its other fields apply.
  store::SchedulerJobRow stale = Row("j", v1::JOB_STATE_QUEUED, 4);
  ASSERT_TRUE(db_.ApplyJobRow(stale, 19, nullptr));
  EXPECT_EQ(job->state, v1::JOB_STATE_LEASED);
  EXPECT_EQ(job->decision, Decision::kLeased);
  EXPECT_EQ(job->priority, 4u);
  EXPECT_THAT(Queued(), IsEmpty());

  // Views that include the decision's offset win again.
  ASSERT_TRUE(db_.ApplyJobRow(Row("j", v1::JOB_STATE_RUNNING), 20, nullptr));
  EXPECT_EQ(job->state, v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job->decision, Decision::kNone);
  EXPECT_EQ(job->decision_offset, 0);

  // A requeue decision puts the job back in the queued set at once.
  db_.RecordJobDecision("j", Decision::kRequeued, v1::JOB_STATE_QUEUED, 30);
  EXPECT_THAT(Queued(), ElementsAre("j"));
  ASSERT_TRUE(db_.ApplyJobRow(Row("j", v1::JOB_STATE_RUNNING), 29, nullptr));
  EXPECT_EQ(job->state, v1::JOB_STATE_QUEUED);
  EXPECT_THAT(Queued(), ElementsAre("j"));
  ASSERT_TRUE(db_.ApplyJobRow(Row("j", v1::JOB_STATE_FAILED), 31, nullptr));
  EXPECT_EQ(job->state, v1::JOB_STATE_FAILED);
  EXPECT_THAT(Queued(), IsEmpty());

  // Decisions about unknown jobs are ignored.
  db_.RecordJobDecision("nope", Decision::kCancelled, v1::JOB_STATE_CANCELLED, 40);
  db_.RecordLease("nope", run, 40);
  EXPECT_EQ(db_.FindJob("nope"), nullptr);
}

// ---- Runs -------------------------------------------------------------------------------------

TEST_F(JobDbTest, RunRowsAddRunsAndIndexActiveRunsByExecutor) {
  Add(Row("a", v1::JOB_STATE_RUNNING));
  Add(Row("b", v1::JOB_STATE_RUNNING));
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r1", "a", v1::RUN_STATE_LEASE_EXPIRED, "e1", "n1"), 2));
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r2", "a", v1::RUN_STATE_RUNNING, "e1", "n2"), 2));
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r3", "b", v1::RUN_STATE_PENDING, "e1", "n1"), 2));
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r4", "b", v1::RUN_STATE_LEASED, "e2", "n9"), 2));

  const JobRecord* a = db_.FindJob("a");
  ASSERT_EQ(a->runs.size(), 2u);
  EXPECT_EQ(a->latest_run()->run_id, "r2");
  EXPECT_EQ(db_.FindJobByRun("r3"), db_.FindJob("b"));
  ASSERT_NE(db_.FindRun("r2"), nullptr);
  EXPECT_EQ(db_.FindRun("r2")->node_id, "n2");
  EXPECT_EQ(db_.FindRun("r2")->pool, "default");
  EXPECT_THAT(db_.ActiveRunsOf("e1"), UnorderedElementsAre("r2", "r3"));
  EXPECT_THAT(db_.ActiveRunsOf("e2"), ElementsAre("r4"));
  EXPECT_THAT(db_.ActiveRunsOf("e3"), IsEmpty());

  // Progress updates the run; a terminal row ends it.
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r3", "b", v1::RUN_STATE_RUNNING, "e1", "n1"), 3));
  EXPECT_EQ(db_.FindRun("r3")->state, v1::RUN_STATE_RUNNING);
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r2", "a", v1::RUN_STATE_SUCCEEDED, "e1", "n2"), 4));
  EXPECT_EQ(db_.FindRun("r2")->state, v1::RUN_STATE_SUCCEEDED);
  EXPECT_FALSE(db_.FindRun("r2")->active());
  EXPECT_THAT(db_.ActiveRunsOf("e1"), ElementsAre("r3"));
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r4", "b", v1::RUN_STATE_CANCELLED, "e2", "n9"), 5));
  EXPECT_THAT(db_.ActiveRunsOf("e2"), IsEmpty());

  // A run of a job the JobDb does not hold is ignored.
  EXPECT_FALSE(db_.ApplyRunRow(RunRow("r9", "nope", v1::RUN_STATE_RUNNING), 6));
  EXPECT_EQ(db_.FindRun("r9"), nullptr);
  EXPECT_EQ(db_.FindJobByRun("r9"), nullptr);
}

TEST_F(JobDbTest, OptimisticTerminalRunStateIsNotRevivedByAnOlderRow) {
  Add(Row("j", v1::JOB_STATE_RUNNING));
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r1", "j", v1::RUN_STATE_RUNNING), 2));
  EXPECT_THAT(db_.ActiveRunsOf("e1"), ElementsAre("r1"));

  // The scheduler expires the run before the views say so.
  db_.RecordRunState("r1", v1::RUN_STATE_LEASE_EXPIRED, Failure(false));
  EXPECT_EQ(db_.FindRun("r1")->state, v1::RUN_STATE_LEASE_EXPIRED);
  EXPECT_THAT(db_.ActiveRunsOf("e1"), IsEmpty());

  // An older row still says RUNNING: the run stays ended.
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r1", "j", v1::RUN_STATE_RUNNING), 3));
  EXPECT_EQ(db_.FindRun("r1")->state, v1::RUN_STATE_LEASE_EXPIRED);
  EXPECT_THAT(db_.ActiveRunsOf("e1"), IsEmpty());

  // A terminal row from the views is the final word.
  store::SchedulerRunRow failed = RunRow("r1", "j", v1::RUN_STATE_FAILED);
  failed.error = Failure(true);
  ASSERT_TRUE(db_.ApplyRunRow(failed, 4));
  EXPECT_EQ(db_.FindRun("r1")->state, v1::RUN_STATE_FAILED);
  ASSERT_TRUE(db_.FindRun("r1")->error.has_value());
  EXPECT_TRUE(db_.FindRun("r1")->error->terminal());

  // Recording a state on an ended run changes nothing; unknown runs are ignored.
  db_.RecordRunState("r1", v1::RUN_STATE_RUNNING, std::nullopt);
  EXPECT_EQ(db_.FindRun("r1")->state, v1::RUN_STATE_FAILED);
  db_.RecordRunState("nope", v1::RUN_STATE_FAILED, std::nullopt);
}

TEST_F(JobDbTest, RetryableFailuresAndAvoidNodesComeFromFailedRuns) {
  Add(Row("j", v1::JOB_STATE_QUEUED));
  auto run = [&](const std::string& id, v1::RunState state, const std::string& node,
                 std::optional<v1::Error> error = std::nullopt) {
    store::SchedulerRunRow row = RunRow(id, "j", state, "e1", node);
    row.error = std::move(error);
    ASSERT_TRUE(db_.ApplyRunRow(row, 2));
  };
  const JobRecord* job = db_.FindJob("j");
  EXPECT_EQ(job->retryable_failures(), 0);

  run("expired", v1::RUN_STATE_LEASE_EXPIRED, "n1");
  run("returned", v1::RUN_STATE_LEASE_RETURNED, "n2");
  run("failed-retryable", v1::RUN_STATE_FAILED, "n3", Failure(false));
  run("failed-terminal", v1::RUN_STATE_FAILED, "n4", Failure(true));
  run("succeeded", v1::RUN_STATE_SUCCEEDED, "n5");
  run("cancelled", v1::RUN_STATE_CANCELLED, "n6");
  run("running", v1::RUN_STATE_RUNNING, "n7");
  run("expired-nowhere", v1::RUN_STATE_LEASE_EXPIRED, "");
  EXPECT_EQ(job->retryable_failures(), 4);
  EXPECT_THAT(job->round_job.avoid_nodes, ElementsAre("n1", "n2", "n3"));

  // A run the scheduler ends itself counts at once.
  db_.RecordRunState("running", v1::RUN_STATE_LEASE_EXPIRED, Failure(false));
  EXPECT_EQ(job->retryable_failures(), 5);
  EXPECT_THAT(job->round_job.avoid_nodes, ElementsAre("n1", "n2", "n3", "n7"));
}

// ---- Compaction -------------------------------------------------------------------------------

TEST_F(JobDbTest, CompactDropsOnlyFinishedJobsWhoseRunsHoldNothing) {
  Add(Row("done", v1::JOB_STATE_SUCCEEDED));
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r-done", "done", v1::RUN_STATE_SUCCEEDED), 1));
  Add(Row("holding", v1::JOB_STATE_CANCELLED));
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r-holding", "holding", v1::RUN_STATE_RUNNING), 1));
  Add(Row("queued"));
  Add(Row("running", v1::JOB_STATE_RUNNING));
  Add(Row("decided", v1::JOB_STATE_QUEUED));
  db_.RecordJobDecision("decided", Decision::kCancelled, v1::JOB_STATE_CANCELLED, 50);

  const int64_t version = db_.Version();
  db_.Compact(40);
  EXPECT_EQ(db_.FindJob("done"), nullptr);
  EXPECT_EQ(db_.FindRun("r-done"), nullptr);
  EXPECT_EQ(db_.FindJobByRun("r-done"), nullptr);
  EXPECT_NE(db_.FindJob("holding"), nullptr);  // its run still holds a node
  EXPECT_NE(db_.FindJob("queued"), nullptr);
  EXPECT_NE(db_.FindJob("running"), nullptr);
  EXPECT_NE(db_.FindJob("decided"), nullptr);  // the views have not seen the decision yet
  EXPECT_GT(db_.Version(), version);
  EXPECT_THAT(Queued(), ElementsAre("queued"));
  EXPECT_THAT(db_.ActiveRunsOf("e1"), ElementsAre("r-holding"));

  db_.Compact(50);
  EXPECT_EQ(db_.FindJob("decided"), nullptr);
  EXPECT_NE(db_.FindJob("holding"), nullptr);

  // Once its run ends, the job goes too.
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r-holding", "holding", v1::RUN_STATE_CANCELLED), 51));
  db_.Compact(51);
  EXPECT_EQ(db_.FindJob("holding"), nullptr);
  EXPECT_THAT(db_.ActiveRunsOf("e1"), IsEmpty());
  EXPECT_EQ(db_.size(), 2u);

  // Nothing to drop: no change.
  const int64_t settled = db_.Version();
  db_.Compact(100);
  EXPECT_EQ(db_.Version(), settled);
}

TEST_F(JobDbTest, ClearForgetsEverything) {
  Add(Row("q1"));
  Add(Row("r1", v1::JOB_STATE_RUNNING));
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("run", "r1", v1::RUN_STATE_RUNNING), 1));
  const int64_t version = db_.Version();
  db_.Clear();
  EXPECT_GT(db_.Version(), version);
  EXPECT_EQ(db_.size(), 0u);
  EXPECT_EQ(db_.FindJob("q1"), nullptr);
  EXPECT_EQ(db_.FindRun("run"), nullptr);
  EXPECT_TRUE(db_.queued().empty());
  EXPECT_THAT(db_.ActiveRunsOf("e1"), IsEmpty());
  // And loads again from rows.
  Add(Row("q1"));
  EXPECT_THAT(Queued(), ElementsAre("q1"));
}

// ---- Change notification ----------------------------------------------------------------------

TEST_F(JobDbTest, VersionChangesWithEveryMutationAndWakesWaiters) {
  int64_t version = db_.Version();
  Add(Row("j"));
  EXPECT_GT(db_.Version(), version);
  version = db_.Version();
  ASSERT_TRUE(db_.ApplyRunRow(RunRow("r", "j", v1::RUN_STATE_RUNNING), 2));
  EXPECT_GT(db_.Version(), version);
  version = db_.Version();
  db_.RecordRunState("r", v1::RUN_STATE_LEASE_EXPIRED, std::nullopt);
  EXPECT_GT(db_.Version(), version);

  // No change: the wait ends at the deadline with the same version.
  version = db_.Version();
  const absl::Time start = absl::Now();
  EXPECT_EQ(db_.WaitForChange(version, start + absl::Milliseconds(50)), version);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(40));

  // A change from another thread wakes the waiter long before its deadline.
  std::thread writer([&] {
    absl::SleepFor(absl::Milliseconds(20));
    db_.ApplyJobRow(Row("j", v1::JOB_STATE_QUEUED, 5), 3, nullptr);
  });
  const absl::Time wait_start = absl::Now();
  EXPECT_NE(db_.WaitForChange(version, wait_start + absl::Seconds(30)), version);
  EXPECT_LT(absl::Now() - wait_start, absl::Seconds(10));
  writer.join();

  // A version already seen as stale returns at once.
  EXPECT_NE(db_.WaitForChange(version, absl::InfiniteFuture()), version);
}

}  // namespace
}  // namespace regatta::scheduler
