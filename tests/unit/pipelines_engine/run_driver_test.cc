#include "src/pipelines/engine/run_driver.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/pipelines/ir/parse.h"
#include "src/pipelines/ir/write.h"

extern char** environ;

namespace regatta::pipelines::engine {
namespace {

namespace fs = std::filesystem;
namespace pb = regatta::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string ReadTestPipeline(const std::string& name) {
  std::ifstream in(std::string(REGATTA_PIPELINE_TESTDATA_DIR) + "/run/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  // Runs carry their spec as JSON, as the API stores it.
  absl::StatusOr<ir::PipelineSpec> spec = ir::LoadPipelineSpec(buffer.str());
  EXPECT_TRUE(spec.ok()) << spec.status();
  return ir::PipelineSpecToJson(*spec).dump();
}

// Runs argv to completion; the exit status.
int RunProcess(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  int rc = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) return 127;
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

// Plays the engine around one driver: checks the cache, "submits" each step as a job that runs
// the step's argv as a real process, and feeds the outcomes back. Jobs of one round run before
// the next round's Advance, so `max_running` shows how many steps ran at once.
class Harness {
 public:
  Harness() {
    root_ = fs::path(::testing::TempDir()) /
            absl::StrCat("run_driver_", ::testing::UnitTest::GetInstance()->random_seed(), "_",
                         counter_++);
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~Harness() { fs::remove_all(root_); }

  pb::PipelineRun NewRun(const std::string& pipeline, const std::string& id,
                         std::map<std::string, std::string> params = {}) {
    pb::PipelineRun run;
    run.set_id(id);
    run.set_display_name(id);
    run.set_pipeline_name(pipeline.substr(0, pipeline.find('.')));
    run.set_spec_json(ReadTestPipeline(pipeline));
    run.set_pipeline_root("file://" + (root_ / "artifacts").string());
    run.set_state(pb::PIPELINE_RUN_STATE_PENDING);
    for (auto& [k, v] : params) (*run.mutable_parameters())[k] = v;
    return run;
  }

  std::unique_ptr<RunDriver> Start(pb::PipelineRun run) {
    DriverOptions options;
    options.work_root = (root_ / "work").string();
    absl::StatusOr<std::unique_ptr<RunDriver>> driver =
        RunDriver::Create(std::move(run), &ids_, options);
    EXPECT_TRUE(driver.ok()) << driver.status();
    return driver.ok() ? *std::move(driver) : nullptr;
  }

  // Advances and plays outcomes until the run ends or nothing more happens without time
  // passing (then `now_` jumps to the driver's next wake time, up to `max_rounds`).
  void Drive(RunDriver& driver, int max_rounds = 1000, int stop_after_jobs = -1) {
    for (int round = 0; round < max_rounds; ++round) {
      DriverOutput out = driver.Advance(now_);
      Record(out);
      std::vector<std::pair<std::string, std::vector<std::string>>> jobs;
      for (StepLaunch& launch : out.launches) {
        if (launch.read_cache) {
          auto hit = cache_.find(launch.fingerprint);
          if (hit != cache_.end()) {
            driver.OnCacheHit(launch.task_path, hit->second, now_);
            continue;
          }
        }
        fs::create_directories(fs::path(launch.work_dir) / "outputs");
        for (auto& [name, list] : launch.values.output_artifacts) {
          for (auto& a : list) {
            fs::create_directories(fs::path(a.uri.substr(strlen("file://"))).parent_path());
          }
        }
        std::string job = absl::StrCat("job-", ++jobs_submitted_);
        submitted_by_task_[launch.task_path].push_back(job);
        driver.OnJobSubmitted(launch.task_path, launch.attempt, job, now_);
        std::vector<std::string> argv = launch.command;
        argv.insert(argv.end(), launch.args.begin(), launch.args.end());
        jobs.push_back({job, std::move(argv)});
      }
      if (!jobs.empty()) {
        max_running_ = std::max(max_running_, static_cast<int>(jobs.size()));
        Record(driver.Advance(now_));
      }
      for (auto& [job, argv] : jobs) {
        int status = RunProcess(argv);
        driver.OnJobEnded(job, status == 0, status == 0 ? "" : absl::StrCat("exit code ", status),
                          now_);
      }
      if (stop_after_jobs >= 0 && jobs_submitted_ >= stop_after_jobs) {
        Record(driver.Advance(now_));
        return;
      }
      if (driver.Terminal()) {
        Record(driver.Advance(now_));
        return;
      }
      if (jobs.empty() && out.launches.empty() && out.task_updates.empty()) {
        std::optional<absl::Time> wake = driver.NextWakeTime();
        if (!wake) return;
        now_ = std::max(now_, *wake);
      }
    }
  }

  void Record(const DriverOutput& out) {
    for (const pb::PipelineTask& task : out.task_updates) tasks_[task.path()] = task;
    for (const pb::CacheEntry& entry : out.cache_entries) cache_[entry.fingerprint()] = entry;
    for (const std::string& job : out.cancel_job_ids) cancelled_.push_back(job);
    if (out.run_update) run_updates_.push_back(*out.run_update);
  }

  // The run as the views would hold it: the driver's run plus every published task snapshot.
  pb::PipelineRun Persisted(const RunDriver& driver, const std::vector<std::string>& order) const {
    pb::PipelineRun run = driver.run();
    for (const std::string& path : order) *run.add_tasks() = tasks_.at(path);
    return run;
  }

  const pb::PipelineTask& task(const std::string& path) { return tasks_.at(path); }
  absl::Time now_ = absl::FromUnixSeconds(1'800'000'000);
  SequentialIdGenerator ids_{"art"};
  fs::path root_;
  std::map<std::string, pb::PipelineTask> tasks_;
  std::map<std::string, pb::CacheEntry> cache_;
  std::map<std::string, std::vector<std::string>> submitted_by_task_;
  std::vector<std::string> cancelled_;
  std::vector<pb::PipelineRunUpdated> run_updates_;
  int jobs_submitted_ = 0;
  int max_running_ = 0;
  static inline int counter_ = 0;
};

TEST(RunDriverTest, PassesParametersFromProducerToConsumer) {
  Harness h;
  auto driver = h.Start(h.NewRun("params.yaml", "run-1"));
  ASSERT_NE(driver, nullptr);
  h.Drive(*driver);
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED)
      << driver->run().error_message();
  EXPECT_EQ(h.task("producer").output_parameters().at("Output"), "21");
  EXPECT_EQ(h.task("consumer").input_parameters().at("x"), "21");
  EXPECT_EQ(h.task("consumer").output_parameters().at("Output"), "\"double=42\"");
  EXPECT_EQ(driver->run().outputs().at("result"), "\"double=42\"");
  ASSERT_FALSE(h.run_updates_.empty());
  EXPECT_EQ(h.run_updates_.back().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED);
  EXPECT_EQ(h.jobs_submitted_, 2);
}

TEST(RunDriverTest, RunParametersOverrideDefaults) {
  Harness h;
  auto driver = h.Start(h.NewRun("params.yaml", "run-1", {{"base", "5"}}));
  h.Drive(*driver);
  EXPECT_EQ(driver->run().outputs().at("result"), "\"double=10\"");
}

TEST(RunDriverTest, PassesArtifactsWithMetadata) {
  Harness h;
  auto driver = h.Start(h.NewRun("artifacts.yaml", "run-a", {{"rows", "7"}}));
  h.Drive(*driver);
  ASSERT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED)
      << driver->run().error_message();
  const pb::PipelineArtifact& dataset =
      h.task("make-data").output_artifacts().at("dataset").artifacts(0);
  EXPECT_EQ(dataset.schema_title(), "system.Dataset");
  EXPECT_THAT(dataset.uri(), HasSubstr("/artifacts/artifacts/run-a/make-data/"));
  EXPECT_THAT(dataset.uri(), ::testing::EndsWith("/dataset"));
  EXPECT_EQ(dataset.metadata_json(), R"({"rows":7})");
  EXPECT_EQ(h.task("count-lines").input_artifacts().at("data").artifacts(0).id(), dataset.id());
  EXPECT_EQ(driver->run().outputs().at("lines"), "7");
}

TEST(RunDriverTest, ConditionFalseLeavesTheBranchNotTriggered) {
  Harness h;
  auto driver = h.Start(h.NewRun("condition.yaml", "run-c", {{"coin", "\"tails\""}}));
  h.Drive(*driver);
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED);
  EXPECT_EQ(h.task("condition-1").state(), pb::PIPELINE_TASK_STATE_NOT_TRIGGERED);
  EXPECT_FALSE(h.tasks_.contains("condition-1.say"));
  EXPECT_EQ(h.task("always").state(), pb::PIPELINE_TASK_STATE_SUCCEEDED);
  // Pipeline placeholders inside constants are resolved.
  EXPECT_EQ(h.task("always").input_parameters().at("msg"), "\"run run-c\"");
}

TEST(RunDriverTest, ConditionTrueRunsTheBranch) {
  Harness h;
  auto driver = h.Start(h.NewRun("condition.yaml", "run-c", {{"coin", "\"heads\""}}));
  h.Drive(*driver);
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED);
  EXPECT_EQ(h.task("condition-1").state(), pb::PIPELINE_TASK_STATE_SUCCEEDED);
  EXPECT_EQ(h.task("condition-1.say").state(), pb::PIPELINE_TASK_STATE_SUCCEEDED);
  EXPECT_EQ(h.task("condition-1.say").parent_path(), "condition-1");
}

TEST(RunDriverTest, ParallelForRespectsItsLimitAndFansIn) {
  Harness h;
  std::string items = "[";
  for (int i = 1; i <= 50; ++i) absl::StrAppend(&items, i == 1 ? "" : ",", i);
  items += "]";
  auto driver = h.Start(h.NewRun("loop.yaml", "run-l", {{"items", items}}));
  h.Drive(*driver);
  ASSERT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED)
      << driver->run().error_message();
  EXPECT_EQ(h.jobs_submitted_, 51);
  EXPECT_EQ(h.max_running_, 5);
  EXPECT_EQ(h.task("for-loop-2[0]").kind(), "iteration");
  EXPECT_EQ(h.task("for-loop-2[49].add-one").input_parameters().at("num"), "50");
  // Sum of 2..51.
  EXPECT_EQ(h.task("sum-all").output_parameters().at("Output"), "1325");
  EXPECT_EQ(driver->run().outputs().at("total"), "1325");
  const std::string collected =
      h.task("for-loop-2").output_parameters().at("pipelinechannel--add-one-Output");
  EXPECT_THAT(collected, ::testing::StartsWith("[2,3,4,"));
}

