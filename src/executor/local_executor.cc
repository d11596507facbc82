#include "src/executor/local_executor.h"

#include "absl/strings/str_cat.h"
#include "src/common/logging.h"
#include "src/common/secrets/sealer.h"
#include "src/common/status_macros.h"
#include "src/executor/local/process_supervisor.h"

namespace regatta::executor {
namespace {

// Runs as processes through the ProcessSupervisor.
class ProcessBackend final : public RunBackend {
 public:
  explicit ProcessBackend(std::unique_ptr<ProcessSupervisor> supervisor)
      : supervisor_(std::move(supervisor)) {}

  std::vector<RecoveredRun> TakeRecovered() override { return supervisor_->TakeRecovered(); }

  absl::Status Start(const regatta::v1::JobRunLease& lease) override {
    const regatta::v1::Job& job = lease.job();
    RunLaunch launch;
    launch.run_id = lease.run_id();
    for (const std::string& arg : job.task().command()) launch.argv.push_back(arg);
    for (const std::string& arg : job.task().args()) launch.argv.push_back(arg);
    if (launch.argv.empty()) {
      return absl::FailedPreconditionError("the job has no command to run");
    }
    for (const auto& [k, v] : job.task().env()) launch.env.emplace_back(k, v);
    for (const auto& [k, v] : job.task().secret_env()) {
      // The server opens secret values in the lease; one still sealed did not open there.
      if (secrets::IsSealed(v)) {
        return absl::FailedPreconditionError(
            absl::StrCat("secret_env ", k, ": the server could not open it (sealed with key \"",
                         secrets::SealedKeyId(v), "\"; see the server's log)"));
      }
      launch.env.emplace_back(k, v);
    }
    launch.env.emplace_back("REGATTA_JOB_ID", job.id());
    launch.env.emplace_back("REGATTA_RUN_ID", lease.run_id());
    launch.env.emplace_back("REGATTA_QUEUE", job.queue());
    launch.env.emplace_back("REGATTA_JOB_SET", job.job_set());
    launch.env.emplace_back("REGATTA_NODE", lease.node_id());
    for (auto& entry : LeasedDeviceEnvironment(lease)) launch.env.push_back(std::move(entry));
    launch.working_dir = job.task().working_dir();
    if (job.task().has_active_deadline()) {
      launch.active_deadline = absl::Seconds(job.task().active_deadline().seconds()) +
                               absl::Nanoseconds(job.task().active_deadline().nanos());
    }
    if (job.task().has_termination_grace_period()) {
      launch.termination_grace = absl::Seconds(job.task().termination_grace_period().seconds()) +
                                 absl::Nanoseconds(job.task().termination_grace_period().nanos());
    }
    launch.memory_limit_bytes = RequestsOf(job).Get(ResourceNames::kMemory).milli() / 1000;
    // Kept on disk to recover the run after a restart: without the opened secret values.
    regatta::v1::JobRunLease kept = lease;
    kept.mutable_job()->mutable_task()->clear_secret_env();
    launch.metadata = kept.SerializeAsString();
    return supervisor_->Start(launch);
  }

  absl::Status Stop(absl::string_view run_id, RunEnd why) override {
    return supervisor_->Stop(run_id, why);
  }
  std::vector<RunResult> WaitResults(absl::Duration timeout) override {
    return supervisor_->WaitResults(timeout);
  }
  void Forget(absl::string_view run_id) override { supervisor_->Forget(run_id); }
  void StopAll(absl::Duration grace) override { supervisor_->StopAll(grace); }
  absl::StatusOr<LogRead> ReadLog(absl::string_view run_id, int64_t offset,
                                  int64_t max_bytes) const override {
    return supervisor_->ReadLog(run_id, offset, max_bytes);
  }
  absl::StatusOr<int64_t> TailOffset(absl::string_view run_id, int lines) const override {
    return supervisor_->TailOffset(run_id, lines);
  }

 private:
  std::unique_ptr<ProcessSupervisor> supervisor_;
};

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
  ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                   Executor::Start(std::move(options.executor),
                                   std::make_unique<ProcessBackend>(std::move(supervisor)),
                                   std::move(channel), clock, std::move(api)));
  LOG_INFO("local executor started", "executor", executor->executor_id(), "nodes",
           executor->node_count(), "logs", executor->logs_address(), "memory_limits",
           enforces_memory_limits ? "enforced (cgroup v2)" : "accounting only");
  return executor;
}

}  // namespace regatta::executor
