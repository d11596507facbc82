#ifndef REGATTA_SRC_EXECUTOR_LOCAL_PODMAN_PODMAN_RUNTIME_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_PODMAN_PODMAN_RUNTIME_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "src/executor/local/container_runtime.h"

namespace regatta::executor {

struct PodmanOptions {
  std::string podman_path;  // empty: looked up on PATH
  // Labels every container; scopes ListRunIds (two executors on one machine never see each
  // other's containers). Only [A-Za-z0-9._-].
  std::string owner;
  std::string network = "none";  // "host" or "none"
  std::string pull = "missing";  // "missing", "never" or "always"
  // Containers' cgroups go under <the executor's own cgroup>/<cgroup_dir>/<run>, so that they
  // stay inside whatever limits the executor itself runs under. Empty: podman's default.
  std::string cgroup_dir = "regatta";
  // Required: the private containers.conf, and per run its env files (0600), pod script and
  // emptyDir volumes (removed when the run is cleaned up).
  std::string files_dir;
};

// The podman CLI backend: `podman run --rm` in the foreground per run (rootful; runc where it is
// installed, as crun refuses hybrid cgroup v1 machines; cgroupfs; capped ulimits). Needs no
// daemon. Everything measured about it on this kind of machine: ../shared/anchors/containers.md.
class PodmanRuntime final : public ContainerRuntime {
 public:
  // Probes podman (`podman version`, `podman info`). FAILED_PRECONDITION naming what is missing
  // when it cannot run containers here.
  static absl::StatusOr<std::unique_ptr<PodmanRuntime>> Open(PodmanOptions options);

  std::string Describe() const override { return description_; }
  absl::StatusOr<Command> PrepareRun(const ContainerLaunch& launch) const override;
  absl::StatusOr<Command> PreparePod(const PodLaunch& pod) const override;
  ContainerExit Classify(int exit_code) const override;
  bool EndedOutOfMemory(absl::string_view run_id, int exit_code,
                        int64_t memory_limit_bytes) const override;
  absl::Status CleanUpRun(absl::string_view run_id, bool container_may_remain) override;
  absl::StatusOr<std::vector<std::string>> ListRunIds() const override;

  // The container name of a run: "regatta-" + the run id with characters podman refuses
  // replaced (and a hash suffix when any was).
  static std::string ContainerName(absl::string_view run_id);
  // An owner label for the executor whose data directory is `data_dir` (a stable hash).
  static std::string OwnerLabel(absl::string_view data_dir);

  // Exposed for tests: the arguments of `podman run` for `launch` (after the global options),
  // alone or (with `pod`) as a container of that pod.
  std::vector<std::string> RunArguments(const ContainerLaunch& launch, const std::string& env_file,
                                        absl::string_view pod = "") const;
  // Where the run's files (env files, pod script, emptyDir volumes) go.
  std::string RunDir(absl::string_view run_id) const;

 private:
  explicit PodmanRuntime(PodmanOptions options) : options_(std::move(options)) {}
  std::vector<std::string> GlobalArguments() const;
  // The run's cgroup, relative to a controller's mount point (empty: none).
  std::string RunCgroup(absl::string_view run_id) const;
  void RemoveRunCgroups(absl::string_view run_id) const;
  std::vector<std::string> Labels(absl::string_view run_id, absl::string_view job_id,
                                  absl::string_view queue) const;
  std::string EmptyDirPath(absl::string_view run_id, absl::string_view volume) const;
  absl::Status MakeRunDir(const ContainerLaunch& launch) const;
  // FAILED_PRECONDITION when the container has ports and the containers have no network.
  absl::Status CheckPorts(const ContainerLaunch& launch) const;
  // The env file of `launch` in its run directory ("" when every value is on the command line).
  absl::StatusOr<std::string> WriteEnvFile(const ContainerLaunch& launch,
                                           absl::string_view file_name) const;

  PodmanOptions options_;
  std::string oci_runtime_;  // "runc", or empty for podman's default
  std::string cgroup_base_;  // the executor's own cgroup path + cgroup_dir, or empty
  bool cgroup_v1_ = true;
  std::string conf_env_;  // CONTAINERS_CONF=<the private containers.conf>
  std::string description_;
};

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_PODMAN_PODMAN_RUNTIME_H_
