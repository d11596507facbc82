#include "src/cli/job_file.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::cli {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(absl::string_view text, int batch_size = kDefaultSubmitBatchSize) {
  auto parsed = ParseJobFile(text, batch_size);
  EXPECT_FALSE(parsed.ok()) << "parsed: " << text;
  if (parsed.ok()) return "";
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST(ParseJobFileTest, ParsesQueueJobSetAndFullJob) {
  auto parsed = ParseJobFile(R"(
queue: team-a
jobSet: nightly
jobs:
  - clientId: train
    priority: 3
    priorityClass: armada-preemptible
    labels: {app: trainer}
    annotations: {note: "x"}
    task:
      image: busybox
      command: [sleep]
      args: [10]
      env: {N: 5, FLAG: true}
      workingDir: /tmp
      resources:
        requests: {cpu: 1, memory: 1Gi, nvidia.com/gpu: 2}
      nodeSelector: {zone: a}
      tolerations: [{key: gpu, operator: Exists}]
      activeDeadline: 1m30s
      terminationGracePeriod: 5
    gang: {id: g1, cardinality: 1, nodeUniformityLabel: rack}
    retryPolicy: {maxRetries: 2, retryOnExitCodes: [1, 137]}
)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 1u);
  const auto& request = (*parsed)[0];
  EXPECT_EQ(request.queue(), "team-a");
  EXPECT_EQ(request.job_set(), "nightly");
  ASSERT_EQ(request.items_size(), 1);
  const auto& item = request.items(0);
  EXPECT_EQ(item.client_id(), "train");
  EXPECT_EQ(item.priority(), 3u);
  EXPECT_EQ(item.priority_class(), "armada-preemptible");
  EXPECT_EQ(item.labels().at("app"), "trainer");
  const auto& task = item.task();
  EXPECT_EQ(task.image(), "busybox");
  ASSERT_EQ(task.command_size(), 1);
  ASSERT_EQ(task.args_size(), 1);
  EXPECT_EQ(task.args(0), "10");  // a YAML number read as the string the field wants
  EXPECT_EQ(task.env().at("N"), "5");
  EXPECT_EQ(task.env().at("FLAG"), "true");
  EXPECT_EQ(task.working_dir(), "/tmp");
  EXPECT_EQ(task.resources().requests().at("cpu"), "1");
  EXPECT_EQ(task.resources().requests().at("memory"), "1Gi");
  EXPECT_EQ(task.resources().requests().at("nvidia.com/gpu"), "2");
  EXPECT_EQ(task.node_selector().at("zone"), "a");
  ASSERT_EQ(task.tolerations_size(), 1);
  EXPECT_EQ(task.tolerations(0).operator_(), "Exists");
  EXPECT_EQ(task.active_deadline().seconds(), 90);
  EXPECT_EQ(task.termination_grace_period().seconds(), 5);
  EXPECT_EQ(item.gang().id(), "g1");
  EXPECT_EQ(item.gang().node_uniformity_label(), "rack");
  EXPECT_EQ(item.retry_policy().max_retries(), 2u);
  EXPECT_THAT(item.retry_policy().retry_on_exit_codes(), ::testing::ElementsAre(1, 137));
}

TEST(ParseJobFileTest, CountMakesCopiesWithNumberedClientIds) {
  auto parsed = ParseJobFile(R"(
queue: q
jobSet: s
jobs:
  - {clientId: sweep, count: 3, command: [run]}
  - {count: 2, command: [other]}
  - {clientId: single, count: 1, command: [one]}
)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 1u);
  const auto& items = (*parsed)[0].items();
  ASSERT_EQ(items.size(), 6);
  EXPECT_EQ(items[0].client_id(), "sweep-0");
  EXPECT_EQ(items[1].client_id(), "sweep-1");
  EXPECT_EQ(items[2].client_id(), "sweep-2");
  EXPECT_EQ(items[2].task().command(0), "run");
  EXPECT_EQ(items[3].client_id(), "");  // no client id: copies stay without one
  EXPECT_EQ(items[4].task().command(0), "other");
  EXPECT_EQ(items[5].client_id(), "single");  // count 1 keeps the id as written
}

TEST(ParseJobFileTest, TaskFieldsOnTheJobMoveUnderTask) {
  auto parsed = ParseJobFile(R"(
queue: q
jobSet: s
jobs:
  - priority: 1
    command: [echo]
    args: [hi]
    env: {A: b}
    working_dir: /w
    resources: {requests: {cpu: 100m}}
    activeDeadline: 30s
    task: {image: alpine}
)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  const auto& item = (*parsed)[0].items(0);
  EXPECT_EQ(item.priority(), 1u);
  EXPECT_EQ(item.task().image(), "alpine");
  EXPECT_EQ(item.task().command(0), "echo");
  EXPECT_EQ(item.task().args(0), "hi");
  EXPECT_EQ(item.task().env().at("A"), "b");
  EXPECT_EQ(item.task().working_dir(), "/w");
  EXPECT_EQ(item.task().resources().requests().at("cpu"), "100m");
  EXPECT_EQ(item.task().active_deadline().seconds(), 30);
}

