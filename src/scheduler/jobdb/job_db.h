#ifndef REGATTA_SRC_SCHEDULER_JOBDB_JOB_DB_H_
#define REGATTA_SRC_SCHEDULER_JOBDB_JOB_DB_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/btree_set.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/node_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/round/pool_round.h"
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
enum class Decision : uint8_t {
  kNone,
  kLeased,     // JobRunLeased published
  kRequeued,   // JobRequeued published
  kSucceeded,  // JobSucceeded published
  kFailed,     // JobFailed published
  kCancelled,  // JobCancelled published
  kPreempted,  // JobPreempted published
  kRejected,   // JobRejected published
};

// What every job of one scheduling-relevant spec shares (typically one per job set): immutable,
// shared by the jobs' records, dropped with the last of them.
struct JobSpecTemplate {
  // The scheduling-relevant part of the submitted job: task resources, node selector,
  // tolerations, node affinity and active deadline; priority class; gang cardinality and
  // uniformity label; retry policy. Everything else (id, command, env, labels, ...) is empty:
  // the executor API reads the full spec from the store when it builds a lease.
  regatta::v1::Job spec;
  // The scheduling algorithm's view; `round.task` points into `spec`.
  JobTemplate round;
  int32_t priority_class_priority = 0;
};

// Fields few jobs have, kept out of line.
struct JobExtras {
  std::string gang_id;
  std::string cancel_reason;
  std::string preempt_reason;
};

// One job. Strings shared by many jobs are interned (the pointers stay valid for the JobDb's
// life) and the spec is a shared template, so a queued job costs a few hundred bytes.
struct JobRecord {
  std::string id;
  const std::string* queue_name = nullptr;
  const std::string* job_set_name = nullptr;
  std::shared_ptr<const JobSpecTemplate> tmpl;
  absl::Time submit_time;
  // The log offset of the latest decision: until the views include it, the job's state comes
  // from the decision, not from (older) view rows.
  int64_t decision_offset = 0;
  uint32_t priority = 0;
  int32_t priority_class_priority = 0;
  regatta::v1::JobState state = regatta::v1::JOB_STATE_UNSPECIFIED;
  Decision decision = Decision::kNone;
  bool cancel_requested = false;
  bool preempt_requested = false;
  bool deleted = false;  // in a transaction: dropped at commit
  std::unique_ptr<JobExtras> extras;
  // Oldest first.
  std::vector<RunRecord> runs;

  JobRecord() = default;
  JobRecord(const JobRecord& other);
  JobRecord& operator=(JobRecord&& other) = default;

  const std::string& queue() const { return *queue_name; }
  const std::string& job_set() const { return *job_set_name; }
  const std::string& gang_id() const;
  const std::string& cancel_reason() const;
  const std::string& preempt_reason() const;
  const ResourceList& requests() const { return tmpl->round.requests; }
  const regatta::v1::RetryPolicy& retry_policy() const { return tmpl->spec.retry_policy(); }
  const RunRecord* latest_run() const { return runs.empty() ? nullptr : &runs.back(); }
  // The job's run with this id, or null.
  const RunRecord* run(absl::string_view run_id) const;
  RunRecord* latest_run() { return runs.empty() ? nullptr : &runs.back(); }
  bool terminal() const { return store::IsTerminal(state); }
  bool queued() const {
    return !deleted && state == regatta::v1::JOB_STATE_QUEUED && !cancel_requested;
  }
  bool holds_resources() const;
  // Runs that ended for a retryable reason (each one counts against max retries).
  int retryable_failures() const;
  // Nodes where runs ended for a retryable reason, oldest first.
  std::vector<std::string> AvoidNodes() const;
};

// A queue's place in its ordered queued set: priority-class priority (high first), job
// priority (low first), submit time, id.
struct QueuedEntry {
  int32_t neg_class_priority;
  uint32_t priority;
  int64_t submit_micros;
  const JobRecord* job;
  friend bool operator<(const QueuedEntry& a, const QueuedEntry& b) {
    return std::tie(a.neg_class_priority, a.priority, a.submit_micros, a.job->id) <
           std::tie(b.neg_class_priority, b.priority, b.submit_micros, b.job->id);
  }
};
using QueuedSet = absl::btree_set<QueuedEntry>;

