#include "src/common/pod/pod.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace regatta::pod {
namespace {

using regatta::v1::PodSpec;
using regatta::v1::TaskSpec;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Pair;

template <typename T>
T Parse(const std::string& text) {
  T message;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &message)) << text;
  return message;
}

std::map<std::string, std::string> AsText(const std::map<std::string, Quantity>& requests) {
  std::map<std::string, std::string> out;
  for (const auto& [name, q] : requests) out[name] = q.ToString();
  return out;
}

TEST(PodOfTest, FlatTaskBecomesOneContainerNamedMain) {
  const auto task = Parse<TaskSpec>(R"pb(
    image: "busybox"
    command: "/bin/sh"
    command: "-c"
    args: "echo $B"
    env { key: "B" value: "2" }
    env { key: "A" value: "1" }
    secret_env { key: "TOKEN" value: "s3cret" }
    working_dir: "/work"
    resources {
      requests { key: "cpu" value: "1" }
      limits { key: "cpu" value: "1" }
    }
    node_selector { key: "zone" value: "a" }
    tolerations { key: "gpu" operator: "Exists" }
    node_affinity { required_terms { match_expressions { key: "k" operator: "Exists" } } }
    active_deadline { seconds: 30 nanos: 1 }
    termination_grace_period { seconds: 5 }
  )pb");
  const PodSpec pod = PodOf(task);
  EXPECT_EQ(pod.restart_policy(), "Never");
  ASSERT_EQ(pod.containers_size(), 1);
  const auto& main = pod.containers(0);
  EXPECT_EQ(main.name(), "main");
  EXPECT_EQ(main.image(), "busybox");
  EXPECT_THAT(main.command(), ElementsAre("/bin/sh", "-c"));
  EXPECT_THAT(main.args(), ElementsAre("echo $B"));
  EXPECT_EQ(main.working_dir(), "/work");
  // Sorted by name; the secret is a plain value (the executor gets it opened in the lease).
  ASSERT_EQ(main.env_size(), 3);
  EXPECT_EQ(main.env(0).name(), "A");
  EXPECT_EQ(main.env(1).name(), "B");
  EXPECT_EQ(main.env(2).name(), "TOKEN");
  EXPECT_EQ(main.env(2).value(), "s3cret");
  EXPECT_EQ(main.resources().requests().at("cpu"), "1");
  EXPECT_EQ(pod.active_deadline_seconds(), 31);  // rounded up: a deadline never shrinks
  EXPECT_EQ(pod.termination_grace_period_seconds(), 5);
  EXPECT_EQ(pod.node_selector().at("zone"), "a");
  EXPECT_EQ(pod.tolerations(0).key(), "gpu");
  EXPECT_EQ(pod.affinity()
                .node_affinity()
                .required_during_scheduling_ignored_during_execution()
                .node_selector_terms(0)
                .match_expressions(0)
                .key(),
            "k");
}

TEST(PodOfTest, UnsetDeadlineAndGraceStayUnset) {
  const PodSpec pod = PodOf(Parse<TaskSpec>(R"pb(command: "/bin/true")pb"));
  EXPECT_FALSE(pod.has_active_deadline_seconds());
  EXPECT_FALSE(pod.has_termination_grace_period_seconds());
  EXPECT_FALSE(pod.has_affinity());
}

TEST(PodOfTest, PodSpecTaskIsItsPodSpec) {
  const auto task = Parse<TaskSpec>(R"pb(
    pod_spec {
      containers { name: "a" image: "x" }
      containers { name: "b" image: "y" }
      termination_grace_period_seconds: 0
    }
  )pb");
  const PodSpec pod = PodOf(task);
  ASSERT_EQ(pod.containers_size(), 2);
  EXPECT_EQ(pod.containers(1).name(), "b");
  // 0 is kept apart from unset: Kubernetes kills at once.
  EXPECT_TRUE(pod.has_termination_grace_period_seconds());
}

