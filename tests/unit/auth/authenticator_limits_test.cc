// The Authenticator's bounds on password checks: failure limits per client address and per user
// name, and the bound on checks running at once.

#include <atomic>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/api/auth/authenticator.h"
#include "src/api/auth/password.h"
#include "src/common/clock.h"
#include "tests/unit/auth/test_util.h"

namespace regatta::auth {
namespace {

using ::testing::HasSubstr;

std::string Basic(absl::string_view user, absl::string_view password) {
  return absl::StrCat("Basic ", absl::Base64Escape(absl::StrCat(user, ":", password)));
}

class AuthenticatorLimitsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    alice_hash_ = new std::string(*HashPassword("alice-pw", PasswordHashParams::Minimum()));
  }
  static void TearDownTestSuite() { delete alice_hash_; }

  AuthConfig Config() {
    AuthConfig config;
    config.credentials.users = {{"alice", *alice_hash_, {}}, {"bob", *alice_hash_, {}}};
    config.credentials.tokens = {{"ci-bot", HashToken("ci-token"), {}}};
    config.password_limits.per_source = {3, absl::Seconds(10)};
    config.password_limits.per_user = {100, absl::Seconds(1)};
    config.password_limits.refusal_delay = absl::ZeroDuration();
    config.clock = &clock_;
    return config;
  }

  static std::unique_ptr<Authenticator> Make(AuthConfig config) {
    return testing::MakeAuthenticator(std::move(config));
  }

  static void ExpectCode(const absl::StatusOr<Principal>& result, absl::StatusCode code,
                         absl::string_view message) {
    ASSERT_FALSE(result.ok()) << result->name;
    EXPECT_EQ(result.status().code(), code) << result.status();
    EXPECT_THAT(result.status().message(), HasSubstr(message));
  }

  FakeClock clock_;
  static std::string* alice_hash_;
};

std::string* AuthenticatorLimitsTest::alice_hash_ = nullptr;

TEST_F(AuthenticatorLimitsTest, FailuresFromOneAddressAreRefusedWithoutAPasswordCheck) {
  auto authenticator = Make(Config());
  for (int i = 0; i < 3; ++i) {
    ExpectCode(authenticator->Authenticate(Basic("alice", "wrong"), "10.0.0.9"),
               absl::StatusCode::kUnauthenticated, "invalid username or password");
  }
  ExpectCode(authenticator->Authenticate(Basic("alice", "wrong"), "10.0.0.9"),
             absl::StatusCode::kResourceExhausted,
             "too many failed password checks from this address; retry in 10s");
  // Even the right password waits: the address is guessing.
  ExpectCode(authenticator->Authenticate(Basic("bob", "alice-pw"), "10.0.0.9"),
             absl::StatusCode::kResourceExhausted, "from this address");
  Authenticator::Stats stats = authenticator->GetStats();
  EXPECT_EQ(stats.password_verifications, 3u);
  EXPECT_EQ(stats.password_checks_rate_limited, 2u);
  // Other addresses, and bearer tokens from this one, are not affected.
  EXPECT_TRUE(authenticator->Authenticate(Basic("alice", "alice-pw"), "10.0.0.10").ok());
  EXPECT_TRUE(authenticator->Authenticate("Bearer ci-token", "10.0.0.9").ok());
  // One allowance per refill.
  clock_.Advance(absl::Seconds(10));
  ExpectCode(authenticator->Authenticate(Basic("alice", "wrong"), "10.0.0.9"),
             absl::StatusCode::kUnauthenticated, "invalid username or password");
  ExpectCode(authenticator->Authenticate(Basic("alice", "wrong"), "10.0.0.9"),
             absl::StatusCode::kResourceExhausted, "from this address");
}

TEST_F(AuthenticatorLimitsTest, FailuresForOneUserAreLimitedAcrossAddresses) {
  AuthConfig config = Config();
  config.password_limits.per_user = {2, absl::Minutes(1)};
  auto authenticator = Make(std::move(config));
  // alice logged in before the attack: her remembered check keeps working.
  ASSERT_TRUE(authenticator->Authenticate(Basic("alice", "alice-pw"), "10.0.0.1").ok());
  for (int i = 0; i < 2; ++i) {
    ExpectCode(authenticator->Authenticate(Basic("alice", "guess"), absl::StrCat("10.1.0.", i)),
               absl::StatusCode::kUnauthenticated, "invalid username or password");
  }
  ExpectCode(authenticator->Authenticate(Basic("alice", "guess"), "10.1.0.99"),
             absl::StatusCode::kResourceExhausted,
             "too many failed password checks for this user; retry in 60s");
  EXPECT_TRUE(authenticator->Authenticate(Basic("alice", "alice-pw"), "10.0.0.1").ok());
  EXPECT_EQ(authenticator->GetStats().password_cache_hits, 1u);
  // bob is another user.
  EXPECT_TRUE(authenticator->Authenticate(Basic("bob", "alice-pw"), "10.1.0.99").ok());
}

