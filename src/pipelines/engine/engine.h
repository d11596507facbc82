#ifndef REGATTA_SRC_PIPELINES_ENGINE_ENGINE_H_
#define REGATTA_SRC_PIPELINES_ENGINE_ENGINE_H_

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "regatta/v1/events.pb.h"
#include "regatta/v1/pipelines.pb.h"
#include "regatta/v1/submit_service.pb.h"
#include "src/common/clock.h"
#include "src/common/ids.h"
#include "src/pipelines/engine/run_driver.h"

namespace regatta::pipelines::engine {

// Labels and annotations of step jobs.
inline constexpr char kRunLabel[] = "regatta.io/pipeline-run";
inline constexpr char kTaskAnnotation[] = "regatta.io/pipeline-task";
// The component's image. Steps run as host processes for now (as kfp.local's SubprocessRunner
// runs them): their work directories and artifact paths are the host's, which a container
// would not see until the executor mounts them (docs/pipelines.md, "Where steps run").
inline constexpr char kImageAnnotation[] = "regatta.io/step-image";
// The job set of a run's step jobs (and of its run and task events).
std::string RunJobSet(absl::string_view run_id);

struct JobOutcome {
  bool succeeded = false;
  std::string error;  // why it did not succeed
};

// What the engine needs from the rest of the server: the log, the submit path and the views.
// The server implements it over EventLog, SubmitService and Store; tests with fakes.
class EngineBackend {
 public:
  virtual ~EngineBackend() = default;
  // Appends durably.
  virtual absl::Status Publish(std::vector<regatta::v1::EventSequence> sequences) = 0;
  // The submit path (validation, dedup by client id) on behalf of `owner`; `progress` is
  // appended with the jobs, atomically (not at all if the submit fails).
  virtual absl::StatusOr<regatta::v1::SubmitJobsResponse> Submit(
      absl::string_view owner, const regatta::v1::SubmitJobsRequest& request,
      std::vector<regatta::v1::EventSequence> progress) = 0;
  virtual absl::Status Cancel(absl::string_view owner,
                              const regatta::v1::CancelJobsRequest& request) = 0;
  // A run with spec and tasks, as the views hold it once they include the log so far.
  virtual absl::StatusOr<regatta::v1::PipelineRun> GetRun(absl::string_view run_id) = 0;
  virtual absl::StatusOr<std::vector<regatta::v1::PipelineRun>> ActiveRuns() = 0;
  virtual absl::StatusOr<absl::flat_hash_map<std::string, regatta::v1::CacheEntry>> LookupCache(
      const std::vector<std::string>& fingerprints, absl::Time now) = 0;
  // The data of Secret `name`, opened, for a step of a run of `owner` (secretAsEnv of the
  // kfp-kubernetes platform spec). NOT_FOUND if there is none; PERMISSION_DENIED unless the
  // owner may change Secrets (reading one into a step discloses it to the step).
  virtual absl::StatusOr<std::map<std::string, std::string>> SecretData(absl::string_view owner,
                                                                        absl::string_view run_id,
                                                                        absl::string_view name) = 0;
  // The data of ConfigMap `name` (configMapAsEnv). NOT_FOUND if there is none.
  virtual absl::StatusOr<std::map<std::string, std::string>> ConfigMapData(
      absl::string_view name) = 0;
  // Outcomes of the jobs among `job_ids` that have ended.
  virtual absl::StatusOr<absl::flat_hash_map<std::string, JobOutcome>> EndedJobs(
      const std::vector<std::string>& job_ids) = 0;
};

struct EngineOptions {
  // Work directories of step jobs: <work_root>/<run>/<task>/job-<n>.
  std::string work_root;
  absl::Duration cache_ttl = absl::ZeroDuration();
  // Resources of a step that names none.
  std::string default_cpu = "100m";
  std::string default_memory = "128Mi";
  std::string user_id = "pipeline-engine";
  StepRunner step_runner = StepRunner::kHost;
  // Where the artifacts of bucket uris are on this machine (placeholders::HostPathForUri).
  std::string buckets_dir = "/";
  // How often the loop looks at the clock when nothing happens (retry backoffs on a fake clock).
  absl::Duration idle_poll = absl::Milliseconds(200);
  // How long the snapshots of just-submitted tasks may wait to ride on the run's next append
  // (real time); see PipelineEngine.
  absl::Duration progress_hold = absl::Milliseconds(20);
};

// Runs pipeline runs: one RunDriver per active run, fed with job outcomes (from the ingested
// views, through ObserveJob*) and commands (start, terminate, retry). On one thread: every
// driver call, launch and publish happens there, so runs need no locks of their own.
// For each run it submits the steps a driver launches (one request per round), cancels jobs,
// checks and writes the cache, and publishes the task and run changes. Changes made before a
// submit ride on it (the same atomic append); the snapshots of the tasks it submitted wait up
// to `progress_hold` for the run's next append (in a chain: the next step's submit), so a step
// costs one append, not two. Losing them loses nothing: a restart that repeats a launch finds
// the job by its client id.
class PipelineEngine {
 public:
  PipelineEngine(EngineBackend* backend, const Clock* clock, IdGenerator* ids,
                 EngineOptions options);
  ~PipelineEngine();  // Stops.
  PipelineEngine(const PipelineEngine&) = delete;
  PipelineEngine& operator=(const PipelineEngine&) = delete;

  // Resumes every active run (the views must include the log so far), then starts the thread.
  absl::Status Start();
  void Stop();

