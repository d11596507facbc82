#include "src/pipelines/engine/engine.h"

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <system_error>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "google/protobuf/util/time_util.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/common/thread_name.h"
#include "src/pipelines/placeholders/placeholders.h"

namespace regatta::pipelines::engine {

namespace pb = regatta::v1;

namespace {

google::protobuf::Timestamp ToTimestamp(absl::Time time) {
  return google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(time));
}

// A quantity in Kubernetes notation from the IR's numbers (cores; memory in GB as the SDK
// writes it) or its strings.
std::string CpuOf(const ir::ResourceSpec& r, const std::string& fallback) {
  if (!r.resource_cpu_request.empty()) return r.resource_cpu_request;
  if (!r.resource_cpu_limit.empty()) return r.resource_cpu_limit;
  double cores = r.cpu_request > 0 ? r.cpu_request : r.cpu_limit;
  if (cores > 0) return absl::StrCat(static_cast<int64_t>(cores * 1000 + 0.5), "m");
  return fallback;
}

std::string MemoryOf(const ir::ResourceSpec& r, const std::string& fallback) {
  if (!r.resource_memory_request.empty()) return r.resource_memory_request;
  if (!r.resource_memory_limit.empty()) return r.resource_memory_limit;
  double gb = r.memory_request > 0 ? r.memory_request : r.memory_limit;
  if (gb > 0) return absl::StrCat(static_cast<int64_t>(gb * 1000 + 0.5), "M");
  return fallback;
}

}  // namespace

std::string RunJobSet(absl::string_view run_id) { return absl::StrCat("pipeline-run-", run_id); }

PipelineEngine::PipelineEngine(EngineBackend* backend, const Clock* clock, IdGenerator* ids,
                               EngineOptions options)
    : backend_(backend), clock_(clock), ids_(ids), options_(std::move(options)) {}

PipelineEngine::~PipelineEngine() { Stop(); }

absl::Status PipelineEngine::Start() {
  {
    absl::MutexLock lock(&mu_);
    if (started_) return absl::FailedPreconditionError("the pipeline engine started already");
    started_ = true;
  }
  ASSIGN_OR_RETURN(std::vector<pb::PipelineRun> runs, backend_->ActiveRuns());
  for (pb::PipelineRun& run : runs) {
    const std::string id = run.id();
    if (absl::Status resumed = Resume(std::move(run)); !resumed.ok()) {
      LOG_ERROR("cannot resume a pipeline run", "run", id, "error", resumed.ToString());
    }
  }
  // Jobs that ended while the engine was down.
  std::vector<std::string> running;
  for (const auto& [id, driver] : drivers_) {
    for (const auto& [job, path] : driver->running_jobs()) running.push_back(job);
  }
  if (!running.empty()) {
    ASSIGN_OR_RETURN(auto ended, backend_->EndedJobs(running));
    for (auto& [job, outcome] : ended) ObserveJobEnded(job, outcome.succeeded, outcome.error);
  }
  for (auto& [id, driver] : drivers_) Process(*driver);
  thread_ = std::thread([this] {
    SetThreadName("rg-engine");
    Loop();
  });
  return absl::OkStatus();
}

void PipelineEngine::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    wake_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
  absl::MutexLock lock(&mu_);
  for (Command& c : commands_) {
    if (c.result != nullptr) {
      *c.result = absl::UnavailableError("the pipeline engine stopped");
      *c.done = true;
    }
  }
  commands_.clear();
}

absl::Status PipelineEngine::Resume(pb::PipelineRun run) {
  const std::string id = run.id();
  DriverOptions options;
  options.work_root = options_.work_root;
  options.cache_ttl = options_.cache_ttl;
  options.step_runner = options_.step_runner;
  options.buckets_dir = options_.buckets_dir;
  ASSIGN_OR_RETURN(std::unique_ptr<RunDriver> driver,
                   RunDriver::Create(std::move(run), ids_, std::move(options)));
  {
    absl::MutexLock lock(&mu_);
    for (const auto& [job, path] : driver->running_jobs()) tracked_jobs_[job] = id;
    active_runs_++;
  }
  drivers_[id] = std::move(driver);
  return absl::OkStatus();
}

