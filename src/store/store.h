#ifndef REGATTA_SRC_STORE_STORE_H_
#define REGATTA_SRC_STORE_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/job_service.pb.h"
#include "regatta/v1/types.pb.h"
#include "src/store/device_views.h"
#include "src/store/pipeline_views.h"

namespace regatta::store {

// ---- Ingest mutations ------------------------------------------------------------------------
// The ingester turns log events into these; a backend applies one IngestBatch in a single
// transaction together with the consumer's new offset, so a batch is applied exactly once.
// Every mutation carries the log offset of the event that caused it; rows remember the offset
// that last changed them and a mutation never moves a row backwards.

struct QueueUpsert {
  regatta::v1::Queue queue;  // complete; create_time/update_time set by the ingester
};
struct QueueDelete {
  std::string name;
};
struct QueueSetCordoned {
  std::string name;
  bool cordoned = false;
  absl::Time time;
};
// Inserts a job in state QUEUED; ignored if the id exists.
struct JobInsert {
  regatta::v1::Job job;
};
struct JobCancelRequested {
  std::string job_id;
  std::string reason;
  std::string user;
};
// Marks cancel-requested every job of (queue, job_set) whose current state is in `states`
// (empty: every non-terminal state).
struct JobSetCancelRequested {
  std::string queue;
  std::string job_set;
  std::vector<regatta::v1::JobState> states;
  std::string reason;
  std::string user;
};
struct JobPreemptRequested {
  std::string job_id;
  std::string reason;
};
struct JobSetPriority {
  std::string job_id;
  uint32_t priority = 0;
};
// Moves a non-terminal job to `state` (ignored once the job is terminal).
struct JobSetState {
  std::string job_id;
  regatta::v1::JobState state = regatta::v1::JOB_STATE_UNSPECIFIED;
  absl::Time time;
  std::optional<regatta::v1::Error> error;  // why it ended: FAILED, PREEMPTED, REJECTED
  std::string reason;                       // for CANCELLED/PREEMPTED/REJECTED
  // Non-empty: applies only while this run is the job's latest run, so a late event of an
  // earlier run (e.g. pending after a requeue) cannot move the job.
  std::string run_id;
};
// Inserts a run (state LEASED) and makes it the job's latest run; ignored if it exists.
struct RunInsert {
  regatta::v1::JobRunDetails run;
};
// Moves a run to `state`; ignored once the run is terminal.
struct RunSetState {
  std::string run_id;
  regatta::v1::RunState state = regatta::v1::RUN_STATE_UNSPECIFIED;
  absl::Time time;
  std::optional<regatta::v1::Error> error;
};

// PipelineChange (pipeline_views.h) and DeviceChange (device_views.h): one pipeline or device
// event, applied by its case.
using Mutation =
    std::variant<QueueUpsert, QueueDelete, QueueSetCordoned, JobInsert, JobCancelRequested,
                 JobSetCancelRequested, JobPreemptRequested, JobSetPriority, JobSetState, RunInsert,
                 RunSetState, PipelineChange, DeviceChange>;

struct OffsetMutation {
  int64_t offset = 0;  // log offset of the event behind it
  Mutation mutation;
};

// A batch whose to_offset is not past the consumer's stored offset was applied before and is
// ignored as a whole.
struct IngestBatch {
  std::string consumer;   // e.g. "query"
  int64_t to_offset = 0;  // the consumer's offset after this batch
  std::vector<OffsetMutation> mutations;
};

struct IngestResult {
  // Mutations that could not be applied (unknown job, run or queue; invalid content), each
  // naming its offset, kind and row. The rest of the batch was applied; the ingester warns.
  std::vector<std::string> skipped;
};

// ---- Queries -------------------------------------------------------------------------------

struct JobFilter {
  std::string queue;  // empty: any
  // Non-empty: only jobs of these queues (with `queue` too, both must match). What the API
  // uses to list only the queues a caller may read.
  std::vector<std::string> queues;
  std::string job_set;                                      // empty: any
  std::vector<regatta::v1::JobState> states;                // empty: any
  std::string owner;                                        // empty: any
  std::string namespace_;                                   // empty: any
  std::vector<std::pair<std::string, std::string>> labels;  // all must match
  // Jobs come in the order they entered the log (their submit order; also id order for the
  // ULIDs of one API server), oldest first unless newest_first.
  bool newest_first = false;
  int limit = 100;  // <= 0: 100; at most kMaxListJobsLimit
  // Continue after this job in that order (an unknown id gives an empty page).
  std::string after_job_id;
};

// A safety bound; the API pages at most 10 000 (+1 to see whether there is another page).
inline constexpr int kMaxListJobsLimit = 100'000;

// Where a job lives and where it stands; enough for the API to authorize and route requests.
struct JobLocation {
  std::string job_id;
  std::string queue;
  std::string job_set;
  regatta::v1::JobState state = regatta::v1::JOB_STATE_UNSPECIFIED;
};

// Which non-terminal jobs a bulk cancel or preempt applies to; every set field must match.
struct JobSelector {
  std::vector<std::string> queues;  // empty: any
  // Non-empty: only jobs whose latest run is non-terminal and on this executor (and node).
  std::string executor_id;
  std::string node_id;
  std::vector<std::string> priority_classes;  // empty: any
  // Empty: every non-terminal state; terminal states never match.
  std::vector<regatta::v1::JobState> states;
};

// ---- Scheduler loads ------------------------------------------------------------------------
// The scheduler keeps its JobDb in step with the views by loading the rows changed since its
// last load (by the log offset that last changed them).

struct SchedulerJobRow {
  std::string job_id;
  std::string queue;
  std::string job_set;
  regatta::v1::JobState state = regatta::v1::JOB_STATE_UNSPECIFIED;
  uint32_t priority = 0;
  std::string priority_class;
  absl::Time submit_time;
  bool cancel_requested = false;
  std::string cancel_reason;
  bool preempt_requested = false;
  std::string preempt_reason;
  std::string latest_run_id;
  int64_t last_offset = 0;
  // The job's scheduling spec in SchedulerDelta::templates; 0: not known (jobs stored before
  // templates were): read the job's spec (GetJobSpecs).
  int64_t template_id = 0;
  std::string gang_id;
};

// The row of a job just submitted, from its spec: QUEUED, nothing requested, template and gang
// left to the spec. What the scheduler holds for a job handed over before the views have it.
SchedulerJobRow SubmittedJobRow(const regatta::v1::Job& job);

struct SchedulerRunRow {
  std::string run_id;
  std::string job_id;
  std::string executor_id;
  std::string node_id;
  std::string pool;
  regatta::v1::RunState state = regatta::v1::RUN_STATE_UNSPECIFIED;
  absl::Time leased_time;
  std::optional<regatta::v1::Error> error;
  int64_t last_offset = 0;
};

struct SchedulerQueueRow {
  regatta::v1::Queue queue;  // complete (cordoned set)
  bool deleted = false;
  int64_t last_offset = 0;
};

struct SchedulerDelta {
  // The views include the log up to this offset; pass it as `after_offset` next time.
  int64_t offset = 0;
  // Each in last_offset order, except in the initial load (no particular order).
  std::vector<SchedulerJobRow> jobs;
  std::vector<SchedulerRunRow> runs;
  std::vector<SchedulerQueueRow> queues;
  // How many job rows the whole load holds (set in the first chunk of an initial load; 0: not
  // counted): room to reserve before the rows arrive.
  size_t jobs_in_load = 0;
  // Template id -> SchedulingSpec, for every non-zero template_id of `jobs`.
  absl::flat_hash_map<int64_t, regatta::v1::Job> templates;
};

class Store;

// Store::StreamSchedulerDelta with the reading on a thread of its own, one chunk ahead of
// `on_chunk`, which runs in the calling thread: reading the views and applying them overlap (a
// restart loads a million jobs about twice as fast on two cores). Same chunks, same order.
absl::Status StreamSchedulerDeltaAhead(
    Store& store, absl::string_view consumer, int64_t after_offset, size_t max_jobs_per_chunk,
    absl::FunctionRef<absl::Status(SchedulerDelta& chunk)> on_chunk);

// The part of a submitted job that scheduling and retry decisions read: task resource
// requests, node selector, tolerations, node affinity and active deadline; priority class;
// gang cardinality and node uniformity label (not the gang id); retry policy and Armada's
// failFast annotation (the only annotation kept). Jobs with equal parts share one template.
regatta::v1::Job SchedulingSpec(const regatta::v1::Job& job);
// Deterministic serialization: equal messages give equal bytes (map entries sorted).
std::string SerializeDeterministic(const google::protobuf::MessageLite& message);

bool IsTerminal(regatta::v1::JobState state);
bool IsTerminal(regatta::v1::RunState state);
// The terminal states of pipelines.proto's state machines.
bool IsTerminal(regatta::v1::PipelineRunState state);
bool IsTerminal(regatta::v1::PipelineTaskState state);

// The views (queues, jobs, runs; the pipeline views, PipelineViews; the device views,
// DeviceViews) and the submit deduplication table. Backends: SQLite (embedded), PostgreSQL
// (later). Every backend passes tests/conformance/store_conformance.h. Thread-safe: any number
// of readers alongside one ingest writer.
class Store : public PipelineViews, public DeviceViews {
 public:
  ~Store() override = default;

