// The auth.oidc section: off by default, and every inconsistent setting is refused naming the key.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/server/config.h"
#include "src/server/oidc.h"

namespace regatta::server {
namespace {

using ::testing::HasSubstr;

absl::StatusOr<ServerConfig> Load(std::vector<std::string> overrides) {
  UpFlags flags;
  flags.overrides = std::move(overrides);
  return LoadServerConfig(flags, {});
}

const std::vector<std::string> kValid = {"auth.oidc.issuer=https://issuer",
                                         "auth.oidc.audience=regatta",
                                         "auth.oidc.jwksUrl=https://issuer/certs"};

std::vector<std::string> With(std::vector<std::string> extra) {
  std::vector<std::string> all = kValid;
  all.insert(all.end(), extra.begin(), extra.end());
  return all;
}

TEST(OidcConfigTest, OffByDefault) {
  absl::StatusOr<ServerConfig> config = Load({});
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->oidc.issuer, "");
  EXPECT_EQ(config->oidc.groups_claim, "groups");
  EXPECT_EQ(config->oidc.username_claim, "sub");
  EXPECT_EQ(config->oidc.clock_skew, absl::Seconds(60));
  absl::StatusOr<std::shared_ptr<const auth::TokenVerifier>> verifier =
      MakeOidcVerifier(config->oidc, nullptr);
  ASSERT_TRUE(verifier.ok());
  EXPECT_EQ(*verifier, nullptr);
}

TEST(OidcConfigTest, AValidSectionLoads) {
  absl::StatusOr<ServerConfig> config =
      Load(With({"auth.oidc.groupsClaim=realm_access.roles", "auth.oidc.algorithms=[ES256]"}));
  ASSERT_TRUE(config.ok()) << config.status();
  EXPECT_EQ(config->oidc.groups_claim, "realm_access.roles");
  EXPECT_EQ(config->oidc.algorithms, std::vector<std::string>{"ES256"});
}

TEST(OidcConfigTest, InconsistentSettingsNameTheKey) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"auth.oidc.jwksFile=/x"}, "auth.oidc.issuer: must be set"},
      {{"auth.oidc.issuer=https://i", "auth.oidc.jwksFile=/x"}, "auth.oidc.audience: must be set"},
      {With({"auth.oidc.jwksFile=/x"}), "auth.oidc.jwksFile, jwksUrl: set exactly one"},
      {{"auth.oidc.issuer=https://i", "auth.oidc.audience=a"}, "set exactly one"},
      {{"auth.oidc.issuer=https://i", "auth.oidc.audience=a", "auth.oidc.jwksUrl=file:///x"},
       "auth.oidc.jwksUrl: must be an http:// or https:// URL"},
      {With({"auth.oidc.algorithms=[HS256]"}), "auth.oidc.algorithms: \"HS256\" is not supported"},
      {With({"auth.oidc.algorithms=[]"}), "auth.oidc.algorithms: must not be empty"},
      {With({"auth.oidc.groupsClaim=\"\""}), "groupsClaim: must not be empty"},
      {With({"auth.oidc.minRefreshInterval=0s"}), "auth.oidc.refreshInterval"},
      {With({"auth.oidc.refreshInterval=1s"}), "auth.oidc.refreshInterval"},
      {With({"auth.oidc.tokenCacheSize=-1"}), "auth.oidc.tokenCacheSize"},
      {With({"auth.oidc.clockSkew=soon"}), "auth.oidc.clockSkew"},
  };
  for (const auto& [overrides, why] : cases) {
    absl::StatusOr<ServerConfig> config = Load(overrides);
    ASSERT_FALSE(config.ok()) << why;
    EXPECT_EQ(config.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(config.status().message(), HasSubstr(why));
  }
}

TEST(OidcConfigTest, AMissingJwksFileIsAStartupError) {
  absl::StatusOr<ServerConfig> config =
      Load({"auth.oidc.issuer=https://i", "auth.oidc.audience=a", "auth.oidc.jwksFile=/nope.json"});
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::shared_ptr<const auth::TokenVerifier>> verifier =
      MakeOidcVerifier(config->oidc, nullptr);
  ASSERT_FALSE(verifier.ok());
  EXPECT_THAT(verifier.status().message(), HasSubstr("auth.oidc: JWKS file /nope.json"));
}

}  // namespace
}  // namespace regatta::server
