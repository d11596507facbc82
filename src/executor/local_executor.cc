#include "src/executor/local_executor.h"

#include <limits.h>
#include <stdlib.h>

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "src/common/logging.h"
#include "src/common/secrets/sealer.h"
#include "src/common/status_macros.h"
#include "src/executor/local/podman/podman_runtime.h"
#include "src/executor/local/process_supervisor.h"
#include "src/executor/pod_launch.h"

namespace regatta::executor {
namespace {

// A task with an image or a pod spec runs in containers, never on the host.
bool InContainer(const regatta::v1::TaskSpec& task) {
  return task.has_pod_spec() || !task.image().empty();
}

absl::Duration DurationOf(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

// Runs as processes through the ProcessSupervisor: the task's command on the host, or, for a
// task with an image, the container runtime's foreground command (container_runtime.h).
class ProcessBackend final : public RunBackend {
 public:
  ProcessBackend(std::unique_ptr<ProcessSupervisor> supervisor,
                 std::unique_ptr<ContainerRuntime> runtime, std::string no_runtime_reason)
      : supervisor_(std::move(supervisor)),
        runtime_(std::move(runtime)),
        no_runtime_reason_(std::move(no_runtime_reason)) {}

  // Results of an earlier process's container runs are read like live ones, and whatever that
  // process left of its containers is removed: none of them can still be supervised here.
  absl::Status RecoverContainers() {
    recovered_ = supervisor_->TakeRecovered();
    for (RecoveredRun& run : recovered_) {
      regatta::v1::JobRunLease lease;
      if (!lease.ParseFromString(run.metadata) || !InContainer(lease.job().task())) continue;
      if (runtime_ != nullptr) {
        ClassifyContainerResult(MemoryLimitOf(lease.job()), run.result);
        (void)runtime_->CleanUpRun(run.run_id, /*container_may_remain=*/true);
      }
    }
    if (runtime_ == nullptr) return absl::OkStatus();
    absl::StatusOr<std::vector<std::string>> left = runtime_->ListRunIds();
    if (!left.ok()) return left.status();
    for (const std::string& run_id : *left) {
      LOG_WARN("removing a container left by an earlier executor process", "run", run_id);
      if (absl::Status removed = runtime_->CleanUpRun(run_id, true); !removed.ok()) {
        LOG_WARN("could not remove a leftover container", "run", run_id, "error",
                 removed.ToString());
      }
    }
    return absl::OkStatus();
  }

  std::vector<RecoveredRun> TakeRecovered() override { return std::exchange(recovered_, {}); }

  absl::Status Start(const regatta::v1::JobRunLease& lease) override {
    const regatta::v1::Job& job = lease.job();
    const regatta::v1::TaskSpec& task = job.task();
    if (job.ingress_size() > 0) {
      // Never dropped silently: an executor that cannot serve what the job asks refuses it.
      return absl::FailedPreconditionError(
          "ingress: the local executor cannot serve ingresses; its pods run on the host network, "
          "so reach the job at its node's address on the ports of its services (or submit it "
          "without ingress)");
    }
    RunLaunch launch;
    launch.run_id = lease.run_id();
    std::vector<std::pair<std::string, std::string>> secret_env;
    for (const auto& [k, v] : task.secret_env()) {
      // The server opens secret values in the lease; one still sealed did not open there.
      if (secrets::IsSealed(v)) {
        return absl::FailedPreconditionError(
            absl::StrCat("secret_env ", k, ": the server could not open it (sealed with key \"",
                         secrets::SealedKeyId(v), "\"; see the server's log)"));
      }
      secret_env.emplace_back(k, v);
    }
    // What Regatta adds to the job's own environment.
    std::vector<std::pair<std::string, std::string>> env;
    env.emplace_back("REGATTA_JOB_ID", job.id());
    env.emplace_back("REGATTA_RUN_ID", lease.run_id());
    env.emplace_back("REGATTA_QUEUE", job.queue());
    env.emplace_back("REGATTA_JOB_SET", job.job_set());
    env.emplace_back("REGATTA_NODE", lease.node_id());
    for (auto& entry : LeasedDeviceEnvironment(lease)) env.push_back(std::move(entry));
    if (task.has_active_deadline()) launch.active_deadline = DurationOf(task.active_deadline());
    if (task.has_termination_grace_period()) {
      launch.termination_grace = DurationOf(task.termination_grace_period());
    }
    if (!InContainer(task)) {
      for (const std::string& arg : task.command()) launch.argv.push_back(arg);
      for (const std::string& arg : task.args()) launch.argv.push_back(arg);
      if (launch.argv.empty()) {
        return absl::FailedPreconditionError("the job has no command to run");
      }
      for (const auto& [k, v] : task.env()) launch.env.emplace_back(k, v);
      for (const auto& [k, v] : secret_env) launch.env.emplace_back(k, v);
      for (auto& entry : env) launch.env.push_back(std::move(entry));
      launch.working_dir = task.working_dir();
      launch.memory_limit_bytes = MemoryLimitOf(job);
    } else {
      if (runtime_ == nullptr) {
        // Never on the host instead: the image's programs are not the host's.
        const std::string what = task.has_pod_spec()
                                     ? std::string("the job's pod")
                                     : absl::StrCat("the job's image \"", task.image(), "\"");
        return absl::FailedPreconditionError(absl::StrCat(
            what, " needs a container runtime, and this executor has none: ", no_runtime_reason_));
      }
      // The flat task is a one-container pod (its env and secret_env included, see PodOf).
      absl::StatusOr<PodLaunch> pod = PodLaunchOf(lease, env);
      if (!pod.ok()) return absl::FailedPreconditionError(pod.status().message());
      int64_t memory_limit = 0;
      for (const ContainerLaunch& c : pod->containers) memory_limit += c.memory_limit_bytes;
      // One container alone needs no pod (a podman pod costs an infra container).
      absl::StatusOr<ContainerRuntime::Command> command =
          pod->init_containers.empty() && pod->containers.size() == 1
              ? runtime_->PrepareRun(pod->containers[0])
              : runtime_->PreparePod(*pod);
      if (!command.ok()) return command.status();
      if (task.has_pod_spec() && task.pod_spec().has_termination_grace_period_seconds()) {
        // The pod's own grace; 0 (kill at once) is 1 ms here, as a zero grace means "the
        // default" to the supervisor.
        launch.termination_grace =
            std::max(absl::Seconds(task.pod_spec().termination_grace_period_seconds()),
                     absl::Milliseconds(1));
      }
      launch.argv = std::move(command->argv);
      launch.env = std::move(command->env);
      absl::MutexLock lock(&mu_);
      container_runs_[lease.run_id()] = memory_limit;
    }
    // Kept on disk to recover the run after a restart: without the opened secret values.
    regatta::v1::JobRunLease kept = lease;
    kept.mutable_job()->mutable_task()->clear_secret_env();
    launch.metadata = kept.SerializeAsString();
    absl::Status started = supervisor_->Start(launch);
    if (!started.ok() && InContainer(task) && !absl::IsAlreadyExists(started)) {
      (void)runtime_->CleanUpRun(lease.run_id(), false);
      absl::MutexLock lock(&mu_);
      container_runs_.erase(lease.run_id());
    }
    return started;
  }

  absl::Status Stop(absl::string_view run_id, RunEnd why) override {
    return supervisor_->Stop(run_id, why);
  }

  std::vector<RunResult> WaitResults(absl::Duration timeout) override {
    std::vector<RunResult> results = supervisor_->WaitResults(timeout);
    for (RunResult& result : results) {
      int64_t memory_limit = 0;
      {
        absl::MutexLock lock(&mu_);
        auto it = container_runs_.find(result.run_id);
        if (it == container_runs_.end()) continue;
        memory_limit = it->second;
        container_runs_.erase(it);
      }
      ClassifyContainerResult(memory_limit, result);
      // The foreground command was killed (stop, deadline, signal): the container may live on.
      const bool killed = result.end != RunEnd::kSucceeded &&
                          (result.end != RunEnd::kFailed || result.signal != 0 ||
                           result.error.reason() == regatta::v1::ERROR_REASON_DEADLINE_EXCEEDED);
      if (absl::Status cleaned = runtime_->CleanUpRun(result.run_id, killed); !cleaned.ok()) {
        LOG_WARN("could not clean up a run's container", "run", result.run_id, "error",
                 cleaned.ToString());
      }
    }
    return results;
  }

  void Forget(absl::string_view run_id) override { supervisor_->Forget(run_id); }

  void StopAll(absl::Duration grace) override {
    supervisor_->StopAll(grace);
    if (runtime_ == nullptr) return;
    absl::flat_hash_map<std::string, int64_t> left;
    {
      absl::MutexLock lock(&mu_);
      left.swap(container_runs_);
    }
    for (const auto& [run_id, limit] : left) (void)runtime_->CleanUpRun(run_id, true);
  }

  absl::StatusOr<LogRead> ReadLog(absl::string_view run_id, int64_t offset,
                                  int64_t max_bytes) const override {
    return supervisor_->ReadLog(run_id, offset, max_bytes);
  }
  absl::StatusOr<int64_t> TailOffset(absl::string_view run_id, int lines) const override {
    return supervisor_->TailOffset(run_id, lines);
  }

 private:
  static int64_t MemoryLimitOf(const regatta::v1::Job& job) {
    return RequestsOf(job).Get(ResourceNames::kMemory).milli() / 1000;
  }

  // The runtime's own failure (image not found or not pulled) and the kernel's OOM kill read
  // from a container run's exit code; the rest stays as the supervisor reported it.
  void ClassifyContainerResult(int64_t memory_limit, RunResult& result) const {
    if (result.end != RunEnd::kFailed || result.signal != 0 ||
        result.error.reason() != regatta::v1::ERROR_REASON_CONTAINER_ERROR) {
      return;
    }
    if (runtime_->Classify(result.exit_code) == ContainerExit::kRuntimeError) {
      result.error.set_reason(regatta::v1::ERROR_REASON_CANNOT_EXECUTE);
      result.error.set_category("ContainerRuntimeError");
      result.error.set_terminal(true);
      result.error.set_message(absl::StrCat(
          runtime_->Describe(), " could not start the container: ", RuntimeMessage(result.run_id)));
    } else if (runtime_->EndedOutOfMemory(result.run_id, result.exit_code, memory_limit)) {
      result.error.set_reason(regatta::v1::ERROR_REASON_OUT_OF_MEMORY);
      result.error.set_category("OutOfMemory");
      result.error.set_terminal(true);
      result.error.set_message(
          absl::StrCat("the container was killed for using more than its memory limit of ",
                       memory_limit, " bytes (exit code ", result.exit_code, ")"));
    }
  }

  // The runtime's last error line in the run's log ("Error: ..."), or its last line.
  std::string RuntimeMessage(absl::string_view run_id) const {
    absl::StatusOr<int64_t> offset = supervisor_->TailOffset(run_id, 5);
    if (!offset.ok()) return "(no output)";
    absl::StatusOr<LogRead> read = supervisor_->ReadLog(run_id, *offset, 4096);
    if (!read.ok()) return "(no output)";
    std::string last;
    for (absl::string_view line : absl::StrSplit(read->data, '\n', absl::SkipWhitespace())) {
      if (absl::StartsWith(line, "Error: ")) return std::string(line.substr(7));
      last = std::string(line);
    }
    return last.empty() ? "(no output)" : last;
  }

  std::unique_ptr<ProcessSupervisor> supervisor_;
  std::unique_ptr<ContainerRuntime> runtime_;  // null: none
  const std::string no_runtime_reason_;
  std::vector<RecoveredRun> recovered_;
  mutable absl::Mutex mu_;
  // Running container runs and their memory limits.
  absl::flat_hash_map<std::string, int64_t> container_runs_ ABSL_GUARDED_BY(mu_);
};

// The runtime of executor.containers.runtime, or null with why there is none.
absl::StatusOr<std::unique_ptr<ContainerRuntime>> OpenContainerRuntime(
    const ContainerOptions& options, const std::string& data_dir, std::string* no_runtime) {
  if (options.runtime == "none") {
    *no_runtime = "executor.containers.runtime is none";
    return nullptr;
  }
  if (options.runtime != "auto" && options.runtime != "podman") {
    return absl::InvalidArgumentError(absl::StrCat(
        "executor.containers.runtime: \"", options.runtime, "\" (expected auto, podman or none)"));
  }
  PodmanOptions podman;
  podman.network = options.network;
  podman.pull = options.pull;
  podman.files_dir = data_dir + "/containers";
  // Containers of this executor (and no other executor's) carry this label.
  char real[PATH_MAX];
  podman.owner =
      PodmanRuntime::OwnerLabel(::realpath(data_dir.c_str(), real) != nullptr ? real : data_dir);
  absl::StatusOr<std::unique_ptr<PodmanRuntime>> opened = PodmanRuntime::Open(std::move(podman));
  if (opened.ok()) return std::unique_ptr<ContainerRuntime>(*std::move(opened));
  if (options.runtime == "podman" || absl::IsInvalidArgument(opened.status())) {
    return opened.status();
  }
  *no_runtime = absl::StrCat("no container runtime works here (", opened.status().message(), ")");
  return nullptr;
}

}  // namespace

absl::StatusOr<std::unique_ptr<Executor>> StartLocalExecutor(LocalExecutorOptions options,
                                                             std::shared_ptr<grpc::Channel> channel,
                                                             const Clock* clock,
                                                             std::unique_ptr<ExecutorApi> api) {
  if (options.data_dir.empty()) return absl::InvalidArgumentError("executor data dir: empty");
  // Nodes: the configured ones, or the machine as one node.
  const MachineResources machine = DetectMachineResources();
  std::vector<NodeConfig>& nodes = options.executor.nodes;
  if (nodes.empty()) nodes.push_back(NodeConfig{});
  for (size_t i = 0; i < nodes.size(); ++i) {
    NodeConfig& config = nodes[i];
    if (config.id.empty()) {
      config.id = nodes.size() == 1 ? machine.hostname : absl::StrCat(machine.hostname, "-", i);
    }
    if (!config.resources.contains("cpu")) {
      config.resources["cpu"] = Quantity::FromMilli(machine.cpu_milli).ToString();
    }
    if (!config.resources.contains("memory")) {
      config.resources["memory"] = Quantity::FromUnits(machine.memory_bytes).ToString();
    }
  }

  SupervisorOptions sup;
  sup.root_dir = options.data_dir;
  sup.clock = clock;
  sup.default_termination_grace = options.default_termination_grace;
  sup.base_env = options.base_env;
  sup.use_cgroups = options.use_cgroups;
  sup.sync_state = options.sync_run_state;
  ASSIGN_OR_RETURN(std::unique_ptr<ProcessSupervisor> supervisor, ProcessSupervisor::Open(sup));
  const bool enforces_memory_limits = supervisor->EnforcesMemoryLimits();
  std::string no_runtime;
  std::unique_ptr<ContainerRuntime> runtime = std::move(options.container_runtime);
  if (runtime == nullptr) {
    ASSIGN_OR_RETURN(runtime,
                     OpenContainerRuntime(options.containers, options.data_dir, &no_runtime));
  }
  const std::string runtime_text = runtime != nullptr ? runtime->Describe() : no_runtime;
  auto backend =
      std::make_unique<ProcessBackend>(std::move(supervisor), std::move(runtime), no_runtime);
  RETURN_IF_ERROR(backend->RecoverContainers());
  ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                   Executor::Start(std::move(options.executor), std::move(backend),
                                   std::move(channel), clock, std::move(api)));
  LOG_INFO("local executor started", "executor", executor->executor_id(), "nodes",
           executor->node_count(), "logs", executor->logs_address(), "memory_limits",
           enforces_memory_limits ? "enforced (cgroup v2)" : "accounting only", "containers",
           runtime_text);
  return executor;
}

}  // namespace regatta::executor
