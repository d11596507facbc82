// End to end: jobs actually run. The built `regatta` binary as `regatta up` (embedded executor)
// or as `regatta server` + `regatta executor --local`, driven by the CLI; processes, kill -9 of
// either side, restarts.
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/execution_fixture.h"
#include "tests/e2e/process.h"

namespace regatta::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(ExecutionTest, ThousandTrueJobsAcrossThreeQueuesSucceedWithCompleteEventSequences) {
  StartServer("up");
  std::map<std::string, int> per_queue = {{"q1", 334}, {"q2", 333}, {"q3", 333}};
  for (const auto& [queue, count] : per_queue) {
    ASSERT_EQ(Cli({"queue", "create", queue}).exit_code, 0);
    std::vector<std::string> ids = Submit(absl::StrCat(
        "queue: ", queue, "\njobSet: bulk\njobs:\n  - command: [/bin/true]\n",
        "    resources: {requests: {cpu: 10m, memory: 8Mi}}\n", "    count: ", count, "\n"));
    ASSERT_EQ(ids.size(), static_cast<size_t>(count));
  }
  for (const auto& [queue, count] : per_queue) {
    RunResult watch = Cli({"watch", queue, "bulk", "--timeout", "180s"});
    ASSERT_EQ(watch.exit_code, 0) << watch.out.substr(
                                         watch.out.size() > 2000 ? watch.out.size() - 2000 : 0)
                                  << watch.err;
    auto types = TypesByJob(Events(queue, "bulk"));
    ASSERT_EQ(types.size(), static_cast<size_t>(count));
    for (const auto& [job, sequence] : types) {
      EXPECT_THAT(sequence, ElementsAre("SUBMITTED", "QUEUED", "LEASED", "PENDING", "RUNNING",
                                        "RUN_SUCCEEDED", "SUCCEEDED"))
          << "job " << job;
    }
  }
}

TEST_F(ExecutionTest, ExitCodeDeadlineAndCannotExecuteFailTheJobWithTheirReason) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids = Submit(
      "queue: q\njobSet: fail\njobs:\n"
      "  - command: [sh, -c, 'echo about to fail; exit 3']\n"
      "  - command: [sleep, '30']\n    activeDeadline: 1s\n    terminationGracePeriod: 1s\n"
      "  - command: [/no/such/program]\n");
  ASSERT_EQ(ids.size(), 3u);
  for (const std::string& id : ids)
    EXPECT_EQ(WaitForState(id, "JOB_STATE_FAILED"), "JOB_STATE_FAILED");

  json exit3 = Job(ids[0]);
  EXPECT_EQ(exit3["error"].value("reason", ""), "ERROR_REASON_CONTAINER_ERROR");
  EXPECT_EQ(exit3["error"].value("exitCode", 0), 3);
  EXPECT_EQ(exit3["error"].value("category", ""), "ContainerError");
  EXPECT_EQ(exit3["runs"].size(), 1u);  // a user exit code is terminal: no retry
  EXPECT_EQ(Cli({"logs", ids[0]}).out, "about to fail\n");

  json deadline = Job(ids[1]);
  EXPECT_EQ(deadline["error"].value("reason", ""), "ERROR_REASON_DEADLINE_EXCEEDED");
  json cannot = Job(ids[2]);
  EXPECT_EQ(cannot["error"].value("reason", ""), "ERROR_REASON_CANNOT_EXECUTE");
  EXPECT_THAT(cannot["error"].value("message", ""), HasSubstr("/no/such/program"));

  RunResult watch = Cli({"watch", "q", "fail", "--timeout", "10s"});
  EXPECT_EQ(watch.exit_code, 1) << watch.out;
  EXPECT_THAT(watch.out, HasSubstr("exit code 3"));
}

