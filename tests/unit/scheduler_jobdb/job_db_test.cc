// The scheduler's in-memory JobDb: indexing, queued order, decisions against the views, runs,
// retries, compaction, change notification, shared templates and transactions (commit
// visibility, abort, snapshot readers), gang index, queued demand and the round's iterators.
#include "src/scheduler/jobdb/job_db.h"

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
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

std::shared_ptr<v1::Job> Spec(const std::string& id,
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

std::vector<std::string> Ids(const std::vector<const JobRecord*>& jobs) {
  std::vector<std::string> ids;
  for (const JobRecord* job : jobs) ids.push_back(job->id);
  return ids;
}

class JobDbTest : public ::testing::Test {
 protected:
  // Runs `fn` in one write transaction and commits it.
  void Write(const std::function<void(JobDb::Txn&)>& fn) {
    std::unique_ptr<JobDb::Txn> txn = db_.Begin();
    fn(*txn);
    txn->Commit();
  }

  // Adds a job from a row with a spec of its own.
  void Add(const store::SchedulerJobRow& row, int64_t views_offset = 1) {
    Write([&](JobDb::Txn& txn) {
      ASSERT_TRUE(txn.ApplyJobRow(row, views_offset, Spec(row.job_id).get()));
    });
  }
  bool ApplyJobRow(const store::SchedulerJobRow& row, int64_t views_offset) {
    bool applied = false;
    Write(
        [&](JobDb::Txn& txn) { applied = txn.ApplyJobRow(row, views_offset, nullptr) != nullptr; });
    return applied;
  }
  bool ApplyRunRow(const store::SchedulerRunRow& row, int64_t views_offset) {
    bool applied = false;
    Write([&](JobDb::Txn& txn) { applied = txn.ApplyRunRow(row, views_offset); });
    return applied;
  }
  void RecordRunState(const std::string& run_id, v1::RunState state,
                      std::optional<v1::Error> error) {
    Write([&](JobDb::Txn& txn) { txn.RecordRunState(run_id, state, error); });
  }
  void RecordJobDecision(const std::string& job_id, Decision decision, v1::JobState state,
                         int64_t offset) {
    Write([&](JobDb::Txn& txn) { txn.RecordJobDecision(job_id, decision, state, offset); });
  }
  void Compact(int64_t views_offset) {
    Write([&](JobDb::Txn& txn) { txn.Compact(views_offset); });
  }

  // The committed queued order (read through a transaction that changes nothing).
  std::vector<std::string> Queued(const std::string& queue = "q") {
    return Ids(db_.Begin()->Queued(queue));
  }

  JobDb db_{PriorityOf};
};

// ---- Jobs -------------------------------------------------------------------------------------

TEST_F(JobDbTest, NewJobWithSpecIsIndexedAndItsRequestsParsed) {
  const int64_t version = db_.Version();
  auto spec = Spec("j1", {{"cpu", "250m"}, {"memory", "64Mi"}, {"nvidia.com/gpu", "1"}});
  Write([&](JobDb::Txn& txn) {
    ASSERT_TRUE(txn.ApplyJobRow(Row("j1", v1::JOB_STATE_QUEUED, 3, "urgent"), 5, spec.get()));
  });
  EXPECT_GT(db_.Version(), version);
  EXPECT_EQ(db_.size(), 1u);

  const JobRecord* job = db_.FindJob("j1");
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->queue(), "q");
  EXPECT_EQ(job->job_set(), "s");
  EXPECT_EQ(job->state, v1::JOB_STATE_QUEUED);
  EXPECT_EQ(job->priority, 3u);
  EXPECT_EQ(job->priority_class_priority, 1000);
  EXPECT_EQ(job->submit_time, kT0);
  EXPECT_EQ(job->decision, Decision::kNone);
  EXPECT_THAT(Queued(), ElementsAre("j1"));

  // The template keeps the scheduling part of the spec only.
  ASSERT_NE(job->tmpl, nullptr);
  const JobTemplate& round = job->tmpl->round;
  EXPECT_EQ(job->tmpl->priority_class_priority, 1000);
  EXPECT_EQ(job->tmpl->spec.priority_class(), "urgent");
  EXPECT_EQ(db_.priority_class_names().at(round.priority_class), "urgent");
  EXPECT_EQ(round.task, &job->tmpl->spec.task());
  EXPECT_EQ(round.task->resources().requests().at("cpu"), "250m");
  EXPECT_EQ(round.gang_cardinality, 1u);
  EXPECT_TRUE(job->tmpl->spec.id().empty());
  EXPECT_EQ(round.requests.Get(ResourceNames::kCpu), Quantity::FromMilli(250));
  EXPECT_EQ(round.requests.Get(ResourceNames::kMemory), Quantity::FromUnits(64 << 20));
  EXPECT_EQ(round.requests.Get(ResourceNames::kGpu), Quantity::FromUnits(1));
  EXPECT_EQ(job->requests(), round.requests);
  EXPECT_THAT(job->AvoidNodes(), IsEmpty());
}

TEST_F(JobDbTest, UnparseableStoredRequestsScheduleAsNothing) {
  // Submit validates requests; a stored spec that still does not parse must not stop the JobDb.
  Write([&](JobDb::Txn& txn) {
    ASSERT_TRUE(txn.ApplyJobRow(Row("j"), 1, Spec("j", {{"cpu", "lots"}}).get()));
  });
  EXPECT_TRUE(db_.FindJob("j")->requests().IsZero());
  EXPECT_THAT(Queued(), ElementsAre("j"));
}