TEST(EffectiveRequestsTest, SumOfContainersMaxedWithEachInitContainer) {
  const auto pod = Parse<PodSpec>(R"pb(
    init_containers {
      name: "setup"
      resources {
        requests { key: "cpu" value: "3" }
        requests { key: "memory" value: "64Mi" }
      }
    }
    init_containers {
      name: "fetch"
      resources { requests { key: "memory" value: "2Gi" } }
    }
    containers {
      name: "a"
      resources {
        requests { key: "cpu" value: "1" }
        requests { key: "memory" value: "1Gi" }
      }
    }
    containers {
      name: "b"
      # A limit without a request stands for the request.
      resources {
        requests { key: "cpu" value: "500m" }
        limits { key: "cpu" value: "500m" }
        limits { key: "memory" value: "512Mi" }
      }
    }
  )pb");
  EXPECT_THAT(AsText(EffectiveRequests(pod)), ElementsAre(Pair("cpu", "3"), Pair("memory", "2Gi")));

  const auto no_init = Parse<PodSpec>(R"pb(
    containers {
      name: "a"
      resources { requests { key: "cpu" value: "1" } }
    }
    containers {
      name: "b"
      resources { requests { key: "cpu" value: "250m" } }
    }
  )pb");
  EXPECT_THAT(AsText(EffectiveRequests(no_init)), ElementsAre(Pair("cpu", "1250m")));
  EXPECT_TRUE(EffectiveRequests(PodSpec()).empty());
}

TEST(ContainerRequestsTest, RequestWinsOverLimitAndLimitFillsIn) {
  const auto c = Parse<regatta::v1::Container>(R"pb(
    resources {
      requests { key: "cpu" value: "1" }
      limits { key: "memory" value: "1Gi" }
    }
  )pb");
  EXPECT_THAT(AsText(ContainerRequests(c)), ElementsAre(Pair("cpu", "1"), Pair("memory", "1Gi")));
}

TEST(ResolveFieldRefTest, EverySupportedPath) {
  PodMetadata m;
  m.name = "job-1";
  m.namespace_ = "team-a";
  m.uid = "01J";
  m.labels = {{"app", "train"}};
  m.annotations = {{"regatta.dev/job-set", "nightly"}};
  m.node_name = "node-1";
  m.service_account = "default";
  m.pod_ip = "10.0.0.2";
  m.host_ip = "10.0.0.1";
  const std::pair<const char*, const char*> cases[] = {
      {"metadata.name", "job-1"},
      {"metadata.namespace", "team-a"},
      {"metadata.uid", "01J"},
      {"metadata.labels['app']", "train"},
      {"metadata.labels['missing']", ""},
      {"metadata.annotations['regatta.dev/job-set']", "nightly"},
      {"spec.nodeName", "node-1"},
      {"spec.serviceAccountName", "default"},
      {"status.podIP", "10.0.0.2"},
      {"status.hostIP", "10.0.0.1"},
  };
  for (const auto& [path, want] : cases) {
    absl::StatusOr<std::string> got = ResolveFieldRef(path, m);
    ASSERT_TRUE(got.ok()) << path << ": " << got.status();
    EXPECT_EQ(*got, want) << path;
  }
}

TEST(ResolveFieldRefTest, RefusesOtherPaths) {
  for (const char* path : {"metadata.labels", "metadata.labels[app]", "metadata.labels['']",
                           "spec.containers[0].image", "status.phase", "", "metadata.name "}) {
    absl::StatusOr<std::string> got = ResolveFieldRef(path, PodMetadata());
    EXPECT_EQ(got.status().code(), absl::StatusCode::kInvalidArgument) << path;
    EXPECT_THAT(std::string(got.status().message()), HasSubstr("supported: metadata.name"));
    EXPECT_FALSE(CheckFieldPath(path).ok()) << path;
  }
  EXPECT_TRUE(CheckFieldPath("status.podIP").ok());
}

TEST(UnsupportedFieldTest, ListsTheModelsFieldsByJsonName) {
  EXPECT_TRUE(IsPodModelMessage(regatta::v1::Volume::descriptor()));
  EXPECT_FALSE(IsPodModelMessage(regatta::v1::TaskSpec::descriptor()));
  EXPECT_EQ(UnsupportedFieldProblem(regatta::v1::Volume::descriptor()),
            "not supported by Regatta's pod model (supported: emptyDir, hostPath)");
  EXPECT_EQ(UnsupportedFieldProblem(regatta::v1::SecurityContext::descriptor()),
            "not supported by Regatta's pod model (supported: runAsUser, runAsGroup)");
}

}  // namespace
}  // namespace regatta::pod
