// End to end: cancel or preempt everything of a queue, or on an executor's node, with the
// built binary (`regatta up`, one 4-cpu node of the local executor) and the CLI.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/up_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;

class BulkTest : public UpFixture {
 protected:
  std::vector<std::string> ExtraUpArgs() const override {
    return {"--set", "executor.id=exec-e2e",
            "--set", "executor.nodes=[{name: n1, resources: {cpu: \"4\", memory: 4Gi}}]",
            "--set", "executor.terminationGrace=1s"};
  }

  // A one-cpu `sleep 600` job of `queue` in `priority_class`.
  std::string SubmitSleeper(const std::string& queue, const std::string& priority_class) {
    return Submit(queue, absl::StrCat("  - command: [\"/bin/sleep\", \"600\"]\n"
                                      "    priorityClass: ",
                                      priority_class,
                                      "\n"
                                      "    resources: {requests: {cpu: \"1\", memory: 64Mi}}\n"));
  }

  // Two running jobs of queue a (class preemptible) and two of queue b (class default) fill
  // the node.
  void FillNode() {
    ASSERT_EQ(Cli({"queue", "create", "a"}).exit_code, 0);
    ASSERT_EQ(Cli({"queue", "create", "b"}).exit_code, 0);
    for (int i = 0; i < 2; ++i) {
      a_.push_back(SubmitSleeper("a", "preemptible"));
      b_.push_back(SubmitSleeper("b", "default"));
    }
    for (const std::string& id : a_) {
      ASSERT_EQ(WaitForState(id, {"JOB_STATE_RUNNING"}), "JOB_STATE_RUNNING") << id;
    }
    for (const std::string& id : b_) {
      ASSERT_EQ(WaitForState(id, {"JOB_STATE_RUNNING"}), "JOB_STATE_RUNNING") << id;
    }
  }

  std::vector<std::string> a_;
  std::vector<std::string> b_;
};

TEST_F(BulkTest, PreemptingAClassOnTheExecutorsNodeTakesOnlyThoseJobs) {
  FillNode();
  RunResult r = Cli({"preempt", "--executor", "exec-e2e", "--node", "n1", "--priority-class",
                     "preemptible", "--reason", "node maintenance"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "preemption requested for 2 jobs on node n1 of executor exec-e2e (priority class "
            "preemptible)\n");
  for (const std::string& id : a_) {
    EXPECT_EQ(WaitForState(id, {"JOB_STATE_PREEMPTED"}, std::chrono::seconds(20)),
              "JOB_STATE_PREEMPTED")
        << id;
  }
  for (const std::string& id : b_) EXPECT_EQ(JobState(id), "JOB_STATE_RUNNING") << id;
  // Nothing of that class runs there any more; the node's other jobs remain.
  r = Cli({"preempt", "--executor", "exec-e2e", "--priority-class", "preemptible"});
  EXPECT_EQ(r.out,
            "preemption requested for 0 jobs on executor exec-e2e (priority class "
            "preemptible)\n");
  r = Cli({"cancel", "--executor", "exec-e2e", "--node", "n1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "cancel requested for 2 jobs on node n1 of executor exec-e2e\n");
  for (const std::string& id : b_) {
    EXPECT_EQ(WaitForState(id, {"JOB_STATE_CANCELLED"}, std::chrono::seconds(20)),
              "JOB_STATE_CANCELLED")
        << id;
  }
}

TEST_F(BulkTest, CancellingAQueueEndsItsRunningAndQueuedJobsOnly) {
  FillNode();
  // The node is full: this one waits in queue a.
  const std::string waiting = SubmitSleeper("a", "preemptible");
  ASSERT_EQ(WaitForState(waiting, {"JOB_STATE_QUEUED"}), "JOB_STATE_QUEUED");
  RunResult r = Cli({"cancel", "--queue", "a", "--reason", "drain"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "cancel requested for 3 jobs of queue a\n");
  a_.push_back(waiting);
  for (const std::string& id : a_) {
    EXPECT_EQ(WaitForState(id, {"JOB_STATE_CANCELLED"}, std::chrono::seconds(20)),
              "JOB_STATE_CANCELLED")
        << id;
  }
  for (const std::string& id : b_) EXPECT_EQ(JobState(id), "JOB_STATE_RUNNING") << id;
  // Terminal jobs are never touched again; the HTTP API answers the same way.
  r = Cli({"cancel", "--queue", "a"});
  EXPECT_EQ(r.out, "cancel requested for 0 jobs of queue a\n");
  RunResult http = RunProcess({"/usr/bin/curl", "-sS", "-X", "POST", "-d", "{}",
                               absl::StrCat("http://", http_, "/v1/queues/b:preempt")},
                              (dir_ / "scratch").string());
  ASSERT_EQ(http.exit_code, 0) << http.err;
  EXPECT_THAT(http.out, HasSubstr("\"preemptRequestedCount\":2"));
  for (const std::string& id : b_) {
    EXPECT_EQ(WaitForState(id, {"JOB_STATE_PREEMPTED"}, std::chrono::seconds(20)),
              "JOB_STATE_PREEMPTED")
        << id;
  }
}

}  // namespace
}  // namespace regatta::testing
