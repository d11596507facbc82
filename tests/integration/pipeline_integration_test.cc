// Pipeline runs through the whole platform in-process: RunService over gRPC, the log, the views,
// the pipeline engine, the scheduler and the embedded local executor running real processes.
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "regatta/v1/run_service.grpc.pb.h"
#include "tests/integration/platform_fixture.h"

namespace regatta::testing {
namespace {

namespace pb = regatta::v1;
using ::testing::HasSubstr;

std::string ReadTestPipeline(const std::string& name) {
  std::ifstream in(std::string(REGATTA_PIPELINE_TESTDATA_DIR) + "/run/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

bool Ended(pb::PipelineRunState state) {
  return state == pb::PIPELINE_RUN_STATE_SUCCEEDED || state == pb::PIPELINE_RUN_STATE_FAILED ||
         state == pb::PIPELINE_RUN_STATE_SKIPPED || state == pb::PIPELINE_RUN_STATE_CANCELED;
}

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
  pb::GetJobDetailsResponse response;
  ASSERT_TRUE(jobs_->GetJobDetails(Alice().get(), details, &response).ok());
  ASSERT_EQ(response.jobs().size(), 1u);
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

}  // namespace
}  // namespace regatta::testing
