#ifndef REGATTA_SRC_SCHEDULER_POLICY_POLICY_H_
#define REGATTA_SRC_SCHEDULER_POLICY_POLICY_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "src/scheduler/round/pool_round.h"

namespace YAML {
class Node;
}

namespace regatta::scheduler {

struct PriorityClassPolicy {
  std::string name;
  int32_t priority = 0;
  bool preemptible = false;
  // Resource name -> the largest fraction of a pool one queue may hold in this class.
  std::map<std::string, double> max_fraction_per_queue;
  // Pool -> resource -> fraction: replaces max_fraction_per_queue in that pool.
  std::map<std::string, std::map<std::string, double>> max_fraction_per_queue_by_pool;
};

// A token bucket in jobs: `rate` new jobs per second, at most `burst` at once. rate 0: no limit.
struct RateLimit {
  double rate = 0;
  int64_t burst = 0;
};

// The `scheduling` section of the server configuration (and of a simulator cluster file), as far
// as it shapes scheduling rounds. See docs/configuration.md.
struct SchedulingPolicy {
  std::map<std::string, PriorityClassPolicy> priority_classes;
  std::string default_priority_class;
  std::map<std::string, double> resource_multipliers;
  bool enable_fair_share_preemption = true;
  double protected_fraction_of_fair_share = 1.0;
  std::vector<std::string> indexed_resources = {"cpu", "memory"};
  std::vector<std::string> indexed_node_labels;
  // Resource name -> fraction of a pool newly scheduled per cycle: all queues / each queue.
  std::map<std::string, double> max_fraction_to_schedule;
  std::map<std::string, double> max_fraction_to_schedule_per_queue;
  RateLimit rate_limit;
  RateLimit queue_rate_limit;  // one bucket of this shape per queue
  int gang_lookahead = 1000;
};

// Reads the keys above from `scheduling` (a YAML mapping; absent keys keep their defaults).
// Errors name the key under `base` ("scheduling.priorityClasses.high.priority: ..."). Keys the
// policy does not own are left to the caller to check.
absl::StatusOr<SchedulingPolicy> ParseSchedulingPolicy(const YAML::Node& scheduling,
                                                       absl::string_view base);

// One pool's round configuration: resource names interned, the pool's overrides applied,
// priority classes indexed by name order (class_names[i] is the name of class i). Token counts,
// executor capacity, max_new_jobs and the time budget are left for the caller.
PoolRoundConfig MakePoolRoundConfig(const SchedulingPolicy& policy, absl::string_view pool,
                                    std::vector<std::string>* class_names);

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_POLICY_POLICY_H_
