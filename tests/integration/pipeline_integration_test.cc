// Pipeline runs through the whole platform in-process: RunService over gRPC, the log, the views,
// the pipeline engine, the scheduler and the embedded local executor running real processes.
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/time_util.h"
#include "gtest/gtest.h"
#include "regatta/v1/run_service.grpc.pb.h"
#include "src/api/run_service.h"
#include "src/eventlog/event_log.h"
#include "tests/integration/pipeline_test_util.h"
#include "tests/integration/platform_fixture.h"

namespace regatta::testing {
namespace {

namespace pb = regatta::v1;
using ::testing::HasSubstr;

const pb::PipelineTask* TaskOf(const pb::PipelineRun& run, const std::string& path) {
  for (const pb::PipelineTask& t : run.tasks()) {
    if (t.path() == path) return &t;
  }
  return nullptr;
}

class PipelineIntegrationTest : public PlatformTest {
 protected:
  void SetUp() override {
    mode_ = server::Mode::kUp;
    PlatformTest::SetUp();
    Connect();
  }

  void Connect() { runs_ = pb::RunService::NewStub(channel_); }

  absl::StatusOr<pb::PipelineRun> CreateRun(const std::string& file,
                                            std::map<std::string, std::string> params = {},
                                            const std::string& key = "") {
    pb::CreateRunRequest request;
    request.set_spec(ReadTestPipeline(file));
    for (auto& [k, v] : params) (*request.mutable_parameters())[k] = v;
    request.set_client_request_id(key);
    pb::PipelineRun run;
    grpc::Status status = runs_->CreateRun(Alice().get(), request, &run);
    if (!status.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    }
    return run;
  }

  pb::PipelineRun GetRun(const std::string& id) {
    pb::GetRunRequest request;
    request.set_run_id(id);
    pb::PipelineRun run;
    grpc::Status status = runs_->GetRun(Alice().get(), request, &run);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return run;
  }

  pb::PipelineRun WaitForEnd(const std::string& id, absl::Duration timeout = absl::Seconds(60)) {
    const absl::Time deadline = absl::Now() + timeout;
    pb::PipelineRun run;
    while (absl::Now() < deadline) {
      run = GetRun(id);
      if (Ended(run.state())) return run;
      absl::SleepFor(absl::Milliseconds(20));
    }
    ADD_FAILURE() << "run " << id << " did not end; state " << run.state();
    return run;
  }

  // Waits until `path` of the run is RUNNING.
  void WaitForTaskRunning(const std::string& id, const std::string& path) {
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    while (absl::Now() < deadline) {
      pb::PipelineRun run = GetRun(id);
      const pb::PipelineTask* task = TaskOf(run, path);
      if (task != nullptr && task->state() == pb::PIPELINE_TASK_STATE_RUNNING) return;
      absl::SleepFor(absl::Milliseconds(20));
    }
    ADD_FAILURE() << path << " never ran";
  }

