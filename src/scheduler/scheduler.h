#ifndef REGATTA_SRC_SCHEDULER_SCHEDULER_H_
#define REGATTA_SRC_SCHEDULER_SCHEDULER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "regatta/v1/events.pb.h"
#include "src/common/clock.h"
#include "src/common/ids.h"
#include "src/eventlog/event_log.h"
#include "src/scheduler/devices/device_slots.h"
#include "src/scheduler/executor_registry.h"
#include "src/scheduler/jobdb/job_db.h"
#include "src/scheduler/leader.h"
#include "src/scheduler/policy/policy.h"
#include "src/scheduler/policy/token_bucket.h"
#include "src/scheduler/reports.h"
#include "src/scheduler/round/pool_round.h"
#include "src/store/store.h"

namespace regatta::scheduler {

struct SchedulerOptions {
  // The longest the loop sleeps between cycles; it wakes sooner when the views change or an
  // executor reports.
  absl::Duration cycle_period = absl::Seconds(1);
  // How long a cycle the views ask for (an outcome to decide, a requeue, a job submitted
  // through another server) waits for more to do; a submit handed over in this process starts
  // one at once. In a pipeline chain the next step's submit comes ~0.5 ms after the last one's
  // outcome, and one cycle then decides the outcome and places the step.
  absl::Duration views_wake_delay = absl::Milliseconds(2);
  // An executor silent for longer is lost: its active runs are expired.
  absl::Duration executor_timeout = absl::Seconds(30);
  // Retries of a job whose runs fail for a retryable reason, unless the job sets its own.
  int default_max_retries = 3;
  int max_leases_per_cycle = 10000;
  absl::Duration cycle_time_budget = absl::Milliseconds(500);
  // Priority classes, preemption, limits and rate limits (the `scheduling` configuration). A job
  // of a class the policy does not name has priority 0.
  SchedulingPolicy policy;
  // The views' consumer whose rows the scheduler loads.
  std::string views_consumer = "query";
  std::string user_id = "scheduler";
};

// What one scheduling cycle did, for metrics (Scheduler::set_on_cycle).
struct CycleReport {
  absl::Duration duration;  // wall time of the whole cycle
  bool ok = true;           // false: the cycle failed and published nothing
  // One pool's round: the jobs it looked at.
  struct Round {
    std::string pool;
    int jobs_considered = 0;
  };
  std::vector<Round> rounds;
  // Events the cycle published about jobs, per queue and kind ("leased" per pool too).
  struct Published {
    std::string queue;
    std::string pool;   // "leased" only
    const char* event;  // "leased", "succeeded", "failed", "cancelled", "preempted", ...
    int64_t count = 0;
  };
  std::vector<Published> published;
};

// Blocks until the views include the log up to `offset` (the ingester's WaitForOffset).
using WaitForViewsFn = std::function<absl::Status(int64_t offset, absl::Time deadline)>;

// The scheduler loop (leader only; standalone leader for now). Each cycle it
//   1. loads what changed in the views into the JobDb, and the jobs submitted in this process
//      that the views do not hold yet (AcceptSubmitted),
//   2. decides the outcome of jobs whose runs ended (succeeded, failed, requeued within the
//      retry policy), of cancel and preempt requests, and expires the runs of lost executors,
//   3. places queued jobs on the nodes of live executors, pool by pool, fairly (SchedulePool, with
//   preemption),
// and commits every decision to the log before acting on it. The executor API reads the JobDb
// to hand out leases, once they are durable (see ExecutorServiceOptions::in_process_principal).
class Scheduler {
 public:
  Scheduler(eventlog::EventLog* log, store::Store* store, WaitForViewsFn wait_for_views,
            ExecutorRegistry* executors, const Clock* clock, IdGenerator* ids,
            SchedulerOptions options);
  ~Scheduler();  // Stops.
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Catches up (publishes a partition marker and waits until the views include it), loads the
  // JobDb, then starts the loop thread. Errors: the log or the views fail.
  absl::Status Start();
  void Stop();

  // Catch-up and initial load on the caller's thread (tests drive cycles with RunCycle).
  absl::Status Initialize();
  // One cycle on the caller's thread.
  absl::Status RunCycle();

