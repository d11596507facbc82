#ifndef REGATTA_SRC_STORE_PIPELINE_VIEWS_H_
#define REGATTA_SRC_STORE_PIPELINE_VIEWS_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/events.pb.h"
#include "regatta/v1/pipelines.pb.h"

namespace regatta::store {

// ---- Ingest mutation ------------------------------------------------------------------------
// One pipeline event of the log (any of the pipeline cases of regatta.v1.Event; see
// pipelines.proto). The event is its own mutation: the backend applies it by its case.
// Rules the backends keep (the conformance suite checks them):
//   * creations of an existing id are ignored (the first wins); deletions of an unknown id too;
//     upserts (experiments, recurring runs) replace the whole row; CacheEntryCreated replaces an
//     existing entry of its fingerprint (the engine writes one only after a miss, e.g. expiry);
//   * names are unique (pipelines; versions within their pipeline; experiments): a creation or
//     upsert whose name another id holds is skipped, as is a version of an unknown pipeline;
//   * deleting a pipeline deletes its versions (runs keep their own copy of the spec);
//   * PipelineRunUpdated never moves a terminal run, except FAILED|CANCELED -> RUNNING (retry,
//     which also clears finish_time); it sets error_message as given (empty clears it), and
//     start/finish time and outputs only when given (non-empty);
//   * PipelineTaskUpdated replaces the task (run_id, path), creating it on first sight, except
//     that a terminal task is replaced only by a PENDING or RUNNING one (a retry of the run);
//     a task of an unknown run is skipped;
//   * lineage, from every applied PipelineTaskUpdated (repeats add nothing): each input
//     artifact is an INPUT event of the task; each output artifact an OUTPUT event, or
//     REPUBLISHED if the task is CACHED. An artifact row is written by its producer (OUTPUT:
//     run_id/task_path/name default to the task and output name; its later updates replace the
//     row) and otherwise kept as first seen; create_time defaults to the time of the event that
//     wrote the row;
//   * PipelineRunCreated with a recurring_run_id advances that recurring run's
//     last_scheduled_time to the run's scheduled_time if later;
//   * deleting a run deletes its tasks, but not its artifacts or their lineage (other runs may
//     have consumed them).
// What cannot be applied (empty id, unknown run, invalid state, a name taken) goes to
// IngestResult::skipped, naming offset, event kind and row; the rest of the batch applies.
struct PipelineChange {
  regatta::v1::Event event;
};

// ---- Queries --------------------------------------------------------------------------------

// Pages: `page_token` is the token of the previous page's last row (empty: from the start);
// a page has at most `limit` rows (<= 0: 100; at most 10 000) and `next_page_token` is empty on
// the last page. Tokens are opaque and belong to one listing (and order): another listing's
// token, or a malformed one, is INVALID_ARGUMENT.
struct PageRequest {
  std::string page_token;
  int limit = 100;
};

struct PipelineRunFilter {
  std::string experiment_id;  // empty: any
  std::string pipeline_id;    // empty: any
  std::string pipeline_version_id;
  std::string recurring_run_id;                       // empty: any
  std::string owner;                                  // empty: any
  std::vector<regatta::v1::PipelineRunState> states;  // empty: any
  // Archived runs are left out unless include_archived; only_archived lists only them.
  bool include_archived = false;
  bool only_archived = false;
  // Order: "create_time" (default; also when empty) or "display_name", ties in creation order;
  // newest / last first if descending. Anything else is INVALID_ARGUMENT.
  std::string sort_by = "create_time";
  bool descending = true;
  PageRequest page;
};

template <typename T>
struct Page {
  std::vector<T> rows;
  std::string next_page_token;
};

// Where an artifact came from and where it went.
struct ArtifactLineage {
  regatta::v1::PipelineArtifact artifact;
  // The task that produced it (run id, task path) and the tasks that read it (including cached
  // tasks that republished it), oldest first.
  struct TaskRef {
    std::string run_id;
    std::string task_path;
    // The task's current PipelineTaskState name without its prefix, e.g. "SUCCEEDED"; empty
    // once the task's run was deleted.
    std::string task_state;
    std::string io_name;  // the input or output name it had in that task
  };
  // Without an OUTPUT event (an artifact only seen as an input), the artifact's own
  // run_id/task_path/name, task_state empty.
  TaskRef producer;
  std::vector<TaskRef> consumers;
  std::vector<TaskRef> republished_by;  // CACHED tasks that took it from the cache
};

// The views of the pipeline layer, kept by the same ingester and in the same transactions as
// the batch views (so a task's job and the task agree at every offset). Thread-safe.
// Errors: NOT_FOUND naming the kind and id; DATA_LOSS naming the row if a stored blob does not
// parse.
class PipelineViews {
 public:
  virtual ~PipelineViews() = default;

