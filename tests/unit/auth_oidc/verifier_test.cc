#include "src/api/auth/oidc/verifier.h"

#include <memory>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/common/clock.h"
#include "tests/testing/oidc/test_issuer.h"
#include "tests/testing/test_dir.h"
#include "tests/unit/auth_oidc/fake_jwks_source.h"

namespace regatta::auth::oidc {
namespace {

using ::nlohmann::json;
using ::regatta::testing::TestSigningKey;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kIssuer[] = "https://issuer.example.com/realms/regatta";
constexpr char kAudience[] = "regatta";

class OidcVerifierTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    const std::string dir = regatta::testing::MakeTestDir("oidc-keys-");
    ASSERT_FALSE(dir.empty());
    auto make = [&](TestSigningKey::Kind kind, const char* kid, const char* file) {
      auto key = TestSigningKey::Generate(kind, kid, absl::StrCat(dir, "/", file));
      EXPECT_TRUE(key.ok()) << key.status();
      return key.ok() ? std::move(*key) : nullptr;
    };
    std::filesystem::create_directories(dir + "/a");
    std::filesystem::create_directories(dir + "/b");
    rsa_ = make(TestSigningKey::Kind::kRsa2048, "rsa-1", "a").release();
    ec_ = make(TestSigningKey::Kind::kEcP256, "ec-1", "a").release();
    // Same kid as rsa_, different key: what a forger would sign with.
    forged_rsa_ = make(TestSigningKey::Kind::kRsa2048, "rsa-1", "b").release();
    rotated_ = make(TestSigningKey::Kind::kEcP256, "ec-2", "a").release();
  }

  void SetUp() override {
    ASSERT_NE(rsa_, nullptr);
    state_ = std::make_shared<FakeJwksState>();
    state_->document = regatta::testing::JwksJson({rsa_, ec_});
    options_.rules.issuer = kIssuer;
    options_.rules.audience = kAudience;
    options_.clock = &clock_;
  }

  std::unique_ptr<OidcVerifier> Verifier() {
    auto verifier = OidcVerifier::Create(options_, std::make_unique<FakeJwksSource>(state_),
                                         /*require_keys=*/true);
    EXPECT_TRUE(verifier.ok()) << verifier.status();
    return verifier.ok() ? std::move(*verifier) : nullptr;
  }

  int64_t Now() const { return absl::ToUnixSeconds(clock_.Now()); }

  json Claims() const {
    return {{"iss", kIssuer},    {"aud", kAudience},  {"sub", "user-123"},   {"exp", Now() + 3600},
            {"nbf", Now() - 10}, {"iat", Now() - 10}, {"groups", {"team-a"}}};
  }

  static void ExpectRefused(const absl::StatusOr<Principal>& result, const std::string& why) {
    ASSERT_FALSE(result.ok());
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnauthenticated) << result.status();
    EXPECT_THAT(result.status().message(), HasSubstr(why));
  }

  static TestSigningKey* rsa_;
  static TestSigningKey* ec_;
  static TestSigningKey* forged_rsa_;
  static TestSigningKey* rotated_;
  FakeClock clock_;
  std::shared_ptr<FakeJwksState> state_;
  VerifierOptions options_;
};

TestSigningKey* OidcVerifierTest::rsa_ = nullptr;
TestSigningKey* OidcVerifierTest::ec_ = nullptr;
TestSigningKey* OidcVerifierTest::forged_rsa_ = nullptr;
TestSigningKey* OidcVerifierTest::rotated_ = nullptr;

TEST_F(OidcVerifierTest, AcceptsRs256AndEs256) {
  auto verifier = Verifier();
  for (TestSigningKey* key : {rsa_, ec_}) {
    absl::StatusOr<Principal> principal = verifier->Verify(key->Sign(Claims()));
    ASSERT_TRUE(principal.ok()) << key->alg() << ": " << principal.status();
    EXPECT_EQ(principal->name, "user-123");
    EXPECT_THAT(principal->groups, ElementsAre("team-a"));
    EXPECT_FALSE(principal->anonymous);
  }
}

