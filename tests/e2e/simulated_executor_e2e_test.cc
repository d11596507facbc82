// End to end: `regatta up` without its embedded executor plus `regatta executor --simulated`,
// the built binary over the real executor API: many simulated jobs succeed, an exit-code
// annotation fails its job like a process would.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/up_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::StartsWith;
using json = nlohmann::json;

class SimulatedExecutorTest : public UpFixture {
 protected:
  std::vector<std::string> ExtraUpArgs() const override {
    return {"--set", "executor.embedded=false"};
  }

  void SetUp() override {
    UpFixture::SetUp();
    if (HasFatalFailure()) return;
    executor_ = std::make_unique<Child>();
    ASSERT_TRUE(executor_->Start(
        {RegattaBinary(), "--server", grpc_, "executor", "--simulated", "--nodes", "50",
         "--node-cpu", "4", "--node-memory", "16Gi", "--set", "executor.heartbeat=200ms"},
        (dir_ / "executor.stderr").string()));
    ASSERT_TRUE(executor_->WaitForLine("executor is running", std::chrono::seconds(30)))
        << Slurp((dir_ / "executor.stderr").string());
  }

  void TearDown() override {
    executor_.reset();
    UpFixture::TearDown();
  }

  json Job(const std::string& id) {
    RunResult r = Cli({"jobs", "get", id, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }

  std::unique_ptr<Child> executor_;
};

TEST_F(SimulatedExecutorTest, FiveHundredJobsOnFiftySimulatedNodesAllSucceed) {
  ASSERT_EQ(Cli({"queue", "create", "sim"}).exit_code, 0);
  // 500 one-cpu jobs of 200 ms on 50 x 4 cpu: at least three rounds of the nodes.
  RunResult submit = Cli({"submit", "-", "-o", "json"},
                         "queue: sim\njobSet: many\njobs:\n"
                         "  - command: [/bin/true]\n"
                         "    resources: {requests: {cpu: '1', memory: 1Gi}}\n"
                         "    annotations: {regatta.io/simulated-duration: 200ms}\n"
                         "    count: 500\n");
  ASSERT_EQ(submit.exit_code, 0) << submit.err;
  json submitted = json::parse(submit.out, nullptr, false);
  ASSERT_TRUE(submitted.is_object());
  ASSERT_EQ(submitted["items"].size(), 500u);

  // watch ends 0 once every job of the set has ended and all succeeded.
  RunResult watch = Cli({"watch", "sim", "many", "--timeout", "120s"});
  ASSERT_EQ(watch.exit_code, 0) << watch.out.substr(
                                       watch.out.size() > 2000 ? watch.out.size() - 2000 : 0)
                                << watch.err;
  for (int i : {0, 250, 499}) {
    const std::string id = submitted["items"][i].value("jobId", "");
    json job = Job(id);
    EXPECT_EQ(job["summary"].value("state", ""), "JOB_STATE_SUCCEEDED") << id;
    ASSERT_EQ(job["runs"].size(), 1u);
    EXPECT_THAT(job["runs"][0].value("nodeId", ""), StartsWith("sim-")) << job.dump();
  }
}

TEST_F(SimulatedExecutorTest, TheExitCodeAnnotationFailsTheJobWithAContainerError) {
  ASSERT_EQ(Cli({"queue", "create", "sim"}).exit_code, 0);
  const std::string failing = Submit("sim",
                                     "  - command: [/bin/true]\n"
                                     "    annotations: {regatta.io/simulated-duration: 100ms,\n"
                                     "                  regatta.io/simulated-exit-code: '7'}\n");
  const std::string lasting = Submit("sim",
                                     "  - command: [/bin/true]\n"
                                     "    annotations: {regatta.io/simulated-duration: 1h}\n");
  EXPECT_EQ(WaitForState(failing, {"JOB_STATE_FAILED", "JOB_STATE_SUCCEEDED"}), "JOB_STATE_FAILED");
  json job = Job(failing);
  EXPECT_EQ(job["error"].value("reason", ""), "ERROR_REASON_CONTAINER_ERROR");
  EXPECT_EQ(job["error"].value("exitCode", 0), 7);
  EXPECT_EQ(job["runs"].size(), 1u);  // an exit code is terminal: no retry

  // A long simulated run is running until cancelled, and ends at once when it is.
  EXPECT_EQ(WaitForState(lasting, {"JOB_STATE_RUNNING"}), "JOB_STATE_RUNNING");
  ASSERT_EQ(Cli({"cancel", lasting}).exit_code, 0);
  EXPECT_EQ(WaitForState(lasting, {"JOB_STATE_CANCELLED"}, std::chrono::seconds(10)),
            "JOB_STATE_CANCELLED");
}

// `regatta up --simulated-nodes N`: the embedded executor is the simulated one.
class UpWithSimulatedNodesTest : public UpFixture {
 protected:
  std::vector<std::string> ExtraUpArgs() const override { return {"--simulated-nodes", "3"}; }
};

TEST_F(UpWithSimulatedNodesTest, JobsRunOnTheEmbeddedSimulatedNodes) {
  ASSERT_EQ(Cli({"queue", "create", "sim"}).exit_code, 0);
  const std::string id = Submit("sim",
                                "  - command: [/no/such/program]\n"
                                "    annotations: {regatta.io/simulated-duration: 50ms}\n");
  // Nothing is executed: a job no process could run succeeds on a simulated node.
  EXPECT_EQ(WaitForState(id, {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"}), "JOB_STATE_SUCCEEDED");
  RunResult r = Cli({"jobs", "get", id, "-o", "json"});
  json job = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(job.is_object()) << r.out;
  EXPECT_THAT(job["runs"][0].value("nodeId", ""), StartsWith("sim-000"));
}

}  // namespace
}  // namespace regatta::testing