TEST_F(ExecutionTest, CancellingARunningJobKillsItsWholeProcessGroup) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids = Submit(
      "queue: q\njobSet: c\njobs:\n"
      "  - command: [sh, -c, 'echo $$; sleep 600 & sleep 600 & wait']\n"
      "    terminationGracePeriod: 2s\n");
  ASSERT_EQ(ids.size(), 1u);
  ASSERT_EQ(WaitForState(ids[0], "JOB_STATE_RUNNING"), "JOB_STATE_RUNNING");
  const int pgid = PidFromLog(ids[0]);
  ASSERT_GT(pgid, 0);
  // The shell and both sleeps.
  for (int i = 0; i < 50 && ProcessesInGroup(pgid).size() < 3; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(ProcessesInGroup(pgid).size(), 3u);

  ASSERT_EQ(Cli({"cancel", ids[0]}).exit_code, 0);
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_CANCELLED"), "JOB_STATE_CANCELLED");
  for (int i = 0; i < 100 && !ProcessesInGroup(pgid).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_THAT(ProcessesInGroup(pgid), ::testing::IsEmpty());
  auto types = TypesByJob(Events("q", "c"))[ids[0]];
  EXPECT_THAT(types, ::testing::IsSupersetOf({"CANCELLING", "CANCELLED"}));
  // The run ends CANCELLED once the executor has stopped it.
  WaitForFirstRunState(ids[0], "RUN_STATE_CANCELLED");
  EXPECT_EQ(Job(ids[0])["runs"][0].value("state", ""), "RUN_STATE_CANCELLED");
}

TEST_F(ExecutionTest, PreemptingARunningJobStopsItAndEndsItPreempted) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids = Submit(
      "queue: q\njobSet: p\njobs:\n"
      "  - command: [sh, -c, 'echo $$; trap \"echo got TERM; exit 143\" TERM; sleep 600 & wait']\n"
      "    terminationGracePeriod: 5s\n");
  ASSERT_EQ(WaitForState(ids[0], "JOB_STATE_RUNNING"), "JOB_STATE_RUNNING");
  const int pgid = PidFromLog(ids[0]);
  ASSERT_GT(pgid, 0);
  ASSERT_EQ(Cli({"preempt", ids[0], "--reason", "maintenance"}).exit_code, 0);
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_PREEMPTED"), "JOB_STATE_PREEMPTED");
  for (int i = 0; i < 100 && !ProcessesInGroup(pgid).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_THAT(ProcessesInGroup(pgid), ::testing::IsEmpty());
  WaitForFirstRunState(ids[0], "RUN_STATE_PREEMPTED");
  json job = Job(ids[0]);
  EXPECT_EQ(job["runs"][0].value("state", ""), "RUN_STATE_PREEMPTED");
  EXPECT_THAT(job["error"].value("message", ""), HasSubstr("maintenance"));
  // The process got SIGTERM first (its trap ran), not an immediate SIGKILL.
  EXPECT_THAT(Cli({"logs", ids[0]}).out, HasSubstr("got TERM"));
  auto types = TypesByJob(Events("q", "p"))[ids[0]];
  EXPECT_THAT(types, ::testing::IsSupersetOf({"PREEMPTING", "PREEMPTED"}));
}

TEST_F(ExecutionTest, ReprioritizeReordersQueuedJobs) {
  // One node with one cpu: jobs of one cpu run one at a time, in queue order.
  StartServer("up", {"executor.nodes=[{name: solo, resources: {cpu: '1', memory: 1Gi}}]"});
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> blocker = Submit(
      "queue: q\njobSet: order\njobs:\n  - command: [sleep, '2']\n"
      "    resources: {requests: {cpu: '1', memory: 10Mi}}\n");
  ASSERT_EQ(WaitForState(blocker[0], "JOB_STATE_RUNNING"), "JOB_STATE_RUNNING");
  std::vector<std::string> queued = Submit(
      "queue: q\njobSet: order\njobs:\n  - command: [/bin/true]\n"
      "    resources: {requests: {cpu: '1', memory: 10Mi}}\n    priority: 5\n    count: 3\n");
  ASSERT_EQ(queued.size(), 3u);
  // The last submitted goes first.
  ASSERT_EQ(Cli({"reprioritize", queued[2], "--priority", "1"}).exit_code, 0)
      << Cli({"reprioritize", "--help"}).out;
  for (const std::string& id : queued) {
    EXPECT_EQ(WaitForState(id, "JOB_STATE_SUCCEEDED"), "JOB_STATE_SUCCEEDED");
  }
  std::vector<std::string> leased;
  for (const json& e : Events("q", "order")) {
    if (e.value("type", "") == "JOB_EVENT_TYPE_LEASED") leased.push_back(e.value("jobId", ""));
  }
  EXPECT_THAT(leased, ElementsAre(blocker[0], queued[2], queued[0], queued[1]));
}

TEST_F(ExecutionTest, KillNineOfTheExecutorExpiresItsRunsWhichAreRetriedWhenAnExecutorReturns) {
  StartServer("server", {"scheduling.executorTimeout=2s"});
  StartExecutor();
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids =
      Submit("queue: q\njobSet: e\njobs:\n  - command: [sh, -c, 'echo $$; sleep 3']\n");
  ASSERT_EQ(WaitForState(ids[0], "JOB_STATE_RUNNING"), "JOB_STATE_RUNNING");
  const int first_pgid = PidFromLog(ids[0]);
  ASSERT_GT(first_pgid, 0);
  executor_->Kill(SIGKILL);
  // Expired after the timeout and requeued (no executor to run it).
  for (int i = 0; i < 100; ++i) {
    auto types = TypesByJob(Events("q", "e"))[ids[0]];
    if (std::find(types.begin(), types.end(), "REQUEUED") != types.end()) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  auto types = TypesByJob(Events("q", "e"))[ids[0]];
  EXPECT_THAT(types, ::testing::IsSupersetOf({"LEASE_EXPIRED", "REQUEUED"}));
  EXPECT_EQ(JobState(ids[0]), "JOB_STATE_QUEUED");

  StartExecutor();
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_SUCCEEDED"), "JOB_STATE_SUCCEEDED");
  json job = Job(ids[0]);
  ASSERT_EQ(job["runs"].size(), 2u);
  EXPECT_EQ(job["runs"][0].value("state", ""), "RUN_STATE_LEASE_EXPIRED");
  EXPECT_EQ(job["runs"][1].value("state", ""), "RUN_STATE_SUCCEEDED");
  // The orphan of the first run was killed by the executor that came back.
  EXPECT_THAT(ProcessesInGroup(first_pgid), ::testing::IsEmpty());
}

TEST_F(ExecutionTest, KillNineOfTheServerMidRunLosesNoJobAndNoRunResult) {
  const int port = FreePort();
  StartServer("server", {}, port);
  StartExecutor({"executor.heartbeat=500ms"});
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids = Submit(
      "queue: q\njobSet: s\njobs:\n  - command: [sh, -c, 'sleep 1.5; echo done']\n"
      "    resources: {requests: {cpu: 10m, memory: 8Mi}}\n    count: 20\n");
  ASSERT_EQ(ids.size(), 20u);
  ASSERT_EQ(WaitForState(ids[0], "JOB_STATE_RUNNING"), "JOB_STATE_RUNNING");
  server_->Kill(SIGKILL);
  // The runs finish while the server is down; the executor keeps their results.
  std::this_thread::sleep_for(std::chrono::seconds(2));
  StartServer("server", {}, port);
  RunResult watch = Cli({"watch", "q", "s", "--timeout", "60s"});
  EXPECT_EQ(watch.exit_code, 0) << watch.out << watch.err;
  for (const std::string& id : ids) {
    json job = Job(id);
    EXPECT_EQ(job["summary"].value("state", ""), "JOB_STATE_SUCCEEDED") << id;
    // Each ran once: the result reported after the restart was not lost and not re-run.
    EXPECT_EQ(job["runs"].size(), 1u) << id;
  }
}

TEST_F(ExecutionTest, KillNineOfUpMidRunRetriesTheRunAfterTheRestart) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids =
      Submit("queue: q\njobSet: u\njobs:\n  - command: [sh, -c, 'echo $$; sleep 2']\n");
  ASSERT_EQ(WaitForState(ids[0], "JOB_STATE_RUNNING"), "JOB_STATE_RUNNING");
  const int pgid = PidFromLog(ids[0]);
  server_->Kill(SIGKILL);
  StartServer("up");
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_SUCCEEDED"), "JOB_STATE_SUCCEEDED");
  json job = Job(ids[0]);
  ASSERT_EQ(job["runs"].size(), 2u);
  EXPECT_EQ(job["runs"][0]["error"].value("reason", ""), "ERROR_REASON_EXECUTOR_LOST");
  EXPECT_THAT(ProcessesInGroup(pgid), ::testing::IsEmpty());
}

}  // namespace
}  // namespace regatta::testing
