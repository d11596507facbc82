#include "src/server/anonymous_access.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/server/config.h"

namespace regatta::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ServerConfig Load(std::vector<std::string> overrides) {
  UpFlags flags;
  flags.overrides = std::move(overrides);
  absl::StatusOr<ServerConfig> config = LoadServerConfig(flags, {});
  EXPECT_TRUE(config.ok()) << config.status();
  return config.ok() ? *config : ServerConfig{};
}

TEST(AnonymousAccessTest, AutoOnLoopbackUpIsAnonymousAdmin) {
  ServerConfig config = Load({});
  absl::StatusOr<AnonymousAccess> access = ResolveAnonymousAccess(config, true, "127.0.0.1:0");
  ASSERT_TRUE(access.ok()) << access.status();
  EXPECT_TRUE(access->enabled);
  EXPECT_THAT(access->groups, ElementsAre("admins"));
  EXPECT_THAT(access->warning, IsEmpty());
  // `regatta server` never turns it on by itself.
  access = ResolveAnonymousAccess(config, false, "");
  ASSERT_TRUE(access.ok());
  EXPECT_FALSE(access->enabled);
}

TEST(AnonymousAccessTest, AutoWithANetworkListenerIsOffAndSaysWhy) {
  for (const auto& [overrides, logs, key] :
       std::vector<std::tuple<std::vector<std::string>, std::string, std::string>>{
           {{"api.httpListen=0.0.0.0:8080"}, "", "api.httpListen"},
           {{"api.grpcListen='[::]:50051'"}, "", "api.grpcListen"},
           {{}, "0.0.0.0:0", "executor.logsListen"}}) {
    absl::StatusOr<AnonymousAccess> access = ResolveAnonymousAccess(Load(overrides), true, logs);
    ASSERT_TRUE(access.ok()) << access.status();
    EXPECT_FALSE(access->enabled) << key;
    EXPECT_THAT(access->note, HasSubstr(key));
  }
}

TEST(AnonymousAccessTest, TrueOnANetworkAddressIsRefusedNamingTheKeyAndListener) {
  ServerConfig config = Load({"auth.anonymous=true", "api.grpcListen=0.0.0.0:50051"});
  absl::StatusOr<AnonymousAccess> access = ResolveAnonymousAccess(config, false, "");
  ASSERT_FALSE(access.ok());
  EXPECT_EQ(access.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(access.status().message(), HasSubstr("auth.anonymous is true"));
  EXPECT_THAT(access.status().message(), HasSubstr("api.grpcListen (0.0.0.0:50051)"));
  EXPECT_THAT(access.status().message(), HasSubstr("auth.allowAnonymousOnNetwork"));
  // The embedded executor's log listener counts too.
  config = Load({"auth.anonymous=true"});
  access = ResolveAnonymousAccess(config, true, "10.1.2.3:7000");
  ASSERT_FALSE(access.ok());
  EXPECT_THAT(access.status().message(), HasSubstr("executor.logsListen (10.1.2.3:7000)"));
}

TEST(AnonymousAccessTest, ForcedOnANetworkAddressWarnsLoudly) {
  ServerConfig config =
      Load({"auth.anonymous=true", "auth.allowAnonymousOnNetwork=true",
            "auth.anonymousGroups=[watchers]", "api.httpListen=192.168.1.5:8080"});
  absl::StatusOr<AnonymousAccess> access = ResolveAnonymousAccess(config, false, "");
  ASSERT_TRUE(access.ok()) << access.status();
  EXPECT_TRUE(access->enabled);
  EXPECT_THAT(access->groups, ElementsAre("watchers"));
  EXPECT_THAT(access->warning, HasSubstr("ANONYMOUS ACCESS FROM THE NETWORK"));
  EXPECT_THAT(access->warning, HasSubstr("api.httpListen (192.168.1.5:8080)"));
  EXPECT_THAT(access->warning, HasSubstr("[watchers]"));
}

TEST(AnonymousAccessTest, TrueGetsNoGroupsUnlessNamed) {
  absl::StatusOr<AnonymousAccess> access =
      ResolveAnonymousAccess(Load({"auth.anonymous=true"}), false, "");
  ASSERT_TRUE(access.ok()) << access.status();
  EXPECT_TRUE(access->enabled);
  EXPECT_THAT(access->groups, IsEmpty());
  EXPECT_THAT(access->warning, IsEmpty());  // loopback: nothing to warn about
  access = ResolveAnonymousAccess(Load({"auth.anonymous=true", "auth.anonymousGroups=[admins]"}),
                                  false, "");
  ASSERT_TRUE(access.ok());
  EXPECT_THAT(access->groups, ElementsAre("admins"));
  // auto with groups named: those.
  access = ResolveAnonymousAccess(Load({"auth.anonymousGroups=[a, b]"}), true, "");
  ASSERT_TRUE(access.ok());
  EXPECT_THAT(access->groups, ElementsAre("a", "b"));
}

TEST(AnonymousAccessTest, FalseIsOff) {
  absl::StatusOr<AnonymousAccess> access =
      ResolveAnonymousAccess(Load({"auth.anonymous=false", "api.httpListen=0.0.0.0:1"}), true, "");
  ASSERT_TRUE(access.ok());
  EXPECT_FALSE(access->enabled);
  EXPECT_THAT(access->note, IsEmpty());
}

TEST(PasswordChecksConfigTest, DefaultsAndErrorsNameTheKey) {
  ServerConfig config = Load({});
  EXPECT_EQ(config.password_limits.max_concurrent, 0);
  EXPECT_EQ(config.password_limits.max_wait, absl::Seconds(1));
  EXPECT_EQ(config.password_limits.refusal_delay, absl::Seconds(1));
  EXPECT_EQ(config.password_limits.per_source.burst, 20);
  EXPECT_EQ(config.password_limits.per_source.refill, absl::Seconds(3));
  EXPECT_EQ(config.password_limits.per_user.burst, 10);
  EXPECT_EQ(config.password_limits.per_user.refill, absl::Seconds(6));
  EXPECT_EQ(config.password_limits.tracked_keys, 10'000u);
  EXPECT_FALSE(config.anonymous_groups.has_value());

  UpFlags flags;
  flags.overrides = {"auth.passwordChecks.failuresPerUser.refill=0s"};
  absl::StatusOr<ServerConfig> bad = LoadServerConfig(flags, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("auth.passwordChecks.failuresPerUser.refill: must be positive"));
  flags.overrides = {"auth.passwordChecks.maxConcurrent=-1"};
  bad = LoadServerConfig(flags, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("auth.passwordChecks.maxConcurrent"));
  flags.overrides = {"auth.passwordChecks.trackedKeys=0"};
  bad = LoadServerConfig(flags, {});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("auth.passwordChecks.trackedKeys"));
}

}  // namespace
}  // namespace regatta::server