  std::unique_ptr<pb::RunService::Stub> runs_;
};

TEST_F(PipelineIntegrationTest, RunsToSucceededWithOutputsAndStepJobs) {
  absl::StatusOr<pb::PipelineRun> created = CreateRun("params.yaml", {{"base", "8"}});
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->queue(), "pipelines");
  EXPECT_EQ(created->owner(), "alice");
  EXPECT_EQ(created->experiment_id(), "default");
  pb::PipelineRun run = WaitForEnd(created->id());
  ASSERT_EQ(run.state(), pb::PIPELINE_RUN_STATE_SUCCEEDED) << run.error_message();
  EXPECT_EQ(run.outputs().at("result"), "\"double=16\"");
  const pb::PipelineTask* consumer = TaskOf(run, "consumer");
  ASSERT_NE(consumer, nullptr);
  ASSERT_EQ(consumer->job_ids_size(), 1);
  // The step was a job of the batch layer, labelled with its run.
  pb::GetJobDetailsRequest details;
  details.add_job_ids(consumer->job_ids(0));
  details.set_expand_spec(true);
  // The step is done once its process exited 0 (its run succeeded); the scheduler records the
  // job's success a moment later.
  pb::GetJobDetailsResponse response;
  for (int i = 0; i < 500; ++i) {
    ASSERT_TRUE(jobs_->GetJobDetails(Alice().get(), details, &response).ok());
    ASSERT_EQ(response.jobs().size(), 1u);
    if (response.jobs().begin()->second.summary().state() == pb::JOB_STATE_SUCCEEDED) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  const pb::JobDetails& job = response.jobs().at(consumer->job_ids(0));
  EXPECT_EQ(job.summary().state(), pb::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(job.job().labels().at("regatta.io/pipeline-run"), run.id());
  EXPECT_EQ(job.job().annotations().at("regatta.io/pipeline-task"), "consumer");
}

TEST_F(PipelineIntegrationTest, SecondIdenticalRunIsCachedAndStartsNoJob) {
  absl::StatusOr<pb::PipelineRun> first = CreateRun("artifacts.yaml");
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_EQ(WaitForEnd(first->id()).state(), pb::PIPELINE_RUN_STATE_SUCCEEDED);
  absl::StatusOr<pb::PipelineRun> second = CreateRun("artifacts.yaml");
  ASSERT_TRUE(second.ok()) << second.status();
  pb::PipelineRun run = WaitForEnd(second->id());
  ASSERT_EQ(run.state(), pb::PIPELINE_RUN_STATE_SUCCEEDED) << run.error_message();
  for (const pb::PipelineTask& task : run.tasks()) {
    EXPECT_EQ(task.state(), pb::PIPELINE_TASK_STATE_CACHED) << task.path();
    EXPECT_EQ(task.job_ids_size(), 0) << task.path();
    EXPECT_EQ(task.cached_from_run_id(), first->id());
  }
  EXPECT_EQ(run.outputs().at("lines"), "5");
}

TEST_F(PipelineIntegrationTest, RunsAnAuthoringFile) {
  std::ifstream in(std::string(REGATTA_EXAMPLES_DIR) + "/pipelines/train_and_eval.yaml");
  std::stringstream text;
  text << in.rdbuf();
  pb::CreateRunRequest request;
  request.set_spec(text.str());
  (*request.mutable_parameters())["rows"] = "20";
  pb::PipelineRun created;
  grpc::Status status = runs_->CreateRun(Alice().get(), request, &created);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(created.pipeline_name(), "train-and-eval");
  pb::PipelineRun run = WaitForEnd(created.id());
  ASSERT_EQ(run.state(), pb::PIPELINE_RUN_STATE_SUCCEEDED) << run.error_message();
  int trained = 0;
  bool published = false;
  bool notified = false;
  for (const pb::PipelineTask& task : run.tasks()) {
    if (task.name() == "train" && task.kind() == "container") {
      EXPECT_EQ(task.state(), pb::PIPELINE_TASK_STATE_SUCCEEDED);
      ++trained;
    }
    if (task.name() == "publish") published = task.state() == pb::PIPELINE_TASK_STATE_SUCCEEDED;
    if (task.name() == "notify") notified = task.state() == pb::PIPELINE_TASK_STATE_SUCCEEDED;
  }
  EXPECT_EQ(trained, 3);  // one per learning rate
  EXPECT_TRUE(published);
  EXPECT_TRUE(notified);
}

TEST_F(PipelineIntegrationTest, InvalidSpecIsRejectedWithItsPath) {
  std::string spec = ReadTestPipeline("params.yaml");
  const std::string from = "producerTask: producer";
  spec.replace(spec.find(from), from.size(), "producerTask: prod");
  pb::CreateRunRequest request;
  request.set_spec(spec);
  pb::PipelineRun run;
  grpc::Status status = runs_->CreateRun(Alice().get(), request, &run);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("root.dag.tasks.consumer"));
  EXPECT_THAT(status.error_message(), HasSubstr("'prod'"));
}

TEST_F(PipelineIntegrationTest, UnknownParameterIsRejected) {
  absl::StatusOr<pb::PipelineRun> run = CreateRun("params.yaml", {{"bogus", "1"}});
  EXPECT_EQ(run.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(run.status().message(), HasSubstr("bogus"));
}

TEST_F(PipelineIntegrationTest, ClientRequestIdCreatesTheRunOnce) {
  absl::StatusOr<pb::PipelineRun> first = CreateRun("params.yaml", {}, "nightly-42");
  absl::StatusOr<pb::PipelineRun> again = CreateRun("params.yaml", {}, "nightly-42");
  ASSERT_TRUE(first.ok() && again.ok());
  EXPECT_EQ(first->id(), again->id());
  WaitForEnd(first->id());
}

TEST_F(PipelineIntegrationTest, TerminateCancelsTheRunningStep) {
  absl::StatusOr<pb::PipelineRun> created = CreateRun("sleepy.yaml", {{"seconds", "60"}});
  ASSERT_TRUE(created.ok()) << created.status();
  WaitForTaskRunning(created->id(), "nap");
  pb::RunIdRequest request;
  request.set_run_id(created->id());
  pb::PipelineRun response;
  grpc::Status status = runs_->TerminateRun(Alice().get(), request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  pb::PipelineRun run = WaitForEnd(created->id());
  EXPECT_EQ(run.state(), pb::PIPELINE_RUN_STATE_CANCELED);
  EXPECT_EQ(TaskOf(run, "nap")->state(), pb::PIPELINE_TASK_STATE_CANCELED);
  EXPECT_EQ(TaskOf(run, "after")->state(), pb::PIPELINE_TASK_STATE_CANCELED);
}

TEST_F(PipelineIntegrationTest, RunContinuesAfterARestartMidRun) {
  absl::StatusOr<pb::PipelineRun> created = CreateRun("sleepy.yaml", {{"seconds", "1.5"}});
  ASSERT_TRUE(created.ok()) << created.status();
  WaitForTaskRunning(created->id(), "nap");
  Restart();
  Connect();
  pb::PipelineRun run = WaitForEnd(created->id());
  ASSERT_EQ(run.state(), pb::PIPELINE_RUN_STATE_SUCCEEDED) << run.error_message();
  EXPECT_EQ(run.outputs().at("result"), "\"rested well\"");
  // The step that was running when the server stopped ran as one job or was retried by the
  // batch layer; the pipeline did not start it twice.
  EXPECT_EQ(TaskOf(run, "nap")->job_ids_size(), 1);
}

// The engine holds a just-submitted step's snapshot for the run's next append; here so long
// that only that append (or the server's stop) publishes it.
class HeldProgressIntegrationTest : public PipelineIntegrationTest {
 protected:
  void SetUp() override {
    extra_overrides_ = {"pipelines.progressHold=60s"};
    PipelineIntegrationTest::SetUp();
  }

  std::vector<eventlog::LogRecord> RunRecords(const std::string& run_id) {
    absl::StatusOr<std::vector<eventlog::LogRecord>> records =
        platform_->log()->ReadJobSet("pipelines", "pipeline-run-" + run_id, 0, 10000);
    EXPECT_TRUE(records.ok()) << records.status();
    return records.ok() ? *std::move(records) : std::vector<eventlog::LogRecord>();
  }
};

TEST_F(HeldProgressIntegrationTest, AStepsProgressRidesOnTheNextStepsSubmit) {
  absl::StatusOr<pb::PipelineRun> created = CreateRun("params.yaml", {{"base", "8"}});
  ASSERT_TRUE(created.ok()) << created.status();
  pb::PipelineRun run = WaitForEnd(created->id());
  ASSERT_EQ(run.state(), pb::PIPELINE_RUN_STATE_SUCCEEDED) << run.error_message();
  EXPECT_EQ(run.outputs().at("result"), "\"double=16\"");
  const std::string consumer_job = TaskOf(run, "consumer")->job_ids(0);
  std::vector<eventlog::LogRecord> records = RunRecords(created->id());
  bool found_submit = false;
  for (size_t i = 0; i < records.size(); ++i) {
    for (const pb::Event& event : records[i].sequence.events()) {
      // No snapshot of a submitted step was published on its own: each one was overtaken by
      // the step's end before the run's next append.
      if (event.has_pipeline_task_updated()) {
        const pb::PipelineTask& task = event.pipeline_task_updated().task();
        EXPECT_NE(task.state(), pb::PIPELINE_TASK_STATE_RUNNING) << task.path();
      }
      if (event.has_submit_job() && event.submit_job().job().id() == consumer_job) {
        found_submit = true;
        // The producer's end came in the same append, right after the consumer's job.
        ASSERT_LT(i + 1, records.size());
        EXPECT_EQ(records[i + 1].offset, records[i].offset + 1);
        bool producer_succeeded = false;
        for (const pb::Event& next : records[i + 1].sequence.events()) {
          producer_succeeded |=
              next.has_pipeline_task_updated() &&
              next.pipeline_task_updated().task().path() == "producer" &&
              next.pipeline_task_updated().task().state() == pb::PIPELINE_TASK_STATE_SUCCEEDED;
        }
        EXPECT_TRUE(producer_succeeded);
      }
    }
  }
  EXPECT_TRUE(found_submit);
}

TEST_F(HeldProgressIntegrationTest, ARestartWhileAStepsProgressIsHeldLosesNothing) {
  absl::StatusOr<pb::PipelineRun> created = CreateRun("sleepy.yaml", {{"seconds", "1.5"}});
  ASSERT_TRUE(created.ok()) << created.status();
  // The step's job exists (its RUNNING state is held, not published).
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  bool submitted = false;
  while (!submitted && absl::Now() < deadline) {
    for (const eventlog::LogRecord& record : RunRecords(created->id())) {
      for (const pb::Event& event : record.sequence.events()) submitted |= event.has_submit_job();
    }
    if (!submitted) absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_TRUE(submitted);
  // Not RUNNING in the views: absent (no snapshot of it published yet) or still pending.
  const pb::PipelineRun before = GetRun(created->id());
  const pb::PipelineTask* nap = TaskOf(before, "nap");
  if (nap != nullptr) EXPECT_NE(nap->state(), pb::PIPELINE_TASK_STATE_RUNNING);
  Restart();
  Connect();
  pb::PipelineRun run = WaitForEnd(created->id());
  ASSERT_EQ(run.state(), pb::PIPELINE_RUN_STATE_SUCCEEDED) << run.error_message();
  EXPECT_EQ(TaskOf(run, "nap")->job_ids_size(), 1);
}

// Uploads params.yaml as a pipeline through the views' own event (the catalogue API is tested
// elsewhere) and creates a recurring run of it every hour from `start`.
class RecurringRunIntegrationTest : public PipelineIntegrationTest {
 protected:
  void UploadParamsPipeline() {
    pb::EventSequence seq;
    seq.set_user_id("alice");
    pb::Event* created = seq.add_events();
    created->mutable_pipeline_created()->mutable_pipeline()->set_id("p1");
    created->mutable_pipeline_created()->mutable_pipeline()->set_name("params");
    pb::Event* version = seq.add_events();
    pb::PipelineVersion& v = *version->mutable_pipeline_version_created()->mutable_version();
    v.set_id("v1");
    v.set_pipeline_id("p1");
    v.set_name("v1");
    v.set_spec_json(ReadTestPipeline("params.yaml"));
    std::vector<pb::EventSequence> batch;
    batch.push_back(std::move(seq));
    ASSERT_TRUE(platform_->log()->Append(std::move(batch)).ok());
    SyncViews();
  }

  absl::StatusOr<pb::RecurringRun> CreateHourly(absl::Time start, int max_concurrency,
                                                bool no_catchup) {
    pb::CreateRecurringRunRequest request;
    pb::RecurringRun& rr = *request.mutable_recurring_run();
    rr.set_display_name("hourly");
    rr.set_pipeline_version_id("v1");
    rr.mutable_periodic()->mutable_interval()->set_seconds(3600);
    *rr.mutable_start_time() =
        google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(start));
    rr.set_max_concurrency(max_concurrency);
    rr.set_no_catchup(no_catchup);
    pb::RecurringRun created;
    grpc::Status status = runs_->CreateRecurringRun(Alice().get(), request, &created);
    if (!status.ok()) return absl::InternalError(status.error_message());
    return created;
  }

  std::vector<pb::PipelineRun> RunsOf(const std::string& recurring_id) {
    pb::ListRunsRequest request;
    request.set_recurring_run_id(recurring_id);
    request.set_ascending(true);
    pb::ListRunsResponse response;
    EXPECT_TRUE(runs_->ListRuns(Alice().get(), request, &response).ok());
    return {response.runs().begin(), response.runs().end()};
  }
};

TEST_F(RecurringRunIntegrationTest, CatchUpCreatesEveryMissedRunWithinMaxConcurrency) {
  UploadParamsPipeline();
  // Schedules are in whole seconds. Due: +1h, +2h, +3h.
  const absl::Time start =
      absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now())) - absl::Minutes(210);
  absl::StatusOr<pb::RecurringRun> rr = CreateHourly(start, /*max_concurrency=*/2, false);
  ASSERT_TRUE(rr.ok()) << rr.status();
  EXPECT_TRUE(rr->enabled());
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  std::vector<pb::PipelineRun> runs;
  while (absl::Now() < deadline) {
    runs = RunsOf(rr->id());
    int active = 0;
    for (const pb::PipelineRun& run : runs) active += Ended(run.state()) ? 0 : 1;
    EXPECT_LE(active, 2);
    if (runs.size() == 3 && active == 0) break;
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_EQ(runs.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(runs[i].state(), pb::PIPELINE_RUN_STATE_SUCCEEDED);
    EXPECT_EQ(api::FromTimestamp(runs[i].scheduled_time()), start + absl::Hours(i + 1));
  }
  // Nothing more is due for half an hour.
  absl::SleepFor(absl::Milliseconds(300));
  EXPECT_EQ(RunsOf(rr->id()).size(), 3u);
}

TEST_F(RecurringRunIntegrationTest, WithoutCatchUpOnlyTheLatestMissedTimeRuns) {
  UploadParamsPipeline();
  const absl::Time start =
      absl::FromUnixSeconds(absl::ToUnixSeconds(absl::Now())) - absl::Minutes(210);
  absl::StatusOr<pb::RecurringRun> rr = CreateHourly(start, 5, /*no_catchup=*/true);
  ASSERT_TRUE(rr.ok()) << rr.status();
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::vector<pb::PipelineRun> runs;
  while (absl::Now() < deadline && runs.empty()) {
    runs = RunsOf(rr->id());
    absl::SleepFor(absl::Milliseconds(20));
  }
  absl::SleepFor(absl::Milliseconds(300));
  runs = RunsOf(rr->id());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(api::FromTimestamp(runs[0].scheduled_time()), start + absl::Hours(3));
}

TEST_F(RecurringRunIntegrationTest, TwoControllersCreateAScheduledRunOnce) {
  UploadParamsPipeline();
  absl::StatusOr<pb::RecurringRun> rr = CreateHourly(absl::Now() + absl::Hours(5), 1, false);
  ASSERT_TRUE(rr.ok()) << rr.status();
  // Both creators race for the same scheduled time: one id, one run.
  api::RunService* service = platform_->run_service();
  const absl::Time when = absl::Now();
  absl::Status a =
      service->CreateScheduledRun(*rr, "11111111-2222-5333-8444-555555555555", "hourly-x", when);
  absl::Status b =
      service->CreateScheduledRun(*rr, "11111111-2222-5333-8444-555555555555", "hourly-x", when);
  EXPECT_TRUE(a.ok()) << a;
  EXPECT_TRUE(absl::IsAlreadyExists(b)) << b;
  EXPECT_EQ(RunsOf(rr->id()).size(), 1u);
  WaitForEnd("11111111-2222-5333-8444-555555555555");
}

}  // namespace
}  // namespace regatta::testing