absl::Status PipelineEngine::Submit(Command command) {
  absl::Status result;
  bool done = false;
  command.result = &result;
  command.done = &done;
  absl::MutexLock lock(&mu_);
  if (stopping_ || !started_) return absl::UnavailableError("the pipeline engine is not running");
  commands_.push_back(std::move(command));
  wake_.Signal();
  while (!done) wake_.Wait(&mu_);
  return result;
}

absl::Status PipelineEngine::StartRun(absl::string_view run_id) {
  return Submit({Command::Kind::kStart, std::string(run_id)});
}

absl::Status PipelineEngine::TerminateRun(absl::string_view run_id) {
  return Submit({Command::Kind::kTerminate, std::string(run_id)});
}

absl::Status PipelineEngine::RetryRun(absl::string_view run_id) {
  return Submit({Command::Kind::kRetry, std::string(run_id)});
}

void PipelineEngine::ObserveJobInserted(const pb::Job& job) {
  auto it = job.labels().find(kRunLabel);
  if (it == job.labels().end()) return;
  absl::MutexLock lock(&mu_);
  tracked_jobs_[job.id()] = it->second;
}

void PipelineEngine::ObserveJobEnded(absl::string_view job_id, bool succeeded,
                                     absl::string_view error) {
  absl::MutexLock lock(&mu_);
  auto it = tracked_jobs_.find(job_id);
  if (it == tracked_jobs_.end()) return;
  Command command{Command::Kind::kJobEnded, it->second, std::string(job_id),
                  JobOutcome{succeeded, std::string(error)}};
  tracked_jobs_.erase(it);
  commands_.push_back(std::move(command));
  // Runs of jobs that ended another way (failed, cancelled) are forgotten here.
  if (tracked_runs_.size() > 4 * tracked_jobs_.size() + 1024) {
    for (auto run = tracked_runs_.begin(); run != tracked_runs_.end();) {
      auto here = run++;
      if (!tracked_jobs_.contains(here->second)) tracked_runs_.erase(here);
    }
  }
  wake_.Signal();
}

void PipelineEngine::ObserveRunLeased(absl::string_view run_id, absl::string_view job_id) {
  absl::MutexLock lock(&mu_);
  if (tracked_jobs_.contains(job_id)) tracked_runs_[run_id] = std::string(job_id);
}

void PipelineEngine::ObserveRunSucceeded(absl::string_view run_id) {
  std::string job_id;
  {
    absl::MutexLock lock(&mu_);
    auto it = tracked_runs_.find(run_id);
    if (it == tracked_runs_.end()) return;
    job_id = std::move(it->second);
    tracked_runs_.erase(it);
  }
  ObserveJobEnded(job_id, /*succeeded=*/true, "");
}

int PipelineEngine::ActiveRunCount() const {
  absl::MutexLock lock(&mu_);
  return active_runs_;
}

void PipelineEngine::Loop() {
  absl::Time next_held = absl::InfiniteFuture();
  while (true) {
    std::deque<Command> batch;
    bool stopping;
    {
      absl::MutexLock lock(&mu_);
      if (commands_.empty() && !stopping_) {
        wake_.WaitWithTimeout(&mu_, std::min(options_.idle_poll, next_held - absl::Now()));
      }
      stopping = stopping_;
      if (!stopping) batch.swap(commands_);  // Stop answers what is left
    }
    if (stopping) {
      PublishHeldProgress(/*all=*/true);
      return;
    }
    // Outcomes first, then one Process per touched run: a burst of job ends costs one round.
    absl::flat_hash_map<std::string, RunDriver*> touched;
    for (Command& command : batch) {
      Handle(command);
      auto it = drivers_.find(command.run_id);
      if (it != drivers_.end()) touched[command.run_id] = it->second.get();
    }
    // Retry backoffs that came due.
    const absl::Time now = clock_->Now();
    for (auto& [id, driver] : drivers_) {
      std::optional<absl::Time> wake = driver->NextWakeTime();
      if (wake && *wake <= now) touched[id] = driver.get();
    }
    for (auto& [id, driver] : touched) Process(*driver);
    // Forget runs that ended.
    std::vector<std::string> ended;
    for (auto& [id, driver] : drivers_) {
      if (driver->Terminal()) ended.push_back(id);
    }
    if (!ended.empty()) {
      for (const std::string& id : ended) {
        if (on_run_ended_) on_run_ended_(drivers_.at(id)->run());
        drivers_.erase(id);
      }
      absl::MutexLock lock(&mu_);
      active_runs_ -= static_cast<int>(ended.size());
    }
    next_held = held_progress_.empty() ? absl::InfiniteFuture() : PublishHeldProgress(false);
    absl::MutexLock lock(&mu_);
    for (Command& command : batch) {
      if (command.done != nullptr) *command.done = true;
    }
    wake_.SignalAll();
  }
}