TEST(RunDriverTest, EmptyLoopSucceedsWithAnEmptyList) {
  Harness h;
  auto driver = h.Start(h.NewRun("loop.yaml", "run-l", {{"items", "[]"}}));
  h.Drive(*driver);
  ASSERT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED)
      << driver->run().error_message();
  EXPECT_EQ(driver->run().outputs().at("total"), "0");
}

TEST(RunDriverTest, ExitHandlerRunsAfterAFailureAndSeesTheStatus) {
  Harness h;
  auto driver = h.Start(h.NewRun("exit_handler.yaml", "run-e"));
  h.Drive(*driver);
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_FAILED);
  EXPECT_THAT(driver->run().error_message(), HasSubstr("exit-handler-1"));
  EXPECT_EQ(h.task("exit-handler-1.fail-op").state(), pb::PIPELINE_TASK_STATE_FAILED);
  EXPECT_THAT(h.task("exit-handler-1.fail-op").error_message(), HasSubstr("exit code 3"));
  EXPECT_EQ(h.task("exit-handler-1.after-fail").state(), pb::PIPELINE_TASK_STATE_SKIPPED);
  EXPECT_EQ(h.task("exit-handler-1").state(), pb::PIPELINE_TASK_STATE_FAILED);
  const pb::PipelineTask& exit_op = h.task("exit-op");
  EXPECT_EQ(exit_op.state(), pb::PIPELINE_TASK_STATE_SUCCEEDED);
  nlohmann::json status = nlohmann::json::parse(exit_op.input_parameters().at("status"));
  EXPECT_EQ(status["state"], "FAILED");
  EXPECT_EQ(status["pipelineTaskName"], "exit-handler-1");
  EXPECT_THAT(status["error"]["message"].get<std::string>(), HasSubstr("fail-op"));
  // The step saw the status JSON through its placeholder.
  EXPECT_THAT(exit_op.output_parameters().at("Output"), HasSubstr("FAILED"));
}

