#ifndef REGATTA_SRC_SCHEDULER_SIM_SIMULATOR_H_
#define REGATTA_SRC_SCHEDULER_SIM_SIMULATOR_H_

// A discrete-event simulator of the scheduler: a cluster of fake nodes, a workload of jobs that
// arrive and run for a given duration, and the scheduling algorithm (SchedulePool, injected)
// called once per pool every cycle period of simulated time. It records shares, utilisation,
// queueing delay, preemptions and unschedulable reasons over time, and checks the algorithm's
// decisions against its own books (anomalies).
//
// Job lifecycle (as in Regatta's state machine): submitted -> QUEUED, or REJECTED at once if no
// node of any pool could ever hold it; QUEUED -> RUNNING on a lease; RUNNING -> SUCCEEDED after
// its duration, or PREEMPTED. Preempted jobs are not retried; evicted jobs placed again on their
// node keep running.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/scheduler/policy/token_bucket.h"
#include "src/scheduler/round/pool_round.h"
#include "src/scheduler/sim/spec.h"

namespace regatta::scheduler::sim {

using ScheduleFn = std::function<PoolRoundResult(PoolRoundInput)>;

enum class SimJobState { kUnsubmitted, kQueued, kRunning, kSucceeded, kPreempted, kRejected };
// "QUEUED", "RUNNING", ... (as Regatta's job states are spelt).
absl::string_view SimJobStateName(SimJobState state);
// "urgency", "fair-share", "gang".
absl::string_view PreemptionKindName(PreemptionKind kind);
// "NoNodeMatches", "NoRoom", ...
absl::string_view UnschedulableCodeName(UnschedulableCode code);

struct SimJob {
  std::string id;  // "<template>-000001"
  int template_index = 0;
  int queue_index = 0;
  std::string gang_id;  // "<template>-g000001"; empty: no gang
  absl::Duration submit_time;
  absl::Duration duration;
  SimJobState state = SimJobState::kUnsubmitted;
  absl::Duration lease_time = absl::InfiniteDuration();
  absl::Duration end_time = absl::InfiniteDuration();
  int pool = -1;  // where it runs or ran
  int node = -1;
  // REJECTED: the per-pool reasons; PREEMPTED: the preemption's reason; QUEUED: the last
  // unschedulable reason the algorithm gave.
  std::string reason;
  PreemptionKind preemption_kind = PreemptionKind::kUrgency;
  std::string preempted_by_job;
  std::string preempted_by_queue;
};

struct QueueSample {
  int pool = 0;
  int queue = 0;
  double share = 0;                // dominant share of the pool held by the queue's running jobs
  double fair_share = 0;           // as the algorithm reported for the last round
  double adjusted_fair_share = 0;  // idem
  int running = 0;                 // in this pool
  int queued = 0;                  // in all pools
};

struct PoolSample {
  int pool = 0;
  // Resource index -> allocated / allocatable, for resources the pool has.
  std::vector<std::pair<int, double>> utilisation;
};

struct Sample {
  absl::Duration time;
  std::vector<QueueSample> queues;  // pool-major, queues in workload order
  std::vector<PoolSample> pools;
};

// One pool and queue after one cycle's round (SimOptions::record_cycles).
struct CycleRecord {
  int64_t cycle = 0;  // 1, 2, ...
  absl::Duration time;
  int pool = 0;
  int queue = 0;
  double share = 0;  // dominant share of the pool held after the round
  double fair_share = 0;
  double adjusted_fair_share = 0;
  int running = 0;    // in this pool after the round
  int queued = 0;     // in all pools after the round
  int leased = 0;     // new leases in this round
  int preempted = 0;  // preempted in this round
};

struct PreemptionEvent {
  absl::Duration time;
  int pool = 0;
  Preemption preemption;
};

// How often the algorithm left a queue's jobs unscheduled in a pool for one reason code (one
// count per job and round), with the latest reason text as an example.
struct UnschedulableCount {
  int pool = 0;
  std::string queue;
  UnschedulableCode code = UnschedulableCode::kNoRoom;
  std::string example_reason;
  int64_t count = 0;
};

struct SimOptions {
  // Simulated time to stop at. Infinite: when nothing more can change (no future arrival or
  // completion, and the last cycle started nothing), or at `max_time`.
  absl::Duration until = absl::InfiniteDuration();
  absl::Duration max_time = absl::Hours(24 * 7);
  // How often to record a sample; zero: every cycle.
  absl::Duration sample_interval = absl::ZeroDuration();
  // Also keep one CycleRecord per cycle, pool and queue (memory grows with the cycles).
  bool record_cycles = false;
};

class Simulator {
 public:
  // Fails if the workload names unknown queues or classes (errors name `workload_file`).
  static absl::StatusOr<std::unique_ptr<Simulator>> Create(
      ClusterSpec cluster, WorkloadSpec workload, ScheduleFn schedule = SchedulePool,
      absl::string_view workload_file = "workload");

  // Runs cycles from the current time; may be called again with a later `until`.
  void Run(const SimOptions& options);