void PipelineEngine::Handle(Command& command) {
  absl::Status status;
  const absl::Time now = clock_->Now();
  auto it = drivers_.find(command.run_id);
  switch (command.kind) {
    case Command::Kind::kJobEnded:
      if (it != drivers_.end()) {
        it->second->OnJobEnded(command.job_id, command.outcome.succeeded, command.outcome.error,
                               now);
      }
      break;
    case Command::Kind::kStart:
      if (it == drivers_.end()) status = Load(command.run_id, /*for_retry=*/false);
      break;
    case Command::Kind::kTerminate:
      if (it == drivers_.end()) {
        status =
            absl::NotFoundError(absl::StrCat("pipeline run ", command.run_id, " is not active"));
      } else {
        it->second->Terminate(now);
      }
      break;
    case Command::Kind::kRetry:
      if (it != drivers_.end()) {
        status = it->second->Retry(now);
      } else {
        status = Load(command.run_id, /*for_retry=*/true);
      }
      break;
  }
  if (command.result != nullptr) *command.result = status;
}

absl::Status PipelineEngine::Load(absl::string_view run_id, bool for_retry) {
  ASSIGN_OR_RETURN(pb::PipelineRun run, backend_->GetRun(run_id));
  if (!for_retry && run.state() != pb::PIPELINE_RUN_STATE_PENDING &&
      run.state() != pb::PIPELINE_RUN_STATE_RUNNING) {
    return absl::OkStatus();  // ended already: a repeated start changes nothing
  }
  if (for_retry && run.state() != pb::PIPELINE_RUN_STATE_FAILED &&
      run.state() != pb::PIPELINE_RUN_STATE_CANCELED) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", run_id, " is ", RunStateName(run.state()),
                     "; only FAILED or CANCELED runs can be retried"));
  }
  std::string id = run.id();
  RETURN_IF_ERROR(Resume(std::move(run)));
  if (for_retry) return drivers_.at(id)->Retry(clock_->Now());
  return absl::OkStatus();
}

void PipelineEngine::Progress::AddTask(pb::PipelineTask task) {
  auto [it, inserted] = latest.try_emplace(task.path());
  if (inserted) order.push_back(task.path());
  it->second = std::move(task);
}