TEST(ParseJobFileTest, TaskFieldGivenTwiceIsAnError) {
  EXPECT_EQ(ErrorOf("queue: q\njobSet: s\njobs:\n  - command: [a]\n    task: {command: [b]}\n"),
            "jobs[0].command: also given under task");
}

TEST(ParseJobFileTest, InvalidYamlNamesTheLine) {
  std::string error = ErrorOf("queue: q\njobSet: s\njobs:\n  - command: [a\n");
  EXPECT_THAT(error, HasSubstr("line "));
  EXPECT_THAT(error, HasSubstr("column "));
}

TEST(ParseJobFileTest, UnknownFieldNamesThePathAndSuggests) {
  std::string file = "queue: q\njobSet: s\njobs:\n";
  for (int i = 0; i < 3; ++i) absl::StrAppend(&file, "  - command: [ok]\n");
  absl::StrAppend(&file, "  - task: {comand: [x]}\n");
  EXPECT_EQ(ErrorOf(file),
            "jobs[3].task.comand: unknown field \"comand\" (did you mean "
            "\"command\"?)");
  EXPECT_EQ(ErrorOf("queue: q\njobSet: s\njobs:\n  - {prio: 1}\n"),
            "jobs[0].prio: unknown field \"prio\"");
  EXPECT_THAT(
      ErrorOf("queue: q\njobSet: s\njobs:\n  - {clientIdent: x}\n"),
      HasSubstr("jobs[0].clientIdent: unknown field \"clientIdent\" (did you mean \"clientId\"?)"));
  EXPECT_THAT(ErrorOf("queue: q\njobSets: s\njobs: [{command: [a]}]\n"),
              HasSubstr("jobSets: unknown field"));
  // Keys that differ only in case match, as armadactl (Go's encoding/json) matches them.
  auto parsed = ParseJobFile("queue: q\njobset: s\njobs:\n  - {clientID: x, command: [a]}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ((*parsed)[0].job_set(), "s");
  EXPECT_EQ((*parsed)[0].items(0).client_id(), "x");
}

TEST(ParseJobFileTest, BadTypesNameThePath) {
  const std::string head = "queue: q\njobSet: s\njobs:\n";
  EXPECT_EQ(ErrorOf(head + "  - task: {command: sleep 10}\n"),
            "jobs[0].task.command: expected a list, got \"sleep 10\"");
  EXPECT_EQ(ErrorOf(head + "  - {priority: high}\n"),
            "jobs[0].priority: expected a non-negative integer, got \"high\"");
  EXPECT_EQ(ErrorOf(head + "  - {priority: -1}\n"),
            "jobs[0].priority: must not be negative, got -1");
  EXPECT_EQ(ErrorOf(head + "  - {resources: {requests: {cpu: [1]}}}\n"),
            "jobs[0].resources.requests.cpu: expected a string, got a list");
  EXPECT_EQ(ErrorOf(head + "  - {gang: {cardinality: 99999999999}}\n"),
            "jobs[0].gang.cardinality: 99999999999 is out of range");
  EXPECT_EQ(ErrorOf(head + "  - {retryPolicy: {retryOnExitCodes: [1, x]}}\n"),
            "jobs[0].retryPolicy.retryOnExitCodes[1]: expected an integer, got \"x\"");
  EXPECT_THAT(ErrorOf(head + "  - {activeDeadline: soon}\n"),
              HasSubstr("jobs[0].activeDeadline: invalid duration \"soon\""));
  EXPECT_EQ(ErrorOf(head + "  - {labels: [a]}\n"),
            "jobs[0].labels: expected a mapping, got a list");
  EXPECT_EQ(ErrorOf(head + "  - just-a-string\n"),
            "jobs[0]: expected a mapping, got \"just-a-string\"");
  EXPECT_EQ(ErrorOf(head + "  - {count: 0}\n"),
            "jobs[0].count: expected a positive integer, got \"0\"");
  EXPECT_THAT(ErrorOf(head + "  - {resources: {requests: {nvidia.com/gpu: {a: 1}}}}\n"),
              HasSubstr("jobs[0].resources.requests[\"nvidia.com/gpu\"]: expected a string"));
}

TEST(ParseJobFileTest, MissingTopLevelFields) {
  EXPECT_EQ(ErrorOf("jobSet: s\njobs: [{command: [a]}]\n"), "queue: required");
  EXPECT_EQ(ErrorOf("queue: q\njobs: [{command: [a]}]\n"), "jobSet: required");
  EXPECT_EQ(ErrorOf("queue: q\njobSet: s\n"), "jobs: at least one job is required");
  EXPECT_EQ(ErrorOf("queue: q\njobSet: s\njobs: []\n"), "jobs: at least one job is required");
  EXPECT_EQ(ErrorOf(""), "the file has no jobs");
  EXPECT_EQ(ErrorOf("[1, 2]"), "expected a mapping, got a list");
}

TEST(ParseJobFileTest, BatchingSplits2500JobsIntoThreeRequests) {
  auto parsed = ParseJobFile(
      "queue: q\njobSet: s\njobs:\n  - {clientId: c, count: 2500, "
      "command: [true]}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 3u);
  EXPECT_EQ((*parsed)[0].items_size(), 1000);
  EXPECT_EQ((*parsed)[1].items_size(), 1000);
  EXPECT_EQ((*parsed)[2].items_size(), 500);
  for (const auto& r : *parsed) {
    EXPECT_EQ(r.queue(), "q");
    EXPECT_EQ(r.job_set(), "s");
  }
  EXPECT_EQ((*parsed)[1].items(0).client_id(), "c-1000");
  EXPECT_EQ((*parsed)[2].items(499).client_id(), "c-2499");
}

TEST(ParseJobFileTest, BatchSizeIsConfigurable) {
  auto parsed = ParseJobFile(
      "queue: q\njobSet: s\njobs: [{command: [a]}, {command: [b]}, "
      "{command: [c]}]\n",
      2);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[1].items(0).task().command(0), "c");
  EXPECT_FALSE(ParseJobFile("queue: q\njobSet: s\njobs: [{command: [a]}]\n", 0).ok());
}

TEST(ParseJobFileTest, SeveralDocumentsAndMergeKeys) {
  auto parsed = ParseJobFile(R"(
queue: q1
jobSet: s1
jobs:
  - &base {command: [run], resources: {requests: {cpu: 1}}}
  - <<: *base
    args: [x]
---
queue: q2
job_set: s2
jobs: [{command: [b]}]
---
)");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 2u);
  EXPECT_EQ((*parsed)[0].items(1).task().command(0), "run");
  EXPECT_EQ((*parsed)[0].items(1).task().args(0), "x");
  EXPECT_EQ((*parsed)[0].items(1).task().resources().requests().at("cpu"), "1");
  EXPECT_EQ((*parsed)[1].queue(), "q2");
  EXPECT_EQ((*parsed)[1].job_set(), "s2");
  EXPECT_EQ(ErrorOf("queue: q\njobSet: s\njobs: [{command: [a]}]\n---\nqueue: q\n"),
            "document 2: jobSet: required");
}

TEST(ParseJobFileTest, NullValuesLeaveFieldsUnset) {
  auto parsed =
      ParseJobFile("queue: q\njobSet: s\njobs:\n  - {command: [a], gang: ~, priority:}\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_FALSE((*parsed)[0].items(0).has_gang());
}

TEST(SplitIntoBatchesTest, KeepsOrder) {
  regatta::v1::SubmitJobsRequest request;
  request.set_queue("q");
  for (int i = 0; i < 5; ++i) request.add_items()->set_client_id(absl::StrCat(i));
  auto batches = SplitIntoBatches(request, 2);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[2].items(0).client_id(), "4");
  EXPECT_EQ(batches[2].queue(), "q");
}

TEST(SplitIntoBatchesTest, KeepsARunOfOneGangTogether) {
  regatta::v1::SubmitJobsRequest request;
  // a, g, g, g, b: with batches of 2 the gang would straddle the first boundary.
  for (const char* gang : {"", "g", "g", "g", ""}) {
    request.add_items()->mutable_gang()->set_id(gang);
  }
  auto batches = SplitIntoBatches(request, 2);
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[0].items_size(), 1);
  EXPECT_EQ(batches[1].items_size(), 3);  // the gang, longer than a batch, whole
  EXPECT_EQ(batches[2].items_size(), 1);
  batches = SplitIntoBatches(request, 3);  // the gang fills the second batch
  ASSERT_EQ(batches.size(), 3u);
  EXPECT_EQ(batches[1].items_size(), 3);
  batches = SplitIntoBatches(request, 4);  // no boundary inside the gang
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0].items_size(), 4);
}