TEST_F(JobDbTest, UnknownJobWithoutSpecIsIgnored) {
  const int64_t version = db_.Version();
  EXPECT_FALSE(ApplyJobRow(Row("j1"), 1));
  EXPECT_EQ(db_.FindJob("j1"), nullptr);
  EXPECT_EQ(db_.size(), 0u);
  EXPECT_THAT(db_.Begin()->QueuedQueues(), IsEmpty());
  EXPECT_EQ(db_.Version(), version);

  // A known job needs no spec: the row updates it.
  Add(Row("j1"));
  EXPECT_TRUE(ApplyJobRow(Row("j1", v1::JOB_STATE_QUEUED, 7), 2));
  EXPECT_EQ(db_.FindJob("j1")->priority, 7u);
  EXPECT_NE(db_.FindJob("j1")->tmpl, nullptr);
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
  ASSERT_TRUE(ApplyJobRow(Row("c", v1::JOB_STATE_QUEUED, 0), 2));
  EXPECT_THAT(Queued(), ElementsAre("c", "a", "b"));  // no stale key left behind
  ASSERT_TRUE(ApplyJobRow(Row("a", v1::JOB_STATE_QUEUED, 9), 3));
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
  ASSERT_TRUE(ApplyJobRow(cancel, 2));
  EXPECT_THAT(Queued(), ElementsAre("b"));
  EXPECT_TRUE(db_.FindJob("a")->cancel_requested);
  EXPECT_EQ(db_.FindJob("a")->cancel_reason(), "not needed");

  ASSERT_TRUE(ApplyJobRow(Row("b", v1::JOB_STATE_CANCELLED), 3));
  // The last queued job gone: no empty set is left for the queue.
  EXPECT_THAT(db_.Begin()->QueuedQueues(), IsEmpty());
}

// ---- Decisions against the views --------------------------------------------------------------

TEST_F(JobDbTest, DecisionHoldsTheStateUntilTheViewsCatchUp) {
  Add(Row("j"), 10);
  RunRecord run{"r1", "j", "e1", "n1", "default", v1::RUN_STATE_LEASED, kT0, std::nullopt};
  Write([&](JobDb::Txn& txn) { txn.RecordLease("j", run, /*offset=*/20); });
  const JobRecord* job = db_.FindJob("j");
  EXPECT_EQ(job->state, v1::JOB_STATE_LEASED);
  EXPECT_EQ(job->decision, Decision::kLeased);
  EXPECT_EQ(job->decision_offset, 20);
  EXPECT_THAT(Queued(), IsEmpty());
  EXPECT_THAT(db_.ActiveRunsOf("e1"), ElementsAre("r1"));
  EXPECT_EQ(db_.FindJobByRun("r1"), job);

  // A row from views older than the decision does not undo it, though its other fields apply.
  store::SchedulerJobRow stale = Row("j", v1::JOB_STATE_QUEUED, 4);
  ASSERT_TRUE(ApplyJobRow(stale, 19));
  EXPECT_EQ(job->state, v1::JOB_STATE_LEASED);
  EXPECT_EQ(job->decision, Decision::kLeased);
  EXPECT_EQ(job->priority, 4u);
  EXPECT_THAT(Queued(), IsEmpty());

  // Views that include the decision's offset win again.
  ASSERT_TRUE(ApplyJobRow(Row("j", v1::JOB_STATE_RUNNING), 20));
  EXPECT_EQ(job->state, v1::JOB_STATE_RUNNING);
  EXPECT_EQ(job->decision, Decision::kNone);
  EXPECT_EQ(job->decision_offset, 0);

  // A requeue decision puts the job back in the queued set at once.
  RecordJobDecision("j", Decision::kRequeued, v1::JOB_STATE_QUEUED, 30);
  EXPECT_THAT(Queued(), ElementsAre("j"));
  ASSERT_TRUE(ApplyJobRow(Row("j", v1::JOB_STATE_RUNNING), 29));
  EXPECT_EQ(job->state, v1::JOB_STATE_QUEUED);
  EXPECT_THAT(Queued(), ElementsAre("j"));
  ASSERT_TRUE(ApplyJobRow(Row("j", v1::JOB_STATE_FAILED), 31));
  EXPECT_EQ(job->state, v1::JOB_STATE_FAILED);
  EXPECT_THAT(Queued(), IsEmpty());

  // Decisions about unknown jobs are ignored.
  RecordJobDecision("nope", Decision::kCancelled, v1::JOB_STATE_CANCELLED, 40);
  Write([&](JobDb::Txn& txn) { txn.RecordLease("nope", run, 40); });
  EXPECT_EQ(db_.FindJob("nope"), nullptr);
}

// ---- Runs -------------------------------------------------------------------------------------