TEST(RunDriverTest, RetriesWithBackoffThenSucceeds) {
  Harness h;
  fs::path state = h.root_ / "flaky";
  fs::create_directories(state);
  auto driver =
      h.Start(h.NewRun("retry.yaml", "run-r", {{"state_dir", "\"" + state.string() + "\""}}));
  const absl::Time start = h.now_;
  h.Drive(*driver);
  ASSERT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED)
      << driver->run().error_message();
  const pb::PipelineTask& flaky = h.task("flaky");
  EXPECT_EQ(flaky.attempts(), 3);
  EXPECT_EQ(flaky.job_ids_size(), 3);
  // Backoffs of 1 s then 2 s.
  EXPECT_EQ(h.now_ - start, absl::Seconds(3));
}

TEST(RunDriverTest, RetriesRunOutThenTheTaskFails) {
  Harness h;
  fs::path state = h.root_ / "flaky";
  fs::create_directories(state);
  // Already at -10: needs 13 attempts, the policy allows 4.
  std::ofstream(state / "count") << "-10\n";
  auto driver =
      h.Start(h.NewRun("retry.yaml", "run-r", {{"state_dir", "\"" + state.string() + "\""}}));
  h.Drive(*driver);
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_FAILED);
  EXPECT_EQ(h.task("flaky").attempts(), 4);
  EXPECT_THAT(h.task("flaky").error_message(), HasSubstr("attempt 4"));
}