  // Asks the loop for a cycle within a few milliseconds (an executor reported events or
  // capacity): several such requests make one cycle.
  void Wake();
  // The views took `batch`: a cycle at once if the batch may call for a decision or a
  // placement (a new job, a request, a run that ended, a requeue, a queue or device change);
  // otherwise the next cycle reads it. Rows that only echo the scheduler's own leases and
  // outcomes, executors' progress or pipeline events wake nobody: they were half of all
  // cycles in a pipeline. Device changes are noted for LoadDeviceSlots too.
  void ViewsMoved(const store::IngestBatch& batch);
  // Whether the views taking `mutation` wakes a cycle (see ViewsMoved): the ingester applies
  // such a record at once rather than lingering for more.
  bool NeedsCycle(const store::OffsetMutation& mutation);

  // Jobs the submit API has just appended, at log offset `offset`, handed over in process: the
  // next cycle (woken now) places them without waiting for the views to ingest them, and
  // SubmittedSpec serves their specs to the executor API until the views have them. The views
  // stay the source of truth: their rows for these jobs apply as for any job. Ignored while
  // this replica does not lead. Quick.
  void AcceptSubmitted(int64_t offset, std::vector<std::shared_ptr<const regatta::v1::Job>> jobs);
  // The spec of a job handed over by AcceptSubmitted that the views may not hold yet, or null.
  std::shared_ptr<const regatta::v1::Job> SubmittedSpec(absl::string_view job_id) const;

  // Optional collaborators; set before Start(). Without a leader election the scheduler is a
  // standalone leader; without reports it keeps none.
  void set_leader_election(LeaderElection* leader) { leader_ = leader; }
  void set_reports(SchedulingReports* reports) { reports_ = reports; }
  // From now on the Instances are read from the views only after NotifyDevicesChanged (and
  // once at first): the owner promises to call it whenever ingested events change them.
  // Without it they are read every cycle.
  void TrackDeviceChanges() { track_device_changes_.store(true); }
  // Ingested events changed the Instances (any device-layer event): the next cycle reads them.
  void NotifyDevicesChanged() { device_generation_.fetch_add(1); }
  // Called on the scheduler thread with each executor it declares lost (already out of the
  // registry); must be quick. The device layer drops the executor's nodes from Instances.
  void set_on_executor_lost(std::function<void(const ExecutorState&)> callback) {
    on_executor_lost_ = std::move(callback);
  }

  // Called on the scheduler thread after every cycle (RunCycle); must be quick. Set before
  // Start(). Without it the cycle counts nothing.
  void set_on_cycle(std::function<void(const CycleReport&)> callback) {
    on_cycle_ = std::move(callback);
  }

  JobDb& job_db() { return job_db_; }
  // The device slots a run was leased with by this scheduler process (empty if none, or if it
  // was leased before a restart: the Instance views then hold them).
  std::vector<DeviceClaim> DeviceClaimsOf(absl::string_view run_id) const;
  bool ready() const;
  int32_t PriorityOf(absl::string_view priority_class) const;

  struct Stats {
    int64_t cycles = 0;
    int64_t leases = 0;
    int64_t decisions = 0;
    int64_t expired_runs = 0;
  };
  Stats stats() const;

 private:
  // Sequences being built for one publish, per (queue, job set), in first-use order.
  class Publication;

  absl::Status Sync(absl::flat_hash_set<std::string>& touched);
  void ApplyQueueRows(const std::vector<store::SchedulerQueueRow>& rows);
  void Decide(const absl::flat_hash_set<std::string>& touched, Publication& out, JobDb::Txn& txn);
  void ExpireLostExecutors(Publication& out, absl::flat_hash_set<std::string>& touched,
                           JobDb::Txn& txn);
  // The Instances with the slots held now: by active runs as the views record them, and by
  // runs this process leased since. Publishes releases of slots whose holder is no longer
  // active (its run ended or expired with its executor). Null if the views cannot be read.
  std::unique_ptr<DeviceSlots> LoadDeviceSlots(Publication& out, JobDb::Txn& txn);
  // The cycle of RunCycle; fills `report` if not null.
  absl::Status Cycle(CycleReport* report);
  void Schedule(Publication& out, JobDb::Txn& txn, DeviceSlots* devices, CycleReport* report);
  // The policy's round configuration for a pool, with priority classes in JobDb index order.
  PoolRoundConfig RoundConfigFor(const std::string& pool) const;
  // Keeps the round's reasons and shares for `regatta why` and `regatta queue report`.
  void ReportPoolRound(const std::string& pool, const PoolRoundResult& result, absl::Time now);
  // Rejects queued jobs that no node of any live pool could ever hold (submit check).
  void RejectUnschedulable(
      const absl::flat_hash_map<std::string, std::map<std::string, std::string>>& never_fits,
      const std::map<std::string, std::vector<Node>>& pools, absl::Time now, Publication& out,
      JobDb::Txn& txn);
  // Adds the jobs handed over since the last cycle that the views (at views_offset_) do not
  // hold yet, and forgets the specs of those they hold now.
  void ApplySubmitted(JobDb::Txn& txn, absl::flat_hash_set<std::string>& touched);
  // Forgets the JobDb after losing leadership.
  void StepDown();
  void Loop();

