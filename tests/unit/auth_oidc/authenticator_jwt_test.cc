// The Authenticator's hook for bearer JWTs: static tokens first, then the verifier for tokens
// shaped like a JWT.
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/api/auth/authenticator.h"
#include "src/api/auth/password.h"
#include "src/api/auth/token_verifier.h"

namespace regatta::auth {
namespace {

using ::testing::HasSubstr;

class RecordingVerifier final : public TokenVerifier {
 public:
  absl::StatusOr<Principal> Verify(absl::string_view token) const override {
    seen.emplace_back(token);
    if (token == "aaa.bbb.ccc") return Principal{"jwt-user", {"team-a"}, false};
    return absl::UnauthenticatedError("signature does not verify");
  }
  mutable std::vector<std::string> seen;
};

TEST(LooksLikeJwtTest, ThreeBase64UrlParts) {
  EXPECT_TRUE(LooksLikeJwt("eyJh.eyJz.c2ln"));
  EXPECT_TRUE(LooksLikeJwt("eyJh.eyJz."));  // alg none: refused by the verifier, by name
  EXPECT_FALSE(LooksLikeJwt("ci-token"));
  EXPECT_FALSE(LooksLikeJwt("a.b"));
  EXPECT_FALSE(LooksLikeJwt("a..c"));
  EXPECT_FALSE(LooksLikeJwt(".b.c"));
  EXPECT_FALSE(LooksLikeJwt("a.b.c.d"));
  EXPECT_FALSE(LooksLikeJwt("a+b.c.d"));
}

TEST(AuthenticatorJwtTest, JwtsGoToTheVerifierStaticTokensStillWork) {
  auto verifier = std::make_shared<RecordingVerifier>();
  AuthConfig config;
  config.credentials.tokens.push_back({"ci-bot", HashToken("ci-token"), {"team-ci"}});
  config.credentials.tokens.push_back({"dotted", HashToken("x.y.z"), {"team-d"}});
  config.jwt_verifier = verifier;
  auto authenticator = Authenticator::Create(std::move(config));
  ASSERT_TRUE(authenticator.ok()) << authenticator.status();

  absl::StatusOr<Principal> p = (*authenticator)->Authenticate("Bearer aaa.bbb.ccc");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "jwt-user");
  EXPECT_THAT(p->groups, ::testing::ElementsAre("team-a"));

  p = (*authenticator)->Authenticate("Bearer aaa.bbb.ddd");
  ASSERT_FALSE(p.ok());
  EXPECT_EQ(p.status().code(), absl::StatusCode::kUnauthenticated);
  EXPECT_THAT(p.status().message(), HasSubstr("signature does not verify"));

  p = (*authenticator)->Authenticate("Bearer ci-token");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "ci-bot");
  // A static token that happens to contain dots still matches the users file.
  p = (*authenticator)->Authenticate("Bearer x.y.z");
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->name, "dotted");

  EXPECT_THAT((*authenticator)->Authenticate("Bearer not-a-jwt").status().message(),
              HasSubstr("invalid bearer token"));
  EXPECT_EQ(verifier->seen, (std::vector<std::string>{"aaa.bbb.ccc", "aaa.bbb.ddd"}));
}

TEST(AuthenticatorJwtTest, WithoutOidcAJwtIsJustAnUnknownToken) {
  AuthConfig config;
  auto authenticator = Authenticator::Create(std::move(config));
  ASSERT_TRUE(authenticator.ok());
  EXPECT_THAT((*authenticator)->Authenticate("Bearer aaa.bbb.ccc").status().message(),
              HasSubstr("invalid bearer token"));
}

}  // namespace
}  // namespace regatta::auth
