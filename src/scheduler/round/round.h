#ifndef REGATTA_SRC_SCHEDULER_ROUND_ROUND_H_
#define REGATTA_SRC_SCHEDULER_ROUND_ROUND_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/nodedb/node.h"

namespace regatta::scheduler {

// One scheduling round in one pool: progressive filling over the active queues. Each step takes
// the queue whose dominant-resource cost would be lowest if its next job were scheduled (cost =
// max over resources of allocated/total x multiplier, divided by the queue's weight), places that
// job on the best-fitting node, and repeats until no queue has a job that fits or a limit is
// reached. Pure: no I/O, no clock reads beyond the time budget; the caller turns assignments
// into lease events.

// A queued job as the round sees it. Owned by the caller; must outlive the round.
struct RoundJob {
  std::string id;
  // Higher is more important; from the job's priority class (unused for ordering across
  // queues in this version; the caller orders each queue's jobs).
  int32_t priority_class_priority = 0;
  ResourceList requests;
  // Node selector, affinity and tolerations come from here. Never null.
  const regatta::v1::TaskSpec* task = nullptr;
  // Nodes the job should avoid (where earlier runs failed). Avoided only while some other node
  // of the pool could ever hold the job; otherwise the job may go back to them.
  std::vector<std::string> avoid_nodes;
};

// A queue's jobs in the order the queue wants them scheduled. The round asks for the next job
// only when it has dealt with the previous one.
class RoundJobIterator {
 public:
  virtual ~RoundJobIterator() = default;
  // Null when the queue has no more queued jobs.
  virtual const RoundJob* Next() = 0;
};

// Iterates over a vector the caller keeps alive.
class VectorJobIterator : public RoundJobIterator {
 public:
  explicit VectorJobIterator(const std::vector<const RoundJob*>* jobs) : jobs_(jobs) {}
  const RoundJob* Next() override { return next_ < jobs_->size() ? (*jobs_)[next_++] : nullptr; }

 private:
  const std::vector<const RoundJob*>* jobs_;
  size_t next_ = 0;
};

struct RoundQueue {
  std::string name;
  // 1 / priority factor. Must be > 0 (a weight that is not counts as 1).
  double weight = 1.0;
  // What the queue's active runs in this pool hold now.
  ResourceList allocated;
  std::unique_ptr<RoundJobIterator> jobs;
};

struct RoundConfig {
  // Per-resource multipliers for the dominant-share cost (by interned resource index); a
  // resource without an entry counts with multiplier 1. Resources with zero total are ignored.
  absl::flat_hash_map<int, double> resource_multipliers;
  // At most this many assignments in the round (0: no limit).
  int max_assignments = 0;
  // Executor id -> how many more runs it accepts this round (from its lease request). An
  // executor without an entry accepts any number.
  absl::flat_hash_map<std::string, int> executor_capacity;
  // Stop after this much wall time (zero: no limit).
  absl::Duration time_budget = absl::ZeroDuration();
};

struct Assignment {
  std::string job_id;
  std::string queue;
  int node_index = -1;  // into RoundInput::nodes
};

// Why a job the round looked at was not placed.
struct RoundUnschedulable {
  std::string job_id;
  std::string queue;
  // e.g. "no node has room: needs 4 cpu, most free is 2 on node-3 (3 of 5 nodes match)" or
  // "0 of 3 nodes match: node selector gpu=a100 does not match (3)". Jobs of one shape that
  // fail in a round share the first one's reason.
  std::string reason;
};

// One per RoundInput::queues entry, in that order. Shares are costs: weighted dominant shares.
struct QueueShare {
  std::string queue;
  double share_before = 0;  // weighted dominant share at the start of the round
  double share_after = 0;
  int assigned = 0;
};

// What the round did, for metrics, benchmarks and tests.
struct RoundStats {
  int jobs_considered = 0;     // jobs taken from the queues' iterators and dealt with
  int shapes = 0;              // distinct job shapes (requests + selector/affinity/tolerations)
  int64_t static_matches = 0;  // MatchNodeStatically calls (once per node per shape)
  int64_t fit_checks = 0;      // nodes checked for free room
};

struct RoundResult {
  std::vector<Assignment> assignments;
  std::vector<RoundUnschedulable> unschedulable;
  std::vector<QueueShare> shares;
  RoundStats stats;
  // True if a limit (max assignments, executor capacity, time budget) ended the round early.
  bool limited = false;
};

struct RoundInput {
  // The pool's schedulable and unschedulable nodes; `allocated` on each is what active runs
  // hold. The round does not modify them.
  const std::vector<Node>* nodes = nullptr;
  std::vector<RoundQueue> queues;
  RoundConfig config;
};

// Deterministic: the same input gives the same result (ties: equal queue cost -> queue name
// order; equal best fit -> lowest node index). Best fit = the node left with the smallest
// dominant share free (free/pool total x multiplier, max over resources) after placing the job.
RoundResult ScheduleRound(RoundInput input);

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_ROUND_ROUND_H_