TEST_F(JobDbTest, RunRowsAddRunsAndIndexActiveRunsByExecutor) {
  Add(Row("a", v1::JOB_STATE_RUNNING));
  Add(Row("b", v1::JOB_STATE_RUNNING));
  ASSERT_TRUE(ApplyRunRow(RunRow("r1", "a", v1::RUN_STATE_LEASE_EXPIRED, "e1", "n1"), 2));
  ASSERT_TRUE(ApplyRunRow(RunRow("r2", "a", v1::RUN_STATE_RUNNING, "e1", "n2"), 2));
  ASSERT_TRUE(ApplyRunRow(RunRow("r3", "b", v1::RUN_STATE_PENDING, "e1", "n1"), 2));
  ASSERT_TRUE(ApplyRunRow(RunRow("r4", "b", v1::RUN_STATE_LEASED, "e2", "n9"), 2));

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
  ASSERT_TRUE(ApplyRunRow(RunRow("r3", "b", v1::RUN_STATE_RUNNING, "e1", "n1"), 3));
  EXPECT_EQ(db_.FindRun("r3")->state, v1::RUN_STATE_RUNNING);
  ASSERT_TRUE(ApplyRunRow(RunRow("r2", "a", v1::RUN_STATE_SUCCEEDED, "e1", "n2"), 4));
  EXPECT_EQ(db_.FindRun("r2")->state, v1::RUN_STATE_SUCCEEDED);
  EXPECT_FALSE(db_.FindRun("r2")->active());
  EXPECT_THAT(db_.ActiveRunsOf("e1"), ElementsAre("r3"));
  ASSERT_TRUE(ApplyRunRow(RunRow("r4", "b", v1::RUN_STATE_CANCELLED, "e2", "n9"), 5));
  EXPECT_THAT(db_.ActiveRunsOf("e2"), IsEmpty());

  // A run of a job the JobDb does not hold is ignored.
  EXPECT_FALSE(ApplyRunRow(RunRow("r9", "nope", v1::RUN_STATE_RUNNING), 6));
  EXPECT_EQ(db_.FindRun("r9"), nullptr);
  EXPECT_EQ(db_.FindJobByRun("r9"), nullptr);
}

TEST_F(JobDbTest, OptimisticTerminalRunStateIsNotRevivedByAnOlderRow) {
  Add(Row("j", v1::JOB_STATE_RUNNING));
  ASSERT_TRUE(ApplyRunRow(RunRow("r1", "j", v1::RUN_STATE_RUNNING), 2));
  EXPECT_THAT(db_.ActiveRunsOf("e1"), ElementsAre("r1"));

  // The scheduler expires the run before the views say so.
  RecordRunState("r1", v1::RUN_STATE_LEASE_EXPIRED, Failure(false));
  EXPECT_EQ(db_.FindRun("r1")->state, v1::RUN_STATE_LEASE_EXPIRED);
  EXPECT_THAT(db_.ActiveRunsOf("e1"), IsEmpty());

  // An older row still says RUNNING: the run stays ended.
  ASSERT_TRUE(ApplyRunRow(RunRow("r1", "j", v1::RUN_STATE_RUNNING), 3));
  EXPECT_EQ(db_.FindRun("r1")->state, v1::RUN_STATE_LEASE_EXPIRED);
  EXPECT_THAT(db_.ActiveRunsOf("e1"), IsEmpty());

  // A terminal row from the views is the final word.
  store::SchedulerRunRow failed = RunRow("r1", "j", v1::RUN_STATE_FAILED);
  failed.error = Failure(true);
  ASSERT_TRUE(ApplyRunRow(failed, 4));
  EXPECT_EQ(db_.FindRun("r1")->state, v1::RUN_STATE_FAILED);
  ASSERT_TRUE(db_.FindRun("r1")->error.has_value());
  EXPECT_TRUE(db_.FindRun("r1")->error->terminal());

  // Recording a state on an ended run changes nothing; unknown runs are ignored.
  RecordRunState("r1", v1::RUN_STATE_RUNNING, std::nullopt);
  EXPECT_EQ(db_.FindRun("r1")->state, v1::RUN_STATE_FAILED);
  RecordRunState("nope", v1::RUN_STATE_FAILED, std::nullopt);
}

