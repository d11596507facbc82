#ifndef REGATTA_SRC_PIPELINES_ENGINE_RUN_DRIVER_H_
#define REGATTA_SRC_PIPELINES_ENGINE_RUN_DRIVER_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "regatta/v1/pipelines.pb.h"
#include "src/common/ids.h"
#include "src/pipelines/cel/condition.h"
#include "src/pipelines/ir/pipeline_spec.h"
#include "src/pipelines/ir/platform.h"
#include "src/pipelines/placeholders/placeholders.h"

namespace regatta::pipelines::engine {

// A container step ready to start. The engine checks the cache (when `fingerprint` is set and
// the task reads it), then either reports a hit (OnCacheHit) or submits a job running `argv`
// (OnJobSubmitted / OnLaunchFailed).
// Where a step runs: as a host process (as kfp.local's SubprocessRunner runs components), or in
// its component's image (as kfp's DockerRunner and its Kubernetes backend do).
enum class StepRunner { kHost, kContainer };

// kfp's metrics artifacts, which are their metadata: a step need not write a file for them.
bool IsMetricsSchema(absl::string_view schema_title);

struct StepLaunch {
  std::string task_path;
  int attempt = 1;  // 1-based
  const ir::ContainerSpec* container = nullptr;
  // The container's resources with the placeholders of the machine fields resolved.
  ir::ResourceSpec resources;
  // The kfp-kubernetes platform config of the step's executor, if any.
  const ir::KubernetesExecutorConfig* platform = nullptr;
  placeholders::ExecutorValues values;
  // The container's command and args with the placeholders resolved; a host process runs
  // command + args.
  std::vector<std::string> command;
  std::vector<std::string> args;
  // The artifacts the step reads and writes: (path on this machine, path the step sees them
  // at), the same but for bucket uris in a container. Input artifacts are read-only.
  std::vector<std::pair<std::string, std::string>> input_paths;
  std::vector<std::pair<std::string, std::string>> output_paths;
  // The directory of this attempt: output parameter files and output_metadata.json.
  std::string work_dir;
  std::string fingerprint;  // empty: never cached
  bool read_cache = false;
  bool write_cache = false;
  // Deterministic per (run, task, attempt): the submit path's client id, so a launch repeated
  // after a restart finds the job submitted before it.
  std::string client_id;
};

// What the engine must do after a call into the driver, in this order: launch the steps,
// cancel the jobs, then publish the task snapshots and the run update.
struct DriverOutput {
  std::vector<StepLaunch> launches;
  std::vector<std::string> cancel_job_ids;
  std::vector<regatta::v1::PipelineTask> task_updates;
  std::optional<regatta::v1::PipelineRunUpdated> run_update;
  // A cache entry to publish (a step that succeeded and writes the cache).
  std::vector<regatta::v1::CacheEntry> cache_entries;
  bool empty() const {
    return launches.empty() && cancel_job_ids.empty() && task_updates.empty() && !run_update &&
           cache_entries.empty();
  }
};

struct DriverOptions {
  // Local directory under which each job of a task gets a work directory:
  // <work_root>/<run id>/<task path>.job-<n>.
  std::string work_root;
  // How long cache entries written by this run live; zero: forever.
  absl::Duration cache_ttl = absl::ZeroDuration();
  StepRunner step_runner = StepRunner::kHost;
  // Where the artifacts of bucket uris (gs://, minio://, s3://) are on this machine
  // (placeholders::HostPathForUri).
  std::string buckets_dir = "/";
};

// Drives one pipeline run: walks the root DAG and its sub-DAGs in dependency order, resolves
// task inputs, evaluates trigger conditions, expands ParallelFor loops within their parallelism
// limit and collects their outputs, runs exit handlers, applies retry policies, and decides the
// run's state. Pure apart from reading the files a finished step wrote: no threads, no clock
// (times are arguments), ids from the injected generator; the engine does the I/O.
//
// State lives in the run's tasks (PipelineTask snapshots); a driver created from a run read back
// from the views after a restart continues where the run was.
class RunDriver {
 public:
  // `run` must carry spec_json and its tasks (none for a new run). INVALID_ARGUMENT if the spec
  // does not parse or validate.
  static absl::StatusOr<std::unique_ptr<RunDriver>> Create(regatta::v1::PipelineRun run,
                                                           IdGenerator* ids, DriverOptions options);

  ~RunDriver();
  RunDriver(const RunDriver&) = delete;
  RunDriver& operator=(const RunDriver&) = delete;

  // Moves the run on as far as it can at `now`.
  DriverOutput Advance(absl::Time now);

  // Outcomes of launches.
  void OnCacheHit(absl::string_view task_path, const regatta::v1::CacheEntry& entry,
                  absl::Time now);
  void OnJobSubmitted(absl::string_view task_path, int attempt, absl::string_view job_id,
                      absl::Time now);
  void OnLaunchFailed(absl::string_view task_path, absl::string_view message, absl::Time now);
  // A step's job ended. On success the outputs are read from the attempt's work directory and
  // artifact paths; a missing output fails the task. Ignored unless `job_id` is the task's
  // current job.
  void OnJobEnded(absl::string_view job_id, bool succeeded, absl::string_view error,
                  absl::Time now);

