// End to end: priority classes, urgency preemption and the submit check with the built binary
// (`regatta up`, one 2-cpu node of the local executor).
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/up_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

class SchedulingTest : public UpFixture {
 protected:
  std::vector<std::string> ExtraUpArgs() const override {
    return {"--set", "executor.nodes=[{name: n1, resources: {cpu: \"2\", memory: 4Gi}}]",
            // Rejections wait one executor timeout after start; keep it short (the embedded
            // executor asks for leases far more often than this).
            "--set", "scheduling.executorTimeout=3s", "--set", "executor.heartbeat=500ms", "--set",
            "executor.terminationGrace=1s"};
  }

  std::string Why(const std::string& id) {
    RunResult r = Cli({"why", id, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json report = json::parse(r.out, nullptr, false);
    return report.is_object() ? report.value("summary", "") : r.out;
  }

  // Two preemptible (class priority 900) one-cpu `sleep 600` jobs of `queue` fill the node.
  std::pair<std::string, std::string> FillNode(const std::string& queue) {
    const std::string job =
        "  - command: [\"/bin/sleep\", \"600\"]\n"
        "    priorityClass: preemptible\n"
        "    resources: {requests: {cpu: \"1\", memory: 64Mi}}\n";
    std::string a = Submit(queue, job);
    std::string b = Submit(queue, job);
    EXPECT_EQ(WaitForState(a, {"JOB_STATE_RUNNING"}), "JOB_STATE_RUNNING");
    EXPECT_EQ(WaitForState(b, {"JOB_STATE_RUNNING"}), "JOB_STATE_RUNNING");
    return {a, b};
  }
};

TEST_F(SchedulingTest, HigherClassPreemptsTheYoungestLowerClassJobOfTheSameQueue) {
  ASSERT_EQ(Cli({"queue", "create", "batch"}).exit_code, 0);
  auto [older, younger] = FillNode("batch");
  // A default-class job (priority 1000) of the same queue: the queue is within its share, so
  // only urgency can make room, and it takes the younger job only.
  const std::string u = Submit("batch",
                               "  - command: [\"/bin/true\"]\n"
                               "    resources: {requests: {cpu: \"1\", memory: 64Mi}}\n");
  EXPECT_EQ(WaitForState(u, {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"}), "JOB_STATE_SUCCEEDED");
  EXPECT_EQ(WaitForState(younger, {"JOB_STATE_PREEMPTED"}, std::chrono::seconds(10)),
            "JOB_STATE_PREEMPTED");
  EXPECT_EQ(JobState(older), "JOB_STATE_RUNNING");
  const std::string why = Why(younger);
  EXPECT_THAT(why, HasSubstr("urgency"));
  EXPECT_THAT(why, HasSubstr(absl::StrCat("preempted by job ", u, " of queue batch")));
  ASSERT_EQ(Cli({"cancel", older}).exit_code, 0);
}

TEST_F(SchedulingTest, AQueueOverItsFairShareGivesRoomToAQueueUnderIts) {
  ASSERT_EQ(Cli({"queue", "create", "batch"}).exit_code, 0);
  ASSERT_EQ(Cli({"queue", "create", "other"}).exit_code, 0);
  auto [older, younger] = FillNode("batch");
  // Queue other arrives: batch holds the whole pool, twice its fair share of 1/2.
  const std::string o = Submit("other",
                               "  - command: [\"/bin/sleep\", \"600\"]\n"
                               "    priorityClass: preemptible\n"
                               "    resources: {requests: {cpu: \"1\", memory: 64Mi}}\n");
  EXPECT_EQ(WaitForState(o, {"JOB_STATE_RUNNING"}), "JOB_STATE_RUNNING");
  EXPECT_EQ(WaitForState(younger, {"JOB_STATE_PREEMPTED"}, std::chrono::seconds(10)),
            "JOB_STATE_PREEMPTED");
  EXPECT_EQ(JobState(older), "JOB_STATE_RUNNING");  // batch keeps its fair share
  const std::string why = Why(younger);
  EXPECT_THAT(why, HasSubstr("fair share: queue batch holds 1.00 of the pool"));
  EXPECT_THAT(why, HasSubstr(absl::StrCat("preempted by job ", o, " of queue other")));
  // Each queue now holds its fair share: nothing more is preempted.
  RunResult r = Cli({"queue", "report", "-o", "json"});
  json report = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(report.is_object()) << r.out;
  for (const json& q : report["queues"]) {
    EXPECT_DOUBLE_EQ(q["fairShare"].get<double>(), 0.5) << r.out;
  }
  ASSERT_EQ(Cli({"cancel", older, o}).exit_code, 0);
}

TEST_F(SchedulingTest, AQueuesLimitForAClassKeepsItToItsFraction) {
  // The queue may hold half the pool's cpu in class preemptible: one of its two jobs waits.
  ASSERT_EQ(Cli({"queue", "create", "capped", "--limit", "preemptible:cpu=0.5"}).exit_code, 0);
  const std::string job =
      "  - command: [\"/bin/sleep\", \"600\"]\n"
      "    priorityClass: preemptible\n"
      "    resources: {requests: {cpu: \"1\", memory: 64Mi}}\n";
  const std::string a = Submit("capped", job);
  const std::string b = Submit("capped", job);
  ASSERT_EQ(WaitForState(a, {"JOB_STATE_RUNNING"}), "JOB_STATE_RUNNING");
  std::string why;
  for (int i = 0; i < 100 && why.find("QUEUE_FRACTION_LIMIT") == std::string::npos; ++i) {
    RunResult r = Cli({"why", b});
    why = r.out;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_THAT(why, HasSubstr("QUEUE_FRACTION_LIMIT"));
  EXPECT_THAT(why, HasSubstr("in class preemptible"));
  EXPECT_EQ(JobState(b), "JOB_STATE_QUEUED");
  ASSERT_EQ(Cli({"cancel", a, b}).exit_code, 0);
}

TEST_F(SchedulingTest, AJobNoNodeCanEverRunIsRejectedWithTheReasonPerPool) {
  ASSERT_EQ(Cli({"queue", "create", "gpu"}).exit_code, 0);
  const std::string id = Submit("gpu",
                                "  - command: [\"/bin/true\"]\n"
                                "    nodeSelector: {gpu: a100}\n"
                                "    resources: {requests: {cpu: 100m, memory: 64Mi}}\n");
  EXPECT_EQ(WaitForState(id, {"JOB_STATE_REJECTED"}, std::chrono::seconds(30)),
            "JOB_STATE_REJECTED");
  const std::string why = Why(id);
  EXPECT_THAT(why, HasSubstr("pool default"));
  EXPECT_THAT(why, HasSubstr("node selector gpu=a100 does not match"));
  // A job that fits still runs.
  const std::string ok = Submit("gpu",
                                "  - command: [\"/bin/true\"]\n"
                                "    resources: {requests: {cpu: 100m, memory: 64Mi}}\n");
  EXPECT_EQ(WaitForState(ok, {"JOB_STATE_SUCCEEDED"}), "JOB_STATE_SUCCEEDED");
}

}  // namespace
}  // namespace regatta::testing
