// armadactl's job files read unchanged by `regatta submit`: jobSetId, podSpec or podSpecs,
// namespace, services, ingress, Armada's annotations; keys ignoring case; the first document
// only; errors naming the field and its place in the file.

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cli/input_file.h"
#include "src/cli/job_file.h"

namespace regatta::cli {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

std::string ErrorOf(absl::string_view text) {
  absl::StatusOr<JobFile> file = JobFile::Parse(text, "jobs.yaml");
  EXPECT_FALSE(file.ok()) << "parsed: " << text;
  return file.ok() ? "" : std::string(file.status().message());
}

// Line numbers below count from "queue" as line 1.
constexpr char kArmadaFile[] = R"(queue: team-a
jobSetId: nightly
jobs:
  - priority: 1000
    namespace: example
    clientId: 12345
    labels: {example-label: value}
    annotations: {example-annotation: value}
    ingress:
      - type: NodePort
        ports: [5050]
        tls_enabled: true
        certName: web
        useClusterIP: true
    services:
      - type: Headless
        ports: [5050]
        name: web
    podSpecs:
      - containers:
          - name: app
            imagePullPolicy: IfNotPresent
            image: localhost/busybox:1.35
            securityContext: {runAsUser: 1000}
            resources:
              limits: {memory: 1Gi, cpu: 1}
              requests: {memory: 1Gi, cpu: 1}
            ports:
              - containerPort: 5050
                protocol: TCP
                name: http
)";

