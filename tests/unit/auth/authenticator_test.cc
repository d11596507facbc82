#include "src/api/auth/authenticator.h"

#include <memory>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/api/auth/password.h"
#include "tests/unit/auth/test_util.h"

namespace regatta::auth {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::string Basic(absl::string_view user_colon_password) {
  return absl::StrCat("Basic ", absl::Base64Escape(user_colon_password));
}

class AuthenticatorTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    // Minimum argon2id cost keeps each verification well under a millisecond.
    alice_hash_ = new std::string(*HashPassword("alice-pw", PasswordHashParams::Minimum()));
    bob_hash_ = new std::string(*HashPassword("b:o:b pw", PasswordHashParams::Minimum()));
  }
  static void TearDownTestSuite() {
    delete alice_hash_;
    delete bob_hash_;
  }

  static AuthConfig Config() {
    AuthConfig config;
    config.credentials.users = {{"alice", *alice_hash_, {"team-a"}}, {"bob", *bob_hash_, {}}};
    config.credentials.tokens = {{"ci-bot", HashToken("ci-secret-token"), {"admins", "ci"}}};
    return config;
  }

  static std::unique_ptr<Authenticator> Make(AuthConfig config) {
    return testing::MakeAuthenticator(std::move(config));
  }

  static void ExpectUnauthenticated(const absl::StatusOr<Principal>& result,
                                    absl::string_view message) {
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnauthenticated);
    EXPECT_EQ(result.status().message(), message);
  }

  static std::string* alice_hash_;
  static std::string* bob_hash_;
};

std::string* AuthenticatorTest::alice_hash_ = nullptr;
std::string* AuthenticatorTest::bob_hash_ = nullptr;

TEST_F(AuthenticatorTest, AnonymousDisabledRejectsMissingCredentials) {
  auto authenticator = Make(Config());
  ExpectUnauthenticated(authenticator->Authenticate(""),
                        "no credentials and anonymous access is disabled");
  ExpectUnauthenticated(authenticator->Authenticate("  "),
                        "no credentials and anonymous access is disabled");
}

TEST_F(AuthenticatorTest, AnonymousEnabledGivesConfiguredGroups) {
  AuthConfig config = Config();
  config.anonymous_enabled = true;
  config.anonymous_groups = {"everyone"};
  auto authenticator = Make(std::move(config));
  absl::StatusOr<Principal> principal = authenticator->Authenticate("");
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->name, "anonymous");
  EXPECT_TRUE(principal->anonymous);
  EXPECT_THAT(principal->groups, ElementsAre("everyone"));
  // Credentials that are present are still checked: bad ones never fall back to anonymous.
  ExpectUnauthenticated(authenticator->Authenticate("Bearer wrong"), "invalid bearer token");
}

TEST_F(AuthenticatorTest, BearerTokenAuthenticates) {
  auto authenticator = Make(Config());
  absl::StatusOr<Principal> principal = authenticator->Authenticate("Bearer ci-secret-token");
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->name, "ci-bot");
  EXPECT_FALSE(principal->anonymous);
  EXPECT_THAT(principal->groups, ElementsAre("admins", "ci"));
  // The scheme is case-insensitive and surrounding whitespace is ignored.
  EXPECT_TRUE(authenticator->Authenticate("  bearer   ci-secret-token ").ok());
}

TEST_F(AuthenticatorTest, BearerWrongOrMalformed) {
  auto authenticator = Make(Config());
  ExpectUnauthenticated(authenticator->Authenticate("Bearer ci-secret-tokeN"),
                        "invalid bearer token");
  // The stored SHA-256 is not itself a valid token.
  ExpectUnauthenticated(
      authenticator->Authenticate(absl::StrCat("Bearer ", HashToken("ci-secret-token"))),
      "invalid bearer token");
  ExpectUnauthenticated(authenticator->Authenticate("Bearer"),
                        "malformed bearer credentials (want \"Bearer <token>\")");
  ExpectUnauthenticated(authenticator->Authenticate("Bearer two tokens"),
                        "malformed bearer credentials (want \"Bearer <token>\")");
}

TEST_F(AuthenticatorTest, UnsupportedSchemeDoesNotEchoHeader) {
  auto authenticator = Make(Config());
  absl::StatusOr<Principal> result = authenticator->Authenticate("ci-secret-token");
  ExpectUnauthenticated(result, "unsupported authorization scheme (want Basic or Bearer)");
  ExpectUnauthenticated(authenticator->Authenticate("Digest username=alice"),
                        "unsupported authorization scheme (want Basic or Bearer)");
}

TEST_F(AuthenticatorTest, BasicAuthenticates) {
  auto authenticator = Make(Config());
  absl::StatusOr<Principal> principal = authenticator->Authenticate(Basic("alice:alice-pw"));
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->name, "alice");
  EXPECT_THAT(principal->groups, ElementsAre("team-a"));
  // The password is everything after the first colon, colons and spaces included.
  principal = authenticator->Authenticate(Basic("bob:b:o:b pw"));
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->name, "bob");
  EXPECT_THAT(principal->groups, IsEmpty());
}

TEST_F(AuthenticatorTest, BasicWrongPasswordAndUnknownUserLookTheSame) {
  auto authenticator = Make(Config());
  ExpectUnauthenticated(authenticator->Authenticate(Basic("alice:wrong")),
                        "invalid username or password");
  ExpectUnauthenticated(authenticator->Authenticate(Basic("alice:")),
                        "invalid username or password");
  ExpectUnauthenticated(authenticator->Authenticate(Basic("mallory:alice-pw")),
                        "invalid username or password");
  // Token principals cannot log in with basic auth.
  ExpectUnauthenticated(authenticator->Authenticate(Basic("ci-bot:ci-secret-token")),
                        "invalid username or password");
  // Unknown users cost a (decoy) verification too, so timing does not reveal them.
  EXPECT_EQ(authenticator->GetStats().password_verifications, 4u);
}