// Interned strings: one copy each, at a stable address, for the pool's life.
class StringPool {
 public:
  const std::string* Intern(absl::string_view s);
  // Null if never interned.
  const std::string* Find(absl::string_view s) const;
  size_t size() const { return strings_.size(); }

 private:
  absl::node_hash_set<std::string> strings_;
};

// Job records keyed by their own id (no second copy of the id as a key).
struct JobIdHash {
  using is_transparent = void;
  size_t operator()(absl::string_view id) const { return absl::Hash<absl::string_view>()(id); }
  size_t operator()(const std::unique_ptr<JobRecord>& job) const { return (*this)(job->id); }
};
struct JobIdEq {
  using is_transparent = void;
  static absl::string_view Id(absl::string_view id) { return id; }
  static absl::string_view Id(const std::unique_ptr<JobRecord>& job) { return job->id; }
  template <typename A, typename B>
  bool operator()(const A& a, const B& b) const {
    return Id(a) == Id(b);
  }
};
using JobSet = absl::flat_hash_set<std::unique_ptr<JobRecord>, JobIdHash, JobIdEq>;

// The scheduler's in-memory view of every non-terminal job and its runs, plus terminal jobs
// whose runs still hold resources. Indexed by job id, run id, executor, gang, and per queue an
// ordered set of queued jobs with their summed requests (queued demand).
//
// Transactional: one writer, snapshot readers. The writer (the scheduler loop) changes the
// JobDb only through a Txn, which copies each job it changes into a private overlay; readers
// see none of it until Commit applies the overlay to the committed records and indexes under a
// short exclusive lock (a job keeps its record's address while it lives). Abort (or destroying
// an uncommitted Txn) drops the overlay and leaves no trace. Other threads read the committed
// state under ReaderMutexLock(&mutex()); the writer thread reads it without locking (nobody
// else writes). Version() changes with every commit so readers can wait for news.
class JobDb {
 public:
  using PriorityClassLookup = std::function<int32_t(absl::string_view priority_class)>;
  explicit JobDb(PriorityClassLookup priority_of);
  ~JobDb();

  class Txn;
  // The write transaction; at most one at a time, on the writer thread. `bulk_load` (only on
  // an empty JobDb, e.g. the initial load) writes the committed records directly, holding the
  // lock until the transaction ends: no overlay to build and copy, and an abort empties the
  // JobDb again, which is where it started.
  std::unique_ptr<Txn> Begin(bool bulk_load = false);

  // The shared template of a spec's scheduling part (writer thread). `spec` may be the full job
  // or its scheduling part alone (store::SchedulingSpec): both give the same template.
  std::shared_ptr<const JobSpecTemplate> Template(const regatta::v1::Job& spec,
                                                  absl::string_view priority_class);
  // Forgets every job (the scheduler lost leadership and reloads when it leads again). Not
  // during a transaction.
  void Reset();

  // ---- Committed state (the writer without a lock; others under ReaderLock) ----
  absl::Mutex& mutex() const { return mu_; }
  const JobRecord* FindJob(absl::string_view job_id) const;
  // The job holding the run, or null.
  const JobRecord* FindJobByRun(absl::string_view run_id) const;
  const RunRecord* FindRun(absl::string_view run_id) const;
  // Ids of active runs on an executor.
  std::vector<std::string> ActiveRunsOf(absl::string_view executor_id) const;
  // The same without copying: every active run on the executor with its job (the executor
  // API calls this on every lease request).
  void ForEachActiveRunOf(absl::string_view executor_id,
                          absl::FunctionRef<void(const JobRecord&, const RunRecord&)> fn) const;
  void ForEachJob(absl::FunctionRef<void(const JobRecord&)> fn) const;
  // Sum of the requests of the queue's queued jobs.
  ResourceList QueuedDemand(absl::string_view queue) const;
  size_t size() const { return jobs_.size(); }
  // Distinct spec templates held by committed jobs.
  size_t template_count() const;
  int64_t Version() const ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until Version() != `seen` or the deadline.
  int64_t WaitForChange(int64_t seen, absl::Time deadline) const ABSL_LOCKS_EXCLUDED(mu_);

