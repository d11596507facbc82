#ifndef REGATTA_SRC_SCHEDULER_ROUND_POOL_ROUND_H_
#define REGATTA_SRC_SCHEDULER_ROUND_POOL_ROUND_H_

// One scheduling cycle in one pool, with preemption: the whole scheduling algorithm as a pure
// function, shared by the scheduler loop, the simulator (`regatta simulate`) and the scenario
// tests. It never reads a clock (beyond the optional time budget) and does no I/O; the caller
// turns the result into log events.
//
// The algorithm (Armada's preempting queue scheduler, with its evicted-priority trick):
//   1. Fair shares. Active queues (running or queued work in the pool) get fair share
//      weight / sum of active weights; adjusted fair share gives the unused share of queues
//      whose demand is below their fair share to the others, by weight (water filling).
//   2. Eviction (fair-share preemption, if enabled). Preemptible running jobs of queues whose
//      actual share is above protected_fraction_of_fair_share x adjusted fair share are evicted:
//      they stay bound to their node at the lowest ("evicted") level, and go back to the head of
//      their queue.
//   3. Progressive filling. Repeatedly take the queue whose cost would be lowest if its next
//      gang were scheduled (cost = weighted DRF dominant share with per-resource multipliers),
//      and place that gang (a single job is a gang of one): an evicted job only on its own node;
//      otherwise, in order, on a node where it fits without displacing anyone, then on one
//      where it fits by taking evicted jobs' room, then (urgency preemption) on one where it
//      fits by preempting running jobs of lower priority classes. Best fit within each step.
//   4. Evicted jobs that were not placed again are preempted; each preemption names the job
//      and queue that took its room and why.
// Gangs are placed all-or-nothing (optionally on nodes sharing one value of a label) and are
// preempted as a unit.
//
// Deterministic: the same input gives the same result (ties by queue name, then node index).

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/nodedb/node.h"

namespace regatta::scheduler {

// ---------------------------------------------------------------------------------------------
// Configuration (as it applies to this pool: the caller resolves per-pool overrides)
// ---------------------------------------------------------------------------------------------

struct PriorityClass {
  std::string name;
  // Higher is more important. Jobs of a higher class may preempt preemptible jobs of a lower one.
  int32_t priority = 0;
  // Whether jobs of this class may be preempted at all (urgency or fair share).
  bool preemptible = true;
  // Resource index -> the largest fraction of the pool's total that one queue may hold in jobs
  // of this class (e.g. {cpu: 0.5}). No entry: no limit.
  absl::flat_hash_map<int, double> max_fraction_per_queue;
};

struct PoolRoundConfig {
  // Every class a job may name, indexed by JobTemplate::priority_class. Must not be empty.
  std::vector<PriorityClass> priority_classes;
  // Per-resource multipliers of the dominant-share cost; no entry counts as 1; resources with
  // zero pool total are ignored.
  absl::flat_hash_map<int, double> resource_multipliers;
  // Resources the node index orders nodes by, most significant first (best fit = least free of
  // these, in order). Default cpu, memory.
  std::vector<int> indexed_resources = {ResourceNames::kCpu, ResourceNames::kMemory};
  // Node label keys that make node types (with the taints): nodes with equal taints and equal
  // values of these labels are one type, matched against a job once. Selectors on other labels
  // are checked node by node after the index scan.
  std::vector<std::string> indexed_node_labels;

  // Fair-share preemption: queues at or below this fraction of their adjusted fair share keep
  // their preemptible jobs. Values >= a large number disable fair-share preemption in effect.
  bool enable_fair_share_preemption = true;
  double protected_fraction_of_fair_share = 1.0;