// ---- file positions ---------------------------------------------------------------------------

std::string PositionedError(absl::string_view text) {
  auto parsed = JobFile::Parse(text, "jobs.yaml");
  EXPECT_FALSE(parsed.ok());
  return parsed.ok() ? "" : std::string(parsed.status().message());
}

TEST(JobFileTest, LocalErrorsNameFileLineAndColumn) {
  const std::string head = "queue: q\njobSet: s\njobs:\n";
  EXPECT_EQ(PositionedError(head + "  - task: {command: sleep 10}\n"),
            "jobs.yaml:4:12: jobs[0].task.command: expected a list, got \"sleep 10\"");
  EXPECT_EQ(PositionedError(head + "  - command: [a]\n  - {comand: [x]}\n"),
            "jobs.yaml:5:6: jobs[1].comand: unknown field \"comand\" (did you mean "
            "\"command\"?)");
  EXPECT_EQ(PositionedError("queue: q\njobSet: s\njobs: [{command: [a]}]\n---\nqueue: r\n"),
            "jobs.yaml:5:1: document 2: jobSet: required");
  EXPECT_THAT(PositionedError(head + "  - command: [a\n"), ::testing::StartsWith("jobs.yaml:"));
  EXPECT_EQ(PositionedError(""), "jobs.yaml: the file has no jobs");
}