  // ---- Pipelines and versions ----
  virtual absl::StatusOr<regatta::v1::Pipeline> GetPipeline(absl::string_view id) = 0;
  virtual absl::StatusOr<regatta::v1::Pipeline> GetPipelineByName(absl::string_view name) = 0;
  // Name order.
  virtual absl::StatusOr<Page<regatta::v1::Pipeline>> ListPipelines(const PageRequest& page) = 0;
  virtual absl::StatusOr<regatta::v1::PipelineVersion> GetPipelineVersion(absl::string_view id) = 0;
  // Newest first (create_time); without spec_json unless `with_spec`. NOT_FOUND for an unknown
  // pipeline.
  virtual absl::StatusOr<Page<regatta::v1::PipelineVersion>> ListPipelineVersions(
      absl::string_view pipeline_id, const PageRequest& page, bool with_spec) = 0;

  // ---- Experiments ----
  virtual absl::StatusOr<regatta::v1::Experiment> GetExperiment(absl::string_view id) = 0;
  virtual absl::StatusOr<regatta::v1::Experiment> GetExperimentByName(absl::string_view name) = 0;
  // Name order; archived ones only if `include_archived`.
  virtual absl::StatusOr<Page<regatta::v1::Experiment>> ListExperiments(const PageRequest& page,
                                                                        bool include_archived) = 0;

  // ---- Runs and tasks ----
  // `with_tasks` fills PipelineRun.tasks (creation order).
  virtual absl::StatusOr<regatta::v1::PipelineRun> GetPipelineRun(absl::string_view id,
                                                                  bool with_tasks) = 0;
  // Without spec_json and tasks.
  virtual absl::StatusOr<Page<regatta::v1::PipelineRun>> ListPipelineRuns(
      const PipelineRunFilter& filter) = 0;
  // Every run not in a terminal state, with spec and tasks, in creation order: what the engine
  // resumes after a restart.
  virtual absl::StatusOr<std::vector<regatta::v1::PipelineRun>> ListActivePipelineRuns() = 0;

  // ---- Artifacts and lineage ----
  virtual absl::StatusOr<regatta::v1::PipelineArtifact> GetArtifact(absl::string_view id) = 0;
  // Artifacts produced by the run's tasks, in creation order (also once the run is deleted:
  // artifacts outlive it; an unknown run has none).
  virtual absl::StatusOr<std::vector<regatta::v1::PipelineArtifact>> ListRunArtifacts(
      absl::string_view run_id) = 0;
  virtual absl::StatusOr<ArtifactLineage> GetArtifactLineage(absl::string_view artifact_id) = 0;

  // ---- Cache ----
  // The entries for the given fingerprints that exist and have not expired at `now`.
  virtual absl::StatusOr<absl::flat_hash_map<std::string, regatta::v1::CacheEntry>>
  LookupCacheEntries(const std::vector<std::string>& fingerprints, absl::Time now) = 0;
  // Fingerprint order; expired entries included (prune removes them).
  virtual absl::StatusOr<Page<regatta::v1::CacheEntry>> ListCacheEntries(
      const PageRequest& page) = 0;

  // ---- Recurring runs ----
  virtual absl::StatusOr<regatta::v1::RecurringRun> GetRecurringRun(absl::string_view id) = 0;
  // Creation order.
  virtual absl::StatusOr<Page<regatta::v1::RecurringRun>> ListRecurringRuns(
      const PageRequest& page) = 0;
};

}  // namespace regatta::store

#endif  // REGATTA_SRC_STORE_PIPELINE_VIEWS_H_