  absl::Duration now() const { return now_; }
  int64_t cycles() const { return cycles_; }
  const ClusterSpec& cluster() const { return cluster_; }
  const WorkloadSpec& workload() const { return workload_; }
  const std::vector<std::vector<Node>>& pool_nodes() const { return nodes_; }
  const std::vector<SimJob>& jobs() const { return jobs_; }
  const std::vector<Sample>& samples() const { return samples_; }
  const std::vector<PreemptionEvent>& preemptions() const { return preemptions_; }
  const std::vector<CycleRecord>& cycle_records() const { return cycle_records_; }
  std::vector<UnschedulableCount> unschedulable() const;
  // Decisions the simulator could not apply or that broke an invariant (a lease for a job that
  // is not queued, a node over its allocatable, a gang placed in part...). Empty when the
  // algorithm behaved.
  const std::vector<std::string>& anomalies() const { return anomalies_; }

  // The dominant share of `requests` in pool `pool` (with the resource multipliers).
  double DominantShare(int pool, const ResourceList& requests) const;

 private:
  // A queued job's place in its queue: class priority (high first), job priority, submit time,
  // id.
  using QueueKey = std::tuple<int32_t, uint32_t, absl::Duration, absl::string_view, int>;
  enum class EventType { kSubmit, kFinish };
  struct Event {
    absl::Duration time;
    int64_t seq;
    EventType type;
    int job;
    bool operator>(const Event& o) const { return std::tie(time, seq) > std::tie(o.time, o.seq); }
  };
  class PoolQueueIterator;

  Simulator(ClusterSpec cluster, WorkloadSpec workload, ScheduleFn schedule);
  absl::Status Init(absl::string_view workload_file);
  std::string RejectionReason(int template_index) const;

  // Dependencies between templates: a template's jobs are submitted once every template it
  // depends on has ended (all its jobs succeeded, preempted or rejected).
  void JobEnded(int job);
  void TemplateDone(int template_index);
  void ReleaseTemplate(int template_index);
  void ProcessEventsUntil(absl::Duration time);
  void Submit(int job);
  void Finish(int job);
  void StopRunning(int job, SimJobState state);
  // One cycle at now_: every pool in order. Returns the number of new leases.
  int RunCycle(bool record);
  void RecordCycle(int pool);
  int ApplyResult(int pool, const PoolRoundResult& result);
  void Record();
  bool Idle() const;
  QueueKey KeyOf(int job) const;
  void Anomaly(std::string text);

  ClusterSpec cluster_;
  WorkloadSpec workload_;
  ScheduleFn schedule_;

  std::vector<std::vector<Node>> nodes_;  // per pool; Node::allocated kept up to date
  std::vector<ResourceList> pool_totals_;
  std::vector<JobTemplate> templates_;
  std::vector<std::vector<bool>> template_fits_pool_;  // [template][pool]
  std::vector<std::string> rejection_reasons_;         // per template; empty: fits a pool

  std::vector<int> template_first_job_;       // index of its first job in jobs_
  std::vector<int> template_jobs_left_;       // jobs not yet ended
  std::vector<int> template_deps_left_;       // templates it waits for
  std::vector<std::vector<int>> dependents_;  // templates waiting for it

  std::vector<SimJob> jobs_;
  std::vector<QueuedJob> queued_views_;  // per job, what the algorithm reads
  absl::flat_hash_map<std::string, int> job_by_id_;
  absl::flat_hash_map<std::string, std::vector<int>> gang_members_;
  std::vector<std::set<QueueKey>> queued_;                // per queue
  std::vector<std::vector<ResourceList>> queued_demand_;  // [queue][pool]
  std::vector<std::set<int>> running_;                    // per pool, job indices
  std::vector<std::vector<double>> last_fair_share_;      // [pool][queue]
  std::vector<std::vector<double>> last_adjusted_share_;  // [pool][queue]

  // scheduling.rateLimit and one scheduling.queueRateLimit bucket per queue, on simulated time.
  std::optional<TokenBucket> global_bucket_;
  std::vector<TokenBucket> queue_buckets_;
  // Per pool: the policy's round configuration for that pool (classes in name order).
  std::vector<PoolRoundConfig> pool_configs_;

  std::priority_queue<Event, std::vector<Event>, std::greater<Event>> events_;
  int64_t event_seq_ = 0;
  absl::Duration now_ = absl::ZeroDuration();
  absl::Duration next_cycle_ = absl::ZeroDuration();
  absl::Duration next_sample_ = absl::ZeroDuration();
  int64_t cycles_ = 0;
  int last_cycle_leases_ = 0;

  std::vector<Sample> samples_;
  std::vector<PreemptionEvent> preemptions_;
  std::vector<CycleRecord> cycle_records_;
  std::vector<int> round_leased_, round_preempted_;  // per queue, in the current pool round
  std::map<std::tuple<int, std::string, UnschedulableCode>, std::pair<int64_t, std::string>>
      unschedulable_;
  std::vector<std::string> anomalies_;
};

}  // namespace regatta::scheduler::sim

#endif  // REGATTA_SRC_SCHEDULER_SIM_SIMULATOR_H_
