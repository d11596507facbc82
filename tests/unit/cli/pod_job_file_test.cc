// Job files with a Kubernetes pod spec: what Kubernetes users write parses, and fields outside
// Regatta's pod model are refused with file:line:column and their path.

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cli/job_file.h"

namespace regatta::cli {
namespace {

// Line numbers below count from "queue" as line 1.
constexpr char kPodJobs[] = R"(queue: team-a
jobSet: pods
jobs:
  - clientId: two-containers
    task:
      podSpec:
        restartPolicy: Never
        terminationGracePeriodSeconds: 0
        initContainers:
          - name: setup
            image: localhost/busybox
            command: [sh, -c, "echo hi > /scratch/hi"]
            volumeMounts: [{name: scratch, mountPath: /scratch}]
        containers:
          - name: main
            image: localhost/busybox
            env:
              - {name: MODE, value: 1}
              - name: NODE
                valueFrom: {fieldRef: {fieldPath: spec.nodeName}}
            ports: [{containerPort: 8080, hostPort: 8080}]
            resources:
              requests: {cpu: 1, memory: 1Gi}
              limits: {cpu: 1, memory: 1Gi}
            securityContext: {runAsUser: 0}
            volumeMounts:
              - name: scratch
                mountPath: /scratch
        volumes:
          - name: scratch
            emptyDir: {}
  - priority: 1
    podSpec:
      containers: [{name: c, image: busybox, resources: {limits: {cpu: 0.5}}}]
)";

TEST(PodJobFileTest, KubernetesPodSpecsParse) {
  auto file = JobFile::Parse(kPodJobs, "jobs.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->requests().size(), 1u);
  const auto& items = file->requests()[0].items();
  ASSERT_EQ(items.size(), 2);
  const auto& pod = items[0].task().pod_spec();
  EXPECT_EQ(pod.restart_policy(), "Never");
  // 0 is a value, not "unset".
  EXPECT_TRUE(pod.has_termination_grace_period_seconds());
  EXPECT_EQ(pod.termination_grace_period_seconds(), 0);
  ASSERT_EQ(pod.init_containers_size(), 1);
  EXPECT_EQ(pod.init_containers(0).command(2), "echo hi > /scratch/hi");
  const auto& main = pod.containers(0);
  EXPECT_EQ(main.env(0).value(), "1");
  EXPECT_EQ(main.env(1).value_from().field_ref().field_path(), "spec.nodeName");
  EXPECT_EQ(main.ports(0).container_port(), 8080);
  EXPECT_EQ(main.ports(0).host_port(), 8080);
  // Quantities written as YAML numbers are quantity strings.
  EXPECT_EQ(main.resources().requests().at("cpu"), "1");
  EXPECT_EQ(main.resources().limits().at("memory"), "1Gi");
  EXPECT_TRUE(main.security_context().has_run_as_user());
  EXPECT_EQ(main.volume_mounts(0).mount_path(), "/scratch");
  EXPECT_TRUE(pod.volumes(0).has_empty_dir());
  // Armada's job files put podSpec on the job itself.
  EXPECT_EQ(items[1].task().pod_spec().containers(0).resources().limits().at("cpu"), "0.5");
}

std::string ErrorOf(const std::string& text) {
  auto file = JobFile::Parse(text, "jobs.yaml");
  EXPECT_FALSE(file.ok());
  if (file.ok()) return "";
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(file.status().message());
}

TEST(PodJobFileTest, FieldsOutsideThePodModelAreRefusedWithTheirPlace) {
  std::string text = kPodJobs;
  text.replace(text.find("{runAsUser: 0}"), 14, "{runAsUser: 0, privileged: true}");
  EXPECT_EQ(ErrorOf(text),
            "jobs.yaml:25:45: jobs[0].task.podSpec.containers[0].securityContext.privileged: "
            "not supported by Regatta's pod model (supported: runAsUser, runAsGroup)");

  text = kPodJobs;
  text.replace(text.find("            emptyDir: {}"), 24,
               "            persistentVolumeClaim: {claimName: data}");
  EXPECT_EQ(ErrorOf(text),
            "jobs.yaml:31:13: jobs[0].task.podSpec.volumes[0].persistentVolumeClaim: not "
            "supported by Regatta's pod model (supported: emptyDir, hostPath)");

  // A typo still gets its suggestion.
  text = kPodJobs;
  text.replace(text.find("volumeMounts: [{"), 12, "volumeMount");
  EXPECT_THAT(ErrorOf(text),
              ::testing::HasSubstr("jobs.yaml:13:13: jobs[0].task.podSpec.initContainers[0]."
                                   "volumeMount: unknown field \"volumeMount\" (did you mean "
                                   "\"volumeMounts\"?)"));
}

TEST(PodJobFileTest, ServerErrorsUnderPodSpecPointAtTheirLine) {
  auto file = JobFile::Parse(kPodJobs, "jobs.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  absl::Status server = absl::InvalidArgumentError(
      "items[0].task.podSpec.containers[0].volumeMounts[0].name: no volume named \"scratch\"");
  EXPECT_EQ(file->Attribute(server, 0).message(),
            "jobs.yaml:27:17: jobs[0].task.podSpec.containers[0].volumeMounts[0].name: no volume "
            "named \"scratch\"");
}

}  // namespace
}  // namespace regatta::cli
