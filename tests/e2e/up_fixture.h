#ifndef REGATTA_TESTS_E2E_UP_FIXTURE_H_
#define REGATTA_TESTS_E2E_UP_FIXTURE_H_

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/process.h"

namespace regatta::testing {

// A curl answer split into its body and HTTP status (curl -w "\n%{http_code}").
struct HttpAnswer {
  int exit_code = -1;
  int status = 0;
  std::string body;
  std::string err;
};

// `regatta up` from the built binary on ports 0 in a fresh data directory, with helpers to run
// the CLI against it, GET its HTTP API, submit one job and wait for job states.
class UpFixture : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("regatta-e2e-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "scratch");
    StartUp();
  }

  // Starts `regatta up` on the test's data directory (again, after a kill).
  void StartUp() {
    up_ = std::make_unique<Child>();
    std::vector<std::string> argv = {
        RegattaBinary(), "up",          "--data-dir",    (dir_ / "data").string(),
        "--grpc-listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0"};
    for (const std::string& arg : ExtraUpArgs()) argv.push_back(arg);
    ASSERT_TRUE(up_->Start(argv, (dir_ / "up.stderr").string()));
    auto grpc_line = up_->WaitForLine("gRPC: ", std::chrono::seconds(30));
    ASSERT_TRUE(grpc_line.has_value()) << up_->output() << Slurp((dir_ / "up.stderr").string());
    grpc_ = grpc_line->substr(grpc_line->find("gRPC: ") + 6);
    auto http_line = up_->WaitForLine("HTTP: http://", std::chrono::seconds(5));
    ASSERT_TRUE(http_line.has_value()) << up_->output();
    http_ = http_line->substr(http_line->find("HTTP: http://") + 13);
  }

  // More `regatta up` flags for a test suite (e.g. --set ...).
  virtual std::vector<std::string> ExtraUpArgs() const { return {}; }

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
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    if (!doc.is_object() || !doc.contains("items") || doc["items"].empty()) {
      ADD_FAILURE() << "no job id in: " << r.out;
      return "";
    }
    return doc["items"][0].value("jobId", "");
  }

  std::string JobState(const std::string& id) {
    RunResult r = Cli({"jobs", "get", id, "-o", "json"});
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
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

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_E2E_UP_FIXTURE_H_
