#include "src/common/config.h"

#include <cstdio>
#include <fstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta {
namespace {

using testing::HasSubstr;

constexpr char kDefaults[] = R"(
dataDir: ./data
api:
  grpcListen: 127.0.0.1:50051
  maxRequestBytes: 100
auth:
  anonymousGroups: [admins]
)";

std::string WriteTemp(const std::string& text) {
  std::string path = testing::TempDir() + "/config_test.yaml";
  std::ofstream(path) << text;
  return path;
}

TEST(ConfigTest, DefaultsOnly) {
  auto tree = LoadConfigTree(kDefaults, "", {}, {});
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ((*tree)["api"]["grpcListen"].as<std::string>(), "127.0.0.1:50051");
}

TEST(ConfigTest, PrecedenceFileThenEnvThenFlags) {
  std::string file = WriteTemp("api:\n  grpcListen: 0.0.0.0:1\n  maxRequestBytes: 5\n");
  std::map<std::string, std::string> env = {
      {"REGATTA_API__MAX_REQUEST_BYTES", "7"}, {"REGATTA_DATA_DIR", "/env"}, {"UNRELATED", "x"}};
  auto tree = LoadConfigTree(kDefaults, file, env, {"dataDir=/flag"});
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ((*tree)["api"]["grpcListen"].as<std::string>(), "0.0.0.0:1");  // file
  EXPECT_EQ((*tree)["api"]["maxRequestBytes"].as<int>(), 7);               // env over file
  EXPECT_EQ((*tree)["dataDir"].as<std::string>(), "/flag");                // flag over env
}

TEST(ConfigTest, FlowValuesFromFlags) {
  auto tree = LoadConfigTree(kDefaults, "", {}, {"auth.anonymousGroups=[a, b]"});
  ASSERT_TRUE(tree.ok()) << tree.status();
  EXPECT_EQ((*tree)["auth"]["anonymousGroups"].size(), 2u);
}

TEST(ConfigTest, UnknownKeysAreErrorsNamingTheKey) {
  std::string file = WriteTemp("api:\n  grpcListn: x\n");
  auto from_file = LoadConfigTree(kDefaults, file, {}, {});
  ASSERT_FALSE(from_file.ok());
  EXPECT_THAT(std::string(from_file.status().message()), HasSubstr("api.grpcListn"));

  auto from_env = LoadConfigTree(kDefaults, "", {{"REGATTA_API__NOPE", "1"}}, {});
  ASSERT_FALSE(from_env.ok());
  EXPECT_THAT(std::string(from_env.status().message()), HasSubstr("REGATTA_API__NOPE"));

  auto from_flag = LoadConfigTree(kDefaults, "", {}, {"api.nope=1"});
  ASSERT_FALSE(from_flag.ok());
  EXPECT_THAT(std::string(from_flag.status().message()), HasSubstr("api.nope"));
}

TEST(ConfigTest, OpenMapsTakeTheOperatorsKeysEverywhereElseTyposFail) {
  constexpr char kWithMaps[] = R"(
scheduling:
  priorityClasses:
    default: {priority: 1, limits: {}}
  cyclePeriod: 1s
)";
  const std::vector<std::string> open = {"scheduling.priorityClasses"};
  // A new class from the file, a new limit inside a default class, a class from --set.
  std::string file = WriteTemp(
      "scheduling:\n  priorityClasses:\n    high: {priority: 9}\n"
      "    default: {limits: {cpu: 0.5}}\n");
  auto tree = LoadConfigTree(kWithMaps, file, {},
                             {"scheduling.priorityClasses.low.priority=0",
                              "scheduling.priorityClasses.low.preemptible=true"},
                             open);
  ASSERT_TRUE(tree.ok()) << tree.status();
  const YAML::Node classes = (*tree)["scheduling"]["priorityClasses"];
  EXPECT_EQ(classes["high"]["priority"].as<int>(), 9);
  EXPECT_EQ(classes["low"]["priority"].as<int>(), 0);
  EXPECT_TRUE(classes["low"]["preemptible"].as<bool>());
  EXPECT_EQ(classes["default"]["priority"].as<int>(), 1);
  EXPECT_DOUBLE_EQ(classes["default"]["limits"]["cpu"].as<double>(), 0.5);

  // Outside the open maps a new key is still a typo, named.
  auto typo = LoadConfigTree(kWithMaps, "", {}, {"scheduling.cyclePerod=2s"}, open);
  ASSERT_FALSE(typo.ok());
  EXPECT_THAT(std::string(typo.status().message()), HasSubstr("scheduling.cyclePerod"));
  auto closed = LoadConfigTree(kWithMaps, file, {}, {});
  ASSERT_FALSE(closed.ok());
  EXPECT_THAT(std::string(closed.status().message()), HasSubstr("scheduling.priorityClasses.high"));
}

TEST(ConfigTest, BadInputsGiveClearErrors) {
  EXPECT_EQ(LoadConfigTree(kDefaults, "/nonexistent/regatta.yaml", {}, {}).status().code(),
            absl::StatusCode::kNotFound);
  std::string bad = WriteTemp("api: [unclosed\n");
  auto parsed = LoadConfigTree(kDefaults, bad, {}, {});
  ASSERT_FALSE(parsed.ok());
  EXPECT_THAT(std::string(parsed.status().message()), HasSubstr("config_test.yaml"));
  EXPECT_FALSE(LoadConfigTree(kDefaults, "", {}, {"novalue"}).ok());
  EXPECT_FALSE(LoadConfigTree(kDefaults, "", {}, {"api=scalar"}).ok());
}

}  // namespace
}  // namespace regatta

namespace regatta {
namespace {

TEST(ConfigTest, ClientAndScriptVariablesAreNotConfigKeys) {
  std::map<std::string, std::string> env = {
      {"REGATTA_SERVER", "h:1"},        {"REGATTA_TOKEN", "t"},       {"REGATTA_USER", "u"},
      {"REGATTA_PASSWORD", "p"},        {"REGATTA_PRESET", "asan"},   {"REGATTA_BUILD_JOBS", "2"},
      {"REGATTA_TEST_ARGS", "-L unit"}, {"REGATTA_CONFIG", "/x.yaml"}};
  auto tree = LoadConfigTree(kDefaults, "", env, {});
  EXPECT_TRUE(tree.ok()) << tree.status();
}

}  // namespace
}  // namespace regatta
