// Submit validation and derivation of tasks that carry a pod spec (src/api/pod_validation.cc).

#include <functional>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "src/api/validation.h"

namespace regatta::api {
namespace {

using regatta::v1::Job;
using regatta::v1::PodSpec;
using regatta::v1::SubmitJobsRequest;
using ::testing::HasSubstr;
using ::testing::StartsWith;

SubmitPolicy Policy() {
  SubmitPolicy p;
  p.priority_classes = {{"default", {1000, false}}, {"preemptible", {900, true}}};
  p.max_job_spec_bytes = 64 * 1024;
  return p;
}

// A pod using every part of the model: an init container, two containers sharing an emptyDir,
// a hostPath, ports, a fieldRef, resources and scheduling terms.
constexpr char kGoodPod[] = R"pb(
  init_containers {
    name: "setup"
    image: "localhost/busybox"
    command: "sh"
    args: "-c"
    args: "echo ready > /scratch/ready"
    volume_mounts { name: "scratch" mount_path: "/scratch" }
    resources { requests { key: "cpu" value: "2" } }
  }
  containers {
    name: "main"
    image: "localhost/busybox"
    image_pull_policy: "Never"
    working_dir: "/scratch"
    env { name: "MODE" value: "train" }
    env {
      name: "POD"
      value_from { field_ref { api_version: "v1" field_path: "metadata.labels['app']" } }
    }
    ports { name: "http" container_port: 8080 host_port: 8080 protocol: "TCP" }
    resources {
      requests { key: "cpu" value: "1" }
      requests { key: "memory" value: "1Gi" }
      limits { key: "cpu" value: "1000m" }
      limits { key: "memory" value: "1Gi" }
    }
    volume_mounts { name: "scratch" mount_path: "/scratch" }
    volume_mounts { name: "data" mount_path: "/data" read_only: true sub_path: "in" }
    security_context { run_as_user: 1000 run_as_group: 0 }
  }
  containers {
    name: "sidecar"
    image: "localhost/busybox"
    ports { container_port: 9090 protocol: "UDP" }
    resources { limits { key: "cpu" value: "500m" } }
    volume_mounts { name: "scratch" mount_path: "/scratch" }
  }
  restart_policy: "Never"
  active_deadline_seconds: 600
  termination_grace_period_seconds: 0
  node_selector { key: "kubernetes.io/os" value: "linux" }
  tolerations { key: "gpu" operator: "Exists" effect: "NoSchedule" }
  affinity {
    node_affinity {
      required_during_scheduling_ignored_during_execution {
        node_selector_terms { match_expressions { key: "zone" operator: "In" values: "a" } }
      }
    }
  }
  priority_class_name: "preemptible"
  volumes {
    name: "scratch"
    empty_dir { medium: "Memory" size_limit: "64Mi" }
  }
  volumes {
    name: "data"
    host_path { path: "/srv/data" type: "Directory" }
  }
)pb";

PodSpec GoodPod() {
  PodSpec pod;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(kGoodPod, &pod));
  return pod;
}

SubmitJobsRequest RequestWith(const std::function<void(regatta::v1::JobSubmitRequestItem&)>& edit) {
  SubmitJobsRequest r;
  r.set_queue("q");
  r.set_job_set("js");
  auto* item = r.add_items();
  *item->mutable_task()->mutable_pod_spec() = GoodPod();
  edit(*item);
  return r;
}

SubmitJobsRequest PodRequest(const std::function<void(PodSpec&)>& edit) {
  return RequestWith([&](auto& item) { edit(*item.mutable_task()->mutable_pod_spec()); });
}

// INVALID_ARGUMENT "FIELD: ...DETAIL...".
void ExpectInvalid(const SubmitJobsRequest& r, const std::string& field,
                   const std::string& detail) {
  absl::Status s = ValidateSubmitRequest(r, Policy());
  ASSERT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), StartsWith(field + ": "));
  EXPECT_THAT(std::string(s.message()), HasSubstr(detail));
}

constexpr char kPod[] = "items[0].task.podSpec";
std::string At(const std::string& rest) { return std::string(kPod) + rest; }

TEST(PodValidationTest, AcceptsEveryPartOfTheModel) {
  absl::Status s = ValidateSubmitRequest(PodRequest([](PodSpec&) {}), Policy());
  EXPECT_TRUE(s.ok()) << s;
  // The smallest pod: one named container with an image.
  s = ValidateSubmitRequest(PodRequest([](PodSpec& pod) {
                              pod = PodSpec();
                              auto* c = pod.add_containers();
                              c->set_name("c");
                              c->set_image("busybox");
                            }),
                            Policy());
  EXPECT_TRUE(s.ok()) << s;
}

