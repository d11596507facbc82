#include "src/cli/flags.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cli/yaml_json.h"

namespace regatta::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ErrorOf(const absl::Status& status) {
  EXPECT_FALSE(status.ok());
  return std::string(status.message());
}

TEST(ParsePermissionTest, ParsesSubjectsAndVerbs) {
  auto p = ParsePermission("group:team-a=submit,cancel");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->subjects_size(), 1);
  EXPECT_EQ(p->subjects(0).kind(), "group");
  EXPECT_EQ(p->subjects(0).name(), "team-a");
  EXPECT_THAT(p->verbs(), ElementsAre("submit", "cancel"));

  p = ParsePermission("user:alice, Group:ops=watch,Submit");
  ASSERT_TRUE(p.ok()) << p.status();
  ASSERT_EQ(p->subjects_size(), 2);
  EXPECT_EQ(p->subjects(1).kind(), "group");
  EXPECT_EQ(p->subjects(1).name(), "ops");
  EXPECT_THAT(p->verbs(), ElementsAre("submit", "watch"));  // documented order

  p = ParsePermission("user:bob=all");
  ASSERT_TRUE(p.ok());
  EXPECT_THAT(p->verbs(), ElementsAre("submit", "cancel", "reprioritize", "preempt", "watch"));
}

TEST(ParsePermissionTest, Errors) {
  EXPECT_THAT(ErrorOf(ParsePermission("group:a").status()), HasSubstr("expected KIND:NAME"));
  EXPECT_THAT(ErrorOf(ParsePermission("team-a=submit").status()),
              HasSubstr("subject \"team-a\" needs a kind: user:NAME or group:NAME"));
  EXPECT_THAT(ErrorOf(ParsePermission("role:x=submit").status()),
              HasSubstr("subject kind \"role\" is not user or group"));
  EXPECT_THAT(ErrorOf(ParsePermission("user:=submit").status()), HasSubstr("has no name"));
  EXPECT_THAT(ErrorOf(ParsePermission("user:a=delete").status()),
              HasSubstr("unknown verb \"delete\""));
  EXPECT_THAT(ErrorOf(ParsePermission("user:a=").status()), HasSubstr("no verbs"));
  EXPECT_THAT(ErrorOf(ParsePermission("=submit").status()), HasSubstr("no subjects"));
  EXPECT_EQ(ErrorOf(ParsePermission("user:a=fly").status()),
            "\"user:a=fly\": unknown verb \"fly\" (one of submit, cancel, reprioritize, preempt, "
            "watch, all)");
}

TEST(ParseResourceLimitTest, ParsesFractions) {
  auto limit = ParseResourceLimit("armada-default:cpu=0.5,memory=0.25");
  ASSERT_TRUE(limit.ok()) << limit.status();
  EXPECT_EQ(limit->first, "armada-default");
  EXPECT_DOUBLE_EQ(limit->second.maximum_resource_fraction().at("cpu"), 0.5);
  EXPECT_DOUBLE_EQ(limit->second.maximum_resource_fraction().at("memory"), 0.25);
}

TEST(ParseResourceLimitTest, Errors) {
  EXPECT_THAT(ErrorOf(ParseResourceLimit("cpu=0.5").status()), HasSubstr("PRIORITY_CLASS:"));
  EXPECT_THAT(ErrorOf(ParseResourceLimit("pc:cpu=2").status()), HasSubstr("in [0, 1]"));
  EXPECT_THAT(ErrorOf(ParseResourceLimit("pc:cpu=half").status()), HasSubstr("in [0, 1]"));
  EXPECT_THAT(ErrorOf(ParseResourceLimit("pc:cpu").status()), HasSubstr("expected key=value"));
  EXPECT_THAT(ErrorOf(ParseResourceLimit("pc:cpu=0.1,cpu=0.2").status()), HasSubstr("twice"));
  EXPECT_THAT(ErrorOf(ParseResourceLimit("pc:").status()), HasSubstr("no resources"));
}

TEST(ParseKeyValuesTest, ParsesAndRejectsDuplicates) {
  auto kv = ParseKeyValues({"a=1", "b=", "c=x=y"});
  ASSERT_TRUE(kv.ok());
  EXPECT_EQ(kv->at("a"), "1");
  EXPECT_EQ(kv->at("b"), "");
  EXPECT_EQ(kv->at("c"), "x=y");
  EXPECT_THAT(ErrorOf(ParseKeyValues({"a=1", "a=2"}).status()), HasSubstr("given twice"));
  EXPECT_THAT(ErrorOf(ParseKeyValues({"novalue"}).status()), HasSubstr("expected key=value"));
  EXPECT_THAT(ErrorOf(ParseKeyValues({"=v"}).status()), HasSubstr("key is empty"));
}

TEST(ParseJobStatesTest, AcceptsShortAndFullNames) {
  auto states = ParseJobStates({"queued,Running", "JOB_STATE_FAILED", "queued"});
  ASSERT_TRUE(states.ok()) << states.status();
  EXPECT_THAT(*states, ElementsAre(regatta::v1::JOB_STATE_QUEUED, regatta::v1::JOB_STATE_RUNNING,
                                   regatta::v1::JOB_STATE_FAILED));
  EXPECT_THAT(ErrorOf(ParseJobStates({"DONE"}).status()), HasSubstr("unknown job state"));
  EXPECT_THAT(ErrorOf(ParseJobStates({"unspecified"}).status()), HasSubstr("unknown job state"));
}