TEST_F(OidcVerifierTest, AcceptsATokenWithoutKidByTryingTheKeysOfItsAlgorithm) {
  auto verifier = Verifier();
  EXPECT_TRUE(verifier->Verify(ec_->Sign(Claims(), {{"kid", nullptr}})).ok());
  ExpectRefused(verifier->Verify(forged_rsa_->Sign(Claims(), {{"kid", nullptr}})),
                "signature does not verify");
}

TEST_F(OidcVerifierTest, RefusesExpiredTokensBeyondTheClockSkew) {
  auto verifier = Verifier();
  json claims = Claims();
  claims["exp"] = Now() - 30;  // within the 60 s skew
  EXPECT_TRUE(verifier->Verify(rsa_->Sign(claims)).ok());
  claims["exp"] = Now() - 61;
  ExpectRefused(verifier->Verify(rsa_->Sign(claims)), "token expired at ");
  claims.erase("exp");
  ExpectRefused(verifier->Verify(rsa_->Sign(claims)), "token has no \"exp\" claim");
}

TEST_F(OidcVerifierTest, RefusesNotYetValidTokens) {
  auto verifier = Verifier();
  json claims = Claims();
  claims["nbf"] = Now() + 120;
  ExpectRefused(verifier->Verify(rsa_->Sign(claims)), "token is not valid before ");
  claims["nbf"] = Now() - 10;
  claims["iat"] = Now() + 600;
  ExpectRefused(verifier->Verify(rsa_->Sign(claims)), "issued in the future");
}

TEST_F(OidcVerifierTest, RefusesTheWrongIssuerOrAudience) {
  auto verifier = Verifier();
  json claims = Claims();
  claims["iss"] = "https://evil.example.com";
  ExpectRefused(verifier->Verify(rsa_->Sign(claims)),
                "token issuer \"https://evil.example.com\" is not \"https://issuer.example.com");
  claims = Claims();
  claims["aud"] = "other-app";
  ExpectRefused(verifier->Verify(rsa_->Sign(claims)),
                "token audience [\"other-app\"] is not \"regatta\"");
  claims["aud"] = {"other-app", "account"};
  ExpectRefused(verifier->Verify(rsa_->Sign(claims)),
                "token audience [\"other-app\", \"account\"]");
  claims["aud"] = {"account", kAudience};
  EXPECT_TRUE(verifier->Verify(rsa_->Sign(claims)).ok());
}

TEST_F(OidcVerifierTest, RefusesAWrongSignature) {
  auto verifier = Verifier();
  ExpectRefused(verifier->Verify(forged_rsa_->Sign(Claims())), "signature does not verify");
  // A valid token with its payload swapped for another user's.
  std::string good = rsa_->Sign(Claims());
  json claims = Claims();
  claims["groups"] = {"admins"};
  std::string other = rsa_->Sign(claims);
  std::string spliced = good.substr(0, good.find('.')) +
                        other.substr(other.find('.'), other.rfind('.') - other.find('.')) +
                        good.substr(good.rfind('.'));
  ExpectRefused(verifier->Verify(spliced), "signature does not verify");
}

TEST_F(OidcVerifierTest, RefusesAlgNoneHmacAndAlgorithmsOutsideTheAllowList) {
  auto verifier = Verifier();
  ExpectRefused(verifier->Verify(regatta::testing::UnsignedJwt(Claims())),
                "token algorithm \"none\" is not allowed (want RS256 or ES256)");
  // The classic confusion: HS256 keyed with the issuer's public key. Refused before any key use.
  std::string hs = rsa_->Sign(Claims(), {{"alg", "HS256"}});
  ExpectRefused(verifier->Verify(hs), "token algorithm \"HS256\" is not allowed");
  ExpectRefused(verifier->Verify(rsa_->Sign(Claims(), {{"alg", "PS256"}})),
                "token algorithm \"PS256\" is not allowed");

  options_.algorithms = {Algorithm::kRS256};
  auto rs_only = Verifier();
  ExpectRefused(rs_only->Verify(ec_->Sign(Claims())),
                "token algorithm \"ES256\" is not allowed (want RS256)");
  EXPECT_TRUE(rs_only->Verify(rsa_->Sign(Claims())).ok());
}

