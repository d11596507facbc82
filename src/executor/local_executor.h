#ifndef REGATTA_SRC_EXECUTOR_LOCAL_EXECUTOR_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_EXECUTOR_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "src/common/clock.h"
#include "src/executor/executor.h"
#include "src/executor/local/container_runtime.h"

namespace regatta::executor {

// executor.containers (docs/operations.md): how runs whose task has an image are run.
struct ContainerOptions {
  // "auto": podman where it works, else none; "podman": podman or the executor does not start;
  // "none": no runtime (a job with an image fails, terminal, and never runs on the host).
  std::string runtime = "auto";
  std::string network = "host";  // "host" or "none"
  std::string pull = "missing";  // "missing", "never" or "always"
};

struct LocalExecutorOptions {
  // Without nodes the executor offers the machine as one node named after the host; a node
  // without cpu or memory offers the machine's.
  ExecutorOptions executor;
  // Runs and their logs live under <data_dir>/runs.
  std::string data_dir;
  absl::Duration default_termination_grace = absl::Seconds(30);
  // Environment every run starts with (PATH, HOME, LANG, ... of the executor by default).
  std::vector<std::pair<std::string, std::string>> base_env;
  bool use_cgroups = true;
  // fsync run state files (see SupervisorOptions::sync_state); off by default: a crash of the
  // executor process loses nothing without it.
  bool sync_run_state = false;
  ContainerOptions containers;
  // Tests inject a runtime (overrides `containers.runtime`).
  std::unique_ptr<ContainerRuntime> container_runtime;
};

// The local process executor: an Executor whose runs are processes of this machine, started
// and supervised by the ProcessSupervisor. Survives its own restart: runs found on disk are
// reported (finished ones with their result, the rest as lost). `api`: see Executor::Start.
absl::StatusOr<std::unique_ptr<Executor>> StartLocalExecutor(
    LocalExecutorOptions options, std::shared_ptr<grpc::Channel> channel, const Clock* clock,
    std::unique_ptr<ExecutorApi> api = nullptr);

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_EXECUTOR_H_