TEST(ParseDurationFlagTest, ParsesUnitsAndBareSeconds) {
  EXPECT_EQ(*ParseDurationFlag("30s"), absl::Seconds(30));
  EXPECT_EQ(*ParseDurationFlag("1h30m"), absl::Minutes(90));
  EXPECT_EQ(*ParseDurationFlag("250ms"), absl::Milliseconds(250));
  EXPECT_EQ(*ParseDurationFlag("2"), absl::Seconds(2));
  EXPECT_FALSE(ParseDurationFlag("soon").ok());
  EXPECT_FALSE(ParseDurationFlag("0s").ok());
  EXPECT_FALSE(ParseDurationFlag("-1s").ok());
}

TEST(ApplyQueueFlagsTest, GivenFlagsReplaceTheirPart) {
  regatta::v1::Queue queue;
  queue.set_name("q");
  queue.set_priority_factor(3);
  (*queue.mutable_labels())["old"] = "1";
  queue.add_permissions()->add_verbs("watch");

  QueueSpecFlags flags;
  flags.labels = {"team=a"};
  ASSERT_TRUE(ApplyQueueFlags(flags, &queue).ok());
  EXPECT_EQ(queue.priority_factor(), 3);  // untouched
  EXPECT_EQ(queue.permissions_size(), 1);
  EXPECT_EQ(queue.labels().size(), 1u);
  EXPECT_EQ(queue.labels().at("team"), "a");

  flags = {};
  flags.priority_factor = 2;
  flags.permissions = {"group:a=submit", "user:b=all"};
  flags.limits = {"pc:cpu=0.5"};
  ASSERT_TRUE(ApplyQueueFlags(flags, &queue).ok());
  EXPECT_EQ(queue.priority_factor(), 2);
  EXPECT_EQ(queue.permissions_size(), 2);
  EXPECT_DOUBLE_EQ(
      queue.resource_limits_by_priority_class().at("pc").maximum_resource_fraction().at("cpu"),
      0.5);

  flags = {};
  flags.permissions = {"bad"};
  EXPECT_THAT(ErrorOf(ApplyQueueFlags(flags, &queue)), HasSubstr("--permission \"bad\""));
  flags = {};
  flags.priority_factor = 0;
  EXPECT_THAT(ErrorOf(ApplyQueueFlags(flags, &queue)), HasSubstr("--priority-factor"));
}

TEST(ParseQueueFileTest, ParsesCamelCaseQueue) {
  auto queue = ParseQueueFile(R"(
name: team-a
priorityFactor: 2
permissions:
  - subjects: [{kind: group, name: team-a}]
    verbs: [submit, cancel]
resourceLimitsByPriorityClass:
  armada-default: {maximumResourceFraction: {cpu: 0.5}}
labels: {cost-centre: 42}
cordoned: true
createTime: "2024-05-01T10:00:00Z"
)");
  ASSERT_TRUE(queue.ok()) << queue.status();
  EXPECT_EQ(queue->name(), "team-a");
  EXPECT_EQ(queue->priority_factor(), 2);
  EXPECT_EQ(queue->permissions(0).subjects(0).name(), "team-a");
  EXPECT_EQ(queue->labels().at("cost-centre"), "42");
  EXPECT_TRUE(queue->cordoned());
  EXPECT_DOUBLE_EQ(queue->resource_limits_by_priority_class()
                       .at("armada-default")
                       .maximum_resource_fraction()
                       .at("cpu"),
                   0.5);
  EXPECT_EQ(ErrorOf(ParseQueueFile("name: q\npriorityFactor: lots\n").status()),
            "priorityFactor: expected a number, got \"lots\"");
  EXPECT_EQ(ErrorOf(ParseQueueFile("name: q\ncordoned: maybe\n").status()),
            "cordoned: expected true or false, got \"maybe\"");
  EXPECT_THAT(ErrorOf(ParseQueueFile("name: q\npermisions: []\n").status()),
              HasSubstr("did you mean \"permissions\""));
  EXPECT_TRUE(QueueFileSetsCordoned("name: q\ncordoned: false\n"));
  EXPECT_FALSE(QueueFileSetsCordoned("name: q\n"));
}

TEST(YamlJsonTest, JsonToYamlQuotesAmbiguousStrings) {
  nlohmann::json j = {{"a", "true"},
                      {"b", "10"},
                      {"c", true},
                      {"d", nlohmann::json::array()},
                      {"e", nlohmann::json::object()},
                      {"f", 0.5},
                      {"g", "plain"},
                      {"h", {1, "x"}},
                      {"i", ""}};
  std::string yaml = JsonToYaml(j);
  EXPECT_EQ(yaml,
            "a: \"true\"\nb: \"10\"\nc: true\nd: []\ne: {}\nf: 0.5\ng: plain\nh:\n  - 1\n  - x\n"
            "i: \"\"\n");
}

TEST(YamlJsonTest, MessageRoundTripsThroughYaml) {
  regatta::v1::Queue queue;
  queue.set_name("q");
  queue.set_priority_factor(1.5);
  (*queue.mutable_labels())["n"] = "10";
  auto* p = queue.add_permissions();
  p->add_verbs("submit");
  auto* s = p->add_subjects();
  s->set_kind("user");
  s->set_name("true");
  std::string yaml = JsonToYaml(MessageToJsonValue(queue));
  auto back = ParseQueueFile(yaml);
  ASSERT_TRUE(back.ok()) << back.status() << "\n" << yaml;
  EXPECT_EQ(back->SerializeAsString(), queue.SerializeAsString());
}

}  // namespace
}  // namespace regatta::cli
