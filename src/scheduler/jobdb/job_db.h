#ifndef REGATTA_SRC_SCHEDULER_JOBDB_JOB_DB_H_
#define REGATTA_SRC_SCHEDULER_JOBDB_JOB_DB_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/round/round.h"
#include "src/store/store.h"

namespace regatta::scheduler {

struct RunRecord {
  std::string run_id;
  std::string job_id;
  std::string executor_id;
  std::string node_id;
  std::string pool;
  regatta::v1::RunState state = regatta::v1::RUN_STATE_UNSPECIFIED;
  absl::Time leased_time;
  std::optional<regatta::v1::Error> error;
  // The run holds its node's resources until it reaches a terminal state.
  bool active() const { return !store::IsTerminal(state); }
};

// What the scheduler has decided about a job but not yet seen come back through the views.
enum class Decision {
  kNone,
  kLeased,     // JobRunLeased published
  kRequeued,   // JobRequeued published
  kSucceeded,  // JobSucceeded published
  kFailed,     // JobFailed published
  kCancelled,  // JobCancelled published
  kPreempted,  // JobPreempted published
};

struct JobRecord {
  std::string id;
  std::string queue;
  std::string job_set;
  regatta::v1::JobState state = regatta::v1::JOB_STATE_UNSPECIFIED;
  uint32_t priority = 0;
  std::string priority_class;
  int32_t priority_class_priority = 0;
  absl::Time submit_time;
  bool cancel_requested = false;
  std::string cancel_reason;
  bool preempt_requested = false;
  std::string preempt_reason;
  std::shared_ptr<const regatta::v1::Job> spec;
  // Oldest first.
  std::vector<RunRecord> runs;

  // The latest decision and the log offset of its event: until the views include that offset,
  // the job's state comes from the decision, not from (older) view rows.
  Decision decision = Decision::kNone;
  int64_t decision_offset = 0;

  // What the placement round sees; kept up to date by the JobDb.
  RoundJob round_job;

  const RunRecord* latest_run() const { return runs.empty() ? nullptr : &runs.back(); }
  RunRecord* latest_run() { return runs.empty() ? nullptr : &runs.back(); }
  bool terminal() const { return store::IsTerminal(state); }
  // Runs that ended for a retryable reason (each one counts against max retries).
  int retryable_failures() const;
};

// The scheduler's in-memory view of every non-terminal job and its runs, plus terminal jobs
// whose runs still hold resources. Indexed by job id, run id, executor, and per queue an
// ordered set of queued jobs: priority-class priority (high first), job priority (low first),
// submit time, id.
//
// One writer (the scheduler loop) and any number of readers (the executor API). The writer
// reads without locking (nobody else writes); every mutation takes the lock exclusively and
// readers take it shared. Version() changes with every mutation so readers can wait for news.
class JobDb {
 public:
  using PriorityClassLookup = std::function<int32_t(absl::string_view priority_class)>;
  explicit JobDb(PriorityClassLookup priority_of);

  // ---- Writer ----
  // Applies a job row from the views. `spec` is needed for a job the JobDb does not hold yet
  // (ignored otherwise). Returns false if the job was unknown and no spec was given.
  bool ApplyJobRow(const store::SchedulerJobRow& row, int64_t views_offset,
                   std::shared_ptr<const regatta::v1::Job> spec);
  // Applies a run row; ignored if the run's job is unknown (returns false).
  bool ApplyRunRow(const store::SchedulerRunRow& row, int64_t views_offset);

  // Records decisions published at `offset`.
  void RecordLease(absl::string_view job_id, RunRecord run, int64_t offset);
  void RecordJobDecision(absl::string_view job_id, Decision decision,
                         regatta::v1::JobState new_state, int64_t offset);
  void RecordRunState(absl::string_view run_id, regatta::v1::RunState state,
                      std::optional<regatta::v1::Error> error);

  // Forgets everything (the scheduler reloads from the views).
  void Clear();
  // Drops terminal jobs whose decisions are in the views and whose runs hold nothing.
  void Compact(int64_t views_offset);

  // ---- Reads (the writer without a lock; others under ReaderLock) ----
  absl::Mutex& mutex() const { return mu_; }
  const JobRecord* FindJob(absl::string_view job_id) const;
  // The job holding the run, or null.
  const JobRecord* FindJobByRun(absl::string_view run_id) const;
  const RunRecord* FindRun(absl::string_view run_id) const;
  // Ids of active runs on an executor.
  std::vector<std::string> ActiveRunsOf(absl::string_view executor_id) const;
  // Queue name -> ordered queued jobs.
  struct QueuedKey {
    int32_t neg_class_priority;
    uint32_t priority;
    absl::Time submit_time;
    std::string id;
    friend bool operator<(const QueuedKey& a, const QueuedKey& b) {
      return std::tie(a.neg_class_priority, a.priority, a.submit_time, a.id) <
             std::tie(b.neg_class_priority, b.priority, b.submit_time, b.id);
    }
  };
  const absl::flat_hash_map<std::string, absl::btree_set<QueuedKey>>& queued() const {
    return queued_;
  }
  // Every job (for decision passes).
  const absl::flat_hash_map<std::string, std::unique_ptr<JobRecord>>& jobs() const { return jobs_; }
  size_t size() const { return jobs_.size(); }
  int64_t Version() const ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until Version() != `seen` or the deadline.
  int64_t WaitForChange(int64_t seen, absl::Time deadline) const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  JobRecord* Mutable(absl::string_view job_id);
  // Moves the job in or out of its queue's queued set to match its state. Call with the old
  // key removed first (RemoveQueued) when ordering fields change.
  void IndexQueued(JobRecord& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RemoveQueued(const JobRecord& job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RefreshRoundJob(JobRecord& job);
  void Bump() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void IndexRun(const RunRecord& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  PriorityClassLookup priority_of_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<JobRecord>> jobs_;
  absl::flat_hash_map<std::string, std::string> job_of_run_;
  // Executor id -> its active runs.
  absl::flat_hash_map<std::string, absl::flat_hash_set<std::string>> active_by_executor_;
  absl::flat_hash_map<std::string, absl::btree_set<QueuedKey>> queued_;
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
};

// The key a job has in its queue's queued set.
JobDb::QueuedKey QueuedKeyOf(const JobRecord& job);

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_JOBDB_JOB_DB_H_
