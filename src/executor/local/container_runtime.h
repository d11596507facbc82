#ifndef REGATTA_SRC_EXECUTOR_LOCAL_CONTAINER_RUNTIME_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_CONTAINER_RUNTIME_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace regatta::executor {

struct ContainerMount {
  std::string host_path;  // ignored with empty_dir
  std::string container_path;
  bool read_only = false;
  // A pod's emptyDir volume of this name: a directory the runtime makes for the run, shared by
  // the pod's containers and removed with the run.
  std::string empty_dir;
};

struct ContainerDevice {
  std::string host_path;
  std::string container_path;  // empty: the host path
  std::string permissions;     // some of "rwm"; empty: "rwm"
};

// One container of a run, in Kubernetes terms.
struct ContainerLaunch {
  std::string name;    // in a pod: the container's name there
  std::string run_id;  // the container is labelled and named after it
  std::string job_id;
  std::string queue;
  std::string image;
  // `command` replaces the image's ENTRYPOINT and `args` its CMD; both empty: the image's.
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
  std::string working_dir;         // empty: the image's
  std::string user;                // "uid[:gid]"; empty: the image's
  int64_t memory_limit_bytes = 0;  // 0: none
  int64_t cpu_limit_milli = 0;     // 0: none
  std::vector<ContainerMount> mounts;
  std::vector<ContainerDevice> devices;
  // The containerPorts the container serves. Containers share the node's network, so these are
  // the node's ports; a runtime whose containers have no network refuses them.
  std::vector<int32_t> ports;
};

// Several containers of one run that share a network and volumes (a Kubernetes pod): the init
// containers run one after the other, each to success, then the containers all at once. The
// pod succeeds when every container exits 0; otherwise its exit code is the first failing one's.
struct PodLaunch {
  std::string run_id;
  std::string job_id;
  std::string queue;
  std::vector<ContainerLaunch> init_containers;
  std::vector<ContainerLaunch> containers;
  // Between SIGTERM and SIGKILL when the pod is stopped.
  absl::Duration termination_grace = absl::Seconds(30);
};

// What the foreground command's exit code means.
enum class ContainerExit {
  kContainer,     // the container's own exit code
  kRuntimeError,  // the runtime could not start it (image not found or not pulled, bad option)
};

// A container runtime the local executor runs image jobs with (docs/operations.md). A run is one
// foreground process (RunCommand) supervised like a host process: its output is the container's,
// SIGTERM to it reaches the container, its exit code is the container's. What may outlive that
// process (the container itself, when the process was killed) is removed by CleanUpRun. Every
// container carries labels with its run, job and the owning executor, so that an executor that
// restarts finds its predecessor's containers (ListRunIds). Thread-safe.
class ContainerRuntime {
 public:
  virtual ~ContainerRuntime() = default;

  // "podman 4.3.1 (runc, cgroup v1)".
  virtual std::string Describe() const = 0;

  // The command (argv[0] absolute) that runs the container to its end in the foreground, and
  // the environment it needs on top of the executor's base environment. The runtime may write
  // files the command reads (e.g. the container's environment, so that secret values never
  // appear on a command line); CleanUpRun removes them.
  struct Command {
    std::vector<std::string> argv;
    std::vector<std::pair<std::string, std::string>> env;
  };
  virtual absl::StatusOr<Command> PrepareRun(const ContainerLaunch& launch) const = 0;
  // The same for a pod (more than one container, or init containers).
  virtual absl::StatusOr<Command> PreparePod(const PodLaunch& pod) const = 0;

  virtual ContainerExit Classify(int exit_code) const = 0;

  // Whether the run's container ended by the kernel's out-of-memory killer. Call before
  // CleanUpRun; `exit_code` is the foreground command's.
  virtual bool EndedOutOfMemory(absl::string_view run_id, int exit_code,
                                int64_t memory_limit_bytes) const = 0;

  // After the run's foreground command ended: removes what the runtime kept for the run and,
  // with `container_may_remain` (the command was killed, or belonged to an earlier executor
  // process), kills and removes its containers. OK when nothing is left.
  virtual absl::Status CleanUpRun(absl::string_view run_id, bool container_may_remain) = 0;

  // Run ids that have containers of this executor, running or not.
  virtual absl::StatusOr<std::vector<std::string>> ListRunIds() const = 0;
};

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_CONTAINER_RUNTIME_H_
