#include "src/api/auth/password_limits.h"

#include <atomic>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/common/clock.h"

namespace regatta::auth {
namespace {

using ::testing::HasSubstr;

TEST(FailureLimiterTest, AllowsTheBurstThenOnePerRefill) {
  FakeClock clock;
  FailureLimiter limiter({3, absl::Seconds(10)}, 100, &clock);
  EXPECT_TRUE(limiter.TryTake("10.0.0.1"));
  EXPECT_TRUE(limiter.TryTake("10.0.0.1"));
  EXPECT_TRUE(limiter.TryTake("10.0.0.1"));
  absl::Duration retry_after;
  EXPECT_FALSE(limiter.TryTake("10.0.0.1", &retry_after));
  EXPECT_EQ(retry_after, absl::Seconds(10));
  // Other keys have their own buckets.
  EXPECT_TRUE(limiter.TryTake("10.0.0.2"));

  clock.Advance(absl::Seconds(4));
  EXPECT_FALSE(limiter.TryTake("10.0.0.1", &retry_after));
  EXPECT_EQ(retry_after, absl::Seconds(6));
  clock.Advance(absl::Seconds(6));
  EXPECT_TRUE(limiter.TryTake("10.0.0.1"));  // one refilled
  EXPECT_FALSE(limiter.TryTake("10.0.0.1"));
  // Never more than the burst, however long it was quiet.
  clock.Advance(absl::Hours(5));
  for (int i = 0; i < 3; ++i) EXPECT_TRUE(limiter.TryTake("10.0.0.1")) << i;
  EXPECT_FALSE(limiter.TryTake("10.0.0.1"));
}

TEST(FailureLimiterTest, SuccessesGiveTheirAllowanceBack) {
  FakeClock clock;
  FailureLimiter limiter({2, absl::Minutes(1)}, 100, &clock);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(limiter.TryTake("alice")) << i;
    limiter.GiveBack("alice");
  }
  // A full bucket is not remembered.
  EXPECT_EQ(limiter.size(), 0u);
  EXPECT_TRUE(limiter.TryTake("alice"));
  EXPECT_EQ(limiter.size(), 1u);
  // Giving back for an unknown key does nothing.
  limiter.GiveBack("nobody");
  EXPECT_EQ(limiter.size(), 1u);
}

TEST(FailureLimiterTest, TableIsBoundedLeastRecentlyUsedFirst) {
  FakeClock clock;
  FailureLimiter limiter({1, absl::Hours(1)}, 3, &clock);
  EXPECT_TRUE(limiter.TryTake("a"));
  EXPECT_TRUE(limiter.TryTake("b"));
  EXPECT_TRUE(limiter.TryTake("c"));
  EXPECT_FALSE(limiter.TryTake("a"));  // a is now the most recently used
  EXPECT_TRUE(limiter.TryTake("d"));   // evicts b
  EXPECT_EQ(limiter.size(), 3u);
  EXPECT_FALSE(limiter.TryTake("a"));
  EXPECT_FALSE(limiter.TryTake("c"));
  EXPECT_FALSE(limiter.TryTake("d"));
  EXPECT_TRUE(limiter.TryTake("b"));  // forgotten: starts full again
  for (int i = 0; i < 10'000; ++i) limiter.TryTake(absl::StrCat("k", i));
  EXPECT_EQ(limiter.size(), 3u);
}

TEST(FailureLimiterTest, BurstZeroMeansNoLimit) {
  FakeClock clock;
  FailureLimiter limiter({0, absl::Seconds(1)}, 10, &clock);
  for (int i = 0; i < 1000; ++i) ASSERT_TRUE(limiter.TryTake("x"));
  EXPECT_EQ(limiter.size(), 0u);
}

TEST(FailureLimiterTest, ConcurrentTakesNeverExceedTheBurst) {
  FakeClock clock;
  FailureLimiter limiter({50, absl::Hours(1)}, 10, &clock);
  std::atomic<int> taken{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 100; ++i) taken += limiter.TryTake("same") ? 1 : 0;
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(taken.load(), 50);
}

TEST(ConcurrencyLimitTest, WaitsBoundedlyForASlot) {
  ConcurrencyLimit limit(2);
  EXPECT_TRUE(limit.Acquire(absl::ZeroDuration()));
  EXPECT_TRUE(limit.Acquire(absl::ZeroDuration()));
  EXPECT_EQ(limit.in_use(), 2);
  const absl::Time start = absl::Now();
  EXPECT_FALSE(limit.Acquire(absl::Milliseconds(50)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(45));
  // A slot freed while waiting is taken.
  std::thread releaser([&] {
    absl::SleepFor(absl::Milliseconds(20));
    limit.Release();
  });
  EXPECT_TRUE(limit.Acquire(absl::Seconds(10)));
  releaser.join();
  EXPECT_EQ(limit.in_use(), 2);
}

TEST(PasswordLimitsTest, DefaultConcurrencyIsHalfTheCoresAtLeastOne) {
  EXPECT_EQ(EffectiveMaxConcurrent(3), 3);
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_EQ(EffectiveMaxConcurrent(0), std::max(1, cores / 2));
}

TEST(PasswordLimitsTest, ValidationNamesTheField) {
  PasswordCheckLimits limits;
  EXPECT_TRUE(ValidatePasswordCheckLimits(limits, "auth.passwordChecks").ok());
  limits.per_user = {5, absl::ZeroDuration()};
  EXPECT_THAT(ValidatePasswordCheckLimits(limits, "auth.passwordChecks").message(),
              HasSubstr("auth.passwordChecks.failuresPerUser.refill: must be positive"));
  limits = {};
  limits.per_source.burst = -1;
  EXPECT_THAT(ValidatePasswordCheckLimits(limits, "p").message(),
              HasSubstr("p.failuresPerSource.burst"));
  limits = {};
  limits.max_concurrent = -2;
  EXPECT_THAT(ValidatePasswordCheckLimits(limits, "p").message(), HasSubstr("p.maxConcurrent"));
  limits = {};
  limits.tracked_keys = 0;
  EXPECT_THAT(ValidatePasswordCheckLimits(limits, "p").message(), HasSubstr("p.trackedKeys"));
}

TEST(ClientAddressTest, FromGrpcPeerStrings) {
  EXPECT_EQ(ClientAddressFromPeer("ipv4:10.1.2.3:5000"), "10.1.2.3");
  EXPECT_EQ(ClientAddressFromPeer("ipv6:[::1]:5000"), "::1");
  EXPECT_EQ(ClientAddressFromPeer("ipv6:[2001:db8::7]:443"), "2001:db8::7");
  EXPECT_EQ(ClientAddressFromPeer("ipv6:[::ffff:10.1.2.3]:5000"), "10.1.2.3");
  EXPECT_EQ(ClientAddressFromPeer("inproc"), "");
  EXPECT_EQ(ClientAddressFromPeer("unix:/tmp/sock"), "");
  EXPECT_EQ(ClientAddressFromPeer(""), "");
  EXPECT_EQ(NormalizeClientAddress("::ffff:192.168.0.1"), "192.168.0.1");
  EXPECT_EQ(NormalizeClientAddress("::ffff:abcd"), "::ffff:abcd");
  EXPECT_EQ(NormalizeClientAddress("10.0.0.1"), "10.0.0.1");
}

}  // namespace
}  // namespace regatta::auth
