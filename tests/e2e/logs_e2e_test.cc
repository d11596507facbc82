// End to end: a job's output over HTTP (GET /v1/jobs/{id}/logs, plain text, followed with
// chunked encoding) and through `regatta logs`, from the built binary running `regatta up`.
#include <chrono>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/process.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

constexpr char kOutput[] = "one\ntwo\nthree\n";

// A curl answer split into its body and HTTP status (curl -w "\n%{http_code}").
struct HttpAnswer {
  int exit_code = -1;
  int status = 0;
  std::string body;
  std::string err;
};

class LogsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("regatta-logs-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "scratch");
    up_ = std::make_unique<Child>();
    ASSERT_TRUE(up_->Start({RegattaBinary(), "up", "--data-dir", (dir_ / "data").string(),
                            "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"},
                           (dir_ / "up.stderr").string()));
    auto grpc_line = up_->WaitForLine("gRPC: ", std::chrono::seconds(30));
    ASSERT_TRUE(grpc_line.has_value()) << up_->output() << Slurp((dir_ / "up.stderr").string());
    grpc_ = grpc_line->substr(grpc_line->find("gRPC: ") + 6);
    auto http_line = up_->WaitForLine("HTTP: http://", std::chrono::seconds(5));
    ASSERT_TRUE(http_line.has_value()) << up_->output();
    http_ = http_line->substr(http_line->find("HTTP: http://") + 13);
  }

  void TearDown() override {
    up_.reset();
    std::filesystem::remove_all(dir_);
  }

  RunResult Cli(std::vector<std::string> args, const std::string& input = "") {
    std::vector<std::string> argv = {RegattaBinary(), "--server", grpc_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, (dir_ / "scratch").string(), input);
  }

  // GET http://<up>/<path> with curl; the body is whatever arrived.
  HttpAnswer Get(const std::string& path) {
    RunResult r = RunProcess({"/usr/bin/curl", "-sS", "-N", "--max-time", "120", "-w",
                              "\n%{http_code}", absl::StrCat("http://", http_, path)},
                             (dir_ / "scratch").string());
    HttpAnswer answer;
    answer.exit_code = r.exit_code;
    answer.err = r.err;
    const size_t nl = r.out.rfind('\n');
    if (nl == std::string::npos) return answer;
    answer.body = r.out.substr(0, nl);
    answer.status = std::atoi(r.out.c_str() + nl + 1);
    return answer;
  }

  std::string Submit(const std::string& queue, const std::string& job) {
    RunResult r = Cli({"submit", "-", "-o", "json"},
                      absl::StrCat("queue: ", queue, "\njobSet: s\njobs:\n", job));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json doc = json::parse(r.out, nullptr, false);
    if (!doc.is_object() || !doc.contains("items") || doc["items"].empty()) {
      ADD_FAILURE() << "no job id in: " << r.out;
      return "";
    }
    return doc["items"][0].value("jobId", "");
  }

  std::string JobState(const std::string& id) {
    RunResult r = Cli({"jobs", "get", id, "-o", "json"});
    json j = json::parse(r.out, nullptr, false);
    return j.is_object() ? j["summary"].value("state", "") : "";
  }

  // Polls until the job is in one of `states`; returns the last state seen.
  std::string WaitForState(const std::string& id, const std::vector<std::string>& states,
                           std::chrono::seconds timeout = std::chrono::seconds(60)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string seen;
    while (std::chrono::steady_clock::now() < deadline) {
      seen = JobState(id);
      for (const std::string& s : states) {
        if (seen == s) return seen;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return seen;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Child> up_;
  std::string grpc_;
  std::string http_;
};

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