TEST_F(OidcVerifierTest, RefusesAKeyOfTheWrongType) {
  auto verifier = Verifier();
  ExpectRefused(verifier->Verify(rsa_->Sign(Claims(), {{"kid", "ec-1"}})),
                "key \"ec-1\" is EC P-256, not usable with RS256");
}

TEST_F(OidcVerifierTest, UnknownKidRefetchesTheKeysAtMostOncePerInterval) {
  auto verifier = Verifier();
  ASSERT_EQ(state_->fetches, 1);
  for (int i = 0; i < 20; ++i) {
    ExpectRefused(verifier->Verify(rsa_->Sign(Claims(), {{"kid", absl::StrCat("forged-", i)}})),
                  absl::StrCat("unknown key id \"forged-", i, "\""));
    clock_.Advance(absl::Seconds(1));
  }
  // The keys were fetched 20 s ago: no refetch within 30 s of that, however many kids.
  EXPECT_EQ(state_->fetches, 1);
  clock_.Advance(absl::Seconds(15));
  ExpectRefused(verifier->Verify(rsa_->Sign(Claims(), {{"kid", "forged-x"}})), "unknown key id");
  EXPECT_EQ(state_->fetches, 2);
  ExpectRefused(verifier->Verify(rsa_->Sign(Claims(), {{"kid", "forged-y"}})), "unknown key id");
  EXPECT_EQ(state_->fetches, 2);
}

TEST_F(OidcVerifierTest, PicksUpRotatedKeysOnAnUnknownKid) {
  auto verifier = Verifier();
  clock_.Advance(absl::Seconds(31));
  {
    absl::MutexLock lock(&state_->mu);
    state_->document = regatta::testing::JwksJson({rsa_, rotated_});
  }
  absl::StatusOr<Principal> principal = verifier->Verify(rotated_->Sign(Claims()));
  EXPECT_TRUE(principal.ok()) << principal.status();
  // ec-1 is gone from the set: its tokens are refused from now on.
  ExpectRefused(verifier->Verify(ec_->Sign(Claims())), "unknown key id \"ec-1\"");
}

TEST_F(OidcVerifierTest, KeepsTheLastGoodKeysWhenARefreshFails) {
  auto verifier = Verifier();
  clock_.Advance(absl::Minutes(6));  // past the refresh interval
  {
    absl::MutexLock lock(&state_->mu);
    state_->error = absl::UnavailableError("issuer down");
  }
  EXPECT_TRUE(verifier->Verify(rsa_->Sign(Claims())).ok());
  EXPECT_EQ(verifier->GetStats().key_fetch_failures, 1u);
  {
    absl::MutexLock lock(&state_->mu);
    state_->error = absl::OkStatus();
    state_->document = "{\"keys\": 42}";  // garbage from the issuer: also kept out
  }
  clock_.Advance(absl::Seconds(31));
  EXPECT_TRUE(verifier->Verify(ec_->Sign(Claims())).ok());
  EXPECT_EQ(verifier->GetStats().key_fetch_failures, 2u);
  EXPECT_EQ(verifier->GetStats().keys, 2u);
}

TEST_F(OidcVerifierTest, CachesVerifiedTokensUntilTheyExpire) {
  auto verifier = Verifier();
  json claims = Claims();
  claims["exp"] = Now() + 100;
  const std::string token = ec_->Sign(claims);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(verifier->Verify(token).ok());
  EXPECT_EQ(verifier->GetStats().signature_checks, 1u);
  EXPECT_EQ(verifier->GetStats().cache_hits, 4u);
  clock_.Advance(absl::Seconds(161));
  ExpectRefused(verifier->Verify(token), "token expired at ");
}

