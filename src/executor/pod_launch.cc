#include "src/executor/pod_launch.h"

#include <map>

#include "absl/strings/str_cat.h"
#include "src/common/pod/pod.h"
#include "src/common/resources.h"
#include "src/common/status_macros.h"

namespace regatta::executor {
namespace {

namespace pb = regatta::v1;

// The container's request of `resource` in milli-units, 0 when it asks for none.
int64_t RequestMilli(const std::map<std::string, Quantity>& requests, const char* resource) {
  auto it = requests.find(resource);
  return it == requests.end() ? 0 : it->second.milli();
}

absl::StatusOr<ContainerLaunch> ContainerOf(
    const pb::JobRunLease& lease, const pb::PodSpec& pod, const pb::Container& container,
    const std::string& path, const pod::PodMetadata& metadata,
    const std::vector<std::pair<std::string, std::string>>& extra_env) {
  const pb::Job& job = lease.job();
  ContainerLaunch launch;
  launch.name = container.name();
  launch.run_id = lease.run_id();
  launch.job_id = job.id();
  launch.queue = job.queue();
  launch.image = container.image();
  launch.command.assign(container.command().begin(), container.command().end());
  launch.args.assign(container.args().begin(), container.args().end());
  launch.working_dir = container.working_dir();
  for (const pb::ContainerPort& port : container.ports()) {
    launch.ports.push_back(port.container_port());
  }
  for (int i = 0; i < container.env_size(); ++i) {
    const pb::EnvVar& env = container.env(i);
    if (env.has_value_from() && env.value_from().has_field_ref()) {
      absl::StatusOr<std::string> value =
          pod::ResolveFieldRef(env.value_from().field_ref().field_path(), metadata);
      if (!value.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            path, ".env[", i, "].valueFrom.fieldRef.fieldPath: ", value.status().message()));
      }
      launch.env.emplace_back(env.name(), *std::move(value));
    } else {
      launch.env.emplace_back(env.name(), env.value());
    }
  }
  // The container's own variables win over Regatta's, as a pod's env wins over what the
  // kubelet adds.
  for (const auto& [name, value] : extra_env) {
    bool own = false;
    for (const auto& [n, v] : launch.env) own |= n == name;
    if (!own) launch.env.emplace_back(name, value);
  }
  // Requests are limits (as in Armada).
  const std::map<std::string, Quantity> requests = pod::ContainerRequests(container);
  launch.memory_limit_bytes = RequestMilli(requests, "memory") / 1000;
  launch.cpu_limit_milli = RequestMilli(requests, "cpu");
  if (container.has_security_context() && container.security_context().has_run_as_user()) {
    launch.user = absl::StrCat(container.security_context().run_as_user());
    if (container.security_context().has_run_as_group()) {
      absl::StrAppend(&launch.user, ":", container.security_context().run_as_group());
    }
  }
  for (int i = 0; i < container.volume_mounts_size(); ++i) {
    const pb::VolumeMount& mount = container.volume_mounts(i);
    const pb::Volume* volume = nullptr;
    for (const pb::Volume& v : pod.volumes()) {
      if (v.name() == mount.name()) volume = &v;
    }
    if (volume == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          path, ".volumeMounts[", i, "].name: no volume named \"", mount.name(), "\""));
    }
    ContainerMount m;
    m.container_path = mount.mount_path();
    m.read_only = mount.read_only();
    if (volume->has_host_path()) {
      m.host_path = volume->host_path().path();
      if (!mount.sub_path().empty()) absl::StrAppend(&m.host_path, "/", mount.sub_path());
    } else {
      // emptyDir; a subPath is a directory inside it.
      m.empty_dir = mount.sub_path().empty() ? volume->name()
                                             : absl::StrCat(volume->name(), "/", mount.sub_path());
    }
    launch.mounts.push_back(std::move(m));
  }
  for (const pb::LeasedDevice& device : lease.devices()) {
    for (const v0::DeviceSpec& spec : device.device_specs()) {
      launch.devices.push_back({spec.host_path(), spec.container_path(), spec.permissions()});
    }
    for (const v0::Mount& mount : device.mounts()) {
      launch.mounts.push_back({mount.host_path(), mount.container_path(), mount.read_only(), ""});
    }
  }
  return launch;
}

}  // namespace

absl::StatusOr<PodLaunch> PodLaunchOf(
    const pb::JobRunLease& lease,
    const std::vector<std::pair<std::string, std::string>>& extra_env) {
  const pb::Job& job = lease.job();
  const pb::PodSpec pod = pod::PodOf(job.task());
  pod::PodMetadata metadata;
  metadata.name = absl::StrCat("regatta-", job.id());
  // Armada's namespace of the job; Kubernetes' (and Armada's) default without one.
  metadata.namespace_ = job.namespace_().empty() ? "default" : job.namespace_();
  metadata.uid = lease.run_id();
  metadata.labels.insert(job.labels().begin(), job.labels().end());
  metadata.annotations.insert(job.annotations().begin(), job.annotations().end());
  metadata.node_name = lease.node_id();
  metadata.service_account = "default";
  // Host network on one machine: the pod's address is the node's loopback.
  metadata.pod_ip = "127.0.0.1";
  metadata.host_ip = "127.0.0.1";
  PodLaunch launch;
  launch.run_id = lease.run_id();
  launch.job_id = job.id();
  launch.queue = job.queue();
  if (pod.has_termination_grace_period_seconds()) {
    launch.termination_grace = absl::Seconds(pod.termination_grace_period_seconds());
  }
  for (int i = 0; i < pod.init_containers_size(); ++i) {
    ASSIGN_OR_RETURN(ContainerLaunch c, ContainerOf(lease, pod, pod.init_containers(i),
                                                    absl::StrCat("podSpec.initContainers[", i, "]"),
                                                    metadata, extra_env));
    launch.init_containers.push_back(std::move(c));
  }
  for (int i = 0; i < pod.containers_size(); ++i) {
    ASSIGN_OR_RETURN(ContainerLaunch c,
                     ContainerOf(lease, pod, pod.containers(i),
                                 absl::StrCat("podSpec.containers[", i, "]"), metadata, extra_env));
    launch.containers.push_back(std::move(c));
  }
  if (launch.containers.empty()) {
    return absl::InvalidArgumentError("podSpec.containers: the pod has no container");
  }
  return launch;
}

}  // namespace regatta::executor
