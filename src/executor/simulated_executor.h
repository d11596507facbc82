#ifndef REGATTA_SRC_EXECUTOR_SIMULATED_EXECUTOR_H_
#define REGATTA_SRC_EXECUTOR_SIMULATED_EXECUTOR_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/grpcpp.h"
#include "src/common/clock.h"
#include "src/executor/executor.h"
#include "src/executor/run_backend.h"

namespace regatta::executor {

// Job annotations a simulated run obeys.
inline constexpr char kSimulatedDurationAnnotation[] = "regatta.io/simulated-duration";
inline constexpr char kSimulatedExitCodeAnnotation[] = "regatta.io/simulated-exit-code";

// How long a simulated run lasts when its job does not say.
struct DurationDistribution {
  enum class Kind { kConstant, kUniform, kExponential };
  Kind kind = Kind::kConstant;
  absl::Duration value = absl::ZeroDuration();  // kConstant
  absl::Duration min = absl::ZeroDuration();    // kUniform: in [min, max]
  absl::Duration max = absl::ZeroDuration();
  absl::Duration mean = absl::ZeroDuration();  // kExponential
};

// A source of uniform numbers in [0, 1).
using UniformSource = std::function<double()>;
// A deterministic source for `seed` (the same numbers on every platform).
UniformSource SeededUniformSource(uint64_t seed);

// One draw from the distribution, using `uniform` for its randomness.
absl::Duration SampleDuration(const DurationDistribution& distribution,
                              const UniformSource& uniform);

// Identical simulated nodes: `count` of them named <name_prefix><index> (index from 0, at least
// four digits, counted per prefix across groups).
struct SimulatedNodeGroup {
  int count = 1;
  std::string name_prefix = "sim-";
  std::map<std::string, std::string> labels;
  std::vector<regatta::v1::Taint> taints;
  // Resource name -> quantity (cpu, memory and any other).
  std::map<std::string, std::string> resources;
};

struct SimulatedExecutorOptions {
  // executor.nodes is filled from node_groups.
  ExecutorOptions executor;
  std::vector<SimulatedNodeGroup> node_groups;
  DurationDistribution duration;
  // Draws the durations; empty: SeededUniformSource(seed).
  UniformSource uniform;
  uint64_t seed = 1;
};

// The nodes of the groups (see SimulatedNodeGroup); errors name the group
// ("executor.simulated.nodes[1].resources: ...").
absl::StatusOr<std::vector<NodeConfig>> SimulatedNodes(
    const std::vector<SimulatedNodeGroup>& groups);

// Runs that run nothing: each "ends" at its start plus a duration, by the clock. The job's
// regatta.io/simulated-duration annotation (a Go-style duration: "90s", "5m", "1h30m") wins,
// else the distribution. A non-zero regatta.io/simulated-exit-code annotation makes the run
// FAILED with a ContainerError as a process exiting with that code would. An unreadable
// annotation is FAILED_PRECONDITION (the run cannot execute). Stop ends a run at once.
class SimulatedBackend final : public RunBackend {
 public:
  SimulatedBackend(const Clock* clock, DurationDistribution duration, UniformSource uniform);

  std::vector<RecoveredRun> TakeRecovered() override { return {}; }
  absl::Status Start(const regatta::v1::JobRunLease& lease) override;
  absl::Status Stop(absl::string_view run_id, RunEnd why) override;
  // Waits in real time, at most until the earliest end by the clock (so with a fake clock,
  // advance it and call with a zero timeout).
  std::vector<RunResult> WaitResults(absl::Duration timeout) override;
  void Forget(absl::string_view run_id) override;
  void StopAll(absl::Duration grace) override;
  // Simulated runs write no logs: NOT_FOUND.
  absl::StatusOr<LogRead> ReadLog(absl::string_view run_id, int64_t offset,
                                  int64_t max_bytes) const override;
  absl::StatusOr<int64_t> TailOffset(absl::string_view run_id, int lines) const override;

  // Runs started and not yet forgotten.
  int runs() const;

 private:
  struct Run {
    absl::Time started;
    absl::Time ends;
    int exit_code = 0;
    bool ended = false;
  };
  using Due = std::pair<absl::Time, std::string>;

  // Moves runs due by now from due_ to ended_.
  void CollectDueLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void EndLocked(const std::string& run_id, Run& run, RunEnd end, absl::Time at)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Clock* clock_;
  const DurationDistribution duration_;
  mutable absl::Mutex mu_;
  UniformSource uniform_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Run> runs_ ABSL_GUARDED_BY(mu_);
  // Running runs by end time, earliest first (entries of runs stopped early are skipped).
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_ ABSL_GUARDED_BY(mu_);
  std::vector<RunResult> ended_ ABSL_GUARDED_BY(mu_);
  // Changes on every Start and Stop, to wake WaitResults.
  uint64_t changes_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

// The simulated executor: an Executor with simulated nodes whose runs run nothing (see
// SimulatedBackend), for tests and benchmarks of the server and scheduler. `api`: see
// Executor::Start.
absl::StatusOr<std::unique_ptr<Executor>> StartSimulatedExecutor(
    SimulatedExecutorOptions options, std::shared_ptr<grpc::Channel> channel, const Clock* clock,
    std::unique_ptr<ExecutorApi> api = nullptr);

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_SIMULATED_EXECUTOR_H_
