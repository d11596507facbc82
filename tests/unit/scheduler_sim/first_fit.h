#ifndef REGATTA_TESTS_UNIT_SCHEDULER_SIM_FIRST_FIT_H_
#define REGATTA_TESTS_UNIT_SCHEDULER_SIM_FIRST_FIT_H_

// A fake scheduling algorithm behind the SchedulePool interface, for tests of the simulator and
// of `regatta simulate` that must not depend on the real algorithm.

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "src/scheduler/sim/simulator.h"

namespace regatta::scheduler::sim::testing {

// What the fakes saw of each round.
struct RoundSeen {
  std::string pool;
  std::vector<std::string> queue_order;  // per queue: job ids in iterator order
  int64_t global_tokens = 0;
  absl::flat_hash_map<std::string, int64_t> queue_tokens;
  int running = 0;
};

// First fit, queue after queue, within the token buckets: enough to exercise the bookkeeping.
inline PoolRoundResult FirstFit(PoolRoundInput input, std::vector<RoundSeen>* seen) {
  RoundSeen round{.pool = input.pool,
                  .global_tokens = input.config.global_tokens,
                  .queue_tokens = input.config.queue_tokens,
                  .running = static_cast<int>(input.running->size())};
  std::vector<ResourceList> free;
  for (const Node& node : *input.nodes) free.push_back(node.allocatable);
  for (const RunningJob& r : *input.running) free[r.node_index].Subtract(r.tmpl->requests);
  PoolRoundResult result;
  int64_t global = input.config.global_tokens;
  for (QueueInput& q : input.queues) {
    auto it = input.config.queue_tokens.find(q.name);
    int64_t queue_tokens = it == input.config.queue_tokens.end() ? -1 : it->second;
    std::vector<std::string> order;
    while (const QueuedJob* job = q.jobs->Next()) {
      order.push_back(std::string(job->id));
      if (global == 0 || queue_tokens == 0) continue;
      for (size_t n = 0; n < free.size(); ++n) {
        if (job->tmpl->requests.FitsIn(free[n])) {
          free[n].Subtract(job->tmpl->requests);
          result.leases.push_back(Lease{job->id, result.Keep(q.name), static_cast<int>(n)});
          if (global > 0) --global;
          if (queue_tokens > 0) --queue_tokens;
          break;
        }
      }
    }
    round.queue_order.push_back(absl::StrJoin(order, ","));
    result.queues.push_back(
        QueueReport{.queue = q.name, .fair_share = 0.5, .adjusted_fair_share = 0.75});
  }
  if (seen != nullptr) seen->push_back(std::move(round));
  return result;
}

inline ScheduleFn FirstFitFn(std::vector<RoundSeen>* seen = nullptr) {
  return [seen](PoolRoundInput input) { return FirstFit(std::move(input), seen); };
}

}  // namespace regatta::scheduler::sim::testing

#endif  // REGATTA_TESTS_UNIT_SCHEDULER_SIM_FIRST_FIT_H_
