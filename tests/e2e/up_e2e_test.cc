// End to end: the built `regatta` binary — `regatta up` as a child process, the CLI against it,
// curl against its HTTP port, kill -9 and restart.
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/process.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class UpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("regatta-e2e-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "scratch");
    StartUp();
  }

  void TearDown() override {
    up_.reset();
    std::filesystem::remove_all(dir_);
  }

  void StartUp() {
    up_ = std::make_unique<Child>();
    // Without the embedded executor jobs stay queued, so these tests see the API's own effects
    // (execution_e2e_test runs jobs).
    ASSERT_TRUE(up_->Start(
        {RegattaBinary(), "up", "--data-dir", (dir_ / "data").string(), "--grpc-listen",
         "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--set", "executor.embedded=false"},
        (dir_ / "up.stderr").string()));
    auto grpc_line = up_->WaitForLine("gRPC: ", std::chrono::seconds(30));
    ASSERT_TRUE(grpc_line.has_value()) << up_->output() << Slurp((dir_ / "up.stderr").string());
    grpc_ = grpc_line->substr(grpc_line->find("gRPC: ") + 6);
    auto http_line = up_->WaitForLine("HTTP: ", std::chrono::seconds(5));
    ASSERT_TRUE(http_line.has_value());
    http_ = http_line->substr(http_line->find("HTTP: http://") + 13);
  }

  RunResult Cli(std::vector<std::string> args, const std::string& input = "") {
    std::vector<std::string> argv = {RegattaBinary(), "--server", grpc_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, (dir_ / "scratch").string(), input);
  }

  RunResult Curl(std::vector<std::string> args) {
    std::vector<std::string> argv = {"/usr/bin/curl", "-sS", "-w", "\n%{http_code}"};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, (dir_ / "scratch").string());
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // Job ids printed by `regatta submit -o json`.
  static std::vector<std::string> SubmittedIds(const std::string& json_text) {
    std::vector<std::string> ids;
    nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, false);
    std::function<void(const nlohmann::json&)> walk = [&](const nlohmann::json& j) {
      if (j.is_object()) {
        if (j.contains("jobId")) ids.push_back(j["jobId"].get<std::string>());
        for (const auto& [k, v] : j.items()) walk(v);
      } else if (j.is_array()) {
        for (const auto& v : j) walk(v);
      }
    };
    walk(doc);
    return ids;
  }

  std::set<std::string> ListedIds(const std::string& queue) {
    RunResult r = Cli({"jobs", "list", "--queue", queue, "--all", "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> ids = SubmittedIds(r.out);
    return {ids.begin(), ids.end()};
  }

  std::filesystem::path dir_;
  std::unique_ptr<Child> up_;
  std::string grpc_;
  std::string http_;
};

TEST_F(UpTest, CliWorkflow) {
  RunResult r = Cli({"queue", "create", "demo"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Cli({"queue", "list"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("demo"));

  std::string jobs = WriteFile("jobs.yaml", R"(queue: demo
jobSet: hello
jobs:
  - command: ["/bin/echo", "hi"]
    resources: {requests: {cpu: 100m, memory: 64Mi}}
    count: 5
  - clientId: once
    command: ["/bin/date"]
)");
  r = Cli({"submit", jobs, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> ids = SubmittedIds(r.out);
  ASSERT_EQ(ids.size(), 6u) << r.out;
  // Resubmitting: the client id dedups, the five copies are new jobs.
  r = Cli({"submit", jobs, "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> again = SubmittedIds(r.out);
  ASSERT_EQ(again.size(), 6u);
  EXPECT_EQ(again.back(), ids.back());
  EXPECT_EQ(ListedIds("demo").size(), 11u);

  r = Cli({"jobs", "list", "--queue", "demo", "--state", "QUEUED"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("QUEUED"));
  r = Cli({"jobs", "get", ids[0]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(ids[0]));
  r = Cli({"cancel", ids[0]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Cli({"reprioritize", ids[1], "--priority", "5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Cli({"jobs", "get", ids[1], "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"priority\": 5"));

  // Watch streams the job set's events; nothing runs without an executor, so it times out with
  // exit code 2. The scheduler still decides the cancellation.
  r = Cli({"watch", "demo", "hello", "--timeout", "2s"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.out, HasSubstr("SUBMITTED"));
  EXPECT_THAT(r.out, HasSubstr("CANCELLING"));
  EXPECT_THAT(r.out, HasSubstr("CANCELLED"));

  // Errors are one line on stderr, exit code 1.
  r = Cli({"queue", "get", "nope"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, StartsWith("regatta: "));
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND"));
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  std::string bad = WriteFile("bad.yaml", "queue: demo\njobSet: x\njobs:\n  - priority: 1\n");
  r = Cli({"submit", bad});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("command"));
}

TEST_F(UpTest, KillNineAfterAcknowledgedSubmitsLosesNothing) {
  ASSERT_EQ(Cli({"queue", "create", "durable"}).exit_code, 0);
  std::string jobs = WriteFile("jobs.yaml",
                               "queue: durable\njobSet: s\njobs:\n  - command: [/bin/true]\n"
                               "    count: 500\n");
  std::set<std::string> acked;
  for (int i = 0; i < 4; ++i) {
    RunResult r = Cli({"submit", jobs, "-o", "json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const auto& id : SubmittedIds(r.out)) acked.insert(id);
  }
  ASSERT_EQ(acked.size(), 2000u);
  up_->Kill(SIGKILL);  // right after the last acknowledgement
  StartUp();
  // The views catch up from the log after the restart.
  std::set<std::string> listed;
  for (int attempt = 0; attempt < 50 && listed.size() < acked.size(); ++attempt) {
    listed = ListedIds("durable");
    if (listed.size() < acked.size()) usleep(100000);
  }
  EXPECT_EQ(listed, acked);
}

TEST_F(UpTest, SigtermStopsCleanly) {
  up_->Kill(SIGTERM);
  EXPECT_EQ(up_->WaitFor(std::chrono::seconds(10)), 0);
}

TEST_F(UpTest, RestServesTheSameApiAndSurvivesBadInput) {
  RunResult r = Curl({"-X", "POST", "-H", "Content-Type: application/json", "--data",
                      R"({"name":"web"})", absl::StrCat("http://", http_, "/v1/queues")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::EndsWith("200"));
  r = Curl({"-X", "POST", "--data",
            R"({"queue":"web","jobSet":"s","items":[{"task":{"command":["/bin/true"]}}]})",
            absl::StrCat("http://", http_, "/v1/jobs:submit")});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("jobId"));
  r = Curl(
      {"-X", "POST", "--data", "{not json", absl::StrCat("http://", http_, "/v1/jobs:submit")});
  EXPECT_THAT(r.out, ::testing::EndsWith("400"));
  r = Curl({"-X", "POST", "--data",
            R"({"queue":"web","jobSet":"s","items":[{"task":{"command":[]}}]})",
            absl::StrCat("http://", http_, "/v1/jobs:submit")});
  EXPECT_THAT(r.out, ::testing::EndsWith("400"));
  EXPECT_THAT(r.out, HasSubstr("items[0].task.command"));
  // Still serving, and the job is listed over both transports.
  r = Curl({absl::StrCat("http://", http_, "/v1/jobs?queue=web")});
  EXPECT_THAT(r.out, HasSubstr("QUEUED"));
  EXPECT_EQ(ListedIds("web").size(), 1u);
}

}  // namespace
}  // namespace regatta::testing