TEST(PodValidationTest, FlatFieldsAreRefusedNamingTheField) {
  const std::pair<const char*, std::function<void(regatta::v1::TaskSpec&)>> cases[] = {
      {"command", [](auto& t) { t.add_command("/bin/true"); }},
      {"args", [](auto& t) { t.add_args("x"); }},
      {"image", [](auto& t) { t.set_image("busybox"); }},
      {"env", [](auto& t) { (*t.mutable_env())["A"] = "1"; }},
      {"working_dir", [](auto& t) { t.set_working_dir("/tmp"); }},
      {"resources", [](auto& t) { (*t.mutable_resources()->mutable_limits())["cpu"] = "1"; }},
  };
  for (const auto& [field, set_field] : cases) {
    SCOPED_TRACE(field);
    const auto& set = set_field;  // clang before 16 cannot capture a binding.
    ExpectInvalid(RequestWith([&](auto& item) { set(*item.mutable_task()); }),
                  std::string("items[0].task.") + field, "not allowed with podSpec");
  }
}

TEST(PodValidationTest, ContainersNeedUniqueLabelNamesAndImages) {
  ExpectInvalid(PodRequest([](PodSpec& p) { p.clear_containers(); }), At(".containers"),
                "at least one container");
  ExpectInvalid(PodRequest([](PodSpec& p) { p.mutable_containers(1)->set_name("Side_car"); }),
                At(".containers[1].name"), "not a DNS-1123 label");
  ExpectInvalid(PodRequest([](PodSpec& p) { p.mutable_containers(0)->clear_name(); }),
                At(".containers[0].name"), "required");
  // Unique across init containers and containers.
  ExpectInvalid(PodRequest([](PodSpec& p) { p.mutable_containers(1)->set_name("setup"); }),
                At(".containers[1].name"),
                "\"setup\" is also the name of " + At(".initContainers[0]"));
  ExpectInvalid(PodRequest([](PodSpec& p) { p.mutable_init_containers(0)->clear_image(); }),
                At(".initContainers[0].image"), "required");
  ExpectInvalid(
      PodRequest([](PodSpec& p) { p.mutable_containers(0)->set_image_pull_policy("Sometimes"); }),
      At(".containers[0].imagePullPolicy"), "unsupported value \"Sometimes\"");
}

TEST(PodValidationTest, MountsNameDeclaredVolumes) {
  ExpectInvalid(PodRequest([](PodSpec& p) { p.mutable_volumes()->RemoveLast(); }),
                At(".containers[0].volumeMounts[1].name"), "no volume named \"data\"");
  ExpectInvalid(PodRequest([](PodSpec& p) {
                  p.mutable_containers(1)->mutable_volume_mounts(0)->set_name("scratchy");
                }),
                At(".containers[1].volumeMounts[0].name"), "no volume named \"scratchy\"");
  ExpectInvalid(PodRequest([](PodSpec& p) {
                  p.mutable_containers(0)->mutable_volume_mounts(0)->set_mount_path("scratch");
                }),
                At(".containers[0].volumeMounts[0].mountPath"), "not absolute");
  ExpectInvalid(PodRequest([](PodSpec& p) {
                  p.mutable_containers(0)->mutable_volume_mounts(1)->set_mount_path("/scratch");
                }),
                At(".containers[0].volumeMounts[1].mountPath"), "mounted twice");
  ExpectInvalid(PodRequest([](PodSpec& p) {
                  p.mutable_containers(0)->mutable_volume_mounts(1)->set_sub_path("a/../../etc");
                }),
                At(".containers[0].volumeMounts[1].subPath"), "\"..\"");
}

TEST(PodValidationTest, VolumesHaveUniqueNamesAndExactlyOneKind) {
  ExpectInvalid(PodRequest([](PodSpec& p) { p.mutable_volumes(1)->set_name("scratch"); }),
                At(".volumes[1].name"), "also the name of " + At(".volumes[0]"));
  ExpectInvalid(PodRequest([](PodSpec& p) { p.mutable_volumes(1)->clear_host_path(); }),
                At(".volumes[1]"), "no volume kind given (supported: emptyDir, hostPath)");
  ExpectInvalid(PodRequest([](PodSpec& p) { p.mutable_volumes(1)->mutable_empty_dir(); }),
                At(".volumes[1]"), "both emptyDir and hostPath");
  ExpectInvalid(
      PodRequest([](PodSpec& p) { p.mutable_volumes(1)->mutable_host_path()->set_path("srv"); }),
      At(".volumes[1].hostPath.path"), "not absolute");
  ExpectInvalid(
      PodRequest([](PodSpec& p) { p.mutable_volumes(1)->mutable_host_path()->set_type("Dir"); }),
      At(".volumes[1].hostPath.type"), "unsupported value \"Dir\"");
  ExpectInvalid(PodRequest([](PodSpec& p) {
                  p.mutable_volumes(0)->mutable_empty_dir()->set_size_limit("lots");
                }),
                At(".volumes[0].emptyDir.sizeLimit"), "invalid quantity");
}

