#include "src/executor/simulated_executor.h"

#include <cmath>
#include <random>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"

namespace regatta::executor {

UniformSource SeededUniformSource(uint64_t seed) {
  // mt19937_64 is specified exactly; std's distributions are not, so the double is made here.
  auto engine = std::make_shared<std::mt19937_64>(seed);
  return [engine] { return static_cast<double>((*engine)() >> 11) * 0x1.0p-53; };
}

absl::Duration SampleDuration(const DurationDistribution& distribution,
                              const UniformSource& uniform) {
  switch (distribution.kind) {
    case DurationDistribution::Kind::kConstant:
      return distribution.value;
    case DurationDistribution::Kind::kUniform:
      return distribution.min + (distribution.max - distribution.min) * uniform();
    case DurationDistribution::Kind::kExponential:
      // Inverse of the CDF; 1 - u is in (0, 1], so the log is finite.
      return distribution.mean * -std::log(1.0 - uniform());
  }
  return absl::ZeroDuration();
}

absl::StatusOr<std::vector<NodeConfig>> SimulatedNodes(
    const std::vector<SimulatedNodeGroup>& groups) {
  std::vector<NodeConfig> nodes;
  std::map<std::string, int> next_index;  // by name prefix
  for (size_t g = 0; g < groups.size(); ++g) {
    const SimulatedNodeGroup& group = groups[g];
    const std::string key = absl::StrCat("executor.simulated.nodes[", g, "]");
    if (group.count < 0) return absl::InvalidArgumentError(key + ".count: must be >= 0");
    std::vector<std::pair<std::string, std::string>> entries(group.resources.begin(),
                                                             group.resources.end());
    if (absl::StatusOr<ResourceList> list = ResourceList::FromStrings(entries); !list.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(key, ".resources: ", list.status().message()));
    }
    for (int i = 0; i < group.count; ++i) {
      NodeConfig& node = nodes.emplace_back();
      node.id = absl::StrFormat("%s%04d", group.name_prefix, next_index[group.name_prefix]++);
      node.labels = group.labels;
      node.taints = group.taints;
      node.resources = group.resources;
    }
  }
  if (nodes.empty()) return absl::InvalidArgumentError("executor.simulated.nodes: no nodes");
  return nodes;
}

SimulatedBackend::SimulatedBackend(const Clock* clock, DurationDistribution duration,
                                   UniformSource uniform)
    : clock_(clock), duration_(duration), uniform_(std::move(uniform)) {}

absl::Status SimulatedBackend::Start(const regatta::v1::JobRunLease& lease) {
  const auto& annotations = lease.job().annotations();
  int exit_code = 0;
  if (auto it = annotations.find(kSimulatedExitCodeAnnotation); it != annotations.end()) {
    if (!absl::SimpleAtoi(it->second, &exit_code)) {
      return absl::FailedPreconditionError(absl::StrCat("annotation ", kSimulatedExitCodeAnnotation,
                                                        ": not an integer: \"", it->second, "\""));
    }
  }
  std::optional<absl::Duration> duration;
  if (auto it = annotations.find(kSimulatedDurationAnnotation); it != annotations.end()) {
    absl::Duration d;
    if (!absl::ParseDuration(it->second, &d) || d < absl::ZeroDuration() ||
        d == absl::InfiniteDuration()) {
      return absl::FailedPreconditionError(absl::StrCat("annotation ", kSimulatedDurationAnnotation,
                                                        ": not a duration like 90s or 5m: \"",
                                                        it->second, "\""));
    }
    duration = d;
  }
  absl::MutexLock lock(&mu_);
  if (stopped_) return absl::UnavailableError("the executor is shutting down");
  if (runs_.contains(lease.run_id())) {
    return absl::AlreadyExistsError(absl::StrCat("run ", lease.run_id(), " is known"));
  }
  if (!duration.has_value()) duration = SampleDuration(duration_, uniform_);
  Run& run = runs_[lease.run_id()];
  run.started = clock_->Now();
  run.ends = run.started + *duration;
  run.exit_code = exit_code;
  due_.emplace(run.ends, lease.run_id());
  ++changes_;
  return absl::OkStatus();
}

