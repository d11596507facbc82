#include "src/api/validation.h"

#include <limits>

#include "absl/strings/str_cat.h"
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
  EXPECT_TRUE(ValidateSubmitRequest(
                  Request("items { task { pod_spec { containers { name: 'main' image: 'busybox' "
                          "} } } }"),
                  Policy())
                  .ok());
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
                "items[0].task.env[A=B]", "invalid variable name");
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

TEST(NormalizeTest, JobsThatOfferPortsAreLabelledForTheServicesListing) {
  SubmitJobsRequest r = Request(
      "items { task { command: 'x' } } "
      "items { task { pod_spec { containers { name: 'web' image: 'i' "
      "ports { container_port: 8080 } } } } } "
      "items { task { pod_spec { containers { name: 'web' image: 'i' } } } "
      "services { ports: 8080 } }");
  for (int i = 0; i < 3; ++i) NormalizeSubmitItem(*r.mutable_items(i), Policy());
  EXPECT_FALSE(r.items(0).labels().contains("regatta.dev/serves-ports"));
  EXPECT_EQ(r.items(1).labels().at("regatta.dev/serves-ports"), "true");
  EXPECT_EQ(r.items(2).labels().at("regatta.dev/serves-ports"), "true");
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

// ---- Issue 21: numeric bounds, control characters, bounded echoes ------------------------------

absl::Status QueueWithFactor(double factor) {
  regatta::v1::Queue q;
  q.set_name("q");
  q.set_priority_factor(factor);
  return ValidateQueueSpec(q, Policy());
}

TEST(ValidateQueueTest, PriorityFactorWithinSaneBounds) {
  // A denormal factor once gave weight inf and NaN fair shares for the whole pool.
  for (double bad : {5e-324, 1e-4, -1.0, 1e7, std::numeric_limits<double>::infinity(),
                     std::numeric_limits<double>::quiet_NaN()}) {
    absl::Status s = QueueWithFactor(bad);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(s.message()), StartsWith("queue.priority_factor: must be between"))
        << bad;
  }
  for (double good : {0.0, kMinPriorityFactor, 0.5, 1.0, 2.0, kMaxPriorityFactor}) {
    EXPECT_TRUE(QueueWithFactor(good).ok()) << good;
  }
}

TEST(ValidateQueueTest, LongNameIsEchoedShort) {
  regatta::v1::Queue q;
  q.set_name(std::string(15 << 20, 'x'));
  absl::Status s = ValidateQueueSpec(q, Policy());
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_LT(s.message().size(), 600u);
  EXPECT_THAT(std::string(s.message()), HasSubstr("(15728640 bytes)"));
}

TEST(ValidateQueueTest, LabelsHaveNoControlCharacters) {
  regatta::v1::Queue q;
  q.set_name("q");
  (*q.mutable_labels())["team"] = std::string(
      "a\x1f"
      "b");
  EXPECT_THAT(std::string(ValidateQueueSpec(q, Policy()).message()),
              StartsWith("queue.labels[team]: "));
}

TEST(ValidateSubmitTest, NulBytesInWhatRunsAreRefused) {
  // What is shown must be what runs: a NUL would cut the executor's C strings short.
  SubmitJobsRequest r = Request(kGoodItem);
  r.mutable_items(0)->mutable_task()->set_command(0, std::string("/bin/echo\0rm", 12));
  ExpectInvalid(r, "items[0].task.command[0]", "control characters");
  r = Request(kGoodItem);
  r.mutable_items(0)->mutable_task()->add_command(std::string("a\0b", 3));
  ExpectInvalid(r, "items[0].task.command[1]", "NUL byte at offset 1");
  r = Request(kGoodItem);
  r.mutable_items(0)->mutable_task()->add_args("fine");
  r.mutable_items(0)->mutable_task()->add_args(std::string("x\0y", 3));
  ExpectInvalid(r, "items[0].task.args[1]", "NUL byte");
  r = Request(kGoodItem);
  (*r.mutable_items(0)->mutable_task()->mutable_env())["HOME"] = std::string("/h\0/x", 5);
  ExpectInvalid(r, "items[0].task.env[HOME]", "NUL byte");
  r = Request(kGoodItem);
  (*r.mutable_items(0)->mutable_task()->mutable_env())["A\nB"] = "1";
  ExpectInvalid(r, "items[0].task.env[A\nB]", "invalid variable name");
  r = Request(kGoodItem);
  r.mutable_items(0)->mutable_task()->set_working_dir(std::string("/tmp\0/x", 7));
  ExpectInvalid(r, "items[0].task.working_dir");
  r = Request(kGoodItem);
  r.mutable_items(0)->mutable_task()->set_image("busybox\n:latest");
  ExpectInvalid(r, "items[0].task.image");
  // Newlines and tabs in arguments are ordinary.
  r = Request(kGoodItem);
  r.mutable_items(0)->mutable_task()->add_args("line one\n\tline two");
  EXPECT_TRUE(ValidateSubmitRequest(r, Policy()).ok());
}