TEST(PodValidationTest, PortsAreHostNetworkPorts) {
  auto port = [](PodSpec& p) { return p.mutable_containers(0)->mutable_ports(0); };
  ExpectInvalid(PodRequest([&](PodSpec& p) { port(p)->set_container_port(0); }),
                At(".containers[0].ports[0].containerPort"), "not a port (1-65535)");
  ExpectInvalid(PodRequest([&](PodSpec& p) { port(p)->set_container_port(65536); }),
                At(".containers[0].ports[0].containerPort"), "not a port");
  ExpectInvalid(PodRequest([&](PodSpec& p) { port(p)->set_host_port(80); }),
                At(".containers[0].ports[0].hostPort"), "must equal containerPort 8080");
  ExpectInvalid(PodRequest([&](PodSpec& p) { port(p)->set_protocol("HTTP"); }),
                At(".containers[0].ports[0].protocol"), "supported: SCTP, TCP, UDP");
  // One host network: the same port and protocol twice in a pod cannot both be served.
  ExpectInvalid(PodRequest([](PodSpec& p) {
                  *p.mutable_containers(1)->add_ports() = p.containers(0).ports(0);
                }),
                At(".containers[1].ports[1].containerPort"), "8080/TCP is also declared by");
}

TEST(PodValidationTest, EnvFieldRefsNamePodMetadata) {
  auto var = [](PodSpec& p) { return p.mutable_containers(0)->mutable_env(1); };
  ExpectInvalid(PodRequest([&](PodSpec& p) {
                  var(p)->mutable_value_from()->mutable_field_ref()->set_field_path("status.phase");
                }),
                At(".containers[0].env[1].valueFrom.fieldRef.fieldPath"),
                "unsupported fieldPath \"status.phase\"");
  ExpectInvalid(PodRequest([&](PodSpec& p) { var(p)->set_value("x"); }),
                At(".containers[0].env[1].valueFrom"), "not allowed together with value");
  ExpectInvalid(PodRequest([&](PodSpec& p) { var(p)->mutable_value_from()->clear_field_ref(); }),
                At(".containers[0].env[1].valueFrom"), "fieldRef is required");
  ExpectInvalid(PodRequest([&](PodSpec& p) { var(p)->clear_name(); }),
                At(".containers[0].env[1].name"), "required");
}

TEST(PodValidationTest, ResourcesParseAndLimitsEqualRequests) {
  auto resources = [](PodSpec& p) { return p.mutable_containers(0)->mutable_resources(); };
  ExpectInvalid(
      PodRequest([&](PodSpec& p) { (*resources(p)->mutable_requests())["memory"] = "1 GB"; }),
      At(".containers[0].resources.requests[memory]"), "invalid quantity");
  ExpectInvalid(PodRequest([&](PodSpec& p) { (*resources(p)->mutable_limits())["cpu"] = "2"; }),
                At(".containers[0].resources.limits[cpu]"), "2 differs from the request 1");
  // A request without a limit is a Kubernetes pod as usual.
  EXPECT_TRUE(
      ValidateSubmitRequest(PodRequest([&](PodSpec& p) { resources(p)->clear_limits(); }), Policy())
          .ok());
}

TEST(PodValidationTest, PodLevelFields) {
  ExpectInvalid(PodRequest([](PodSpec& p) { p.set_restart_policy("OnFailure"); }),
                At(".restartPolicy"), "unsupported value \"OnFailure\" (supported: Never");
  ExpectInvalid(PodRequest([](PodSpec& p) { p.set_active_deadline_seconds(0); }),
                At(".activeDeadlineSeconds"), "between 1 and");
  ExpectInvalid(PodRequest([](PodSpec& p) { p.set_termination_grace_period_seconds(-1); }),
                At(".terminationGracePeriodSeconds"), "between 0 and 3600");
  ExpectInvalid(PodRequest([](PodSpec& p) { p.set_priority_class_name("urgent"); }),
                At(".priorityClassName"), "unknown priority class \"urgent\"");
  ExpectInvalid(PodRequest([](PodSpec& p) { p.mutable_tolerations(0)->set_operator_("Near"); }),
                At(".tolerations[0].operator"), "unknown operator");
  ExpectInvalid(PodRequest([](PodSpec& p) {
                  p.mutable_affinity()
                      ->mutable_node_affinity()
                      ->mutable_required_during_scheduling_ignored_during_execution()
                      ->mutable_node_selector_terms(0)
                      ->mutable_match_expressions(0)
                      ->clear_values();
                }),
                At(".affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution."
                   "nodeSelectorTerms[0].matchExpressions[0].values"),
                "needs values");
  EXPECT_TRUE(
      ValidateSubmitRequest(PodRequest([](PodSpec& p) { p.clear_restart_policy(); }), Policy())
          .ok());
}