void SimulatedBackend::EndLocked(const std::string& run_id, Run& run, RunEnd end, absl::Time at) {
  run.ended = true;
  RunResult& result = ended_.emplace_back();
  result.run_id = run_id;
  result.end = end;
  result.started = run.started;
  result.finished = at;
  if (end == RunEnd::kSucceeded && run.exit_code != 0) {
    // As a process exiting with the code (see ProcessSupervisor).
    result.end = RunEnd::kFailed;
    result.exit_code = run.exit_code;
    result.error.set_reason(regatta::v1::ERROR_REASON_CONTAINER_ERROR);
    result.error.set_message(
        absl::StrCat("the simulated process exited with code ", run.exit_code));
    result.error.set_category("ContainerError");
    result.error.set_terminal(true);
    result.error.set_exit_code(run.exit_code);
  }
}

absl::Status SimulatedBackend::Stop(absl::string_view run_id, RunEnd why) {
  if (why != RunEnd::kCancelled && why != RunEnd::kPreempted) {
    return absl::InvalidArgumentError("a run is stopped as cancelled or preempted");
  }
  absl::MutexLock lock(&mu_);
  CollectDueLocked();  // a run whose time is up has ended on its own
  auto it = runs_.find(run_id);
  if (it == runs_.end() || it->second.ended) {
    return absl::NotFoundError(absl::StrCat("run ", run_id, " is not running"));
  }
  EndLocked(it->first, it->second, why, clock_->Now());
  ++changes_;
  return absl::OkStatus();
}

void SimulatedBackend::CollectDueLocked() {
  const absl::Time now = clock_->Now();
  while (!due_.empty() && due_.top().first <= now) {
    auto [ends, run_id] = due_.top();
    due_.pop();
    auto it = runs_.find(run_id);
    if (it == runs_.end() || it->second.ended) continue;  // stopped before its end
    EndLocked(run_id, it->second, RunEnd::kSucceeded, ends);
  }
}

std::vector<RunResult> SimulatedBackend::WaitResults(absl::Duration timeout) {
  const absl::Time give_up = absl::Now() + timeout;  // a real-time budget, as the caller asks
  absl::MutexLock lock(&mu_);
  while (true) {
    CollectDueLocked();
    if (!ended_.empty() || stopped_) return std::exchange(ended_, {});
    absl::Duration wait = give_up - absl::Now();
    if (!due_.empty()) wait = std::min(wait, due_.top().first - clock_->Now());
    if (wait <= absl::ZeroDuration()) {
      if (absl::Now() >= give_up) return {};
      continue;  // the earliest end is due
    }
    const uint64_t seen = changes_;
    auto changed = [this, seen]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return changes_ != seen || stopped_; };
    mu_.AwaitWithTimeout(absl::Condition(&changed), wait);
  }
}

void SimulatedBackend::Forget(absl::string_view run_id) {
  absl::MutexLock lock(&mu_);
  auto it = runs_.find(run_id);
  if (it != runs_.end() && it->second.ended) runs_.erase(it);
}

void SimulatedBackend::StopAll(absl::Duration) {
  // Nothing outlives the process: the server expires the runs left when it loses the executor.
  absl::MutexLock lock(&mu_);
  stopped_ = true;
  runs_.clear();
  ended_.clear();
  due_ = {};
}

absl::StatusOr<LogRead> SimulatedBackend::ReadLog(absl::string_view run_id, int64_t,
                                                  int64_t) const {
  return absl::NotFoundError(absl::StrCat("run ", run_id, " is simulated and has no log"));
}

absl::StatusOr<int64_t> SimulatedBackend::TailOffset(absl::string_view run_id, int) const {
  return absl::NotFoundError(absl::StrCat("run ", run_id, " is simulated and has no log"));
}

int SimulatedBackend::runs() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(runs_.size());
}

absl::StatusOr<std::unique_ptr<Executor>> StartSimulatedExecutor(
    SimulatedExecutorOptions options, std::shared_ptr<grpc::Channel> channel, const Clock* clock,
    std::unique_ptr<ExecutorApi> api) {
  ASSIGN_OR_RETURN(options.executor.nodes, SimulatedNodes(options.node_groups));
  options.executor.nodes_key = "executor.simulated.nodes";
  if (options.executor.executor_id.empty()) {
    options.executor.executor_id = absl::StrCat("simulated-", HostName());
  }
  UniformSource uniform =
      options.uniform ? std::move(options.uniform) : SeededUniformSource(options.seed);
  auto backend = std::make_unique<SimulatedBackend>(clock, options.duration, std::move(uniform));
  ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor,
                   Executor::Start(std::move(options.executor), std::move(backend),
                                   std::move(channel), clock, std::move(api)));
  LOG_INFO("simulated executor started", "executor", executor->executor_id(), "nodes",
           executor->node_count());
  return executor;
}

}  // namespace regatta::executor
