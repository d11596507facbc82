// End to end: Armada's job files (tests/testdata/armada/job_*.yaml, written in the shapes of
// Armada's examples) submitted unchanged with `regatta submit FILE` from the built binary. In
// containers (podman; skipped with the reason where it cannot run them): a sleep job, a gang
// placed whole, a preemptible job, annotations and failFast, two containers, a service; and,
// without containers: namespaces in listings and filters, a gang submitted short refused, and
// ingress refused by the local executor naming the field.
#include <algorithm>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/execution_fixture.h"
#include "tests/e2e/process.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string Example(const std::string& name) {
  return absl::StrCat(REGATTA_ARMADA_TESTDATA_DIR, "/", name);
}

class ArmadaFilesTest : public ExecutionTest {
 protected:
  // `regatta submit PATH -o json`: the job ids, in file order.
  std::vector<std::string> SubmitFile(const std::string& path) {
    return SubmittedIds(Cli({"submit", path, "-o", "json"}));
  }

  std::string Logs(const std::string& job_id) { return Cli({"logs", job_id}).out; }

  json Spec(const std::string& id) {
    RunResult r = Cli({"jobs", "get", id, "--spec", "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    json j = json::parse(r.out, nullptr, false);
    return j.is_object() && j.contains("job") ? j["job"] : json::object();
  }
};

class ArmadaFilesInContainersTest : public ArmadaFilesTest {
 protected:
  static void SetUpTestSuite() {
    const std::string probe = absl::StrCat(REGATTA_SOURCE_DIR, "/scripts/test-images.sh probe 2> ",
                                           ::testing::TempDir(), "/armada-probe.err");
    if (std::system(probe.c_str()) != 0) {
      skip_reason_ = absl::StrCat("this machine cannot run containers: ",
                                  Slurp(::testing::TempDir() + "/armada-probe.err"));
    }
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ArmadaFilesTest::SetUp();
    StartServer("up");
    ASSERT_EQ(Cli({"queue", "create", "armada-files"}).exit_code, 0);
  }

  // Submits the example unchanged and waits for every job of it to succeed.
  std::vector<std::string> SubmitAndSucceed(const std::string& name) {
    std::vector<std::string> ids = SubmitFile(Example(name));
    EXPECT_FALSE(ids.empty()) << name;
    for (const std::string& id : ids) {
      EXPECT_EQ(WaitForState(id, "JOB_STATE_SUCCEEDED"), "JOB_STATE_SUCCEEDED")
          << name << ": " << Job(id).dump() << "\n"
          << Logs(id);
    }
    return ids;
  }

  static std::string skip_reason_;
};
std::string ArmadaFilesInContainersTest::skip_reason_;

TEST_F(ArmadaFilesInContainersTest, ASleepJob) {
  std::vector<std::string> ids = SubmitAndSucceed("job_sleep.yaml");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(Job(ids[0])["summary"].value("jobSet", ""), "sleep");
}

TEST_F(ArmadaFilesInContainersTest, AGangIsPlacedWholeInOneDecision) {
  std::vector<std::string> ids = SubmitAndSucceed("job_gang.yaml");
  ASSERT_EQ(ids.size(), 2u);
  std::set<std::string> nodes;
  for (const std::string& id : ids) {
    json spec = Spec(id);
    // The annotations became the job's gang (and stay as they were written).
    EXPECT_EQ(spec["gang"].value("id", ""), "pair") << spec.dump();
    EXPECT_EQ(spec["gang"].value("cardinality", 0), 2);
    EXPECT_EQ(spec["annotations"].value("armadaproject.io/gangId", ""), "pair");
    nodes.insert(Job(id)["runs"][0].value("nodeId", ""));
  }
  EXPECT_EQ(nodes.size(), 1u);
  // Both members were leased by one scheduling decision: their LEASED events are adjacent, with
  // nothing of either job between them.
  std::vector<std::string> order;
  for (const json& e : Events("armada-files", "gang")) {
    order.push_back(absl::StrCat(e.value("type", ""), " ", e.value("jobId", "")));
  }
  auto first = std::find_if(order.begin(), order.end(), [](const std::string& s) {
    return s.rfind("JOB_EVENT_TYPE_LEASED ", 0) == 0;
  });
  ASSERT_NE(first, order.end());
  ASSERT_NE(first + 1, order.end());
  EXPECT_THAT(*(first + 1), ::testing::StartsWith("JOB_EVENT_TYPE_LEASED "))
      << ::testing::PrintToString(order);
  EXPECT_THAT(Logs(ids[0]), HasSubstr("first member"));
  EXPECT_THAT(Logs(ids[1]), HasSubstr("second member"));
}

TEST_F(ArmadaFilesInContainersTest, APreemptibleJobGetsArmadasPriorityClass) {
  std::vector<std::string> ids = SubmitAndSucceed("job_preemptible.yaml");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(Job(ids[0])["summary"].value("priorityClass", ""), "armada-preemptible");
  EXPECT_EQ(Logs(ids[0]), "preemptible work done\n");
}

TEST_F(ArmadaFilesInContainersTest, LabelsAnnotationsAndAClientIdAreKept) {
  std::vector<std::string> ids = SubmitAndSucceed("job_annotations.yaml");
  ASSERT_EQ(ids.size(), 1u);
  json spec = Spec(ids[0]);
  EXPECT_EQ(spec["labels"].value("team", ""), "vision");
  EXPECT_EQ(spec["annotations"].value("example.com/owner-email", ""), "someone@example.com");
  EXPECT_EQ(spec["annotations"].value("armadaproject.io/failFast", ""), "true");
  EXPECT_EQ(spec.value("clientId", ""), "annotated-1");
  RunResult listed = Cli({"jobs", "list", "--label", "team=vision", "-o", "json"});
  EXPECT_THAT(listed.out, HasSubstr(ids[0]));
  // The same file again: its client id makes it a duplicate, as in Armada.
  EXPECT_EQ(SubmitFile(Example("job_annotations.yaml")), ids);
}

TEST_F(ArmadaFilesInContainersTest, TwoContainersShareTheirPod) {
  std::vector<std::string> ids = SubmitAndSucceed("job_two_containers.yaml");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_THAT(Logs(ids[0]), HasSubstr("from-writer"));
}

TEST_F(ArmadaFilesInContainersTest, AJobWithAService) {
  std::vector<std::string> ids = SubmitAndSucceed("job_service.yaml");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_THAT(Logs(ids[0]), HasSubstr("served"));
  json spec = Spec(ids[0]);
  ASSERT_EQ(spec["services"].size(), 1u) << spec.dump();
  EXPECT_EQ(spec["services"][0].value("type", ""), "NodePort");
  EXPECT_EQ(spec["services"][0]["ports"][0], 18480);
  EXPECT_EQ(spec.value("namespace", ""), "web");
}

// Without containers: what the server and the local executor decide before anything runs.
class ArmadaFilesNoContainersTest : public ArmadaFilesTest {
 protected:
  void SetUp() override {
    ArmadaFilesTest::SetUp();
    StartServer("up", {"executor.containers.runtime=none"});
    ASSERT_EQ(Cli({"queue", "create", "armada-files"}).exit_code, 0);
  }
};

TEST_F(ArmadaFilesNoContainersTest, NamespacesAreShownInListingsAndFilterThem) {
  std::vector<std::string> research = SubmitFile(Example("job_gang.yaml"));
  std::vector<std::string> web = SubmitFile(Example("job_service.yaml"));
  std::vector<std::string> none = SubmitFile(Example("job_sleep.yaml"));
  ASSERT_EQ(research.size(), 2u);
  ASSERT_EQ(web.size(), 1u);
  ASSERT_EQ(none.size(), 1u);

  RunResult table = Cli({"jobs", "list", "--queue", "armada-files"});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("NAMESPACE"));
  EXPECT_THAT(table.out, HasSubstr("research"));

  RunResult filtered = Cli({"jobs", "list", "--namespace", "research", "-o", "json"});
  ASSERT_EQ(filtered.exit_code, 0) << filtered.err;
  json listed = json::parse(filtered.out, nullptr, false);
  ASSERT_EQ(listed["jobs"].size(), 2u) << filtered.out;
  for (const auto& j : listed["jobs"]) EXPECT_EQ(j.value("namespace", ""), "research");
  EXPECT_THAT(filtered.out, Not(HasSubstr(web[0])));

  RunResult details = Cli({"jobs", "get", web[0]});
  EXPECT_THAT(details.out, HasSubstr("Namespace"));
  EXPECT_THAT(details.out, HasSubstr("web"));
}

TEST_F(ArmadaFilesNoContainersTest, AGangSubmittedShortIsRefusedNamingTheFile) {
  const std::string path = WriteFile("short-gang.yaml",
                                     "queue: armada-files\njobSetId: short\njobs:\n"
                                     "  - annotations:\n"
                                     "      armadaproject.io/gangId: trio\n"
                                     "      armadaproject.io/gangCardinality: \"3\"\n"
                                     "    podSpec: {containers: [{name: c, image: x}]}\n");
  RunResult r = Cli({"submit", path});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("short-gang.yaml:4:5: jobs[0]"));
  EXPECT_THAT(r.err, HasSubstr("gang \"trio\" declares 3 members but the request has 1"));
}

