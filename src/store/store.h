#ifndef REGATTA_SRC_STORE_STORE_H_
#define REGATTA_SRC_STORE_STORE_H_

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "regatta/v1/job_service.pb.h"
#include "regatta/v1/types.pb.h"

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
  std::optional<regatta::v1::Error> error;  // for FAILED
  std::string reason;                       // for CANCELLED/PREEMPTED/REJECTED
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

using Mutation = std::variant<QueueUpsert, QueueDelete, QueueSetCordoned, JobInsert,
                              JobCancelRequested, JobSetCancelRequested, JobPreemptRequested,
                              JobSetPriority, JobSetState, RunInsert, RunSetState>;

struct OffsetMutation {
  int64_t offset = 0;  // log offset of the event behind it
  Mutation mutation;
};

struct IngestBatch {
  std::string consumer;  // e.g. "query"
  int64_t to_offset = 0;  // the consumer's offset after this batch
  std::vector<OffsetMutation> mutations;
};

// ---- Queries -------------------------------------------------------------------------------

struct JobFilter {
  std::string queue;    // empty: any
  std::string job_set;  // empty: any
  std::vector<regatta::v1::JobState> states;  // empty: any
  std::string owner;                          // empty: any
  std::vector<std::pair<std::string, std::string>> labels;  // all must match
  bool newest_first = false;
  int limit = 100;
  // Continue after this job (ids are ULIDs, so id order is submit order).
  std::string after_job_id;
};

// Where a job lives and where it stands; enough for the API to authorize and route requests.
struct JobLocation {
  std::string job_id;
  std::string queue;
  std::string job_set;
  regatta::v1::JobState state = regatta::v1::JOB_STATE_UNSPECIFIED;
};

bool IsTerminal(regatta::v1::JobState state);

// The views (queues, jobs, runs) and the submit deduplication table. Backends: SQLite
// (embedded), PostgreSQL (later). Every backend passes tests/conformance/store_conformance.h.
// Thread-safe: any number of readers alongside one ingest writer.
class Store {
 public:
  virtual ~Store() = default;

  // ---- Ingestion (only the ingester calls these) ----
  virtual absl::Status ApplyIngestBatch(const IngestBatch& batch) = 0;
  // 0 if the consumer has not ingested anything.
  virtual absl::StatusOr<int64_t> GetConsumerOffset(absl::string_view consumer) = 0;

  // ---- Queues ----
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
  // Unknown ids are left out. `expand_spec` fills JobDetails.job.
  virtual absl::StatusOr<std::vector<regatta::v1::JobDetails>> GetJobDetails(
      const std::vector<std::string>& job_ids, bool expand_spec) = 0;

  // ---- Submit deduplication (written by the API server after publishing) ----
  // client id -> job id for the client ids already used in `queue`.
  virtual absl::StatusOr<absl::flat_hash_map<std::string, std::string>> LookupClientIds(
      absl::string_view queue, const std::vector<std::string>& client_ids) = 0;
  // Records (client id, job id) pairs; an existing client id keeps its first job id.
  virtual absl::Status StoreClientIds(
      absl::string_view queue,
      const std::vector<std::pair<std::string, std::string>>& client_to_job) = 0;

  // ---- Tests and tools ----
  // A canonical text dump of every view table (not the dedup table or consumer offsets), used
  // by the replay-equality test to compare two stores.
  virtual absl::StatusOr<std::string> DumpViews() = 0;
};

}  // namespace regatta::store

#endif  // REGATTA_SRC_STORE_STORE_H_
