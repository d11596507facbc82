// Placements per second of one ScheduleRound (linear node scan, first version).
//
//   build/<preset>/bench/scheduler/scheduler_round_bench --benchmark_repetitions=5
//       --benchmark_report_aggregates_only=true      (one command line)
//
// Each case: `nodes` identical nodes, `queues` equal-weight queues of `jobs_per_queue` identical
// jobs (1 cpu, 4Gi), nodes of `cpu_per_node` cpu and 4Gi per cpu. Building the input is not
// timed; the round is.
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/round/round.h"

namespace regatta::scheduler {
namespace {

constexpr int64_t kGi = int64_t{1} << 30;

struct Workload {
  std::vector<Node> nodes;
  std::vector<std::vector<RoundJob>> jobs;  // per queue
  std::vector<std::vector<const RoundJob*>> views;
  regatta::v1::TaskSpec task;
};

std::unique_ptr<Workload> MakeWorkload(int nodes, int queues, int jobs_per_queue,
                                       int cpu_per_node) {
  auto w = std::make_unique<Workload>();
  for (int i = 0; i < nodes; ++i) {
    Node& node = w->nodes.emplace_back();
    node.id = "node-" + std::to_string(i);
    node.executor_id = "executor-" + std::to_string(i / 100);
    node.pool = "default";
    node.labels["kubernetes.io/hostname"] = node.id;
    node.allocatable.Set(ResourceNames::kCpu, Quantity::FromUnits(cpu_per_node));
    node.allocatable.Set(ResourceNames::kMemory, Quantity::FromUnits(4 * kGi * cpu_per_node));
  }
  ResourceList requests;
  requests.Set(ResourceNames::kCpu, Quantity::FromUnits(1));
  requests.Set(ResourceNames::kMemory, Quantity::FromUnits(4 * kGi));
  w->jobs.resize(queues);
  w->views.resize(queues);
  for (int q = 0; q < queues; ++q) {
    w->jobs[q].resize(jobs_per_queue);
    for (int j = 0; j < jobs_per_queue; ++j) {
      RoundJob& job = w->jobs[q][j];
      job.id = "q" + std::to_string(q) + "-job-" + std::to_string(j);
      job.requests = requests;
      job.task = &w->task;
      w->views[q].push_back(&job);
    }
  }
  return w;
}

RoundInput MakeInput(const Workload& w) {
  RoundInput input;
  input.nodes = &w.nodes;
  for (size_t q = 0; q < w.views.size(); ++q) {
    RoundQueue& queue = input.queues.emplace_back();
    queue.name = "queue-" + std::to_string(q);
    queue.jobs = std::make_unique<VectorJobIterator>(&w.views[q]);
  }
  return input;
}

// Args: nodes, queues, jobs per queue, cpu per node.
void BM_ScheduleRound(benchmark::State& state) {
  auto w = MakeWorkload(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                        static_cast<int>(state.range(2)), static_cast<int>(state.range(3)));
  int64_t placements = 0;
  int64_t considered = 0;
  int64_t fit_checks = 0;
  for (auto _ : state) {
    state.PauseTiming();
    RoundInput input = MakeInput(*w);
    state.ResumeTiming();
    RoundResult result = ScheduleRound(std::move(input));
    placements += static_cast<int64_t>(result.assignments.size());
    considered += result.stats.jobs_considered;
    fit_checks += result.stats.fit_checks;
    state.PauseTiming();
    result = RoundResult();  // freeing the result is not the round's cost
    state.ResumeTiming();
  }
  state.counters["placements/s"] =
      benchmark::Counter(static_cast<double>(placements), benchmark::Counter::kIsRate);
  state.counters["jobs/s"] =
      benchmark::Counter(static_cast<double>(considered), benchmark::Counter::kIsRate);
  state.counters["placed/round"] =
      benchmark::Counter(static_cast<double>(placements), benchmark::Counter::kAvgIterations);
  state.counters["fit_checks/job"] =
      benchmark::Counter(static_cast<double>(fit_checks) / std::max<int64_t>(considered, 1));
}

BENCHMARK(BM_ScheduleRound)
    ->ArgNames({"nodes", "queues", "jobs_per_queue", "cpu_per_node"})
    // 100 nodes x 10 queues x 10 000 jobs, room for all 100 000.
    ->Args({100, 10, 10000, 1000})
    // Armada's node-index figure: 32 000 jobs on 1000 nodes (32 cpu each: exactly full).
    ->Args({1000, 10, 3200, 32})
    // Saturated: 800 cpu for 100 000 jobs; 99 200 are unschedulable (one shape, cached).
    ->Args({100, 10, 10000, 8})
    // Scaling with the node count: 10 000 jobs on 10 / 100 / 1000 nodes with room for all.
    ->Args({10, 10, 1000, 1000})
    ->Args({100, 10, 1000, 100})
    ->Args({1000, 10, 1000, 10})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace regatta::scheduler

BENCHMARK_MAIN();