  // Limits on what one round newly schedules (evicted jobs placed again do not count).
  // Resource index -> fraction of the pool total, for the whole round / for each queue.
  absl::flat_hash_map<int, double> max_fraction_to_schedule;
  absl::flat_hash_map<int, double> max_fraction_to_schedule_per_queue;
  int max_new_jobs = 0;  // 0: no limit
  // Token buckets (the caller owns and refills them): how many new jobs may start this round,
  // overall and per queue name. Negative: no limit; a queue without an entry has no limit.
  int64_t global_tokens = -1;
  absl::flat_hash_map<std::string, int64_t> queue_tokens;
  // Executor id -> how many more runs it accepts this round. No entry: no limit.
  absl::flat_hash_map<std::string, int> executor_capacity;
  // Wall time after which no new gang is started (zero: none). The round stays consistent.
  absl::Duration time_budget = absl::ZeroDuration();
  // A gang whose members have not all been read after looking this many jobs further into its
  // queue is skipped as incomplete this round.
  int gang_lookahead = 1000;
};

// ---------------------------------------------------------------------------------------------
// Jobs
// ---------------------------------------------------------------------------------------------

// What many jobs share (one per job-set template or distinct spec): owned by the caller, must
// outlive the round. Jobs with equal templates are one scheduling shape for the round's caches.
struct JobTemplate {
  ResourceList requests;
  // Node selector, required node affinity and tolerations come from here. Never null.
  const regatta::v1::TaskSpec* task = nullptr;
  int priority_class = 0;  // index into PoolRoundConfig::priority_classes
  uint32_t gang_cardinality = 1;
  std::string gang_node_uniformity_label;  // empty: none
};

// A queued job. Owned by the caller; must outlive the round.
struct QueuedJob {
  absl::string_view id;
  const JobTemplate* tmpl = nullptr;
  absl::string_view gang_id;  // empty: not in a gang (cardinality must then be 1)
  // Nodes where earlier runs failed: avoided while another node of the pool could ever hold
  // the job. Null: none.
  const std::vector<std::string>* avoid_nodes = nullptr;
};

// A queue's queued jobs in the order the queue wants them: priority-class priority (high
// first), job priority (low first), submit time, id. The round pulls only as far as it gets.
class QueuedJobIterator {
 public:
  virtual ~QueuedJobIterator() = default;
  // Null when there are no more.
  virtual const QueuedJob* Next() = 0;
};

// A job holding resources on a node of this pool (leased, pending or running).
struct RunningJob {
  absl::string_view id;
  absl::string_view queue;
  const JobTemplate* tmpl = nullptr;
  absl::string_view gang_id;
  int node_index = -1;  // into PoolRoundInput::nodes
  // When the run was leased: among equal classes, younger runs are preempted first.
  absl::Time leased_time;
  // Cancelled, asked to be preempted, or otherwise ended while its run still ends: it holds its
  // room until its run ends, and is never evicted or preempted again. (Jobs the scheduler has
  // preempted are not running jobs at all: their room went to the preemptor.)
  bool leaving = false;
};

struct QueueInput {
  std::string name;
  // 1 / priority factor; > 0.
  double weight = 1.0;
  // A cordoned queue schedules nothing new; its running jobs stay (and count for fairness).
  bool cordoned = false;
  // The queue's own limits per priority class (class index -> resource index -> fraction of
  // the pool); a class listed here replaces that class's max_fraction_per_queue for this queue.
  absl::flat_hash_map<int, absl::flat_hash_map<int, double>> max_fraction_by_class;
  // Sum of the requests of its queued jobs in this pool (the caller keeps it incrementally);
  // with the running jobs it is the queue's demand for the adjusted fair share.
  ResourceList queued_demand;
  // How many jobs `jobs` holds, if the caller knows (0: unknown). Only a capacity hint: the
  // round reserves its result vectors by it instead of growing them job by job.
  int64_t queued_count = 0;
  std::unique_ptr<QueuedJobIterator> jobs;
};

struct PoolRoundInput {
  std::string pool;
  // The pool's nodes. Node::allocated is ignored: what is bound comes from `running`.
  const std::vector<Node>* nodes = nullptr;
  // Every job holding resources in the pool.
  const std::vector<RunningJob>* running = nullptr;
  std::vector<QueueInput> queues;
  PoolRoundConfig config;
};

// ---------------------------------------------------------------------------------------------
// Result
// ---------------------------------------------------------------------------------------------

// Result records are views, so that a round of a million jobs does not copy a million ids and
// reason texts into fresh memory (page faults dominate on some VMs). Lifetimes:
//   - job_id views the caller's QueuedJob::id / RunningJob::id: keep that storage alive (and
//     unchanged) as long as the result is read;
//   - queue and reason view text owned by the PoolRoundResult itself (PoolRoundResult::Keep),
//     valid as long as the result; moving the result keeps them valid, copying is not allowed.
// Copy what you keep beyond the result.
struct Lease {
  absl::string_view job_id;
  absl::string_view queue;
  int node_index = -1;
  // Urgency preemption: it displaced running jobs of lower classes (listed in preemptions).
  bool preempted_others = false;
};

enum class PreemptionKind {
  kUrgency,    // a job of a higher priority class needed the room
  kFairShare,  // evicted from a queue above its protected fair share, and not placed again
  kGang,       // another member of its gang was preempted
};

struct Preemption {
  std::string job_id;
  std::string queue;
  int node_index = -1;
  PreemptionKind kind = PreemptionKind::kUrgency;
  // The job that took the room (for kGang: the member whose preemption took the gang down).
  std::string caused_by_job;
  std::string caused_by_queue;
  // One line for the event and for `regatta why`, e.g. "urgency: job 01J.. of queue ml
  // (class high, priority 1000) needed 4 cpu on node-7; this job's class low has 10" or
  // "fair share: queue a holds 0.62 of the pool, above 1.0 x its adjusted fair share 0.50;
  // job 01J.. of queue b (0.10 of 0.50) took its room on node-3".
  std::string reason;
};

// Why the round did not place a queued job it looked at.
enum class UnschedulableCode {
  kNoNodeMatches,       // no node of the pool could ever hold it (selector, taints, size)
  kNoRoom,              // some nodes could, none has room now (even with preemption)
  kQueueFractionLimit,  // the queue's per-class fraction limit
  kRoundLimit,          // round resource fraction / max new jobs
  kRateLimited,         // global or queue token bucket empty
  kGangIncomplete,      // fewer members queued than the cardinality
  kGangDoesNotFit,      // not all members fit together (or not on one uniformity value)
  kQueueCordoned,
  kExecutorFull,  // every matching node's executor took all it accepts this round
  kTimeBudget,
};

struct Unschedulable {
  absl::string_view job_id;
  absl::string_view queue;
  UnschedulableCode code = UnschedulableCode::kNoRoom;
  // e.g. "0 of 12 node types match: node selector gpu=a100 does not match (12)";
  // "no node has room: needs 4 cpu, most free is 2 (node-3)"; "queue a holds 0.50 of cpu in
  // class low, its limit"; "gang g1 incomplete: 2 of 4 members queued". Equal texts of one
  // round are one string.
  absl::string_view reason;
};

// One per input queue, in input order. Shares are dominant shares of the pool (0..1), not
// divided by weight.
struct QueueReport {
  std::string queue;
  double weight = 1.0;
  double fair_share = 0;           // weight / sum of active weights (0 if inactive)
  double adjusted_fair_share = 0;  // after giving away unused share
  double demand_share = 0;         // dominant share of running + queued requests
  double share_before = 0;         // dominant share held at the start of the round
  double share_after = 0;
  int leased = 0;     // new leases (evicted-and-placed-again not counted)
  int evicted = 0;    // evicted in step 2
  int preempted = 0;  // finally preempted
  // Why the queue stopped getting jobs this round: "no more queued jobs", "rate limited",
  // "round limit", "time budget", "every remaining job unschedulable", ...
  std::string stop_reason;
};

struct PoolRoundStats {
  int jobs_considered = 0;
  int gangs_considered = 0;
  int64_t node_type_matches = 0;  // static matches computed (per shape x node type)
  int64_t nodes_scanned = 0;      // index entries looked at
  int evicted = 0;
  absl::Duration elapsed;
};

class PoolRoundResult {
 public:
  PoolRoundResult() = default;
  // Views into texts_ would dangle in a copy; a move keeps the strings where they are.
  PoolRoundResult(const PoolRoundResult&) = delete;
  PoolRoundResult& operator=(const PoolRoundResult&) = delete;
  PoolRoundResult(PoolRoundResult&&) = default;
  PoolRoundResult& operator=(PoolRoundResult&&) = default;

  // Stores `text` once per distinct value for the result's lifetime and returns a view of the
  // stored copy (for Lease::queue, Unschedulable::queue and ::reason).
  absl::string_view Keep(absl::string_view text);

  std::vector<Lease> leases;
  std::vector<Preemption> preemptions;
  // Jobs the round looked at and did not place.
  std::vector<Unschedulable> unschedulable;
  std::vector<QueueReport> queues;
  PoolRoundStats stats;
  // True if a limit (time budget, max new jobs, round fraction) ended the round early.
  bool limited = false;

 private:
  std::deque<std::string> texts_;  // a deque: stored strings never move
  absl::flat_hash_set<absl::string_view> text_index_;
};

PoolRoundResult SchedulePool(PoolRoundInput input);

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_ROUND_POOL_ROUND_H_