void PipelineEngine::Process(RunDriver& driver) {
  // Snapshots held from the run's last round go first, so every task's latest one wins.
  Progress progress;
  std::optional<absl::Time> held_until;
  if (auto held = held_progress_.find(driver.run().id()); held != held_progress_.end()) {
    progress = std::move(held->second.progress);
    held_until = held->second.publish_by;
    held_progress_.erase(held);
  }
  std::vector<std::string> cancels;
  bool submitted = false;
  bool changed = false;
  for (int round = 0; round < 1000; ++round) {
    const absl::Time now = clock_->Now();
    DriverOutput out = driver.Advance(now);
    changed = changed || !out.task_updates.empty() || out.run_update ||
              !out.cache_entries.empty() || !out.cancel_job_ids.empty() || !out.launches.empty();
    for (pb::PipelineTask& task : out.task_updates) progress.AddTask(std::move(task));
    if (out.run_update) progress.run_update = std::move(out.run_update);
    for (auto& entry : out.cache_entries) progress.cache_entries.push_back(std::move(entry));
    for (auto& job : out.cancel_job_ids) cancels.push_back(std::move(job));
    if (out.launches.empty()) break;
    submitted = Launch(driver, out.launches, now, progress) || submitted;
  }
  const pb::PipelineRun& run = driver.run();
  if (!cancels.empty()) {
    pb::CancelJobsRequest request;
    request.set_queue(run.queue());
    request.set_job_set(RunJobSet(run.id()));
    for (std::string& job : cancels) request.add_job_ids(std::move(job));
    request.set_reason("the pipeline run was terminated");
    if (absl::Status cancelled = backend_->Cancel(run.owner(), request); !cancelled.ok()) {
      LOG_WARN("cannot cancel pipeline steps", "run", run.id(), "error", cancelled.ToString());
    }
  }
  if (progress.empty()) return;
  if (held_until && !changed) {
    // Woken by an outcome that changed nothing (a step's job started running): the held
    // snapshots keep waiting for the run's next real append.
    held_progress_[run.id()] = HeldProgress{std::move(progress), *held_until};
    return;
  }
  // Only snapshots of tasks whose jobs now run: they can wait for the run's next append.
  if (submitted && !progress.run_update && progress.cache_entries.empty() && !driver.Terminal() &&
      options_.progress_hold > absl::ZeroDuration()) {
    held_progress_[run.id()] =
        HeldProgress{std::move(progress), absl::Now() + options_.progress_hold};
    return;
  }
  PublishProgress(run, progress);
}

std::vector<pb::EventSequence> PipelineEngine::TakeSequences(const pb::PipelineRun& run,
                                                             Progress& progress) const {
  std::vector<pb::EventSequence> sequences;
  if (progress.empty()) return sequences;
  pb::EventSequence& sequence = sequences.emplace_back();
  sequence.set_queue(run.queue());
  sequence.set_job_set(RunJobSet(run.id()));
  sequence.set_user_id(options_.user_id);
  const google::protobuf::Timestamp created = ToTimestamp(clock_->Now());
  for (const std::string& path : progress.order) {
    pb::Event* event = sequence.add_events();
    *event->mutable_created() = created;
    event->mutable_pipeline_task_updated()->set_run_id(run.id());
    *event->mutable_pipeline_task_updated()->mutable_task() = std::move(progress.latest[path]);
  }
  for (pb::CacheEntry& entry : progress.cache_entries) {
    pb::Event* event = sequence.add_events();
    *event->mutable_created() = created;
    *event->mutable_cache_entry_created()->mutable_entry() = std::move(entry);
  }
  if (progress.run_update) {
    pb::Event* event = sequence.add_events();
    *event->mutable_created() = created;
    *event->mutable_pipeline_run_updated() = std::move(*progress.run_update);
  }
  progress = Progress();
  return sequences;
}

void PipelineEngine::PublishProgress(const pb::PipelineRun& run, Progress& progress) {
  std::vector<pb::EventSequence> sequences = TakeSequences(run, progress);
  if (sequences.empty()) return;
  // A failed publish loses nothing the views need to resume: the steps were submitted with
  // deterministic client ids, so the next start finds them again.
  if (absl::Status published = backend_->Publish(std::move(sequences)); !published.ok()) {
    LOG_ERROR("cannot publish pipeline progress", "run", run.id(), "error", published.ToString());
  }
}

absl::Time PipelineEngine::PublishHeldProgress(bool all) {
  const absl::Time now = absl::Now();
  absl::Time next = absl::InfiniteFuture();
  for (auto it = held_progress_.begin(); it != held_progress_.end();) {
    auto here = it++;
    auto driver = drivers_.find(here->first);
    if (!all && here->second.publish_by > now && driver != drivers_.end()) {
      next = std::min(next, here->second.publish_by);
      continue;
    }
    if (driver != drivers_.end()) PublishProgress(driver->second->run(), here->second.progress);
    held_progress_.erase(here);
  }
  return next;
}

