#include "src/api/validation.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace regatta::api {
namespace {

using regatta::v1::SubmitJobsRequest;
using testing::HasSubstr;
using testing::StartsWith;

SubmitPolicy Policy() {
  SubmitPolicy p;
  p.priority_classes = {{"default", {1000, false}}, {"preemptible", {900, true}}};
  p.max_jobs_per_request = 100;
  p.max_job_spec_bytes = 4096;
  return p;
}

SubmitJobsRequest Request(const std::string& items_text) {
  SubmitJobsRequest r;
  std::string text = "queue: 'q' job_set: 'js' " + items_text;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &r)) << text;
  return r;
}

constexpr char kGoodItem[] =
    "items { task { command: '/bin/true' resources { requests { key: 'cpu' value: '1' } } } } ";

// Asserts INVALID_ARGUMENT whose message starts with `field`.
void ExpectInvalid(const SubmitJobsRequest& r, const std::string& field,
                   const std::string& detail = "") {
  absl::Status s = ValidateSubmitRequest(r, Policy());
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), StartsWith(field + ": "));
  if (!detail.empty()) EXPECT_THAT(std::string(s.message()), HasSubstr(detail));
}

TEST(ValidateSubmitTest, AcceptsAGoodRequest) {
  EXPECT_TRUE(ValidateSubmitRequest(Request(kGoodItem), Policy()).ok());
}

TEST(ValidateSubmitTest, QueueAndJobSetRequired) {
  SubmitJobsRequest r = Request(kGoodItem);
  r.clear_queue();
  ExpectInvalid(r, "queue");
  r = Request(kGoodItem);
  r.clear_job_set();
  ExpectInvalid(r, "job_set");
  r = Request(kGoodItem);
  r.set_job_set(std::string(2000, 'x'));
  ExpectInvalid(r, "job_set", "longer than");
}

TEST(ValidateSubmitTest, AtLeastOneAndAtMostMaxItems) {
  ExpectInvalid(Request(""), "items", "at least one");
  std::string many;
  for (int i = 0; i < 101; ++i) many += kGoodItem;
  ExpectInvalid(Request(many), "items", "over the limit of 100");
}

TEST(ValidateSubmitTest, EmptyCommandNamesItemIndex) {
  ExpectInvalid(Request(std::string(kGoodItem) + "items { task { } }"), "items[1].task.command",
                "required");
  ExpectInvalid(Request("items { task { command: '' } }"), "items[0].task.command[0]");
}

TEST(ValidateSubmitTest, PodSpecStandsInForCommand) {
  EXPECT_TRUE(
      ValidateSubmitRequest(Request("items { task { pod_spec_json: '{}' } }"), Policy()).ok());
}

TEST(ValidateSubmitTest, BadQuantityNamesResource) {
  ExpectInvalid(Request("items { task { command: 'x' resources { requests { key: 'memory' "
                        "value: 'lots' } } } }"),
                "items[0].task.resources.requests[memory]", "invalid quantity");
  ExpectInvalid(Request("items { task { command: 'x' resources { limits { key: 'bad name' "
                        "value: '1' } } } }"),
                "items[0].task.resources.limits[bad name]", "invalid resource name");
}

TEST(ValidateSubmitTest, RequestsMustEqualLimits) {
  ExpectInvalid(
      Request("items { task { command: 'x' resources { requests { key: 'cpu' value: '1' } "
              "limits { key: 'cpu' value: '2' } } } }"),
      "items[0].task.resources", "requests and limits differ for cpu");
  ExpectInvalid(
      Request("items { task { command: 'x' resources { requests { key: 'cpu' value: '1' } "
              "limits { key: 'cpu' value: '1' } limits { key: 'memory' value: '1Gi' } } } }"),
      "items[0].task.resources", "memory");
  // Equal in value though spelled differently.
  EXPECT_TRUE(
      ValidateSubmitRequest(Request("items { task { command: 'x' resources { requests { key: 'cpu' "
                                    "value: '1000m' } limits { key: 'cpu' value: '1' } } } }"),
                            Policy())
          .ok());
}

TEST(ValidateSubmitTest, UnknownPriorityClass) {
  ExpectInvalid(Request("items { priority_class: 'gold' task { command: 'x' } }"),
                "items[0].priority_class", "unknown priority class \"gold\"");
}