TEST_F(JobDbTest, RetryableFailuresAndAvoidNodesComeFromFailedRuns) {
  Add(Row("j", v1::JOB_STATE_QUEUED));
  auto run = [&](const std::string& id, v1::RunState state, const std::string& node,
                 std::optional<v1::Error> error = std::nullopt) {
    store::SchedulerRunRow row = RunRow(id, "j", state, "e1", node);
    row.error = std::move(error);
    ASSERT_TRUE(ApplyRunRow(row, 2));
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
  EXPECT_THAT(job->AvoidNodes(), ElementsAre("n1", "n2", "n3"));

  // A run the scheduler ends itself counts at once.
  RecordRunState("running", v1::RUN_STATE_LEASE_EXPIRED, Failure(false));
  EXPECT_EQ(job->retryable_failures(), 5);
  EXPECT_THAT(job->AvoidNodes(), ElementsAre("n1", "n2", "n3", "n7"));
}

// ---- Compaction -------------------------------------------------------------------------------

TEST_F(JobDbTest, CompactDropsOnlyFinishedJobsWhoseRunsHoldNothing) {
  Add(Row("done", v1::JOB_STATE_SUCCEEDED));
  ASSERT_TRUE(ApplyRunRow(RunRow("r-done", "done", v1::RUN_STATE_SUCCEEDED), 1));
  Add(Row("holding", v1::JOB_STATE_CANCELLED));
  ASSERT_TRUE(ApplyRunRow(RunRow("r-holding", "holding", v1::RUN_STATE_RUNNING), 1));
  Add(Row("queued"));
  Add(Row("running", v1::JOB_STATE_RUNNING));
  Add(Row("decided", v1::JOB_STATE_QUEUED));
  RecordJobDecision("decided", Decision::kCancelled, v1::JOB_STATE_CANCELLED, 50);

  const int64_t version = db_.Version();
  Compact(40);
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

  Compact(50);
  EXPECT_EQ(db_.FindJob("decided"), nullptr);
  EXPECT_NE(db_.FindJob("holding"), nullptr);

  // Once its run ends, the job goes too.
  ASSERT_TRUE(ApplyRunRow(RunRow("r-holding", "holding", v1::RUN_STATE_CANCELLED), 51));
  Compact(51);
  EXPECT_EQ(db_.FindJob("holding"), nullptr);
  EXPECT_THAT(db_.ActiveRunsOf("e1"), IsEmpty());
  EXPECT_EQ(db_.size(), 2u);

  // Nothing to drop: no change.
  const int64_t settled = db_.Version();
  Compact(100);
  EXPECT_EQ(db_.Version(), settled);
}

// ---- Templates ----------------------------------------------------------------------------------

TEST_F(JobDbTest, JobsOfOneSchedulingSpecShareOneTemplate) {
  // Same scheduling part, different everything else: one template.
  auto a = Spec("a");
  a->mutable_task()->add_command("/bin/a");
  (*a->mutable_labels())["run"] = "1";
  a->mutable_gang()->set_id("g-a");
  auto b = Spec("b");
  b->mutable_task()->add_command("/bin/b");
  (*b->mutable_task()->mutable_env())["X"] = "y";
  // A different request, a selector, a retry policy or a priority class: a template each.
  auto bigger = Spec("bigger", {{"cpu", "4"}, {"memory", "1Gi"}});
  auto selected = Spec("selected");
  (*selected->mutable_task()->mutable_node_selector())["zone"] = "a";
  auto retried = Spec("retried");
  retried->mutable_retry_policy()->set_max_retries(7);
  Write([&](JobDb::Txn& txn) {
    ASSERT_TRUE(txn.ApplyJobRow(Row("a"), 1, a.get()));
    ASSERT_TRUE(txn.ApplyJobRow(Row("b"), 1, b.get()));
    ASSERT_TRUE(txn.ApplyJobRow(Row("bigger"), 1, bigger.get()));
    ASSERT_TRUE(txn.ApplyJobRow(Row("selected"), 1, selected.get()));
    ASSERT_TRUE(txn.ApplyJobRow(Row("retried"), 1, retried.get()));
    ASSERT_TRUE(
        txn.ApplyJobRow(Row("urgent", v1::JOB_STATE_QUEUED, 0, "urgent"), 1, Spec("urgent").get()));
  });
  const JobRecord* ja = db_.FindJob("a");
  const JobRecord* jb = db_.FindJob("b");
  EXPECT_EQ(ja->tmpl, jb->tmpl);
  EXPECT_EQ(ja->gang_id(), "g-a");  // per job, not in the template
  EXPECT_TRUE(jb->gang_id().empty());
  EXPECT_THAT(ja->tmpl->spec.task().command(), IsEmpty());
  EXPECT_THAT(ja->tmpl->spec.labels(), IsEmpty());
  EXPECT_NE(db_.FindJob("bigger")->tmpl, ja->tmpl);
  EXPECT_NE(db_.FindJob("selected")->tmpl, ja->tmpl);
  EXPECT_EQ(db_.FindJob("selected")->tmpl->spec.task().node_selector().at("zone"), "a");
  EXPECT_NE(db_.FindJob("retried")->tmpl, ja->tmpl);
  EXPECT_EQ(db_.FindJob("retried")->retry_policy().max_retries(), 7u);
  EXPECT_NE(db_.FindJob("urgent")->tmpl, ja->tmpl);
  EXPECT_EQ(db_.template_count(), 5u);

  // Gang shape belongs to the template.
  auto gang = Spec("g1");
  gang->mutable_gang()->set_id("g");
  gang->mutable_gang()->set_cardinality(3);
  gang->mutable_gang()->set_node_uniformity_label("rack");
  Add(Row("g1"));
  Write([&](JobDb::Txn& txn) { ASSERT_TRUE(txn.ApplyJobRow(Row("g2"), 1, gang.get())); });
  EXPECT_EQ(db_.FindJob("g2")->tmpl->round.gang_cardinality, 3u);
  EXPECT_EQ(db_.FindJob("g2")->tmpl->round.gang_node_uniformity_label, "rack");
  EXPECT_EQ(db_.FindJob("g1")->tmpl, ja->tmpl);

  // A template goes with the last job using it.
  Write([&](JobDb::Txn& txn) {
    txn.RecordJobDecision("bigger", Decision::kCancelled, v1::JOB_STATE_CANCELLED, 5);
  });
  Compact(5);
  EXPECT_EQ(db_.FindJob("bigger"), nullptr);
  EXPECT_EQ(db_.template_count(), 5u);
}

// ---- Transactions -------------------------------------------------------------------------------

TEST_F(JobDbTest, ChangesAreInvisibleUntilCommitThenAllAtOnce) {
  Add(Row("a"));
  const int64_t version = db_.Version();
  std::unique_ptr<JobDb::Txn> txn = db_.Begin();
  ASSERT_TRUE(txn->ApplyJobRow(Row("b"), 2, Spec("b").get()));
  ASSERT_TRUE(txn->ApplyJobRow(Row("a", v1::JOB_STATE_QUEUED, 5), 2, nullptr));
  txn->RecordLease(
      "b", RunRecord{"rb", "b", "e1", "n1", "default", v1::RUN_STATE_LEASED, kT0, std::nullopt}, 0);
  txn->SetDecisionOffset("b", 9);

  // The transaction sees its own changes ...
  ASSERT_NE(txn->FindJob("b"), nullptr);
  EXPECT_EQ(txn->FindJob("b")->decision_offset, 9);
  EXPECT_EQ(txn->FindJob("a")->priority, 5u);
  EXPECT_EQ(txn->FindJobByRun("rb"), txn->FindJob("b"));
  EXPECT_EQ(txn->size(), 2u);
  // ... the committed state does not.
  EXPECT_EQ(db_.FindJob("b"), nullptr);
  EXPECT_EQ(db_.FindJob("a")->priority, 0u);
  EXPECT_EQ(db_.FindJobByRun("rb"), nullptr);
  EXPECT_THAT(db_.ActiveRunsOf("e1"), IsEmpty());
  EXPECT_EQ(db_.Version(), version);
  EXPECT_EQ(db_.size(), 1u);

  const JobRecord* a = db_.FindJob("a");
  txn->Commit();
  EXPECT_GT(db_.Version(), version);
  EXPECT_EQ(db_.size(), 2u);
  EXPECT_EQ(db_.FindJob("a"), a);  // changed in place: the record keeps its address
  EXPECT_EQ(a->priority, 5u);
  ASSERT_NE(db_.FindJob("b"), nullptr);
  EXPECT_EQ(db_.FindJob("b")->state, v1::JOB_STATE_LEASED);
  EXPECT_EQ(db_.FindJobByRun("rb"), db_.FindJob("b"));
  EXPECT_THAT(db_.ActiveRunsOf("e1"), ElementsAre("rb"));
  EXPECT_THAT(Queued(), ElementsAre("a"));
}

TEST_F(JobDbTest, AbortLeavesNoTraceInRecordsOrIndexes) {
  auto gang_spec = [](const std::string& id) {
    auto spec = Spec(id);
    spec->mutable_gang()->set_id("g");
    spec->mutable_gang()->set_cardinality(3);
    return spec;
  };
  Add(Row("a"));
  Write([&](JobDb::Txn& txn) {
    ASSERT_TRUE(txn.ApplyJobRow(Row("g1"), 1, gang_spec("g1").get()));
    ASSERT_TRUE(txn.ApplyJobRow(Row("running", v1::JOB_STATE_RUNNING), 1, Spec("running").get()));
    ASSERT_TRUE(txn.ApplyRunRow(RunRow("r1", "running", v1::RUN_STATE_RUNNING, "e1"), 1));
  });
  const int64_t version = db_.Version();
  const size_t templates = db_.template_count();
  auto snapshot = [&] {
    std::unique_ptr<JobDb::Txn> read = db_.Begin();
    std::vector<std::string> runs;
    read->ForEachActiveRun([&](const JobRecord& job, const RunRecord& run) {
      runs.push_back(job.id + "/" + run.run_id + "/" + v1::RunState_Name(run.state));
    });
    return std::make_tuple(Ids(read->Queued("q")), read->QueuedDemand("q"),
                           Ids(read->GangMembers("q", "g")), runs, read->size());
  };
  const auto before = snapshot();

  {
    std::unique_ptr<JobDb::Txn> txn = db_.Begin();
    ASSERT_TRUE(txn->ApplyJobRow(Row("new"), 2, Spec("new").get()));
    ASSERT_TRUE(txn->ApplyJobRow(Row("g2"), 2, gang_spec("g2").get()));
    ASSERT_TRUE(txn->ApplyJobRow(Row("a", v1::JOB_STATE_QUEUED, 9), 2, nullptr));
    txn->RecordLease(
        "g1", RunRecord{"rg", "g1", "e2", "n2", "default", v1::RUN_STATE_LEASED, kT0, std::nullopt},
        0);
    txn->RecordRunState("r1", v1::RUN_STATE_LEASE_EXPIRED, Failure(false));
    txn->RecordJobDecision("running", Decision::kRequeued, v1::JOB_STATE_QUEUED, 0);
    ASSERT_TRUE(txn->ApplyJobRow(Row("big"), 2, Spec("big", {{"cpu", "64"}}).get()));
    // The transaction saw all of it.
    EXPECT_THAT(Ids(txn->Queued("q")), ElementsAre("big", "g2", "new", "running", "a"));
    EXPECT_THAT(Ids(txn->GangMembers("q", "g")), UnorderedElementsAre("g1", "g2"));
    txn->Abort();
  }
  EXPECT_EQ(db_.Version(), version);
  EXPECT_EQ(snapshot(), before);
  EXPECT_EQ(db_.FindJob("new"), nullptr);
  EXPECT_EQ(db_.FindJob("a")->priority, 0u);
  EXPECT_EQ(db_.FindJob("g1")->state, v1::JOB_STATE_QUEUED);
  EXPECT_THAT(db_.FindJob("g1")->runs, IsEmpty());
  EXPECT_EQ(db_.FindJobByRun("rg"), nullptr);
  EXPECT_THAT(db_.ActiveRunsOf("e2"), IsEmpty());
  EXPECT_EQ(db_.FindRun("r1")->state, v1::RUN_STATE_RUNNING);
  EXPECT_THAT(db_.ActiveRunsOf("e1"), ElementsAre("r1"));
  EXPECT_EQ(db_.template_count(), templates);  // the aborted job's template went with it

  // Destroying an uncommitted transaction aborts it too.
  {
    std::unique_ptr<JobDb::Txn> txn = db_.Begin();
    ASSERT_TRUE(txn->ApplyJobRow(Row("dropped"), 3, Spec("dropped").get()));
  }
  EXPECT_EQ(db_.FindJob("dropped"), nullptr);
  EXPECT_EQ(snapshot(), before);
}

TEST_F(JobDbTest, ReadersSeeTheCommittedStateWhileTheWriterWorks) {
  Add(Row("a"));
  std::unique_ptr<JobDb::Txn> txn = db_.Begin();
  ASSERT_TRUE(txn->ApplyJobRow(Row("b"), 2, Spec("b").get()));
  txn->RecordLease(
      "a", RunRecord{"ra", "a", "e1", "n1", "default", v1::RUN_STATE_LEASED, kT0, std::nullopt}, 0);
  // A reader on another thread is not blocked by the open transaction and sees none of it.
  auto read = [&] {
    std::vector<std::string> seen;
    std::thread reader([&] {
      absl::ReaderMutexLock lock(&db_.mutex());
      for (const char* id : {"a", "b"}) {
        const JobRecord* job = db_.FindJob(id);
        seen.push_back(job == nullptr ? "-" : v1::JobState_Name(job->state));
      }
      for (const std::string& run : db_.ActiveRunsOf("e1")) seen.push_back(run);
    });
    reader.join();
    return seen;
  };
  EXPECT_THAT(read(), ElementsAre("JOB_STATE_QUEUED", "-"));
  txn->Commit();
  EXPECT_THAT(read(), ElementsAre("JOB_STATE_LEASED", "JOB_STATE_QUEUED", "ra"));
}

TEST_F(JobDbTest, BulkLoadFillsAnEmptyJobDbAndAnAbortEmptiesItAgain) {
  const int64_t version = db_.Version();
  auto load = [&](JobDb::Txn& txn) {
    ASSERT_NE(txn.ApplyJobRow(Row("a"), 1, Spec("a").get()), nullptr);
    ASSERT_NE(txn.ApplyJobRow(Row("b", v1::JOB_STATE_RUNNING), 1, Spec("b").get()), nullptr);
    ASSERT_TRUE(txn.ApplyRunRow(RunRow("rb", "b", v1::RUN_STATE_RUNNING, "e1"), 1));
    EXPECT_THAT(Ids(txn.Queued("q")), ElementsAre("a"));
    EXPECT_EQ(txn.FindJobByRun("rb"), txn.FindJob("b"));
  };
  {
    std::unique_ptr<JobDb::Txn> txn = db_.Begin(/*bulk_load=*/true);
    load(*txn);
    txn->Abort();
  }
  EXPECT_EQ(db_.Version(), version);
  EXPECT_EQ(db_.size(), 0u);
  EXPECT_EQ(db_.FindJob("a"), nullptr);
  EXPECT_EQ(db_.FindJobByRun("rb"), nullptr);
  EXPECT_THAT(db_.ActiveRunsOf("e1"), IsEmpty());
  EXPECT_THAT(Queued(), IsEmpty());
  EXPECT_TRUE(db_.QueuedDemand("q").IsZero());
  EXPECT_EQ(db_.template_count(), 0u);

  std::unique_ptr<JobDb::Txn> txn = db_.Begin(/*bulk_load=*/true);
  load(*txn);
  txn->Commit();
  EXPECT_GT(db_.Version(), version);
  EXPECT_EQ(db_.size(), 2u);
  EXPECT_THAT(Queued(), ElementsAre("a"));
  EXPECT_EQ(db_.QueuedDemand("q").Get(ResourceNames::kCpu), Quantity::FromUnits(2));
  EXPECT_THAT(db_.ActiveRunsOf("e1"), ElementsAre("rb"));
  EXPECT_EQ(db_.FindJobByRun("rb"), db_.FindJob("b"));
}

TEST_F(JobDbTest, UncommittedReorderingMergesWithTheCommittedOrder) {
  Add(Row("a", v1::JOB_STATE_QUEUED, 1));
  Add(Row("b", v1::JOB_STATE_QUEUED, 2));
  Add(Row("c", v1::JOB_STATE_QUEUED, 3));
  Add(Row("d", v1::JOB_STATE_QUEUED, 4));
  std::unique_ptr<JobDb::Txn> txn = db_.Begin();
  ASSERT_TRUE(txn->ApplyJobRow(Row("d", v1::JOB_STATE_QUEUED, 0), 2, nullptr));
  ASSERT_TRUE(txn->ApplyJobRow(Row("b", v1::JOB_STATE_QUEUED, 9), 2, nullptr));
  ASSERT_TRUE(txn->ApplyJobRow(Row("e", v1::JOB_STATE_QUEUED, 3, "", kT0 - absl::Seconds(1)), 2,
                               Spec("e").get()));
  EXPECT_THAT(Ids(txn->Queued("q")), ElementsAre("d", "a", "e", "c", "b"));
  txn->Commit();
  EXPECT_THAT(Queued(), ElementsAre("d", "a", "e", "c", "b"));
}

// ---- Gangs, demand and the round's views
// ---------------------------------------------------------

TEST_F(JobDbTest, GangIndexFindsMembersPerQueue) {
  auto member = [](const std::string& id, const std::string& gang) {
    auto spec = Spec(id);
    spec->mutable_gang()->set_id(gang);
    spec->mutable_gang()->set_cardinality(2);
    return spec;
  };
  store::SchedulerJobRow other_queue = Row("x1");
  other_queue.queue = "q2";
  Write([&](JobDb::Txn& txn) {
    ASSERT_TRUE(txn.ApplyJobRow(Row("m1"), 1, member("m1", "g").get()));
    ASSERT_TRUE(txn.ApplyJobRow(Row("m2", v1::JOB_STATE_RUNNING), 1, member("m2", "g").get()));
    ASSERT_TRUE(txn.ApplyJobRow(Row("h1"), 1, member("h1", "h").get()));
    ASSERT_TRUE(txn.ApplyJobRow(other_queue, 1, member("x1", "g").get()));
    ASSERT_TRUE(txn.ApplyJobRow(Row("solo"), 1, Spec("solo").get()));
  });
  std::unique_ptr<JobDb::Txn> txn = db_.Begin();
  EXPECT_THAT(Ids(txn->GangMembers("q", "g")), UnorderedElementsAre("m1", "m2"));
  EXPECT_THAT(Ids(txn->GangMembers("q", "h")), ElementsAre("h1"));
  EXPECT_THAT(Ids(txn->GangMembers("q2", "g")), ElementsAre("x1"));
  EXPECT_THAT(Ids(txn->GangMembers("q", "nope")), IsEmpty());
  // A member joining in the transaction is a member at once; compacted members leave.
  ASSERT_TRUE(txn->ApplyJobRow(Row("m3"), 2, member("m3", "g").get()));
  txn->RecordJobDecision("m1", Decision::kCancelled, v1::JOB_STATE_CANCELLED, 2);
  txn->Compact(2);
  EXPECT_THAT(Ids(txn->GangMembers("q", "g")), UnorderedElementsAre("m2", "m3"));
  txn->Commit();
  EXPECT_THAT(Ids(db_.Begin()->GangMembers("q", "g")), UnorderedElementsAre("m2", "m3"));
}

TEST_F(JobDbTest, QueuedDemandFollowsTheQueuedSet) {
  auto cpu = [](const ResourceList& list) { return list.Get(ResourceNames::kCpu).milli(); };
  Write([&](JobDb::Txn& txn) {
    ASSERT_TRUE(txn.ApplyJobRow(Row("a"), 1, Spec("a", {{"cpu", "1"}}).get()));
    ASSERT_TRUE(txn.ApplyJobRow(Row("b"), 1, Spec("b", {{"cpu", "2"}}).get()));
    ASSERT_TRUE(txn.ApplyJobRow(Row("c", v1::JOB_STATE_RUNNING), 1, Spec("c").get()));
  });
  EXPECT_EQ(cpu(db_.Begin()->QueuedDemand("q")), 3000);
  EXPECT_TRUE(db_.Begin()->QueuedDemand("nope").IsZero());

  std::unique_ptr<JobDb::Txn> txn = db_.Begin();
  txn->RecordLease(
      "a", RunRecord{"ra", "a", "e1", "n1", "default", v1::RUN_STATE_LEASED, kT0, std::nullopt}, 0);
  EXPECT_EQ(cpu(txn->QueuedDemand("q")), 2000);
  store::SchedulerJobRow cancel = Row("b");
  cancel.cancel_requested = true;
  ASSERT_TRUE(txn->ApplyJobRow(cancel, 2, nullptr));
  EXPECT_TRUE(txn->QueuedDemand("q").IsZero());
  txn->RecordJobDecision("c", Decision::kRequeued, v1::JOB_STATE_QUEUED, 0);  // 2 cpu
  ASSERT_TRUE(txn->ApplyJobRow(Row("d"), 2, Spec("d", {{"cpu", "500m"}}).get()));
  EXPECT_EQ(cpu(txn->QueuedDemand("q")), 2500);
  // Committed demand unchanged until commit.
  EXPECT_EQ(cpu(db_.QueuedDemand("q")), 3000);
  txn->Commit();
  EXPECT_EQ(cpu(db_.QueuedDemand("q")), 2500);
  EXPECT_EQ(cpu(db_.Begin()->QueuedDemand("q")), 2500);
}

TEST_F(JobDbTest, QueuedJobIteratorGivesTheRoundItsViewAndSkipsLeasedJobs) {
  Add(Row("a", v1::JOB_STATE_QUEUED, 0));
  Add(Row("b", v1::JOB_STATE_QUEUED, 1));
  Add(Row("c", v1::JOB_STATE_QUEUED, 2));
  ASSERT_TRUE(ApplyRunRow(RunRow("old", "c", v1::RUN_STATE_LEASE_EXPIRED, "e1", "bad-node"), 2));
  std::unique_ptr<JobDb::Txn> txn = db_.Begin();
  auto pull = [&] {
    std::vector<const QueuedJob*> jobs;
    std::unique_ptr<QueuedJobIterator> it = txn->QueuedJobs("q");
    while (const QueuedJob* job = it->Next()) jobs.push_back(job);
    std::vector<std::string> ids;
    for (const QueuedJob* job : jobs) {
      EXPECT_EQ(job->tmpl, &txn->FindJob(job->id)->tmpl->round);
      ids.emplace_back(job->id);
      if (job->id == "c") {
        EXPECT_THAT(*job->avoid_nodes, ElementsAre("bad-node"));
      } else {
        EXPECT_EQ(job->avoid_nodes, nullptr);
      }
    }
    return ids;
  };
  EXPECT_THAT(pull(), ElementsAre("a", "b", "c"));
  txn->RecordLease(
      "b", RunRecord{"rb", "b", "e1", "n1", "default", v1::RUN_STATE_LEASED, kT0, std::nullopt}, 0);
  EXPECT_THAT(pull(), ElementsAre("a", "c"));
  txn->Abort();
  EXPECT_THAT(Queued(), ElementsAre("a", "b", "c"));
}

TEST_F(JobDbTest, RunningJobsOfAPoolWithTheirNodes) {
  Add(Row("a", v1::JOB_STATE_RUNNING));
  Add(Row("b", v1::JOB_STATE_RUNNING));
  Add(Row("c", v1::JOB_STATE_RUNNING));
  store::SchedulerRunRow other_pool = RunRow("rc", "c", v1::RUN_STATE_RUNNING, "e1", "n1");
  other_pool.pool = "gpu";
  ASSERT_TRUE(ApplyRunRow(RunRow("ra", "a", v1::RUN_STATE_RUNNING, "e1", "n1"), 2));
  ASSERT_TRUE(ApplyRunRow(RunRow("rb", "b", v1::RUN_STATE_PENDING, "e1", "n2"), 2));
  ASSERT_TRUE(ApplyRunRow(RunRow("rb-old", "b", v1::RUN_STATE_FAILED, "e1", "n1"), 2));
  ASSERT_TRUE(ApplyRunRow(other_pool, 2));
  std::unique_ptr<JobDb::Txn> txn = db_.Begin();
  auto node_index = [](absl::string_view node) { return node == "n1" ? 0 : node == "n2" ? 1 : -1; };
  std::vector<RunningJob> running = txn->RunningJobs("default", node_index);
  std::vector<std::string> seen;
  for (const RunningJob& r : running) {
    seen.push_back(absl::StrCat(r.id, "@", r.node_index, "/", r.queue));
    EXPECT_EQ(r.tmpl, &txn->FindJob(r.id)->tmpl->round);
  }
  EXPECT_THAT(seen, UnorderedElementsAre("a@0/q", "b@1/q"));
  EXPECT_EQ(txn->RunningJobs("gpu", node_index).size(), 1u);
}

TEST_F(JobDbTest, APreemptedJobsRoomIsFreeAtOnceAnEndingJobHoldsItsUntilItsRunEnds) {
  for (const char* id : {"running", "decided", "viewed", "cancelled", "asked"}) {
    Add(Row(id, v1::JOB_STATE_RUNNING));
    ASSERT_TRUE(ApplyRunRow(RunRow(absl::StrCat("r-", id), id, v1::RUN_STATE_RUNNING), 2));
  }
  // Preempted by the scheduler, before and after the views include it: the round gave the
  // room to the preemptor, so neither counts although its run is still ending.
  RecordJobDecision("decided", Decision::kPreempted, v1::JOB_STATE_PREEMPTED, 10);
  ASSERT_TRUE(ApplyJobRow(Row("viewed", v1::JOB_STATE_PREEMPTED), 10));
  EXPECT_EQ(db_.FindJob("viewed")->decision, Decision::kNone);
  // Cancelled (in the views) or asked to be cancelled: the room stays held, by no victim.
  ASSERT_TRUE(ApplyJobRow(Row("cancelled", v1::JOB_STATE_CANCELLED), 10));
  store::SchedulerJobRow asked = Row("asked", v1::JOB_STATE_RUNNING);
  asked.cancel_requested = true;
  ASSERT_TRUE(ApplyJobRow(asked, 10));

  std::unique_ptr<JobDb::Txn> txn = db_.Begin();
  std::vector<std::string> seen;
  for (const RunningJob& r : txn->RunningJobs("default", [](absl::string_view) { return 0; })) {
    seen.push_back(absl::StrCat(r.id, r.leaving ? " leaving" : ""));
  }
  EXPECT_THAT(seen, UnorderedElementsAre("running", "cancelled leaving", "asked leaving"));
}

// ---- Change notification ----------------------------------------------------------------------

TEST_F(JobDbTest, VersionChangesWithEveryMutationAndWakesWaiters) {
  int64_t version = db_.Version();
  Add(Row("j"));
  EXPECT_GT(db_.Version(), version);
  version = db_.Version();
  ASSERT_TRUE(ApplyRunRow(RunRow("r", "j", v1::RUN_STATE_RUNNING), 2));
  EXPECT_GT(db_.Version(), version);
  version = db_.Version();
  RecordRunState("r", v1::RUN_STATE_LEASE_EXPIRED, std::nullopt);
  EXPECT_GT(db_.Version(), version);

  // No change: the wait ends at the deadline with the same version.
  version = db_.Version();
  const absl::Time start = absl::Now();
  EXPECT_EQ(db_.WaitForChange(version, start + absl::Milliseconds(50)), version);
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(40));

  // A change from another thread wakes the waiter long before its deadline.
  std::thread writer([&] {
    absl::SleepFor(absl::Milliseconds(20));
    ApplyJobRow(Row("j", v1::JOB_STATE_QUEUED, 5), 3);
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
