// A flood of wrong passwords against `regatta server` neither exhausts its memory nor slows down
// calls with bearer tokens (issue 21: 200 callers took the server from 30 MB to 1.8 GB RSS and
// delayed valid calls by 2 s). The server is the built binary, so its RSS and its threads are
// its own; the callers run in this process.

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "src/api/auth/password.h"
#include "tests/e2e/process.h"

namespace regatta::testing {
namespace {

std::string Basic(const std::string& user, const std::string& password) {
  return "Basic " + absl::Base64Escape(user + ":" + password);
}

// Resident memory of process `pid`, from /proc/<pid>/status.
int64_t RssBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipEmpty());
    int64_t kib = 0;
    if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kib)) return kib * 1024;
  }
  return 0;
}

struct FloodOutcome {
  int64_t rss_before = 0;
  int64_t peak_rss = 0;
  absl::Duration token_p99;
  int token_calls = 0;
  int flood_calls = 0;
};

class PasswordFloodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("regatta-flood-", ::getpid(), "-", reinterpret_cast<uintptr_t>(this));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override {
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // `regatta server` with alice (an interactive-cost, 64 MiB password hash) and a token.
  void StartServer(const std::vector<std::string>& sets = {}) {
    absl::StatusOr<std::string> hash =
        auth::HashPassword("alice-pw", auth::PasswordHashParams::Interactive());
    ASSERT_TRUE(hash.ok()) << hash.status();
    const std::string users = (dir_ / "users.yaml").string();
    std::ofstream(users) << "users:\n  - name: alice\n    passwordHash: \"" << *hash
                         << "\"\n    groups: [admins]\n"
                         << "tokens:\n  - name: ci-bot\n    tokenSha256: \""
                         << auth::HashToken("ci-token") << "\"\n    groups: [team-ci]\n";
    std::vector<std::string> argv = {
        RegattaBinary(),           "server",        "--data-dir",
        (dir_ / "data").string(),  "--grpc-listen", "127.0.0.1:0",
        "--http-listen",           "127.0.0.1:0",   "--set",
        "auth.usersFile=" + users, "--set",         "logging.level=warn"};
    for (const std::string& s : sets) argv.insert(argv.end(), {"--set", s});
    server_ = std::make_unique<Child>();
    grpc_ = StartServerProcess(*server_, argv, (dir_ / "server.stderr").string());
    ASSERT_FALSE(grpc_.empty()) << Slurp((dir_ / "server.stderr").string());
  }

  std::shared_ptr<grpc::Channel> NewChannel() {
    grpc::ChannelArguments args;
    args.SetInt("grpc.use_local_subchannel_pool", 1);  // a connection of its own
    return grpc::CreateCustomChannel(grpc_, grpc::InsecureChannelCredentials(), args);
  }

  // `callers` threads send wrong passwords for alice as fast as they are answered (over a few
  // connections, as from a handful of machines) while one client makes a call with a bearer
  // token every 10 ms for `duration`.
  FloodOutcome Flood(int callers, absl::Duration duration) {
    FloodOutcome outcome;
    outcome.rss_before = RssBytes(server_->pid());
    std::atomic<bool> stop{false};
    std::atomic<int> flood_calls{0};
    std::vector<std::shared_ptr<grpc::Channel>> channels;
    for (int i = 0; i < 8; ++i) channels.push_back(NewChannel());
    std::vector<std::thread> threads;
    for (int i = 0; i < callers; ++i) {
      threads.emplace_back([&, i] {
        auto stub = regatta::v1::QueueService::NewStub(channels[i % channels.size()]);
        while (!stop) {
          grpc::ClientContext context;
          context.AddMetadata("authorization", Basic("alice", absl::StrCat("guess-", i)));
          context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
          regatta::v1::ListQueuesResponse response;
          (void)stub->ListQueues(&context, {}, &response);
          ++flood_calls;
        }
      });
    }
    std::thread sampler([&] {
      while (!stop) {
        outcome.peak_rss = std::max(outcome.peak_rss, RssBytes(server_->pid()));
        absl::SleepFor(absl::Milliseconds(5));
      }
    });
    auto token_stub = regatta::v1::QueueService::NewStub(NewChannel());
    std::vector<absl::Duration> latencies;
    absl::SleepFor(absl::Milliseconds(300));  // let the flood build up
    const absl::Time end = absl::Now() + duration;
    while (absl::Now() < end) {
      grpc::ClientContext context;
      context.AddMetadata("authorization", "Bearer ci-token");
      context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
      regatta::v1::ListQueuesResponse response;
      const absl::Time start = absl::Now();
      grpc::Status status = token_stub->ListQueues(&context, {}, &response);
      latencies.push_back(absl::Now() - start);
      EXPECT_TRUE(status.ok()) << status.error_message();
      absl::SleepFor(absl::Milliseconds(10));
    }
    stop = true;
    for (std::thread& t : threads) t.join();
    sampler.join();
    std::sort(latencies.begin(), latencies.end());
    outcome.token_calls = static_cast<int>(latencies.size());
    outcome.token_p99 =
        latencies.empty() ? absl::InfiniteDuration() : latencies[latencies.size() * 99 / 100];
    outcome.flood_calls = flood_calls.load();
    return outcome;
  }

  static void Report(const char* what, const FloodOutcome& outcome) {
    std::cerr << what << ": server RSS " << outcome.rss_before / (1 << 20) << " MiB before, peak "
              << outcome.peak_rss / (1 << 20) << " MiB; token p99 " << outcome.token_p99 << " over "
              << outcome.token_calls << " calls; " << outcome.flood_calls << " flood calls\n";
  }

  std::filesystem::path dir_;
  std::unique_ptr<Child> server_;
  std::string grpc_;
};

TEST_F(PasswordFloodTest, WrongPasswordsKeepMemoryAndTokenCallsBounded) {
  StartServer();
  if (HasFatalFailure()) return;
  FloodOutcome outcome = Flood(200, absl::Seconds(4));
  Report("default limits", outcome);
  EXPECT_LT(outcome.peak_rss, 200LL << 20);
  EXPECT_LT(outcome.token_p99, absl::Milliseconds(50));
  EXPECT_GE(outcome.token_calls, 50);
}

TEST_F(PasswordFloodTest, WithoutFailureLimitsTheConcurrencyBoundStillHolds) {
  // As from many addresses: only the bound on checks at once protects the server.
  StartServer({"auth.passwordChecks.failuresPerSource.burst=0",
               "auth.passwordChecks.failuresPerUser.burst=0",
               "auth.passwordChecks.maxConcurrent=1"});
  if (HasFatalFailure()) return;
  FloodOutcome outcome = Flood(200, absl::Seconds(4));
  Report("no failure limits", outcome);
  EXPECT_LT(outcome.peak_rss, 200LL << 20);
  // argon2id now runs back to back on one of the machine's two cores (at background priority):
  // token calls stay in the tens of milliseconds (seconds before the bound).
  EXPECT_LT(outcome.token_p99, absl::Milliseconds(200));
}

}  // namespace
}  // namespace regatta::testing