TEST(RunDriverTest, SecondIdenticalRunIsFullyCached) {
  Harness h;
  auto first = h.Start(h.NewRun("artifacts.yaml", "run-1"));
  h.Drive(*first);
  ASSERT_EQ(first->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED);
  EXPECT_EQ(h.cache_.size(), 2u);
  const int jobs = h.jobs_submitted_;
  auto second = h.Start(h.NewRun("artifacts.yaml", "run-2"));
  h.Drive(*second);
  ASSERT_EQ(second->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED);
  EXPECT_EQ(h.jobs_submitted_, jobs);
  EXPECT_EQ(h.task("make-data").state(), pb::PIPELINE_TASK_STATE_CACHED);
  EXPECT_EQ(h.task("make-data").cached_from_run_id(), "run-1");
  EXPECT_EQ(h.task("count-lines").state(), pb::PIPELINE_TASK_STATE_CACHED);
  EXPECT_EQ(second->run().outputs().at("lines"), "5");
}

TEST(RunDriverTest, ChangedInputRerunsOnlyThatTaskAndDownstream) {
  Harness h;
  auto first = h.Start(h.NewRun("params.yaml", "run-1", {{"base", "4"}}));
  h.Drive(*first);
  // Producer output 4 -> consumer "double=8". Now base=4.0 (same value) and then base=6.
  auto same = h.Start(h.NewRun("params.yaml", "run-2", {{"base", "4.0"}}));
  h.Drive(*same);
  EXPECT_EQ(h.task("producer").state(), pb::PIPELINE_TASK_STATE_CACHED);
  EXPECT_EQ(h.task("consumer").state(), pb::PIPELINE_TASK_STATE_CACHED);
  auto changed = h.Start(h.NewRun("params.yaml", "run-3", {{"base", "6"}}));
  h.Drive(*changed);
  EXPECT_EQ(h.task("producer").state(), pb::PIPELINE_TASK_STATE_SUCCEEDED);
  EXPECT_EQ(h.task("consumer").state(), pb::PIPELINE_TASK_STATE_SUCCEEDED);
  EXPECT_EQ(changed->run().outputs().at("result"), "\"double=12\"");
}

TEST(RunDriverTest, RunWithCacheDisabledNeverReadsOrWritesIt) {
  Harness h;
  pb::PipelineRun run = h.NewRun("params.yaml", "run-1");
  run.set_disable_cache(true);
  auto driver = h.Start(run);
  h.Drive(*driver);
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED);
  EXPECT_TRUE(h.cache_.empty());
  EXPECT_TRUE(h.task("producer").fingerprint().empty());
}