TEST_F(ArmadaFilesNoContainersTest, IngressIsRefusedByTheLocalExecutorNamingTheField) {
  const std::string path = WriteFile(
      "ingress.yaml",
      "queue: armada-files\njobSetId: ingress\njobs:\n"
      "  - ingress: [{ports: [8080], tls_enabled: true}]\n"
      "    podSpec:\n"
      "      containers:\n"
      "        - {name: web, image: localhost/busybox:1.35, ports: [{containerPort: 8080}]}\n");
  std::vector<std::string> ids = SubmitFile(path);
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_FAILED"), "JOB_STATE_FAILED");
  json job = Job(ids[0]);
  EXPECT_EQ(job["error"].value("reason", ""), "ERROR_REASON_CANNOT_EXECUTE") << job.dump();
  EXPECT_TRUE(job["error"].value("terminal", false));
  EXPECT_THAT(job["error"].value("message", ""),
              HasSubstr("ingress: the local executor cannot serve ingresses"));
}

TEST_F(ArmadaFilesNoContainersTest, AServicePortThePodDoesNotDeclareIsRefusedAtSubmit) {
  const std::string path =
      WriteFile("bad-service.yaml",
                "queue: armada-files\njobSetId: svc\njobs:\n"
                "  - services: [{type: NodePort, ports: [8080, 8081]}]\n"
                "    podSpec:\n"
                "      containers:\n"
                "        - {name: web, image: x, ports: [{containerPort: 8080}]}\n");
  RunResult r = Cli({"submit", path});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("bad-service.yaml:4:47: jobs[0].services[0].ports[1]: 8081 is not "
                               "a containerPort of the pod"));
}

}  // namespace
}  // namespace regatta::testing