TEST(JobFileTest, ServerItemErrorsMapBackToTheJobAndItsLine) {
  // Document 1: 3 copies of one job and one more; document 2 (after an empty one): two jobs.
  auto file = JobFile::Parse(R"(queue: q
jobSet: s
jobs:
  - count: 3
    command: [a]
  - command: [b]
    priority_class: nope
---
---
queue: other
jobSet: s
jobs:
  - command: [c]
  - task:
      command: [d]
      resources:
        requests: {cpu: "-1"}
)",
                             "jobs.yaml", 2);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->requests().size(), 3u);
  EXPECT_EQ(file->job_count(), 6);
  EXPECT_EQ(file->DocumentOf(0), 0);
  EXPECT_EQ(file->DocumentOf(2), 2);
  EXPECT_EQ(file->ItemsBefore(2), 4);

  auto attributed = [&](absl::string_view message, size_t r) {
    absl::Status s = file->Attribute(absl::InvalidArgumentError(message), r);
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
    return std::string(s.message());
  };
  // Request 2 holds the third copy of jobs[0] and jobs[1].
  EXPECT_EQ(attributed("items[1].priority_class: unknown priority class \"nope\"", 1),
            "jobs.yaml:7:5: jobs[1].priority_class: unknown priority class \"nope\"");
  EXPECT_EQ(attributed("items[0].task.command: bad", 1),
            "jobs.yaml:5:5: jobs[0] (copy 2 of 3).task.command: bad");
  EXPECT_EQ(attributed("items[1].task.resources.requests[cpu]: must not be negative", 2),
            "jobs.yaml:17:20: document 3: jobs[1].task.resources.requests[cpu]: must not be "
            "negative");
  EXPECT_EQ(attributed("queue: queue \"other\" does not exist", 2),
            "jobs.yaml:10:1: document 3: queue: queue \"other\" does not exist");
  EXPECT_EQ(attributed("job_set: longer than 1024 characters", 0),
            "jobs.yaml:2:1: jobSet: longer than 1024 characters");
  EXPECT_EQ(attributed("items: 2 jobs, over the limit of 1 per request", 0),
            "jobs.yaml:3:1: items: 2 jobs, over the limit of 1 per request (lower --batch-size)");
  // An index the request does not have is not trusted for a position.
  EXPECT_EQ(attributed("items[9].x: y", 0), "jobs.yaml:1:1: items[9].x: y");
  // About the call, not the file: as it is.
  absl::Status unauthenticated = file->Attribute(absl::UnauthenticatedError("bad password"), 1);
  EXPECT_EQ(unauthenticated, absl::UnauthenticatedError("bad password"));
  EXPECT_EQ(
      file->Attribute(absl::ResourceExhaustedError("Received message larger than max (9 vs. 4)"), 0)
          .message(),
      "jobs.yaml:3:1: Received message larger than max (9 vs. 4) (lower --batch-size)");
  absl::Status denied = file->Attribute(absl::PermissionDeniedError("no submit on other"), 2);
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(denied.message(), "jobs.yaml:10:1: document 3: no submit on other");
}

TEST(JobFileTest, LocatePathFollowsMergeKeysAndSnakeCase) {
  auto docs = YAML::Load(R"(jobs:
  - &base
    node_selector: {zone: a}
  - <<: *base
    command: [x]
)");
  YAML::Mark mark = LocatePath(docs, "jobs[1].task.nodeSelector[zone]");
  EXPECT_EQ(mark.line, 2);  // the anchor's zone key (0-based line)
  EXPECT_EQ(mark.column, 20);
  mark = LocatePath(docs, "jobs[1].task.command");
  EXPECT_EQ(mark.line, 4);
  mark = LocatePath(docs, "jobs[1].task.missing");
  EXPECT_EQ(mark.line, 3);  // as far as it goes: jobs[1]
}

}  // namespace
}  // namespace regatta::cli