bool PipelineEngine::Launch(RunDriver& driver, std::vector<StepLaunch>& launches, absl::Time now,
                            Progress& progress) {
  const pb::PipelineRun& run = driver.run();
  // Cache hits first: one lookup for the round.
  std::vector<std::string> fingerprints;
  for (const StepLaunch& launch : launches) {
    if (launch.read_cache) fingerprints.push_back(launch.fingerprint);
  }
  absl::flat_hash_map<std::string, pb::CacheEntry> hits;
  if (!fingerprints.empty()) {
    absl::StatusOr<absl::flat_hash_map<std::string, pb::CacheEntry>> found =
        backend_->LookupCache(fingerprints, now);
    if (found.ok()) {
      hits = *std::move(found);
    } else {
      LOG_WARN("cache lookup failed; running the steps", "run", run.id(), "error",
               found.status().ToString());
    }
  }
  pb::SubmitJobsRequest request;
  request.set_queue(run.queue());
  request.set_job_set(RunJobSet(run.id()));
  std::vector<const StepLaunch*> submitted;
  // A chunk is one append and one scheduling cycle; 1000 steps in one would wait for all of
  // their directories (~0.1-0.6 s) before the first could start. At most the submit API's
  // SubmitService::kMaxJobsHandedOver, so each chunk reaches the scheduler in process.
  constexpr int kStepsPerSubmit = 64;
  bool any = false;
  for (const StepLaunch& launch : launches) {
    if (request.items_size() == kStepsPerSubmit) {
      any = SubmitSteps(driver, request, submitted, now, progress) || any;
      request.clear_items();
      submitted.clear();
    }
    if (launch.read_cache) {
      auto hit = hits.find(launch.fingerprint);
      if (hit != hits.end()) {
        // A deleted artifact makes the entry a miss.
        bool complete = true;
        for (const auto& [name, list] : hit->second.output_artifacts()) {
          for (const pb::PipelineArtifact& a : list.artifacts()) {
            absl::StatusOr<std::string> path =
                placeholders::HostPathForUri(a.uri(), options_.buckets_dir);
            std::error_code ec;
            if ((!path.ok() || !std::filesystem::exists(*path, ec)) &&
                !IsMetricsSchema(a.schema_title())) {
              complete = false;
            }
          }
        }
        if (complete) {
          driver.OnCacheHit(launch.task_path, hit->second, now);
          continue;
        }
      }
    }
    // The step writes its outputs into directories that must exist. Usually the run's
    // directory does, and two mkdirs make the rest (create_directories stats every level).
    std::error_code ec;
    const std::string outputs = launch.work_dir + "/outputs";
    if (::mkdir(launch.work_dir.c_str(), 0755) != 0 || ::mkdir(outputs.c_str(), 0755) != 0) {
      std::filesystem::create_directories(outputs, ec);
    }
    for (const auto& [host_path, step_path] : launch.output_paths) {
      std::filesystem::create_directories(std::filesystem::path(host_path).parent_path(), ec);
    }
    if (ec) {
      driver.OnLaunchFailed(launch.task_path,
                            absl::StrCat("cannot create the step's directories: ", ec.message()),
                            now);
      continue;
    }
    absl::StatusOr<pb::JobSubmitRequestItem> item = StepJob(driver, launch);
    if (!item.ok()) {
      driver.OnLaunchFailed(launch.task_path, item.status().message(), now);
      continue;
    }
    *request.add_items() = *std::move(item);
    submitted.push_back(&launch);
  }
  if (!submitted.empty()) any = SubmitSteps(driver, request, submitted, now, progress) || any;
  return any;
}