TEST(PodValidationTest, FieldsInBothPlacesMustAgree) {
  ExpectInvalid(RequestWith([](auto& item) {
                  (*item.mutable_task()->mutable_node_selector())["kubernetes.io/os"] = "windows";
                }),
                At(".nodeSelector"), "differs from items[0].task.node_selector");
  ExpectInvalid(RequestWith([](auto& item) { item.set_priority_class("default"); }),
                At(".priorityClassName"), "differs from the job's priority_class \"default\"");
  ExpectInvalid(RequestWith([](auto& item) {
                  item.mutable_task()->mutable_active_deadline()->set_seconds(60);
                }),
                At(".activeDeadlineSeconds"), "differs from items[0].task.active_deadline");
  ExpectInvalid(RequestWith([](auto& item) {
                  item.mutable_task()->mutable_termination_grace_period()->set_seconds(10);
                }),
                At(".terminationGracePeriodSeconds"), "differs");
  ExpectInvalid(
      RequestWith([](auto& item) { item.mutable_task()->add_tolerations()->set_key("other"); }),
      At(".tolerations"), "differs");
  // The same value in both places is no conflict.
  absl::Status s = ValidateSubmitRequest(
      RequestWith([](auto& item) {
        item.set_priority_class("preemptible");
        (*item.mutable_task()->mutable_node_selector())["kubernetes.io/os"] = "linux";
        item.mutable_task()->mutable_active_deadline()->set_seconds(600);
      }),
      Policy());
  EXPECT_TRUE(s.ok()) << s;
}

TEST(PodValidationTest, UnknownFieldsFromANewerClientAreRefusedWithTheirPath) {
  // Field 99 of SecurityContext, as a client built against a larger schema would send it.
  ExpectInvalid(PodRequest([](PodSpec& p) {
                  p.mutable_containers(0)
                      ->mutable_security_context()
                      ->GetReflection()
                      ->MutableUnknownFields(p.mutable_containers(0)->mutable_security_context())
                      ->AddVarint(99, 1);
                }),
                At(".containers[0].securityContext"),
                "unknown field number 99 (not supported by Regatta's pod model (supported: "
                "runAsUser, runAsGroup))");
}

TEST(PodDerivationTest, JobGetsTheEffectiveRequestAndSchedulingFieldsFromThePod) {
  Job job;
  *job.mutable_task()->mutable_pod_spec() = GoodPod();
  NormalizeJob(job, Policy());
  const auto& task = job.task();
  // Containers: cpu 1 + 500m (a limit alone is the request), memory 1Gi; the init container's
  // cpu 2 is more than the sum.
  EXPECT_EQ(task.resources().requests().at("cpu"), "2");
  EXPECT_EQ(task.resources().requests().at("memory"), "1Gi");
  EXPECT_EQ(task.resources().requests_size(), 2);
  EXPECT_EQ(task.resources().limits().at("cpu"), "2");
  EXPECT_EQ(task.node_selector().at("kubernetes.io/os"), "linux");
  EXPECT_EQ(task.tolerations(0).key(), "gpu");
  EXPECT_EQ(task.node_affinity().required_terms(0).match_expressions(0).key(), "zone");
  EXPECT_EQ(task.active_deadline().seconds(), 600);
  EXPECT_EQ(job.priority_class(), "preemptible");
  // The pod spec is kept whole for the executors.
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(task.pod_spec(), GoodPod()));
}

TEST(PodDerivationTest, APodWithoutRequestsGetsTheDefaultResources) {
  Job job;
  auto* c = job.mutable_task()->mutable_pod_spec()->add_containers();
  c->set_name("c");
  c->set_image("busybox");
  NormalizeJob(job, Policy());
  EXPECT_EQ(job.task().resources().requests().at("cpu"), "100m");
  EXPECT_EQ(job.task().resources().requests().at("memory"), "64Mi");
  EXPECT_EQ(job.priority_class(), "default");
  EXPECT_FALSE(job.task().has_active_deadline());
}

}  // namespace
}  // namespace regatta::api