TEST_F(OidcVerifierTest, ARemovedKeyAlsoRefusesItsCachedTokens) {
  auto verifier = Verifier();
  const std::string token = rsa_->Sign(Claims());
  ASSERT_TRUE(verifier->Verify(token).ok());
  ASSERT_TRUE(verifier->Verify(token).ok());
  EXPECT_EQ(verifier->GetStats().cache_hits, 1u);
  {
    absl::MutexLock lock(&state_->mu);
    state_->document = regatta::testing::JwksJson({ec_});  // rsa-1 revoked
  }
  clock_.Advance(absl::Minutes(6));
  ExpectRefused(verifier->Verify(token), "unknown key id \"rsa-1\"");
}

TEST_F(OidcVerifierTest, TheCacheIsBounded) {
  options_.token_cache_capacity = 3;
  auto verifier = Verifier();
  for (int i = 0; i < 10; ++i) {
    json claims = Claims();
    claims["sub"] = absl::StrCat("user-", i);
    ASSERT_TRUE(verifier->Verify(ec_->Sign(claims)).ok());
  }
  EXPECT_EQ(verifier->GetStats().signature_checks, 10u);
}

TEST_F(OidcVerifierTest, MapsConfiguredClaimsWithPrefixes) {
  options_.rules.username_claim = "preferred_username";
  options_.rules.groups_claim = "realm_access.roles";
  options_.rules.username_prefix = "oidc:";
  options_.rules.groups_prefix = "kc-";
  auto verifier = Verifier();
  json claims = Claims();
  claims["preferred_username"] = "carol";
  claims["realm_access"] = {{"roles", {"team-a", "team-b"}}};
  absl::StatusOr<Principal> principal = verifier->Verify(rsa_->Sign(claims));
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_EQ(principal->name, "oidc:carol");
  EXPECT_THAT(principal->groups, ElementsAre("kc-team-a", "kc-team-b"));

  claims["realm_access"] = {{"roles", {"team-a", 7}}};
  ExpectRefused(verifier->Verify(rsa_->Sign(claims)),
                "token claim \"realm_access.roles\" is not a list of strings");
  claims.erase("preferred_username");
  ExpectRefused(verifier->Verify(rsa_->Sign(claims)),
                "token has no string claim \"preferred_username\"");
}

TEST_F(OidcVerifierTest, GroupsClaimNamedLikeAUrl) {
  options_.rules.groups_claim = "https://regatta.example.com/groups";
  auto verifier = Verifier();
  json claims = Claims();
  claims["https://regatta.example.com/groups"] = {"team-x"};
  absl::StatusOr<Principal> principal = verifier->Verify(rsa_->Sign(claims));
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_THAT(principal->groups, ElementsAre("team-x"));
  claims.erase("https://regatta.example.com/groups");
  principal = verifier->Verify(rsa_->Sign(claims));
  ASSERT_TRUE(principal.ok()) << principal.status();
  EXPECT_TRUE(principal->groups.empty());
}

TEST_F(OidcVerifierTest, RefusesTheReservedAnonymousName) {
  auto verifier = Verifier();
  json claims = Claims();
  claims["sub"] = "anonymous";
  ExpectRefused(verifier->Verify(rsa_->Sign(claims)), "is reserved");
}