TEST(RunDriverTest, ResumesFromPersistedTasks) {
  Harness h;
  std::string items = "[1,2,3,4,5,6,7,8,9,10,11,12]";
  auto driver = h.Start(h.NewRun("loop.yaml", "run-l", {{"items", items}}));
  h.Drive(*driver, 1000, /*stop_after_jobs=*/7);
  ASSERT_FALSE(driver->Terminal());
  // What the views hold: every snapshot published so far, in creation order.
  std::vector<std::string> order;
  order.push_back("for-loop-2");
  for (int i = 0; i < 12; ++i) {
    for (std::string path :
         {IterationPath("for-loop-2", i), IterationPath("for-loop-2", i) + ".add-one"}) {
      if (h.tasks_.contains(path)) order.push_back(path);
    }
  }
  pb::PipelineRun persisted = h.Persisted(*driver, order);
  driver.reset();
  auto resumed = h.Start(persisted);
  ASSERT_NE(resumed, nullptr);
  h.Drive(*resumed);
  ASSERT_EQ(resumed->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED)
      << resumed->run().error_message();
  EXPECT_EQ(resumed->run().outputs().at("total"), "90");  // 2..13
  // No step ran twice.
  for (const auto& [task, jobs] : h.submitted_by_task_) EXPECT_EQ(jobs.size(), 1u) << task;
}

TEST(RunDriverTest, TerminateCancelsRunningStepsAndStartsNothingNew) {
  Harness h;
  auto driver = h.Start(h.NewRun("params.yaml", "run-t"));
  DriverOutput out = driver->Advance(h.now_);
  h.Record(out);
  ASSERT_EQ(out.launches.size(), 1u);
  driver->OnJobSubmitted("producer", 1, "job-p", h.now_);
  driver->Terminate(h.now_);
  out = driver->Advance(h.now_);
  h.Record(out);
  EXPECT_THAT(out.cancel_job_ids, ElementsAre("job-p"));
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_CANCELING);
  driver->OnJobEnded("job-p", false, "cancelled", h.now_);
  out = driver->Advance(h.now_);
  EXPECT_TRUE(out.launches.empty());
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_CANCELED);
  h.Record(out);
  EXPECT_EQ(h.task("consumer").state(), pb::PIPELINE_TASK_STATE_CANCELED);
}

TEST(RunDriverTest, RetryOfAFailedRunRerunsTheFailedTasks) {
  Harness h;
  fs::path state = h.root_ / "flaky";
  fs::create_directories(state);
  std::ofstream(state / "count") << "-5\n";  // needs 8 attempts; 4 allowed per task run
  auto driver =
      h.Start(h.NewRun("retry.yaml", "run-r", {{"state_dir", "\"" + state.string() + "\""}}));
  h.Drive(*driver);
  ASSERT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_FAILED);
  EXPECT_TRUE(driver->Retry(h.now_).ok());
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_RUNNING);
  h.Drive(*driver);
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_SUCCEEDED)
      << driver->run().error_message();
  EXPECT_EQ(h.task("flaky").attempts(), 4);
  EXPECT_EQ(h.task("flaky").job_ids_size(), 8);
  EXPECT_FALSE(driver->Retry(h.now_).ok());
}

TEST(RunDriverTest, MissingOutputFailsTheStep) {
  Harness h;
  pb::PipelineRun run = h.NewRun("params.yaml", "run-m");
  // A producer that writes nothing.
  nlohmann::json spec = nlohmann::json::parse(run.spec_json());
  spec["deploymentSpec"]["executors"]["exec-producer"]["container"]["args"][0] = "true";
  run.set_spec_json(spec.dump());
  auto driver = h.Start(run);
  h.Drive(*driver);
  EXPECT_EQ(driver->run().state(), pb::PIPELINE_RUN_STATE_FAILED);
  EXPECT_THAT(h.task("producer").error_message(), HasSubstr("output parameter 'Output'"));
  EXPECT_EQ(h.task("consumer").state(), pb::PIPELINE_TASK_STATE_SKIPPED);
}

}  // namespace
}  // namespace regatta::pipelines::engine
