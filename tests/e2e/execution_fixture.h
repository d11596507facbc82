#ifndef REGATTA_TESTS_E2E_EXECUTION_FIXTURE_H_
#define REGATTA_TESTS_E2E_EXECUTION_FIXTURE_H_

// `regatta up`, or `regatta server` + `regatta executor --local`, from the built binary in a
// fresh data directory, driven by the CLI: the fixture of the tests where jobs really run.
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/process.h"

namespace regatta::testing {

using json = nlohmann::json;

// A free loopback port (for a server that must come back on the same address).
inline int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
  socklen_t len = sizeof(addr);
  getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
  close(fd);
  return ntohs(addr.sin_port);
}

// Process ids whose process group is `pgid`.
inline std::vector<int> ProcessesInGroup(int pgid) {
  std::vector<int> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry.path().filename().string(), &pid)) continue;
    std::string stat = Slurp(entry.path().string() + "/stat");
    // pid (comm) state ppid pgrp ...; comm may hold spaces, so split after the last ')'.
    size_t close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::vector<std::string> fields = absl::StrSplit(stat.substr(close_paren + 2), ' ');
    int group = 0;
    if (fields.size() > 2 && absl::SimpleAtoi(fields[2], &group) && group == pgid &&
        fields[0] != "Z") {
      out.push_back(pid);
    }
  }
  return out;
}

class ExecutionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("regatta-exec-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "scratch");
  }

  void TearDown() override {
    executor_.reset();
    server_.reset();
    // Anything a killed server or executor left behind.
    for (int pgid : leaders_) {
      for (int pid : ProcessesInGroup(pgid)) kill(pid, SIGKILL);
    }
    std::filesystem::remove_all(dir_);
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // `regatta up` (embedded executor) or `regatta server`, on `grpc_port` (0: any).
  void StartServer(const std::string& verb, const std::vector<std::string>& sets = {},
                   int grpc_port = 0) {
    std::vector<std::string> argv = {RegattaBinary(), verb,
                                     "--data-dir",    (dir_ / "data").string(),
                                     "--grpc-listen", absl::StrCat("127.0.0.1:", grpc_port),
                                     "--http-listen", "127.0.0.1:0"};
    // The separate executor connects without credentials: anonymous needs its admin groups
    // named (auth.anonymous=true alone grants none).
    if (verb == "server") {
      argv.insert(argv.end(),
                  {"--set", "auth.anonymous=true", "--set", "auth.anonymousGroups=[admins]"});
    }
    for (const std::string& s : sets) argv.insert(argv.end(), {"--set", s});
    server_ = std::make_unique<Child>();
    grpc_ = StartServerProcess(*server_, argv, (dir_ / "server.stderr").string());
    ASSERT_FALSE(grpc_.empty()) << Slurp((dir_ / "server.stderr").string());
  }

  void StartExecutor(const std::vector<std::string>& sets = {}) {
    std::vector<std::string> argv = {
        RegattaBinary(),         "--server", grpc_, "executor", "--local", "--data-dir",
        (dir_ / "exec").string()};
    for (const std::string& s : sets) argv.insert(argv.end(), {"--set", s});
    executor_ = std::make_unique<Child>();
    ASSERT_TRUE(executor_->Start(argv, (dir_ / "executor.stderr").string()));
    ASSERT_TRUE(executor_->WaitForLine("executor is running", std::chrono::seconds(30)))
        << Slurp((dir_ / "executor.stderr").string());
  }

  RunResult Cli(std::vector<std::string> args, const std::string& input = "") {
    std::vector<std::string> argv = {RegattaBinary(), "--server", grpc_};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, (dir_ / "scratch").string(), input);
  }

  std::vector<std::string> Submit(const std::string& yaml) {
    return SubmittedIds(Cli({"submit", "-", "-o", "json"}, yaml));
  }

  // The job ids `regatta submit ... -o json` printed, in file order.
  static std::vector<std::string> SubmittedIds(const RunResult& r) {
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> ids;
    json doc = json::parse(r.out, nullptr, false);
    if (doc.is_object() && doc.contains("items")) {
      for (const auto& item : doc["items"]) ids.push_back(item.value("jobId", ""));
    }
    return ids;
  }

  json Job(const std::string& id) {
    RunResult r = Cli({"jobs", "get", id, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return json::parse(r.out, nullptr, false);
  }

  std::string JobState(const std::string& id) {
    json j = Job(id);
    return j.is_object() ? j["summary"].value("state", "") : "";
  }

  // Polls until the job is in `state` (or the timeout), returning the last state seen.
  std::string WaitForState(const std::string& id, const std::string& state,
                           std::chrono::seconds timeout = std::chrono::seconds(60)) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::string seen;
    while (std::chrono::steady_clock::now() < deadline) {
      seen = JobState(id);
      if (seen == state) return seen;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return seen;
  }

  // Polls (up to 5 s) until the job's first run is in `state`; the caller asserts on it.
  void WaitForFirstRunState(const std::string& id, const std::string& state) {
    for (int i = 0; i < 50; ++i) {
      if (Job(id)["runs"][0].value("state", "") == state) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  }

  // Every event of a job set so far (regatta watch --no-follow -o json), one JSON per line.
  std::vector<json> Events(const std::string& queue, const std::string& job_set) {
    RunResult r = Cli({"watch", queue, job_set, "--no-follow", "-o", "json"});
    std::vector<json> out;
    for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipEmpty())) {
      json j = json::parse(line, nullptr, false);
      if (j.is_object()) out.push_back(std::move(j));
    }
    return out;
  }

  // Event types per job, in log order, without the JOB_EVENT_TYPE_ prefix.
  std::map<std::string, std::vector<std::string>> TypesByJob(const std::vector<json>& events) {
    std::map<std::string, std::vector<std::string>> out;
    for (const json& e : events) {
      std::string type = e.value("type", "");
      out[e.value("jobId", "")].push_back(std::string(absl::StripPrefix(type, "JOB_EVENT_TYPE_")));
    }
    return out;
  }

  int PidFromLog(const std::string& job_id) {
    for (int i = 0; i < 100; ++i) {
      RunResult r = Cli({"logs", job_id});
      int pid = 0;
      if (r.exit_code == 0 &&
          absl::SimpleAtoi(absl::StripAsciiWhitespace(r.out.substr(0, r.out.find('\n'))), &pid)) {
        leaders_.push_back(pid);
        return pid;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return 0;
  }

  std::filesystem::path dir_;
  std::unique_ptr<Child> server_;
  std::unique_ptr<Child> executor_;
  std::string grpc_;
  std::vector<int> leaders_;
};

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_E2E_EXECUTION_FIXTURE_H_