  // ---- Ingestion (only the ingester calls these) ----
  // Applies the batch and the consumer's new offset in one transaction. Rows remember the
  // offset that last changed them; a mutation older than that is ignored. A terminal job
  // ignores state, cancel, preempt and priority mutations; a terminal run ignores state
  // mutations. An error means nothing was applied (retry the batch).
  virtual absl::StatusOr<IngestResult> ApplyIngestBatch(const IngestBatch& batch) = 0;
  // 0 if the consumer has not ingested anything.
  virtual absl::StatusOr<int64_t> GetConsumerOffset(absl::string_view consumer) = 0;

  // ---- Queues ----
  // A queue upsert keeps the create_time of an existing queue; a deleted queue is gone from
  // both calls below (a later upsert creates it anew).
  // NOT_FOUND naming the queue.
  virtual absl::StatusOr<regatta::v1::Queue> GetQueue(absl::string_view name) = 0;
  // Queues with name > after_name, in name order.
  virtual absl::StatusOr<std::vector<regatta::v1::Queue>> ListQueues(absl::string_view after_name,
                                                                     int limit) = 0;

  // ---- Jobs ----
  // Unknown ids are left out.
  virtual absl::StatusOr<std::vector<JobLocation>> GetJobLocations(
      const std::vector<std::string>& job_ids) = 0;
  // Jobs of a job set whose state is in `states` (empty: non-terminal).
  virtual absl::StatusOr<std::vector<JobLocation>> GetJobSetJobs(
      absl::string_view queue, absl::string_view job_set,
      const std::vector<regatta::v1::JobState>& states) = 0;
  virtual absl::StatusOr<std::vector<regatta::v1::JobSummary>> ListJobs(
      const JobFilter& filter) = 0;
  // Every non-terminal job the selector matches, in no particular order; reads only the views'
  // non-terminal jobs and runs, not their terminal history. All at once: for a selection that
  // may be large (a queue of a million jobs), StreamJobs.
  absl::StatusOr<std::vector<JobLocation>> FindJobs(const JobSelector& selector);
  // The same rows from one consistent read, handed to `on_chunk` at most `max_per_chunk` at a
  // time (so a million matches never sit in memory at once). An error from `on_chunk` ends the
  // read and is returned.
  virtual absl::Status StreamJobs(
      const JobSelector& selector, size_t max_per_chunk,
      absl::FunctionRef<absl::Status(std::vector<JobLocation>& chunk)> on_chunk) = 0;
  // Unknown ids are left out; runs are oldest first. `expand_spec` fills JobDetails.job with
  // the job as submitted. DATA_LOSS naming the job if a stored blob does not parse.
  virtual absl::StatusOr<std::vector<regatta::v1::JobDetails>> GetJobDetails(
      const std::vector<std::string>& job_ids, bool expand_spec) = 0;