TEST(ValidateSubmitTest, GangCardinalityMismatch) {
  ExpectInvalid(Request("items { gang { id: 'g' cardinality: 3 } task { command: 'x' } } "
                        "items { gang { id: 'g' cardinality: 3 } task { command: 'x' } }"),
                "items[0].gang.cardinality", "gang cardinality mismatch");
  ExpectInvalid(Request("items { gang { id: 'g' cardinality: 2 } task { command: 'x' } } "
                        "items { gang { id: 'g' cardinality: 3 } task { command: 'x' } }"),
                "items[1].gang.cardinality");
  ExpectInvalid(Request("items { gang { id: 'g' } task { command: 'x' } }"),
                "items[0].gang.cardinality", "at least 1");
  ExpectInvalid(Request("items { gang { cardinality: 2 } task { command: 'x' } }"),
                "items[0].gang.id");
  ExpectInvalid(Request("items { gang { id: 'g' cardinality: 2 } task { command: 'x' } } "
                        "items { gang { id: 'g' cardinality: 2 } priority_class: 'preemptible' "
                        "task { command: 'x' } }"),
                "items[1].priority_class", "share one priority class");
  EXPECT_TRUE(
      ValidateSubmitRequest(Request("items { gang { id: 'g' cardinality: 2 } task { command: "
                                    "'x' } } items { gang { id: 'g' cardinality: 2 } task { "
                                    "command: 'x' } }"),
                            Policy())
          .ok());
}

TEST(ValidateSubmitTest, OversizedSpec) {
  SubmitJobsRequest r = Request(kGoodItem);
  (*r.mutable_items(0)->mutable_annotations())["big"] = std::string(5000, 'x');
  ExpectInvalid(r, "items[0]", "over the limit of 4096 bytes");
}

TEST(ValidateSubmitTest, TolerationsAndAffinity) {
  ExpectInvalid(Request("items { task { command: 'x' tolerations { key: 'k' operator: 'Maybe' } "
                        "} }"),
                "items[0].task.tolerations[0].operator");
  ExpectInvalid(Request("items { task { command: 'x' tolerations { key: 'k' effect: 'Sometimes' "
                        "} } }"),
                "items[0].task.tolerations[0].effect");
  ExpectInvalid(Request("items { task { command: 'x' node_affinity { required_terms { "
                        "match_expressions { key: 'zone' operator: 'In' } } } } }"),
                "items[0].task.node_affinity.required_terms[0].match_expressions[0].values");
  ExpectInvalid(Request("items { task { command: 'x' node_affinity { required_terms { "
                        "match_expressions { key: 'n' operator: 'Gt' values: 'abc' } } } } }"),
                "items[0].task.node_affinity.required_terms[0].match_expressions[0].values[0]");
}

TEST(ValidateSubmitTest, EnvAndDurations) {
  ExpectInvalid(Request("items { task { command: 'x' env { key: 'A=B' value: '1' } } }"),
                "items[0].task.env");
  ExpectInvalid(Request("items { task { command: 'x' active_deadline { seconds: -1 } } }"),
                "items[0].task.active_deadline");
}

TEST(ValidateSubmitTest, ClientIdLength) {
  SubmitJobsRequest r = Request(kGoodItem);
  r.mutable_items(0)->set_client_id(std::string(300, 'c'));
  ExpectInvalid(r, "items[0].client_id");
}

TEST(NormalizeTest, FillsDefaultsAndMirrorsResources) {
  SubmitJobsRequest r = Request(
      "items { task { command: 'x' } } "
      "items { task { command: 'x' resources { limits { key: 'memory' "
      "value: '1024Mi' } } } }");
  NormalizeSubmitItem(*r.mutable_items(0), Policy());
  NormalizeSubmitItem(*r.mutable_items(1), Policy());
  EXPECT_EQ(r.items(0).priority_class(), "default");
  EXPECT_EQ(r.items(0).task().resources().requests().at("cpu"), "100m");
  EXPECT_EQ(r.items(0).task().resources().limits().at("memory"), "64Mi");
  EXPECT_EQ(r.items(1).task().resources().requests().at("memory"), "1Gi");
  EXPECT_EQ(r.items(1).task().resources().limits().at("memory"), "1Gi");
}

TEST(ValidateQueueTest, Rules) {
  regatta::v1::Queue q;
  q.set_name("team-a");
  EXPECT_TRUE(ValidateQueueSpec(q, Policy()).ok());
  q.set_name("bad name!");
  EXPECT_THAT(std::string(ValidateQueueSpec(q, Policy()).message()), StartsWith("queue.name: "));
  q.set_name("ok");
  q.set_priority_factor(-1);
  EXPECT_THAT(std::string(ValidateQueueSpec(q, Policy()).message()),
              StartsWith("queue.priority_factor: "));
  q.set_priority_factor(2);
  (*(*q.mutable_resource_limits_by_priority_class())["gold"]
        .mutable_maximum_resource_fraction())["cpu"] = 0.5;
  EXPECT_THAT(std::string(ValidateQueueSpec(q, Policy()).message()), HasSubstr("gold"));
  q.clear_resource_limits_by_priority_class();
  (*(*q.mutable_resource_limits_by_priority_class())["default"]
        .mutable_maximum_resource_fraction())["cpu"] = 1.5;
  EXPECT_THAT(std::string(ValidateQueueSpec(q, Policy()).message()), HasSubstr("between 0 and 1"));
}

}  // namespace
}  // namespace regatta::api