  // Terminate: CANCELING, the running steps' jobs are cancelled, nothing new starts.
  void Terminate(absl::Time now);
  // Retry a FAILED or CANCELED run: its failed, cancelled and skipped tasks run again.
  // FAILED_PRECONDITION in any other state.
  absl::Status Retry(absl::Time now);

  // The earliest time Advance has something to do without an outcome (a retry's backoff).
  std::optional<absl::Time> NextWakeTime() const;
  bool Terminal() const;
  const regatta::v1::PipelineRun& run() const { return run_; }
  // The job each running step waits for: job id -> task path.
  const absl::flat_hash_map<std::string, std::string>& running_jobs() const {
    return running_jobs_;
  }

 private:
  struct Task;
  struct Scope;

  RunDriver(regatta::v1::PipelineRun run, ir::PipelineSpec spec, IdGenerator* ids,
            DriverOptions options);
  absl::Status Restore();

  void AdvanceScope(const Scope& scope, absl::Time now, DriverOutput& out);
  // Creates (or re-evaluates) the task `name` of `scope` once its upstream tasks have ended.
  void StartTask(const Scope& scope, const ir::TaskSpec& spec, absl::Time now, DriverOutput& out);
  // Makes the DAG instance a DAG task or an iteration runs, from its resolved inputs.
  void OpenScope(Task& task);
  // A loop's items, from its spec and resolved inputs.
  absl::Status LoadLoopItems(Task& task);
  void AdvanceDag(Task& task, absl::Time now, DriverOutput& out);
  void AdvanceLoop(Task& task, absl::Time now, DriverOutput& out);
  void LaunchContainer(Task& task, absl::Time now, DriverOutput& out);
  void RunImporter(Task& task, const ir::ImporterSpec& importer, absl::Time now);
  void ReadOutputs(Task& task, absl::Time now);
  // The directory of the task's `job_number`th job (1-based).
  // An artifact's (path on this machine, path the step sees it at); none without a local path.
  std::optional<std::pair<std::string, std::string>> ArtifactPaths(const std::string& uri) const;
  std::string WorkDir(const regatta::v1::PipelineTask& task, int job_number) const;
  void FinishRun(absl::Time now, DriverOutput& out);

  // The inputs of `spec` in `scope`: parameters and artifacts. An error names the input.
  absl::Status ResolveInputs(const Scope& scope, const ir::TaskSpec& spec,
                             const ir::ComponentSpec& component, regatta::v1::PipelineTask& task);
  absl::StatusOr<nlohmann::json> ResolveParameter(const Scope& scope,
                                                  const ir::TaskInputParameter& input,
                                                  absl::string_view name);
  // A DAG's outputs from its subtasks in `scope`.
  void CollectDagOutputs(const Scope& scope, const ir::DagSpec& dag,
                         regatta::v1::PipelineTask& task);
  nlohmann::json FinalStatusOf(const Task& producer) const;

  Task* Find(absl::string_view path);
  const Task* Find(absl::string_view path) const;
  Task& Create(std::string path, regatta::v1::PipelineTask proto);
  void SetState(Task& task, regatta::v1::PipelineTaskState state, absl::Time now,
                absl::string_view error = "");
  void MarkDirty(Task& task);
  const std::vector<std::string>& OrderOf(const ir::DagSpec& dag);
  const cel::CompiledCondition* ConditionOf(const ir::TaskSpec& spec, std::string* error);
  std::map<std::string, std::string> PipelineValues(const Task& task) const;

  regatta::v1::PipelineRun run_;
  const ir::PipelineSpec spec_;
  IdGenerator* const ids_;
  const DriverOptions options_;

  std::unique_ptr<Scope> root_;  // the root DAG's instance, made on the first Advance
  // Tasks by path, and their creation order (the order snapshots are published in).
  absl::flat_hash_map<std::string, std::unique_ptr<Task>> tasks_;
  std::vector<Task*> created_order_;
  std::vector<Task*> dirty_;
  absl::flat_hash_map<std::string, std::string> running_jobs_;
  absl::flat_hash_map<const ir::DagSpec*, std::vector<std::string>> orders_;
  absl::flat_hash_map<const ir::TaskSpec*, std::optional<cel::CompiledCondition>> conditions_;
  // The run's platform spec, by executor label.
  std::map<std::string, ir::KubernetesExecutorConfig> platform_;
  // Decided between two Advance calls (Terminate, OnJobEnded), handed out by the next one.
  std::vector<std::string> pending_cancels_;
  std::vector<regatta::v1::CacheEntry> pending_cache_entries_;
  bool run_dirty_ = false;
};

// The path of task `name` in the DAG instance at `scope_path` ("" for the root DAG).
std::string TaskPath(absl::string_view scope_path, absl::string_view name);
// The path of iteration `index` of the loop task at `loop_path`: "<loop_path>[<index>]".
std::string IterationPath(absl::string_view loop_path, int index);
bool IsTerminal(regatta::v1::PipelineTaskState state);
bool IsTerminal(regatta::v1::PipelineRunState state);
// "SUCCEEDED" for PIPELINE_TASK_STATE_SUCCEEDED, and so on.
absl::string_view TaskStateName(regatta::v1::PipelineTaskState state);
absl::string_view RunStateName(regatta::v1::PipelineRunState state);

}  // namespace regatta::pipelines::engine

#endif  // REGATTA_SRC_PIPELINES_ENGINE_RUN_DRIVER_H_
