// End to end: a job's output over HTTP (GET /v1/jobs/{id}/logs, plain text, followed with
// chunked encoding) and through `regatta logs`, from the built binary running `regatta up`.
#include <chrono>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/up_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr char kOutput[] = "one\ntwo\nthree\n";

class LogsTest : public UpFixture {};

TEST_F(LogsTest, OutputOverHttpAndCli) {
  ASSERT_EQ(Cli({"queue", "create", "logs"}).exit_code, 0);
  const std::string id =
      Submit("logs",
             "  - command: [\"/bin/sh\", \"-c\", \"echo one; echo two >&2; sleep 1; echo three\"]\n"
             "    resources: {requests: {cpu: 100m, memory: 64Mi}}\n");
  ASSERT_FALSE(id.empty());

  // (a) Following while the job runs prints its output in order and ends with the run.
  ASSERT_EQ(WaitForState(id, {"JOB_STATE_RUNNING", "JOB_STATE_SUCCEEDED"}), "JOB_STATE_RUNNING");
  HttpAnswer followed = Get(absl::StrCat("/v1/jobs/", id, "/logs?follow=true"));
  EXPECT_EQ(followed.exit_code, 0) << followed.err;  // a complete chunked body
  EXPECT_EQ(followed.status, 200);
  EXPECT_EQ(followed.body, kOutput);
  EXPECT_EQ(WaitForState(id, {"JOB_STATE_SUCCEEDED", "JOB_STATE_FAILED"}, std::chrono::seconds(30)),
            "JOB_STATE_SUCCEEDED");

  // (b) Afterwards: the whole log, or its tail.
  HttpAnswer whole = Get(absl::StrCat("/v1/jobs/", id, "/logs"));
  EXPECT_EQ(whole.status, 200);
  EXPECT_EQ(whole.body, kOutput);
  HttpAnswer tail = Get(absl::StrCat("/v1/jobs/", id, "/logs?tailLines=1"));
  EXPECT_EQ(tail.status, 200);
  EXPECT_EQ(tail.body, "three\n");
  HttpAnswer follow_after = Get(absl::StrCat("/v1/jobs/", id, "/logs?follow=true&tailLines=2"));
  EXPECT_EQ(follow_after.status, 200);
  EXPECT_EQ(follow_after.body, "two\nthree\n");

  // (c) The CLI prints the same.
  RunResult r = Cli({"logs", id});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, kOutput);
  r = Cli({"logs", id, "--tail", "1"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "three\n");

  // (d) Unknown jobs and runs are NOT_FOUND.
  HttpAnswer missing = Get("/v1/jobs/01NOSUCHJOB000000000000000/logs");
  EXPECT_EQ(missing.status, 404);
  json error = json::parse(missing.body, nullptr, false);
  ASSERT_TRUE(error.is_object()) << missing.body;
  EXPECT_EQ(error["status"], "NOT_FOUND");
  EXPECT_EQ(Get(absl::StrCat("/v1/jobs/", id, "/logs?runId=nope")).status, 404);
  r = Cli({"logs", "01NOSUCHJOB000000000000000"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));

  // Unknown query parameters are named.
  HttpAnswer typo = Get(absl::StrCat("/v1/jobs/", id, "/logs?tail=1"));
  EXPECT_EQ(typo.status, 400);
  EXPECT_THAT(typo.body, HasSubstr("tail"));
}

TEST_F(LogsTest, JobThatHasNotRunHasNoLogYet) {
  ASSERT_EQ(Cli({"queue", "create", "logs"}).exit_code, 0);
  // No node has a thousand CPUs: the job stays queued.
  const std::string id = Submit("logs",
                                "  - command: [\"/bin/echo\", \"never\"]\n"
                                "    resources: {requests: {cpu: \"1000\", memory: 64Mi}}\n");
  ASSERT_FALSE(id.empty());
  ASSERT_EQ(WaitForState(id, {"JOB_STATE_QUEUED"}), "JOB_STATE_QUEUED");

  for (const char* query : {"", "?follow=true"}) {
    HttpAnswer answer = Get(absl::StrCat("/v1/jobs/", id, "/logs", query));
    EXPECT_EQ(answer.status, 400) << query;
    json error = json::parse(answer.body, nullptr, false);
    ASSERT_TRUE(error.is_object()) << answer.body;
    EXPECT_EQ(error["status"], "FAILED_PRECONDITION");
    EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("has not run yet"));
  }
  RunResult r = Cli({"logs", id});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("FAILED_PRECONDITION"));
  EXPECT_THAT(r.err, HasSubstr("has not run yet"));
}

}  // namespace
}  // namespace regatta::testing