TEST(ValidateSubmitTest, NamesAndLabelsAreBounded) {
  SubmitJobsRequest r = Request(kGoodItem);
  r.set_job_set(std::string("set\0x", 5));
  ExpectInvalid(r, "job_set", "control characters");
  r = Request(kGoodItem);
  r.set_queue(std::string(1 << 20, 'q'));
  absl::Status s = ValidateSubmitRequest(r, Policy());
  EXPECT_THAT(std::string(s.message()), StartsWith("queue: "));
  EXPECT_LT(s.message().size(), 600u);
  r = Request(kGoodItem);
  (*r.mutable_items(0)->mutable_labels())["k"] = std::string(kMaxLabelValueBytes + 1, 'v');
  ExpectInvalid(r, "items[0].labels[k]", "over the limit of 1024");
  r = Request(kGoodItem);
  (*r.mutable_items(0)->mutable_labels())["k"] =
      "a\x1f"
      "b";
  ExpectInvalid(r, "items[0].labels[k]", "control characters");
  r = Request(kGoodItem);
  (*r.mutable_items(0)->mutable_annotations())["note"] = "two\nlines";
  EXPECT_TRUE(ValidateSubmitRequest(r, Policy()).ok());
  r = Request(kGoodItem);
  r.mutable_items(0)->set_client_id(std::string("c\0", 2));
  ExpectInvalid(r, "items[0].client_id");
  r = Request("items { gang { id: 'g' cardinality: 1 } task { command: 'x' } }");
  r.mutable_items(0)->mutable_gang()->set_id(std::string(300, 'g'));
  ExpectInvalid(r, "items[0].gang.id", "over the limit of 256");
}

TEST(ValidateSubmitTest, QuantitiesDurationsAndRetriesAreBounded) {
  ExpectInvalid(Request("items { task { command: 'x' resources { requests { key: 'cpu' "
                        "value: '200T' } } } }"),
                "items[0].task.resources.requests[cpu]", "over the limit of 100T");
  ExpectInvalid(Request("items { task { command: 'x' resources { requests { key: 'memory' "
                        "value: '8Ei' } } } }"),
                "items[0].task.resources.requests[memory]", "too large");
  EXPECT_TRUE(ValidateSubmitRequest(Request("items { task { command: 'x' resources { requests { "
                                            "key: 'memory' value: '100T' } } } }"),
                                    Policy())
                  .ok());
  ExpectInvalid(
      Request("items { task { command: 'x' active_deadline { seconds: 9223372036854775807 } } }"),
      "items[0].task.active_deadline", "at most 31622400s");
  ExpectInvalid(Request("items { task { command: 'x' termination_grace_period { seconds: 7200 } "
                        "} }"),
                "items[0].task.termination_grace_period", "at most 3600s");
  ExpectInvalid(Request("items { task { command: 'x' active_deadline { nanos: 2000000000 } } }"),
                "items[0].task.active_deadline", "nanos");
  ExpectInvalid(Request("items { task { command: 'x' } retry_policy { max_retries: 4000000000 } }"),
                "items[0].retry_policy.max_retries", "over the limit of 1000");
}

TEST(ValidateListJobsTest, FilterCountsAndLengthsAreBounded) {
  regatta::v1::ListJobsRequest request;
  for (int i = 0; i < 1001; ++i) (*request.mutable_labels())[absl::StrCat("k", i)] = "v";
  absl::Status s = ValidateListJobsRequest(request);
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "labels: 1001 label filters, over the limit of 32");
  request.clear_labels();
  (*request.mutable_labels())["k"] = "v";
  EXPECT_TRUE(ValidateListJobsRequest(request).ok());
  for (int i = 0; i < 17; ++i) request.add_states(regatta::v1::JOB_STATE_QUEUED);
  EXPECT_THAT(std::string(ValidateListJobsRequest(request).message()), StartsWith("states: "));
  request.clear_states();
  request.set_job_set(std::string(5000, 's'));
  EXPECT_THAT(std::string(ValidateListJobsRequest(request).message()), StartsWith("job_set: "));
}

}  // namespace
}  // namespace regatta::api