  // Commands (answered once the engine thread has handled them).
  // Starts driving a created run (PENDING in the views); a run already driven or ended is
  // left alone, so a second start (a racing controller) is harmless.
  absl::Status StartRun(absl::string_view run_id);
  // NOT_FOUND for a run that is not active.
  absl::Status TerminateRun(absl::string_view run_id);
  // FAILED_PRECONDITION unless the run is FAILED or CANCELED.
  absl::Status RetryRun(absl::string_view run_id);

  // Called by the views' ingester after each applied batch (any thread; cheap).
  void ObserveJobInserted(const regatta::v1::Job& job);
  void ObserveJobEnded(absl::string_view job_id, bool succeeded, absl::string_view error);
  // A run of a job was leased, and a run succeeded: a step whose process exited 0 is done
  // without waiting for the scheduler to record the job's success (one round trip less per
  // step on the critical path of a chain).
  void ObserveRunLeased(absl::string_view run_id, absl::string_view job_id);
  void ObserveRunSucceeded(absl::string_view run_id);

  // Runs being driven now.
  int ActiveRunCount() const;

  // Called on the engine thread after a run ended and its last state was published (the
  // recurring-run controller wakes to fill the freed slot). Set before Start.
  void set_on_run_ended(std::function<void(const regatta::v1::PipelineRun&)> callback) {
    on_run_ended_ = std::move(callback);
  }

 private:
  struct Command {
    enum class Kind { kStart, kTerminate, kRetry, kJobEnded };
    Kind kind;
    std::string run_id;
    std::string job_id;
    JobOutcome outcome;
    // Set for commands someone waits for.
    absl::Status* result = nullptr;
    bool* done = nullptr;
  };

  absl::Status Submit(Command command);
  void Loop();
  void Handle(Command& command);
  absl::Status Resume(regatta::v1::PipelineRun run);
  absl::Status Load(absl::string_view run_id, bool for_retry);
  // Task and run changes not yet published, latest snapshot per task in first-seen order.
  struct Progress {
    std::vector<std::string> order;
    absl::flat_hash_map<std::string, regatta::v1::PipelineTask> latest;
    std::optional<regatta::v1::PipelineRunUpdated> run_update;
    std::vector<regatta::v1::CacheEntry> cache_entries;

    bool empty() const { return order.empty() && !run_update && cache_entries.empty(); }
    void AddTask(regatta::v1::PipelineTask task);
  };
  struct HeldProgress {
    Progress progress;
    absl::Time publish_by;  // real time
  };

  // Advances the run and carries out what the driver asks for until it waits for outcomes.
  void Process(RunDriver& driver);
  // Starts the launches: cached ones from the cache, the others as jobs, submitted in chunks so
  // the first steps run while the engine prepares the next ones' directories. The first submit
  // takes `progress` along (left empty if it did).
  bool Launch(RunDriver& driver, std::vector<StepLaunch>& launches, absl::Time now,
              Progress& progress);
  // Submits one chunk of step jobs (`submitted[i]` made `request.items(i)`) with `progress`,
  // and records them; on failure `progress` is left for the caller to publish.
  bool SubmitSteps(RunDriver& driver, const regatta::v1::SubmitJobsRequest& request,
                   const std::vector<const StepLaunch*>& submitted, absl::Time now,
                   Progress& progress);
  // The run's progress as one sequence (none if empty); `progress` is emptied.
  std::vector<regatta::v1::EventSequence> TakeSequences(const regatta::v1::PipelineRun& run,
                                                        Progress& progress) const;
  void PublishProgress(const regatta::v1::PipelineRun& run, Progress& progress);
  // Publishes held progress that is due (all of it if `all`); returns when the next is due.
  absl::Time PublishHeldProgress(bool all);
  // The step's job; an error (a Secret or ConfigMap of its platform config that is missing)
  // fails the launch.
  absl::StatusOr<regatta::v1::JobSubmitRequestItem> StepJob(const RunDriver& driver,
                                                            const StepLaunch& launch) const;
  // The kfp-kubernetes platform config onto the step's job.
  // Moves the step's flat task into a one-container pod spec with its directories mounted.
  void InPod(const StepLaunch& launch, regatta::v1::TaskSpec& task) const;
  absl::Status ApplyPlatform(const regatta::v1::PipelineRun& run,
                             const ir::KubernetesExecutorConfig& config,
                             regatta::v1::JobSubmitRequestItem& item) const;
  void Track(const std::string& job_id, const std::string& run_id);

  EngineBackend* const backend_;
  const Clock* const clock_;
  IdGenerator* const ids_;
  const EngineOptions options_;

  std::function<void(const regatta::v1::PipelineRun&)> on_run_ended_;
  // Engine thread only.
  absl::flat_hash_map<std::string, std::unique_ptr<RunDriver>> drivers_;
  // Run id -> snapshots of its just-submitted tasks, waiting for the run's next append.
  absl::flat_hash_map<std::string, HeldProgress> held_progress_;

  mutable absl::Mutex mu_;
  absl::CondVar wake_;
  std::deque<Command> commands_ ABSL_GUARDED_BY(mu_);
  // Step jobs whose end is awaited: job id -> run id.
  absl::flat_hash_map<std::string, std::string> tracked_jobs_ ABSL_GUARDED_BY(mu_);
  // Runs of tracked jobs: run id -> job id.
  absl::flat_hash_map<std::string, std::string> tracked_runs_ ABSL_GUARDED_BY(mu_);
  int active_runs_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace regatta::pipelines::engine

#endif  // REGATTA_SRC_PIPELINES_ENGINE_ENGINE_H_