TEST_F(OidcVerifierTest, MalformedTokensAreRefusedNeverCrash) {
  auto verifier = Verifier();
  const std::string good = rsa_->Sign(Claims());
  std::vector<std::string> garbage = {
      "",
      ".",
      "..",
      "a.b",
      "a.b.c.d",
      "!!.b.c",
      "a.b.c",
      regatta::testing::Base64Url("[1,2]") + ".e30.c2ln",
      regatta::testing::Base64Url("{\"alg\":7}") + ".e30.c2ln",
      regatta::testing::Base64Url("{\"alg\":\"RS256\",\"kid\":[]}") + ".e30.c2ln",
      regatta::testing::Base64Url("{\"alg\":\"RS256\",\"crit\":[\"b64\"]}") + ".e30.c2ln",
      regatta::testing::Base64Url(std::string(1000, '[') + std::string(1000, ']')) + ".e30.c2ln",
      std::string(kMaxTokenBytes + 1, 'a'),
  };
  // Every truncation of a valid token.
  for (size_t n = 0; n < good.size(); n += 7) garbage.push_back(good.substr(0, n));
  // Random base64url-ish strings with dots.
  std::mt19937 rng(42);
  const std::string alphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.=+/ ";
  for (int i = 0; i < 300; ++i) {
    std::string s(rng() % 200, 'x');
    for (char& c : s) c = alphabet[rng() % alphabet.size()];
    garbage.push_back(s);
  }
  // A signed token whose payload is deeply nested JSON or not JSON at all.
  json deep = Claims();
  std::string nested = std::string(3000, '[') + std::string(3000, ']');
  deep["x"] = json::parse(nested);
  garbage.push_back(rsa_->Sign(deep));  // valid: nesting in an unused claim is harmless
  for (const std::string& token : garbage) {
    absl::StatusOr<Principal> result = verifier->Verify(token);
    if (token == garbage.back()) {
      EXPECT_TRUE(result.ok()) << result.status();
      continue;
    }
    ASSERT_FALSE(result.ok()) << token;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kUnauthenticated) << token;
  }
}

TEST_F(OidcVerifierTest, KeySetParsingSkipsForeignKeysAndRefusesBadOnes) {
  json doc = json::parse(regatta::testing::JwksJson({rsa_}));
  doc["keys"].push_back({{"kty", "RSA"}, {"use", "enc"}, {"n", "AQAB"}, {"e", "AQAB"}});
  doc["keys"].push_back({{"kty", "OKP"}, {"crv", "Ed25519"}, {"x", "AAAA"}});
  doc["keys"].push_back({{"kty", "EC"}, {"crv", "P-384"}, {"x", "AAAA"}, {"y", "AAAA"}});
  auto set = JsonWebKeySet::Parse(doc.dump());
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ((*set)->size(), 1u);
  EXPECT_EQ((*set)->skipped().size(), 3u);

  EXPECT_THAT(JsonWebKeySet::Parse("[]").status().message(), HasSubstr("\"keys\" array"));
  EXPECT_THAT(JsonWebKeySet::Parse("{\"keys\": []}").status().message(),
              HasSubstr("no usable signing key"));
  json small = {{"keys", {{{"kty", "RSA"}, {"n", "AQAB"}, {"e", "AQAB"}}}}};
  EXPECT_THAT(JsonWebKeySet::Parse(small.dump()).status().message(),
              HasSubstr("JWKS keys[0]: RSA key of"));
  json missing = {{"keys", {{{"kty", "EC"}, {"crv", "P-256"}, {"x", "AAAA"}}}}};
  EXPECT_THAT(JsonWebKeySet::Parse(missing.dump()).status().message(),
              HasSubstr("JWKS keys[0]: missing \"y\""));
}

TEST_F(OidcVerifierTest, CreateWithRequiredKeysFailsOnABadKeySet) {
  state_->document = "not json";
  auto verifier = OidcVerifier::Create(options_, std::make_unique<FakeJwksSource>(state_),
                                       /*require_keys=*/true);
  ASSERT_FALSE(verifier.ok());
  EXPECT_THAT(verifier.status().message(), HasSubstr("fake-jwks: JWKS: not valid JSON"));
  // Not required (a URL): starts, refuses tokens with the reason, recovers on a later fetch.
  auto lenient = OidcVerifier::Create(options_, std::make_unique<FakeJwksSource>(state_),
                                      /*require_keys=*/false);
  ASSERT_TRUE(lenient.ok());
  ExpectRefused((*lenient)->Verify(rsa_->Sign(Claims())),
                "no signing keys loaded from fake-jwks: fake-jwks: JWKS: not valid JSON");
  state_->document = regatta::testing::JwksJson({rsa_});
  clock_.Advance(absl::Seconds(31));
  EXPECT_TRUE((*lenient)->Verify(rsa_->Sign(Claims())).ok());
}

}  // namespace
}  // namespace regatta::auth::oidc