TEST(ArmadaJobFileTest, EveryFieldOfArmadasJobFileLandsOnTheItem) {
  absl::StatusOr<JobFile> file = JobFile::Parse(kArmadaFile, "jobs.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_THAT(file->requests(), SizeIs(1));
  const auto& request = file->requests()[0];
  EXPECT_EQ(request.queue(), "team-a");
  EXPECT_EQ(request.job_set(), "nightly");
  ASSERT_EQ(request.items_size(), 1);
  const auto& item = request.items(0);
  EXPECT_EQ(item.priority(), 1000u);
  EXPECT_EQ(item.namespace_(), "example");
  EXPECT_EQ(item.client_id(), "12345");
  EXPECT_EQ(item.labels().at("example-label"), "value");
  EXPECT_EQ(item.annotations().at("example-annotation"), "value");
  // Armada's deprecated ingress type is left out; the rest is kept.
  ASSERT_EQ(item.ingress_size(), 1);
  EXPECT_THAT(item.ingress(0).ports(), ElementsAre(5050u));
  EXPECT_TRUE(item.ingress(0).tls_enabled());
  EXPECT_EQ(item.ingress(0).cert_name(), "web");
  EXPECT_TRUE(item.ingress(0).use_cluster_ip());
  ASSERT_EQ(item.services_size(), 1);
  EXPECT_EQ(item.services(0).type(), "Headless");
  EXPECT_THAT(item.services(0).ports(), ElementsAre(5050u));
  EXPECT_EQ(item.services(0).name(), "web");
  // podSpecs of one is the task's pod spec.
  ASSERT_TRUE(item.task().has_pod_spec());
  const auto& container = item.task().pod_spec().containers(0);
  EXPECT_EQ(container.image(), "localhost/busybox:1.35");
  EXPECT_EQ(container.ports(0).container_port(), 5050);
  EXPECT_TRUE(file->warnings().empty());
}

TEST(ArmadaJobFileTest, KeysMatchIgnoringCaseAsArmadactlReadsThem) {
  absl::StatusOr<JobFile> file = JobFile::Parse(R"(Queue: q
JobSetId: s
Jobs:
  - ClientId: a
    Namespace: ns
    PodSpec:
      Containers: [{Name: c, Image: localhost/busybox:1.35, Args: [sleep, "1"]}]
      PriorityClassName: armada-preemptible
)",
                                                "jobs.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  const auto& item = file->requests()[0].items(0);
  EXPECT_EQ(file->requests()[0].job_set(), "s");
  EXPECT_EQ(item.client_id(), "a");
  EXPECT_EQ(item.namespace_(), "ns");
  EXPECT_EQ(item.task().pod_spec().containers(0).name(), "c");
  EXPECT_EQ(item.task().pod_spec().priority_class_name(), "armada-preemptible");
}

TEST(ArmadaJobFileTest, PodSpecsMustHoldExactlyOnePodSpec) {
  const std::string head = "queue: q\njobSetId: s\njobs:\n  - podSpecs:\n";
  const std::string pod = "      - containers: [{name: c, image: localhost/busybox:1.35}]\n";
  EXPECT_EQ(ErrorOf(head + pod + pod),
            "jobs.yaml:4:5: jobs[0].podSpecs: 2 pod specs: a job runs one pod, in Armada as in "
            "Regatta (submit one job per pod spec)");
  EXPECT_EQ(ErrorOf("queue: q\njobSetId: s\njobs:\n  - podSpecs: []\n"),
            "jobs.yaml:4:5: jobs[0].podSpecs: empty: give the job's pod spec");
  EXPECT_THAT(ErrorOf(head + pod + "    podSpec: {containers: [{name: c, image: x}]}\n"),
              HasSubstr("jobs[0].podSpecs: give podSpec or podSpecs, not both"));
  // Inside the one pod spec, errors name its place.
  EXPECT_THAT(ErrorOf(head + "      - containers: [{name: c, image: x, stdin: true}]\n"),
              HasSubstr("jobs[0].podSpecs[0].containers[0].stdin: not supported by Regatta's "
                        "pod model"));
}

TEST(ArmadaJobFileTest, AnArmadaFileIsReadAsArmadactlReadsItTheFirstDocumentOnly) {
  absl::StatusOr<JobFile> file = JobFile::Parse(
      "queue: q\njobSetId: first\njobs: [{podSpec: {containers: [{name: c, image: x}]}}]\n"
      "---\nqueue: q\njobSetId: second\njobs: [{podSpec: {containers: [{name: c, image: x}]}}]\n"
      "---\nnot: even a job file\n",
      "jobs.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_THAT(file->requests(), SizeIs(1));
  EXPECT_EQ(file->requests()[0].job_set(), "first");
  EXPECT_THAT(file->warnings(),
              ElementsAre("jobs.yaml:5:1: ignored these documents (2): an Armada job file "
                          "(jobSetId) is read as armadactl reads it, first document only"));

  // Regatta's own files (jobSet) keep every document.
  file = JobFile::Parse(
      "queue: q\njobSet: first\njobs: [{command: [\"true\"]}]\n"
      "---\nqueue: q\njobSet: second\njobs: [{command: [\"true\"]}]\n",
      "jobs.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_THAT(file->requests(), SizeIs(2));
  EXPECT_TRUE(file->warnings().empty());
}

TEST(ArmadaJobFileTest, UnknownArmadaFieldsAreRefusedNotDropped) {
  EXPECT_THAT(ErrorOf("queue: q\njobSetId: s\njobs:\n  - scheduler: kube\n"
                      "    podSpec: {containers: [{name: c, image: x}]}\n"),
              HasSubstr("jobs.yaml:4:5: jobs[0].scheduler: unknown field \"scheduler\""));
  EXPECT_THAT(ErrorOf("queue: q\njobSet: s\njobSetId: s\njobs: [{command: [\"true\"]}]\n"),
              HasSubstr("jobSetId: the job set is given twice"));
}

TEST(ArmadaJobFileTest, ServerErrorsNameThePlaceInPodSpecs) {
  absl::StatusOr<JobFile> file = JobFile::Parse(kArmadaFile, "jobs.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  absl::Status error = file->Attribute(
      absl::InvalidArgumentError("items[0].task.podSpec.containers[0].image: bad"), 0);
  EXPECT_EQ(error.message(), "jobs.yaml:23:13: jobs[0].task.podSpec.containers[0].image: bad");
  error =
      file->Attribute(absl::InvalidArgumentError(
                          "items[0].services[0].ports[0]: 8081 is not a containerPort of the pod"),
                      0);
  EXPECT_EQ(
      error.message(),
      "jobs.yaml:17:17: jobs[0].services[0].ports[0]: 8081 is not a containerPort of the pod");
}

TEST(ArmadaJobFileTest, AGangInAnnotationsIsKeptInOneRequest) {
  std::string text = "queue: q\njobSetId: s\njobs:\n";
  for (int i = 0; i < 3; ++i) {
    absl::StrAppend(&text, "  - command: [\"true\"]\n");
  }
  absl::StrAppend(&text,
                  "  - count: 3\n"
                  "    command: [\"true\"]\n"
                  "    annotations: {armadaproject.io/gangId: g, armadaproject.io/gangCardinality: "
                  "\"3\"}\n");
  absl::StatusOr<JobFile> file = JobFile::Parse(text, "jobs.yaml", /*batch_size=*/4);
  ASSERT_TRUE(file.ok()) << file.status();
  // Three plain jobs, then the gang whole (not 4 + 2).
  ASSERT_THAT(file->requests(), SizeIs(2));
  EXPECT_EQ(file->requests()[0].items_size(), 3);
  EXPECT_EQ(file->requests()[1].items_size(), 3);
}

// The example files of tests/testdata/armada parse as they are.
TEST(ArmadaJobFileTest, TheExampleFilesParse) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(REGATTA_ARMADA_TESTDATA_DIR)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("job_", 0) != 0) continue;
    ++files;
    absl::StatusOr<std::string> text = ReadInputFile(entry.path().string());
    ASSERT_TRUE(text.ok()) << text.status();
    absl::StatusOr<JobFile> file = JobFile::Parse(*text, name);
    ASSERT_TRUE(file.ok()) << file.status();
    EXPECT_GE(file->job_count(), 1) << name;
    EXPECT_TRUE(file->warnings().empty()) << name;
  }
  EXPECT_EQ(files, 6);
}

}  // namespace
}  // namespace regatta::cli