TEST_F(AuthenticatorLimitsTest, UnknownUsersAreLimitedLikeKnownOnes) {
  AuthConfig config = Config();
  config.password_limits.per_user = {2, absl::Minutes(1)};
  auto authenticator = Make(std::move(config));
  for (const char* user : {"alice", "nobody"}) {
    for (int i = 0; i < 2; ++i) {
      ExpectCode(authenticator->Authenticate(Basic(user, "guess"), absl::StrCat("10.2.0.", i)),
                 absl::StatusCode::kUnauthenticated, "invalid username or password");
    }
    ExpectCode(authenticator->Authenticate(Basic(user, "guess"), "10.2.0.50"),
               absl::StatusCode::kResourceExhausted, "for this user");
  }
  // Every failure that was not refused ran argon2id (the decoy for "nobody").
  EXPECT_EQ(authenticator->GetStats().password_verifications, 4u);
}

TEST_F(AuthenticatorLimitsTest, SuccessfulChecksDoNotCountAsFailures) {
  AuthConfig config = Config();
  config.password_cache_capacity = 0;  // every call runs argon2id
  auto authenticator = Make(std::move(config));
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(authenticator->Authenticate(Basic("alice", "alice-pw"), "10.0.0.9").ok()) << i;
  }
  EXPECT_EQ(authenticator->GetStats().password_verifications, 20u);
  EXPECT_EQ(authenticator->GetStats().password_checks_rate_limited, 0u);
}

TEST_F(AuthenticatorLimitsTest, WithoutAnAddressOnlyTheUserLimitApplies) {
  AuthConfig config = Config();
  config.password_limits.per_user = {4, absl::Minutes(1)};
  auto authenticator = Make(std::move(config));
  for (int i = 0; i < 4; ++i) {
    ExpectCode(authenticator->Authenticate(Basic("alice", "wrong")),
               absl::StatusCode::kUnauthenticated, "invalid username or password");
  }
  ExpectCode(authenticator->Authenticate(Basic("alice", "wrong")),
             absl::StatusCode::kResourceExhausted, "for this user");
}

TEST_F(AuthenticatorLimitsTest, TooManyChecksAtOnceAreRefusedAsUnavailable) {
  // One slot and no waiting; a thread keeps it busy with slow (interactive-cost) wrong guesses.
  AuthConfig config = Config();
  const std::string slow_hash = *HashPassword("slow-pw", PasswordHashParams::Interactive());
  config.credentials.users.push_back({"slow", slow_hash, {}});
  config.password_limits = {};
  config.password_limits.max_concurrent = 1;
  config.password_limits.max_wait = absl::ZeroDuration();
  config.password_limits.per_source.burst = 0;
  config.password_limits.per_user.burst = 0;
  auto authenticator = Make(std::move(config));
  std::atomic<bool> stop{false};
  std::thread flood([&] {
    while (!stop) (void)authenticator->Authenticate(Basic("slow", "wrong"), "10.9.9.9");
  });
  int unavailable = 0;
  for (int i = 0; i < 50 && unavailable == 0; ++i) {
    const absl::Time until = absl::Now() + absl::Seconds(10);
    while (authenticator->GetStats().password_checks_in_progress == 0 && absl::Now() < until) {
      absl::SleepFor(absl::Microseconds(200));
    }
    absl::StatusOr<Principal> result = authenticator->Authenticate(Basic("slow", "x"), "10.0.0.1");
    if (absl::IsUnavailable(result.status())) {
      ++unavailable;
      EXPECT_EQ(result.status().message(), "too many password checks in progress, retry later");
    }
  }
  // Bearer tokens never wait for a slot.
  const absl::Time start = absl::Now();
  EXPECT_TRUE(authenticator->Authenticate("Bearer ci-token", "10.0.0.1").ok());
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(20));
  stop = true;
  flood.join();
  EXPECT_GE(unavailable, 1);
  EXPECT_GE(authenticator->GetStats().password_checks_busy, 1u);
}

TEST_F(AuthenticatorLimitsTest, RefusalsAreAnsweredAfterTheDelay) {
  AuthConfig config = Config();
  config.password_limits.per_source = {1, absl::Seconds(10)};
  config.password_limits.refusal_delay = absl::Milliseconds(200);
  auto authenticator = Make(std::move(config));
  absl::Time start = absl::Now();
  ExpectCode(authenticator->Authenticate(Basic("alice", "wrong"), "10.0.0.9"),
             absl::StatusCode::kUnauthenticated, "invalid username or password");
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(150));
  start = absl::Now();
  ExpectCode(authenticator->Authenticate(Basic("alice", "wrong"), "10.0.0.9"),
             absl::StatusCode::kResourceExhausted, "from this address");
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(95));  // half to all of it
  EXPECT_EQ(authenticator->GetStats().password_verifications, 1u);
  // Never longer than the time until the next allowance.
  clock_.Advance(absl::Seconds(9) + absl::Milliseconds(950));
  start = absl::Now();
  ExpectCode(authenticator->Authenticate(Basic("alice", "wrong"), "10.0.0.9"),
             absl::StatusCode::kResourceExhausted, "from this address");
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(150));
}

TEST_F(AuthenticatorLimitsTest, InvalidLimitsAreRefused) {
  AuthConfig config = Config();
  config.password_limits.max_wait = absl::Seconds(-1);
  absl::StatusOr<std::unique_ptr<Authenticator>> authenticator =
      Authenticator::Create(std::move(config));
  ASSERT_FALSE(authenticator.ok());
  EXPECT_THAT(authenticator.status().message(), HasSubstr("passwordChecks.maxWait"));
}

}  // namespace
}  // namespace regatta::auth