TEST_F(AuthenticatorTest, BasicMalformed) {
  auto authenticator = Make(Config());
  ExpectUnauthenticated(authenticator->Authenticate("Basic !!!notbase64"),
                        "malformed basic credentials: not valid base64");
  ExpectUnauthenticated(authenticator->Authenticate("Basic"),
                        "malformed basic credentials: want base64 of \"user:password\"");
  ExpectUnauthenticated(authenticator->Authenticate(Basic("alice")),
                        "malformed basic credentials: want base64 of \"user:password\"");
  // Unpadded base64 is tolerated.
  std::string unpadded = Basic("alice:alice-pw");
  while (unpadded.back() == '=') unpadded.pop_back();
  EXPECT_TRUE(authenticator->Authenticate(unpadded).ok());
}

TEST_F(AuthenticatorTest, SuccessfulVerificationIsCached) {
  auto authenticator = Make(Config());
  ASSERT_TRUE(authenticator->Authenticate(Basic("alice:alice-pw")).ok());
  EXPECT_EQ(authenticator->GetStats().password_verifications, 1u);
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(authenticator->Authenticate(Basic("alice:alice-pw")).ok());
  }
  Authenticator::Stats stats = authenticator->GetStats();
  EXPECT_EQ(stats.password_verifications, 1u);
  EXPECT_EQ(stats.password_cache_hits, 100u);
  EXPECT_EQ(stats.password_cache_size, 1u);

  // A wrong password after a success is still verified and rejected, and never cached.
  for (int i = 0; i < 2; ++i) {
    ExpectUnauthenticated(authenticator->Authenticate(Basic("alice:alice-pW")),
                          "invalid username or password");
  }
  stats = authenticator->GetStats();
  EXPECT_EQ(stats.password_verifications, 3u);
  EXPECT_EQ(stats.password_cache_size, 1u);
  // Another user's password does not hit alice's entry.
  ExpectUnauthenticated(authenticator->Authenticate(Basic("bob:alice-pw")),
                        "invalid username or password");
}

TEST_F(AuthenticatorTest, ChangedPasswordHashInvalidatesCache) {
  auto before = Make(Config());
  ASSERT_TRUE(before->Authenticate(Basic("alice:alice-pw")).ok());

  // A reloaded users file builds a new Authenticator; and the cache key includes the stored
  // hash, so even a shared cache could not let the old password through.
  AuthConfig config = Config();
  config.credentials.users[0].password_hash =
      *HashPassword("new-pw", PasswordHashParams::Minimum());
  auto after = Make(std::move(config));
  ExpectUnauthenticated(after->Authenticate(Basic("alice:alice-pw")),
                        "invalid username or password");
  EXPECT_TRUE(after->Authenticate(Basic("alice:new-pw")).ok());
}

TEST_F(AuthenticatorTest, CacheIsBounded) {
  AuthConfig config;
  for (int i = 0; i < 10; ++i) {
    config.credentials.users.push_back({absl::StrCat("user", i), *alice_hash_, {}});
  }
  config.password_cache_capacity = 4;
  auto authenticator = Make(std::move(config));
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(authenticator->Authenticate(Basic(absl::StrCat("user", i, ":alice-pw"))).ok());
    EXPECT_LE(authenticator->GetStats().password_cache_size, 4u);
  }
  // The most recent user is still cached; the first was evicted and is verified again.
  ASSERT_TRUE(authenticator->Authenticate(Basic("user9:alice-pw")).ok());
  EXPECT_EQ(authenticator->GetStats().password_verifications, 10u);
  ASSERT_TRUE(authenticator->Authenticate(Basic("user0:alice-pw")).ok());
  EXPECT_EQ(authenticator->GetStats().password_verifications, 11u);
}

TEST_F(AuthenticatorTest, CacheCanBeDisabled) {
  AuthConfig config = Config();
  config.password_cache_capacity = 0;
  auto authenticator = Make(std::move(config));
  ASSERT_TRUE(authenticator->Authenticate(Basic("alice:alice-pw")).ok());
  ASSERT_TRUE(authenticator->Authenticate(Basic("alice:alice-pw")).ok());
  EXPECT_EQ(authenticator->GetStats().password_verifications, 2u);
  EXPECT_EQ(authenticator->GetStats().password_cache_size, 0u);
}

TEST_F(AuthenticatorTest, NoUsersConfigured) {
  auto authenticator = Make(AuthConfig{});
  ExpectUnauthenticated(authenticator->Authenticate(Basic("alice:alice-pw")),
                        "invalid username or password");
  ExpectUnauthenticated(authenticator->Authenticate("Bearer x"), "invalid bearer token");
  EXPECT_EQ(authenticator->GetStats().password_verifications, 0u);
}

TEST_F(AuthenticatorTest, CreateValidatesConfig) {
  AuthConfig config = Config();
  config.credentials.users.push_back({"alice", *alice_hash_, {}});
  absl::StatusOr<std::unique_ptr<Authenticator>> result = Authenticator::Create(config);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(result.status().message(), HasSubstr("users[2].name: duplicate user \"alice\""));

  config = Config();
  config.anonymous_groups = {""};
  result = Authenticator::Create(config);
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("anonymous.groups[0]: must not be empty"));
}

}  // namespace
}  // namespace regatta::auth