  // Priority class names by JobTemplate::priority_class index (writer thread): the caller
  // builds PoolRoundConfig::priority_classes in this order.
  const std::vector<std::string>& priority_class_names() const { return priority_classes_; }

 private:
  friend class Txn;
  struct QueueIndex {
    QueuedSet queued;
    ResourceList demand;  // sum of the requests of `queued`
  };
  using GangKey = std::pair<const std::string*, std::string>;  // interned queue, gang id

  JobRecord* FindCommitted(absl::string_view job_id) const;
  // Adds / removes a committed record's entries in every index (under the exclusive lock).
  void Index(JobRecord* job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Unindex(JobRecord* job) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  int PriorityClassIndex(absl::string_view name);

  PriorityClassLookup priority_of_;
  mutable absl::Mutex mu_;
  int64_t version_ ABSL_GUARDED_BY(mu_) = 0;
  bool writing_ = false;

  StringPool strings_;
  std::vector<std::string> priority_classes_;
  absl::flat_hash_map<std::string, int> priority_class_index_;
  // Serialized scheduling spec -> template; expired entries are swept as the table grows.
  absl::flat_hash_map<std::string, std::weak_ptr<const JobSpecTemplate>> templates_;
  size_t templates_swept_at_ = 0;

  JobSet jobs_;
  absl::flat_hash_map<std::string, JobRecord*> job_of_run_;
  // Executor id -> its active runs.
  // Executor id -> jobs with an active run there (their runs say which).
  absl::flat_hash_map<std::string, absl::flat_hash_set<const JobRecord*>> active_by_executor_;
  absl::flat_hash_map<const std::string*, QueueIndex> queues_;
  absl::flat_hash_map<GangKey, std::vector<JobRecord*>> gangs_;
  // Jobs whose runs hold resources, and terminal jobs (compaction candidates).
  absl::flat_hash_set<JobRecord*> holding_;
  absl::flat_hash_set<JobRecord*> terminal_;
};

// The one write transaction. Reads through it see the committed state with the transaction's
// changes applied. Pointers and iterators it hands out are valid until its next change.
class JobDb::Txn {
 public:
  Txn(JobDb* db, bool bulk_load);
  ~Txn();  // aborts unless committed
  Txn(const Txn&) = delete;
  Txn& operator=(const Txn&) = delete;

  // ---- Changes ----
  // Applies a job row from the views; returns the job, or null if it was unknown and
  // `template_if_new` (called only for a job the JobDb does not hold yet) gave no template.
  // A new job's gang id comes from the row.
  using TemplateFn = absl::FunctionRef<std::shared_ptr<const JobSpecTemplate>()>;
  const JobRecord* ApplyJobRow(const store::SchedulerJobRow& row, int64_t views_offset,
                               TemplateFn template_if_new);
  // The same with the job's spec (full or scheduling part), made into a template only if the
  // job is new; the gang id comes from the row, else from the spec.
  const JobRecord* ApplyJobRow(const store::SchedulerJobRow& row, int64_t views_offset,
                               const regatta::v1::Job* spec);
  // Room for this many jobs (a bulk load knows how many come).
  void Reserve(size_t jobs);
  // Applies a run row; ignored if the run's job is unknown (returns false).
  bool ApplyRunRow(const store::SchedulerRunRow& row, int64_t views_offset);
  // Records a lease (the job leaves its queued set at once). `offset` is the log offset of the
  // lease event; 0 until it is published (then SetDecisionOffset).
  void RecordLease(absl::string_view job_id, RunRecord run, int64_t offset);
  void RecordJobDecision(absl::string_view job_id, Decision decision,
                         regatta::v1::JobState new_state, int64_t offset);
  void SetDecisionOffset(absl::string_view job_id, int64_t offset);
  void RecordRunState(absl::string_view run_id, regatta::v1::RunState state,
                      std::optional<regatta::v1::Error> error);
  // Drops terminal jobs whose decisions are in the views and whose runs hold nothing.
  void Compact(int64_t views_offset);

