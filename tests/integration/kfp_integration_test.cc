// Pipelines as the kfp 2.x SDK (and kfp-kubernetes) writes them, through the whole platform
// in-process: each test file of tests/testdata/kfp/ validates, runs, and its values reach the
// steps and their jobs; what cannot be honoured is refused at run creation naming the field.
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "regatta/v1/device_service.grpc.pb.h"
#include "regatta/v1/run_service.grpc.pb.h"
#include "src/pipelines/ir/parse.h"
#include "tests/integration/pipeline_test_util.h"
#include "tests/integration/platform_fixture.h"

namespace regatta::testing {
namespace {

namespace pb = regatta::v1;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

std::string ReadKfpFile(const std::string& name) {
  std::ifstream in(std::string(REGATTA_KFP_TESTDATA_DIR) + "/" + name);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// The tasks of `run` named `name` (several for steps inside loops).
std::vector<const pb::PipelineTask*> TasksNamed(const pb::PipelineRun& run,
                                                const std::string& name) {
  std::vector<const pb::PipelineTask*> found;
  for (const pb::PipelineTask& t : run.tasks()) {
    if (t.name() == name) found.push_back(&t);
  }
  return found;
}

const pb::PipelineTask& OnlyTask(const pb::PipelineRun& run, const std::string& name) {
  std::vector<const pb::PipelineTask*> found = TasksNamed(run, name);
  EXPECT_EQ(found.size(), 1u) << name;
  static const pb::PipelineTask kNone;
  return found.empty() ? kNone : *found[0];
}

class KfpIntegrationTest : public PlatformTest {
 protected:
  void SetUp() override {
    mode_ = server::Mode::kUp;
    PlatformTest::SetUp();
    runs_ = pb::RunService::NewStub(channel_);
    devices_ = pb::DeviceService::NewStub(channel_);
  }

  // What platform_env.yaml reads: ConfigMap kfp-db (host) and Secret kfp-db-creds (password).
  void ApplyDbConfigMapAndSecret() {
    pb::ApplyConfigMapRequest config_map;
    config_map.mutable_config_map()->set_name("kfp-db");
    (*config_map.mutable_config_map()->mutable_data())["host"] = "db.example.internal";
    pb::ConfigMap applied_map;
    ASSERT_TRUE(devices_->ApplyConfigMap(Alice().get(), config_map, &applied_map).ok());
    pb::ApplySecretRequest secret;
    secret.mutable_secret()->set_name("kfp-db-creds");
    (*secret.mutable_secret()->mutable_data())["password"] = "pw-7c1e0b";
    pb::Secret applied_secret;
    ASSERT_TRUE(devices_->ApplySecret(Alice().get(), secret, &applied_secret).ok());
  }

  absl::StatusOr<pb::PipelineRun> CreateRun(const std::string& file,
                                            std::map<std::string, std::string> params = {}) {
    pb::CreateRunRequest request;
    request.set_spec(ReadKfpFile(file));
    for (auto& [k, v] : params) (*request.mutable_parameters())[k] = v;
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

  pb::PipelineRun WaitForEnd(const std::string& id) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    pb::PipelineRun run;
    while (absl::Now() < deadline) {
      run = GetRun(id);
      if (Ended(run.state())) return run;
      absl::SleepFor(absl::Milliseconds(20));
    }
    ADD_FAILURE() << "run " << id << " did not end; state " << run.state();
    return run;
  }

  // Runs `file` to its end, which must be SUCCEEDED.
  pb::PipelineRun RunToSuccess(const std::string& file,
                               std::map<std::string, std::string> params = {}) {
    absl::StatusOr<pb::PipelineRun> created = CreateRun(file, std::move(params));
    EXPECT_TRUE(created.ok()) << file << ": " << created.status();
    if (!created.ok()) return {};
    pb::PipelineRun run = WaitForEnd(created->id());
    EXPECT_EQ(run.state(), pb::PIPELINE_RUN_STATE_SUCCEEDED) << file << ": " << run.error_message();
    for (const pb::PipelineTask& t : run.tasks()) {
      EXPECT_EQ(t.error_message(), "") << t.path();
    }
    return run;
  }

  pb::JobDetails JobOf(const std::string& job_id) {
    pb::GetJobDetailsRequest request;
    request.add_job_ids(job_id);
    request.set_expand_spec(true);
    // The step's run may end before the views hold its job.
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      pb::GetJobDetailsResponse response;
      grpc::Status status = jobs_->GetJobDetails(Alice().get(), request, &response);
      EXPECT_TRUE(status.ok()) << status.error_message();
      auto it = response.jobs().find(job_id);
      if (it != response.jobs().end()) return it->second;
      absl::SleepFor(absl::Milliseconds(20));
    }
    ADD_FAILURE() << "job " << job_id << " not found";
    return pb::JobDetails();
  }

  std::unique_ptr<pb::RunService::Stub> runs_;
  std::unique_ptr<pb::DeviceService::Stub> devices_;
};

TEST_F(KfpIntegrationTest, EveryTestFileButTheRefusedOneValidates) {
  for (const char* file :
       {"undeclared_channels.yaml", "primitive_types.yaml", "default_spellings.yaml",
        "final_status_subdag.yaml", "machine_fields.yaml", "accelerator_node_selector.yaml",
        "platform_env.yaml"}) {
    absl::StatusOr<pipelines::ir::PipelineSpec> spec =
        pipelines::ir::LoadPipelineSpec(ReadKfpFile(file));
    EXPECT_TRUE(spec.ok()) << file << ": " << spec.status();
  }
}

TEST_F(KfpIntegrationTest, UndeclaredPipelineChannelsReachTheNestedSteps) {
  pb::PipelineRun run = RunToSuccess("undeclared_channels.yaml", {{"greeting", "ahoy"}});
  std::vector<std::string> said;
  for (const pb::PipelineTask* t : TasksNamed(run, "say")) {
    EXPECT_EQ(t->state(), pb::PIPELINE_TASK_STATE_SUCCEEDED) << t->path();
    said.push_back(t->output_parameters().at("said"));
  }
  EXPECT_THAT(said, UnorderedElementsAre("\"ahoy x1\"", "\"ahoy x2\""));
  EXPECT_EQ(OnlyTask(run, "read").output_parameters().at("content"), "\"ahoy data\"");
  EXPECT_EQ(OnlyTask(run, "bye").state(), pb::PIPELINE_TASK_STATE_SUCCEEDED);
}

TEST_F(KfpIntegrationTest, UndeclaredChannelsStillDriveTheCondition) {
  absl::StatusOr<pb::PipelineRun> created =
      CreateRun("undeclared_channels.yaml", {{"enabled", "no"}});
  ASSERT_TRUE(created.ok()) << created.status();
  pb::PipelineRun run = WaitForEnd(created->id());
  EXPECT_EQ(OnlyTask(run, "condition-2").state(), pb::PIPELINE_TASK_STATE_NOT_TRIGGERED);
  EXPECT_TRUE(TasksNamed(run, "say").empty());
}

TEST_F(KfpIntegrationTest, PrimitiveTypesOfSchema20Run) {
  pb::PipelineRun run = RunToSuccess("primitive_types.yaml", {{"a", "3"}});
  EXPECT_EQ(OnlyTask(run, "add").output_parameters().at("sum"), "\"total=7*1.5\"");
  // Still typed: an INT parameter refuses a word.
  absl::StatusOr<pb::PipelineRun> bad = CreateRun("primitive_types.yaml", {{"a", "three"}});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("NUMBER_INTEGER"));
}

TEST_F(KfpIntegrationTest, DefaultsInTheSdksSpellingsAreTyped) {
  pb::PipelineRun run = RunToSuccess("default_spellings.yaml");
  EXPECT_EQ(run.parameters().at("n"), "5");
  EXPECT_EQ(run.parameters().at("epochs"), "200");
  EXPECT_EQ(run.parameters().at("ratio"), "0.25");
  EXPECT_EQ(run.parameters().at("verbose"), "true");
  EXPECT_EQ(run.parameters().at("tags"), "[\"a\",\"b\"]");
  EXPECT_EQ(OnlyTask(run, "show").output_parameters().at("shown"),
            "\"5 200 0.25 true [\\\"a\\\",\\\"b\\\"] 3\"");
}

TEST_F(KfpIntegrationTest, FinalStatusPassedIntoASubDagReachesItsSteps) {
  pb::PipelineRun run = RunToSuccess("final_status_subdag.yaml");
  for (const char* name : {"report", "state-of"}) {
    const pb::PipelineTask& t = OnlyTask(run, name);
    EXPECT_EQ(t.state(), pb::PIPELINE_TASK_STATE_SUCCEEDED) << name;
    EXPECT_THAT(t.output_parameters().at("seen"), HasSubstr("SUCCEEDED")) << name;
    EXPECT_THAT(t.output_parameters().at("seen"), HasSubstr("my-pipeline")) << name;
  }
}

TEST_F(KfpIntegrationTest, MachineFieldsFromPipelineParametersReachTheJobs) {
  pb::PipelineRun run =
      RunToSuccess("machine_fields.yaml", {{"cpu_limit", "200m"}, {"memory_limit", "48Mi"}});
  const pb::PipelineTask& sum = OnlyTask(run, "sum-numbers");
  EXPECT_EQ(sum.output_parameters().at("Output"), "3");
  // The machine-field inputs are resolved from the channels, as the kfp driver does.
  EXPECT_EQ(sum.input_parameters().at("cpu_limit"), "\"200m\"");
  ASSERT_EQ(sum.job_ids_size(), 1);
  const pb::JobDetails details = JobOf(sum.job_ids(0));
  const auto& requests = details.job().task().resources().requests();
  ASSERT_TRUE(requests.contains("cpu")) << details.DebugString();
  EXPECT_EQ(requests.at("cpu"), "200m");
  EXPECT_EQ(requests.at("memory"), "48Mi");
  const pb::PipelineTask& small = OnlyTask(run, "small");
  ASSERT_EQ(small.job_ids_size(), 1);
  const pb::JobDetails small_details = JobOf(small.job_ids(0));
  const auto& small_requests = small_details.job().task().resources().requests();
  ASSERT_TRUE(small_requests.contains("cpu")) << small_details.DebugString();
  EXPECT_EQ(small_requests.at("cpu"), "300m");
  // 0.05 GB as the submit path writes it.
  EXPECT_EQ(small_requests.at("memory"), "50000000");
}

TEST_F(KfpIntegrationTest, AcceleratorFromParametersAndNodeSelectorReachTheJob) {
  absl::StatusOr<pb::PipelineRun> created =
      CreateRun("accelerator_node_selector.yaml", {{"accelerator_limit", "\"3\""}});
  ASSERT_TRUE(created.ok()) << created.status();
  // No node here has the accelerator or the label: the job waits, and its spec says why.
  std::string job_id;
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (job_id.empty() && absl::Now() < deadline) {
    pb::PipelineRun run = GetRun(created->id());
    for (const pb::PipelineTask& t : run.tasks()) {
      if (t.name() == "train" && t.job_ids_size() > 0) job_id = t.job_ids(0);
      ASSERT_EQ(t.error_message(), "") << t.path();
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  ASSERT_FALSE(job_id.empty());
  const pb::TaskSpec task = JobOf(job_id).job().task();
  EXPECT_EQ(task.resources().requests().at("example.com/widget"), "3");
  EXPECT_EQ(task.node_selector().at("accelerator"), "widget");
  ASSERT_EQ(task.tolerations_size(), 1);
  EXPECT_EQ(task.tolerations(0).key(), "dedicated");
  EXPECT_EQ(task.tolerations(0).operator_(), "Equal");
  EXPECT_EQ(task.tolerations(0).value(), "ml");
  EXPECT_EQ(task.tolerations(0).effect(), "NoSchedule");
  pb::RunIdRequest terminate;
  terminate.set_run_id(created->id());
  pb::PipelineRun response;
  ASSERT_TRUE(runs_->TerminateRun(Alice().get(), terminate, &response).ok());
  EXPECT_EQ(WaitForEnd(created->id()).state(), pb::PIPELINE_RUN_STATE_CANCELED);
}

TEST_F(KfpIntegrationTest, SecretAndConfigMapAsEnvAndPodMetadataReachTheStep) {
  ASSERT_NO_FATAL_FAILURE(ApplyDbConfigMapAndSecret());

  pb::PipelineRun run = RunToSuccess("platform_env.yaml");
  const pb::PipelineTask& step = OnlyTask(run, "show-env");
  EXPECT_EQ(step.output_parameters().at("seen"), "\"db.example.internal|pw-7c1e0b|none\"");
  ASSERT_EQ(step.job_ids_size(), 1);
  const pb::Job job = JobOf(step.job_ids(0)).job();
  EXPECT_EQ(job.labels().at("stage"), "test");
  EXPECT_EQ(job.labels().at("regatta.io/pipeline-run"), run.id());
  EXPECT_EQ(job.annotations().at("team.example.com/owner"), "data");
  EXPECT_EQ(job.task().env().at("DB_HOST"), "db.example.internal");
  EXPECT_FALSE(job.task().env().contains("DB_PASSWORD"));
  // The secret is a secretEnv value, sealed at rest: the stored job does not hold it.
  ASSERT_TRUE(job.task().secret_env().contains("DB_PASSWORD"));
  EXPECT_THAT(job.task().secret_env().at("DB_PASSWORD"), Not(HasSubstr("pw-7c1e0b")));
  ASSERT_EQ(job.task().tolerations_size(), 1);
  EXPECT_EQ(job.task().tolerations(0).operator_(), "Exists");
}

TEST_F(KfpIntegrationTest, AMissingConfigMapFailsTheStepNamingTheField) {
  absl::StatusOr<pb::PipelineRun> created = CreateRun("platform_env.yaml");
  ASSERT_TRUE(created.ok()) << created.status();
  pb::PipelineRun run = WaitForEnd(created->id());
  EXPECT_EQ(run.state(), pb::PIPELINE_RUN_STATE_FAILED);
  const pb::PipelineTask& step = OnlyTask(run, "show-env");
  EXPECT_EQ(step.job_ids_size(), 0);
  EXPECT_THAT(step.error_message(),
              HasSubstr("platforms.kubernetes.deploymentSpec.executors.exec-show-env."
                        "configMapAsEnv[0]: ConfigMap \"kfp-db\""));
}

TEST_F(KfpIntegrationTest, OnlyAnOwnerWhoMayChangeSecretsReadsThemIntoAStep) {
  pb::CreateQueueRequest queue;
  queue.mutable_queue()->set_name("q-bob");
  queue.mutable_queue()->set_priority_factor(1);
  pb::QueuePermission* permission = queue.mutable_queue()->add_permissions();
  permission->add_subjects()->set_kind("user");
  permission->mutable_subjects(0)->set_name("bob");
  for (const char* verb : {"submit", "watch", "cancel"}) permission->add_verbs(verb);
  pb::Queue created_queue;
  ASSERT_TRUE(queues_->CreateQueue(Alice().get(), queue, &created_queue).ok());
  ASSERT_NO_FATAL_FAILURE(ApplyDbConfigMapAndSecret());

  pb::CreateRunRequest request;
  request.set_spec(ReadKfpFile("platform_env.yaml"));
  request.set_queue("q-bob");
  pb::PipelineRun created;
  grpc::Status status = runs_->CreateRun(Bob().get(), request, &created);
  ASSERT_TRUE(status.ok()) << status.error_message();
  pb::PipelineRun run = WaitForEnd(created.id());
  EXPECT_EQ(run.state(), pb::PIPELINE_RUN_STATE_FAILED);
  const pb::PipelineTask& step = OnlyTask(run, "show-env");
  EXPECT_EQ(step.job_ids_size(), 0);
  EXPECT_THAT(step.error_message(),
              HasSubstr("secretAsEnv[0]: Secret \"kfp-db-creds\": user \"bob\" may not read "
                        "Secrets into a step"));
}

TEST_F(KfpIntegrationTest, WhatCannotBeHonouredIsRefusedAtRunCreation) {
  absl::StatusOr<pb::PipelineRun> created = CreateRun("platform_refused.yaml");
  EXPECT_EQ(created.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(created.status().message(),
              HasSubstr("platforms.kubernetes.deploymentSpec.executors.exec-write.pvcMount: "
                        "cannot be honoured"));
}

}  // namespace
}  // namespace regatta::testing
