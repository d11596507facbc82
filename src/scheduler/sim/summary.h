#ifndef REGATTA_SRC_SCHEDULER_SIM_SUMMARY_H_
#define REGATTA_SRC_SCHEDULER_SIM_SUMMARY_H_

// What a simulation came to: per-queue job counts and queueing delay, preemptions by kind.

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "absl/time/time.h"
#include "src/scheduler/sim/simulator.h"

namespace regatta::scheduler::sim {

// Submit -> lease, over the jobs that were leased.
struct DelayStats {
  int64_t count = 0;
  absl::Duration mean, p50, p95, max;
};

struct QueueSummary {
  std::string queue;
  int64_t submitted = 0;
  int64_t rejected = 0;
  int64_t leased = 0;  // ever started
  int64_t succeeded = 0;
  int64_t preempted = 0;
  int64_t running = 0;  // at the end
  int64_t queued = 0;   // at the end
  DelayStats delay;
};

struct Summary {
  std::vector<QueueSummary> queues;                    // workload order
  std::map<std::string, int64_t> preemptions_by_kind;  // "urgency", "fair-share", "gang"
  // (preempted queue, kind, queue that caused it) -> count.
  std::map<std::tuple<std::string, std::string, std::string>, int64_t> preemptions_by_cause;
};

// Nearest-rank percentile (0 < p <= 100) of sorted values; zero when empty.
absl::Duration Percentile(const std::vector<absl::Duration>& sorted, double p);

Summary Summarize(const Simulator& sim);

}  // namespace regatta::scheduler::sim

#endif  // REGATTA_SRC_SCHEDULER_SIM_SUMMARY_H_