  eventlog::EventLog* const log_;
  store::Store* const store_;
  const WaitForViewsFn wait_for_views_;
  ExecutorRegistry* const executors_;
  const Clock* const clock_;
  IdGenerator* const ids_;
  const SchedulerOptions options_;
  StandaloneLeaderElection standalone_leader_;
  LeaderElection* leader_ = &standalone_leader_;
  SchedulingReports* reports_ = nullptr;
  std::function<void(const ExecutorState&)> on_executor_lost_;
  std::function<void(const CycleReport&)> on_cycle_;
  // The leader term the JobDb was loaded in (0: not loaded as leader).
  int64_t term_ = 0;

  JobDb job_db_;
  int64_t views_offset_ = 0;
  struct QueueInfo {
    double weight = 1.0;
    bool cordoned = false;
    // The queue's own limits: priority class -> resource -> fraction of a pool.
    std::map<std::string, std::map<std::string, double>> class_limits;
  };
  absl::flat_hash_map<std::string, QueueInfo> queues_;
  // Rate limits of new jobs (scheduling.rateLimit, scheduling.queueRateLimit).
  std::optional<TokenBucket> global_tokens_;
  absl::flat_hash_map<std::string, TokenBucket> queue_tokens_;
  // Jobs whose decision the loop must revisit next cycle even without a view change.
  absl::flat_hash_set<std::string> revisit_;
  // Device slots of runs leased by this process (run id -> claims), until the run ends.
  mutable absl::Mutex claims_mu_;
  absl::flat_hash_map<std::string, std::vector<DeviceClaim>> device_claims_
      ABSL_GUARDED_BY(claims_mu_);
  // The Instances as last read, and the device generation they were read at (0: never).
  std::vector<regatta::v1::Instance> instances_;
  uint64_t instances_generation_ = 0;
  std::atomic<bool> track_device_changes_{false};
  std::atomic<uint64_t> device_generation_{1};
  // Releases published ("<slot>/<holder>") that the views do not show yet.
  absl::flat_hash_set<std::string> releases_in_flight_;
  absl::Time started_at_;
  absl::Time last_expiry_scan_ = absl::InfinitePast();

  mutable absl::Mutex mu_;
  bool wake_ ABSL_GUARDED_BY(mu_) = false;      // a cycle within the current wait slice
  bool wake_now_ ABSL_GUARDED_BY(mu_) = false;  // a cycle at once
  // A cycle by then (the views asked for one; see views_wake_delay).
  absl::Time wake_at_ ABSL_GUARDED_BY(mu_) = absl::InfiniteFuture();
  // The views' offset after the last batch ViewsMoved was told of: views that move past it
  // without ViewsMoved (nobody observes the ingest) start a cycle by the end of a wait slice.
  int64_t views_told_offset_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool ready_ ABSL_GUARDED_BY(mu_) = false;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;

  // Jobs handed over by AcceptSubmitted: those not yet seen by a cycle, and the specs of all
  // the views may not have yet (job id -> (submit offset, spec)).
  struct SubmittedJob {
    int64_t offset = 0;
    std::shared_ptr<const regatta::v1::Job> spec;
  };
  bool NeedsCycleLocked(const store::OffsetMutation& mutation)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(submitted_mu_);
  mutable absl::Mutex submitted_mu_;
  std::vector<SubmittedJob> submitted_new_ ABSL_GUARDED_BY(submitted_mu_);
  absl::flat_hash_map<std::string, SubmittedJob> submitted_specs_ ABSL_GUARDED_BY(submitted_mu_);
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_SCHEDULER_H_
