// A flood of wrong passwords against the real server in-process neither exhausts memory nor
// slows down calls with bearer tokens (issue 21: 200 callers took the server from 30 MB to
// 1.8 GB RSS and delayed valid calls by 2 s).

#include <algorithm>
#include <atomic>
#include <functional>
#include <iostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/integration/password_limits_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;

// 200 callers send wrong passwords for an interactive-cost (64 MiB) hash as fast as the server
// answers, while one client keeps making calls with a bearer token.
struct FloodOutcome {
  int64_t rss_before = 0;
  int64_t peak_rss = 0;
  absl::Duration token_p99;
  int token_calls = 0;
  int flood_calls = 0;
};

FloodOutcome Flood(server::Platform& platform, int callers, absl::Duration duration,
                   const std::function<std::shared_ptr<grpc::Channel>()>& new_channel) {
  const int64_t rss_before = RssBytes();
  std::atomic<bool> stop{false};
  std::atomic<int> flood_calls{0};
  std::vector<std::thread> threads;
  // A few connections shared by the callers, as from a handful of attacking machines.
  std::vector<std::shared_ptr<grpc::Channel>> channels;
  for (int i = 0; i < 8; ++i) channels.push_back(new_channel());
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
  FloodOutcome outcome;
  outcome.rss_before = rss_before;
  std::thread sampler([&] {
    while (!stop) {
      outcome.peak_rss = std::max(outcome.peak_rss, RssBytes());
      absl::SleepFor(absl::Milliseconds(5));
    }
  });
  auto token_stub = regatta::v1::QueueService::NewStub(new_channel());
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
  (void)platform;
  return outcome;
}

TEST_F(PasswordLimitsTest, FloodOfWrongPasswordsKeepsMemoryAndTokenCallsBounded) {
  Start(auth::PasswordHashParams::Interactive());
  FloodOutcome outcome = Flood(*platform_, 200, absl::Seconds(4), [this] { return NewChannel(); });
  std::cerr << "default limits: RSS " << outcome.rss_before / (1 << 20) << " MiB before, peak "
            << outcome.peak_rss / (1 << 20) << " MiB, token p99 " << outcome.token_p99 << " over "
            << outcome.token_calls << " calls, " << outcome.flood_calls << " flood calls\n";
  EXPECT_LT(outcome.peak_rss, 200LL << 20);
  EXPECT_LT(outcome.token_p99, absl::Milliseconds(50));
  EXPECT_GE(outcome.token_calls, 50);
}

TEST_F(PasswordLimitsTest, WithoutFailureLimitsTheConcurrencyBoundStillHolds) {
  // As from many addresses: only the bound on checks at once protects the server.
  Start(auth::PasswordHashParams::Interactive(),
        {"auth.passwordChecks.failuresPerSource.burst=0",
         "auth.passwordChecks.failuresPerUser.burst=0", "auth.passwordChecks.maxConcurrent=1"});
  FloodOutcome outcome = Flood(*platform_, 200, absl::Seconds(4), [this] { return NewChannel(); });
  std::cerr << "no failure limits: RSS " << outcome.rss_before / (1 << 20) << " MiB before, peak "
            << outcome.peak_rss / (1 << 20) << " MiB, token p99 " << outcome.token_p99 << " over "
            << outcome.token_calls << " calls, " << outcome.flood_calls << " flood calls\n";
  EXPECT_LT(outcome.peak_rss, 200LL << 20);
  EXPECT_LT(outcome.token_p99, absl::Milliseconds(50));
}

}  // namespace
}  // namespace regatta::testing