bool PipelineEngine::SubmitSteps(RunDriver& driver, const pb::SubmitJobsRequest& request,
                                 const std::vector<const StepLaunch*>& submitted, absl::Time now,
                                 Progress& progress) {
  const pb::PipelineRun& run = driver.run();
  // Copied, not taken: a failed submit leaves the progress to be published on its own.
  std::vector<pb::EventSequence> along;
  if (!progress.empty()) {
    Progress copy = progress;
    along = TakeSequences(run, copy);
  }
  absl::StatusOr<pb::SubmitJobsResponse> response =
      backend_->Submit(run.owner(), request, std::move(along));
  if (!response.ok()) {
    for (const StepLaunch* launch : submitted) {
      driver.OnLaunchFailed(launch->task_path,
                            absl::StrCat("cannot submit the step: ", response.status().message()),
                            now);
    }
    return false;
  }
  progress = Progress();
  std::vector<std::string> repeated;
  for (int i = 0; i < response->items_size() && i < static_cast<int>(submitted.size()); ++i) {
    const pb::SubmitJobsResponseItem& item = response->items(i);
    Track(item.job_id(), run.id());
    driver.OnJobSubmitted(submitted[i]->task_path, submitted[i]->attempt, item.job_id(), now);
    if (item.duplicate()) repeated.push_back(item.job_id());
  }
  // A launch repeated after a restart found its job: it may have ended meanwhile.
  if (!repeated.empty()) {
    absl::StatusOr<absl::flat_hash_map<std::string, JobOutcome>> ended =
        backend_->EndedJobs(repeated);
    if (ended.ok()) {
      for (auto& [job, outcome] : *ended) {
        {
          absl::MutexLock lock(&mu_);
          tracked_jobs_.erase(job);
        }
        driver.OnJobEnded(job, outcome.succeeded, outcome.error, now);
      }
    }
  }
  return true;
}

void PipelineEngine::Track(const std::string& job_id, const std::string& run_id) {
  absl::MutexLock lock(&mu_);
  tracked_jobs_[job_id] = run_id;
}

absl::StatusOr<pb::JobSubmitRequestItem> PipelineEngine::StepJob(const RunDriver& driver,
                                                                 const StepLaunch& launch) const {
  const pb::PipelineRun& run = driver.run();
  pb::JobSubmitRequestItem item;
  item.set_client_id(launch.client_id);
  pb::TaskSpec& task = *item.mutable_task();
  if (options_.step_runner == StepRunner::kHost) {
    (*item.mutable_annotations())[kImageAnnotation] = launch.container->image;
    // The job's work directory exists already: the executor need not make one of its own.
    task.set_working_dir(launch.work_dir);
    for (const std::string& arg : launch.command) task.add_command(arg);
    for (const std::string& arg : launch.args) task.add_command(arg);
  } else {
    task.set_image(launch.container->image);
    for (const std::string& arg : launch.command) task.add_command(arg);
    for (const std::string& arg : launch.args) task.add_args(arg);
  }
  for (const ir::EnvVar& env : launch.container->env) {
    (*task.mutable_env())[env.name] = env.value;
  }
  auto& requests = *task.mutable_resources()->mutable_requests();
  requests["cpu"] = CpuOf(launch.resources, options_.default_cpu);
  requests["memory"] = MemoryOf(launch.resources, options_.default_memory);
  if (const auto& accelerator = launch.resources.accelerator; accelerator) {
    const std::string& type =
        accelerator->resource_type.empty() ? accelerator->type : accelerator->resource_type;
    std::string count = accelerator->resource_count;
    if (count.empty() && accelerator->count > 0) count = absl::StrCat(accelerator->count);
    if (!type.empty() && !count.empty()) requests[type] = count;
  }
  if (launch.platform != nullptr) RETURN_IF_ERROR(ApplyPlatform(run, *launch.platform, item));
  if (options_.step_runner == StepRunner::kContainer) InPod(launch, task);
  // Set last: a pod label of the platform spec does not hide the step's run.
  (*item.mutable_labels())[kRunLabel] = run.id();
  (*item.mutable_annotations())[kTaskAnnotation] = launch.task_path;
  return item;
}