  // Makes every change visible to readers at once. Nothing may be called afterwards.
  void Commit();
  // Drops every change.
  void Abort();
  bool empty() const { return overlay_.empty(); }

  // ---- Reads ----
  const JobRecord* FindJob(absl::string_view job_id) const;
  const JobRecord* FindJobByRun(absl::string_view run_id) const;
  const RunRecord* FindRun(absl::string_view run_id) const;
  size_t size() const;
  // Names of queues with queued jobs, sorted.
  std::vector<std::string> QueuedQueues() const;
  // The queue's queued jobs in order; leased or otherwise changed jobs are skipped.
  std::vector<const JobRecord*> Queued(absl::string_view queue) const;
  // Sum of the requests of the queue's queued jobs.
  ResourceList QueuedDemand(absl::string_view queue) const;
  // For the scheduling algorithm: the queue's queued jobs in order, pulled lazily.
  std::unique_ptr<QueuedJobIterator> QueuedJobs(absl::string_view queue) const;
  // The same walk, as records.
  class QueuedCursor;
  QueuedCursor Cursor(absl::string_view queue) const;
  // Members of a gang (queue, gang id), in no particular order.
  std::vector<const JobRecord*> GangMembers(absl::string_view queue,
                                            absl::string_view gang_id) const;
  // Every active run with its job.
  void ForEachActiveRun(absl::FunctionRef<void(const JobRecord&, const RunRecord&)> fn) const;
  // Jobs holding resources in `pool`, for the scheduling algorithm; `node_index` maps a node id
  // to its index in the pool's node list (runs on unknown nodes, index < 0, are left out).
  std::vector<RunningJob> RunningJobs(
      absl::string_view pool, absl::FunctionRef<int(absl::string_view node_id)> node_index) const;
  void ForEachJob(absl::FunctionRef<void(const JobRecord&)> fn) const;

 private:
  const std::string* QueueKey(absl::string_view queue) const;
  // Copies a committed job into the overlay (or finds it there) and takes it out of the
  // transaction's indexes; End puts it back in. Null if the job is unknown.
  JobRecord* BeginChange(absl::string_view job_id);
  // The transaction's copy of a queue's queued demand, made on first use.
  ResourceList& Demand(const std::string* queue);
  void EndChange(JobRecord* job);
  void Finish();

  const JobRecord* ApplyJobRow(const store::SchedulerJobRow& row, int64_t views_offset,
                               TemplateFn template_if_new, absl::string_view gang_id);

  JobDb* db_;
  const bool bulk_;
  bool done_ = false;
  JobSet overlay_;
  // Queued sets and demand of the queues the transaction touched (overlay jobs only in the
  // sets; the demand is the queue's whole).
  absl::flat_hash_map<const std::string*, QueuedSet> queued_;
  absl::flat_hash_map<const std::string*, ResourceList> demand_;
  // Runs and gang members new in the transaction.
  absl::flat_hash_map<std::string, JobRecord*> runs_;
  absl::flat_hash_map<GangKey, std::vector<JobRecord*>> gangs_;
};

// Walks a queue's committed queued set and the transaction's, merged in order.
class JobDb::Txn::QueuedCursor {
 public:
  QueuedCursor(const Txn* txn, const QueuedSet* committed, const QueuedSet* changed);
  // Null when there are no more.
  const JobRecord* Next();

 private:
  const Txn* txn_;
  QueuedSet::const_iterator a_, a_end_, b_, b_end_;
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_JOBDB_JOB_DB_H_
