// End to end: `regatta why` and `regatta queue report` (and their HTTP routes) from the built
// binary running `regatta up` with its local executor.
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

class ReportsTest : public UpFixture {};

TEST_F(ReportsTest, WhyAndQueueReport) {
  ASSERT_EQ(Cli({"queue", "create", "why"}).exit_code, 0);
  // No node of this machine has a thousand CPUs; the other job fits and runs.
  const std::string never = Submit("why",
                                   "  - command: [\"/bin/true\"]\n"
                                   "    resources: {requests: {cpu: \"1000\", memory: 64Mi}}\n");
  const std::string runs = Submit("why",
                                  "  - command: [\"/bin/sleep\", \"30\"]\n"
                                  "    resources: {requests: {cpu: 100m, memory: 64Mi}}\n");
  ASSERT_FALSE(never.empty());
  ASSERT_FALSE(runs.empty());
  ASSERT_EQ(WaitForState(runs, {"JOB_STATE_RUNNING"}), "JOB_STATE_RUNNING");

  // The unschedulable job: the CLI and the API name the rule that failed, per pool.
  RunResult r = Cli({"why", never});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("QUEUED"));
  EXPECT_THAT(r.out, HasSubstr("needs 1000 cpu"));
  HttpAnswer answer = Get(absl::StrCat("/v1/jobs/", never, "/report"));
  ASSERT_EQ(answer.status, 200) << answer.body;
  json report = json::parse(answer.body, nullptr, false);
  ASSERT_TRUE(report.is_object()) << answer.body;
  EXPECT_EQ(report["state"], "JOB_STATE_QUEUED");
  ASSERT_EQ(report["reasons"].size(), 1u) << answer.body;
  EXPECT_EQ(report["reasons"][0]["pool"], "default");
  EXPECT_EQ(report["reasons"][0]["code"], "NO_NODE_MATCHES");

  // The running job: where it runs.
  r = Cli({"why", runs, "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json running = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(running.is_object()) << r.out;
  EXPECT_THAT(running["summary"].get<std::string>(), HasSubstr("running on node"));
  EXPECT_FALSE(running.contains("reasons") && !running["reasons"].empty()) << r.out;

  // The queue holds what its running job requests, alone in the pool: fair share 1.
  r = Cli({"queue", "report", "why", "-o", "json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  json queues = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(queues.is_object()) << r.out;
  EXPECT_EQ(queues["schedulerReady"], true);
  ASSERT_EQ(queues["queues"].size(), 1u) << r.out;
  EXPECT_EQ(queues["queues"][0]["queue"], "why");
  EXPECT_EQ(queues["queues"][0]["pool"], "default");
  EXPECT_DOUBLE_EQ(queues["queues"][0]["fairShare"].get<double>(), 1.0);
  EXPECT_GT(queues["queues"][0]["actualShare"].get<double>(), 0.0);
  r = Cli({"queue", "report"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("FAIR SHARE"));
  answer = Get("/v1/reports/queues?queue=why");
  EXPECT_EQ(answer.status, 200) << answer.body;
  EXPECT_THAT(answer.body, HasSubstr("\"adjustedFairShare\""));

  // Bad input: unknown jobs are NOT_FOUND naming the field; unknown parameters are named.
  r = Cli({"why", "01NOSUCHJOB000000000000000"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));
  EXPECT_THAT(r.err, HasSubstr("job_id"));
  EXPECT_EQ(Get("/v1/jobs/01NOSUCHJOB000000000000000/report").status, 404);
  answer = Get("/v1/reports/queues?q=why");
  EXPECT_EQ(answer.status, 400);
  EXPECT_THAT(answer.body, HasSubstr("q"));
}

}  // namespace
}  // namespace regatta::testing