void PipelineEngine::InPod(const StepLaunch& launch, pb::TaskSpec& task) const {
  // One container: the flat task, plus the step's directories mounted where its placeholders
  // point (the work directory and output artifacts writable, input artifacts read-only).
  pb::PodSpec pod;
  pb::Container& main = *pod.add_containers();
  main.set_name("main");
  main.set_image(task.image());
  *main.mutable_command() = task.command();
  *main.mutable_args() = task.args();
  main.set_working_dir(launch.work_dir);
  for (const auto& [name, value] : task.env()) {
    pb::EnvVar& env = *main.add_env();
    env.set_name(name);
    env.set_value(value);
  }
  *main.mutable_resources()->mutable_requests() = task.resources().requests();
  std::set<std::string> mounted;
  auto mount = [&](const std::string& host_path, const std::string& step_path, bool read_only) {
    if (!mounted.insert(step_path).second) return;
    pb::Volume& volume = *pod.add_volumes();
    volume.set_name(absl::StrCat("step-", pod.volumes_size()));
    volume.mutable_host_path()->set_path(host_path);
    pb::VolumeMount& m = *main.add_volume_mounts();
    m.set_name(volume.name());
    m.set_mount_path(step_path);
    m.set_read_only(read_only);
  };
  mount(launch.work_dir, launch.work_dir, false);
  // An output artifact's directory (its parent) is the step's to fill.
  for (const auto& [host_path, step_path] : launch.output_paths) {
    mount(std::filesystem::path(host_path).parent_path().string(),
          std::filesystem::path(step_path).parent_path().string(), false);
  }
  for (const auto& [host_path, step_path] : launch.input_paths) {
    std::error_code ec;
    // A path that is not there stays unmounted: the step reports what it misses.
    if (std::filesystem::exists(host_path, ec)) mount(host_path, step_path, true);
  }
  // Scheduling fields (node selector, tolerations, deadline) stay on the task, where a pod spec
  // may leave them; secret_env too: the executor sets it in every container (PodOf).
  task.clear_image();
  task.clear_command();
  task.clear_args();
  task.clear_env();
  task.clear_resources();
  *task.mutable_pod_spec() = std::move(pod);
}

absl::Status PipelineEngine::ApplyPlatform(const pb::PipelineRun& run,
                                           const ir::KubernetesExecutorConfig& config,
                                           pb::JobSubmitRequestItem& item) const {
  pb::TaskSpec& task = *item.mutable_task();
  for (const auto& [key, value] : config.node_selector)
    (*task.mutable_node_selector())[key] = value;
  for (const ir::PlatformToleration& t : config.tolerations) {
    pb::Toleration& toleration = *task.add_tolerations();
    toleration.set_key(t.key);
    toleration.set_operator_(t.op);
    toleration.set_value(t.value);
    toleration.set_effect(t.effect);
  }
  for (const auto& [key, value] : config.pod_labels) (*item.mutable_labels())[key] = value;
  for (const auto& [key, value] : config.pod_annotations)
    (*item.mutable_annotations())[key] = value;
  if (config.active_deadline_seconds > 0) {
    task.mutable_active_deadline()->set_seconds(config.active_deadline_seconds);
  }
  // Read at each launch, as a pod reads them when it starts.
  auto apply = [&](const ir::ObjectAsEnv& object, bool secret) -> absl::Status {
    absl::StatusOr<std::map<std::string, std::string>> data =
        secret ? backend_->SecretData(run.owner(), run.id(), object.name)
               : backend_->ConfigMapData(object.name);
    const char* kind = secret ? "Secret" : "ConfigMap";
    if (absl::IsNotFound(data.status()) && object.optional) return absl::OkStatus();
    if (!data.ok()) {
      return absl::Status(data.status().code(),
                          absl::StrCat(object.path, ": ", kind, " \"", object.name,
                                       "\": ", data.status().message()));
    }
    for (const auto& [key, env] : object.key_to_env) {
      auto value = data->find(key);
      if (value == data->end()) {
        if (object.optional) continue;
        return absl::NotFoundError(absl::StrCat(object.path, ": ", kind, " \"", object.name,
                                                "\" has no key \"", key, "\""));
      }
      auto& env_map = secret ? *task.mutable_secret_env() : *task.mutable_env();
      env_map[env] = value->second;
    }
    return absl::OkStatus();
  };
  for (const ir::ObjectAsEnv& object : config.config_map_as_env) {
    RETURN_IF_ERROR(apply(object, /*secret=*/false));
  }
  for (const ir::ObjectAsEnv& object : config.secret_as_env) {
    RETURN_IF_ERROR(apply(object, /*secret=*/true));
  }
  return absl::OkStatus();
}

}  // namespace regatta::pipelines::engine