  // ---- Scheduler ----
  // One consistent snapshot of what the log records after `after_offset` changed, up to the
  // offset `consumer` has ingested. after_offset 0 is the initial load: every queue (deleted
  // ones left out), every non-terminal job, and the runs of those jobs plus every non-terminal
  // run.
  absl::StatusOr<SchedulerDelta> LoadSchedulerDelta(absl::string_view consumer,
                                                    int64_t after_offset);
  // The same load in chunks, so that a large one (the initial load of a million jobs) never sits
  // in memory whole: `on_chunk` sees at most `max_jobs_per_chunk` job rows at a time, in
  // LoadSchedulerDelta's order; the first chunk also holds the queues, the last the runs (one
  // chunk can be both); a chunk's templates are those its jobs reference that no earlier chunk
  // held. Every chunk carries the load's offset. The chunk is reused for the next one (rows are
  // overwritten in place, to spare allocations): keep copies, not references. An error from
  // `on_chunk` ends the load and is returned.
  virtual absl::Status StreamSchedulerDelta(
      absl::string_view consumer, int64_t after_offset, size_t max_jobs_per_chunk,
      absl::FunctionRef<absl::Status(SchedulerDelta& chunk)> on_chunk) = 0;
  // The jobs as submitted; unknown ids are left out. DATA_LOSS naming the job if a stored blob
  // does not parse.
  virtual absl::StatusOr<std::vector<regatta::v1::Job>> GetJobSpecs(
      const std::vector<std::string>& job_ids) = 0;

  // ---- Submit deduplication (written by the API server after publishing) ----
  // client id -> job id for the client ids already used in `queue`.
  virtual absl::StatusOr<absl::flat_hash_map<std::string, std::string>> LookupClientIds(
      absl::string_view queue, const std::vector<std::string>& client_ids) = 0;
  // Records (client id, job id) pairs; an existing client id keeps its first job id.
  virtual absl::Status StoreClientIds(
      absl::string_view queue,
      const std::vector<std::pair<std::string, std::string>>& client_to_job) = 0;

  // ---- Tests and tools ----
  // A canonical text dump of every view table, the pipeline and device views' included (not
  // the dedup table or consumer offsets), used by the replay-equality test to compare two
  // stores.
  virtual absl::StatusOr<std::string> DumpViews() = 0;
};

}  // namespace regatta::store

#endif  // REGATTA_SRC_STORE_STORE_H_
