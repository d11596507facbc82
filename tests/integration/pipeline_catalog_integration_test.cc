// The pipeline catalogue through the whole platform in-process: PipelineService over gRPC
// (pipelines, versions, experiments, artifacts, lineage, cache), with runs made by RunService
// and executed by the embedded local executor.
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "regatta/v1/pipeline_service.grpc.pb.h"
#include "regatta/v1/run_service.grpc.pb.h"
#include "tests/integration/pipeline_test_util.h"
#include "tests/integration/platform_fixture.h"

namespace regatta::testing {
namespace {

namespace pb = regatta::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class PipelineCatalogTest : public PlatformTest {
 protected:
  void SetUp() override {
    mode_ = server::Mode::kUp;
    PlatformTest::SetUp();
    catalog_ = pb::PipelineService::NewStub(channel_);
    runs_ = pb::RunService::NewStub(channel_);
  }

  absl::StatusOr<pb::CreatePipelineResponse> Upload(const std::string& name,
                                                    const std::string& file,
                                                    const std::string& as = "alice") {
    pb::CreatePipelineRequest request;
    request.set_name(name);
    request.set_description("test pipeline");
    request.set_spec(ReadTestPipeline(file));
    pb::CreatePipelineResponse response;
    auto ctx = as == "alice" ? Alice() : Bob();
    return Result(catalog_->CreatePipeline(ctx.get(), request, &response), response);
  }

  template <typename T>
  static absl::StatusOr<T> Result(const grpc::Status& status, const T& value) {
    if (!status.ok()) {
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                          status.error_message());
    }
    return value;
  }

  absl::StatusOr<pb::PipelineRun> CreateRun(pb::CreateRunRequest request) {
    pb::PipelineRun run;
    return Result(runs_->CreateRun(Alice().get(), request, &run), run);
  }

  pb::PipelineRun WaitForEnd(const std::string& id) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    pb::PipelineRun run;
    while (absl::Now() < deadline) {
      pb::GetRunRequest request;
      request.set_run_id(id);
      EXPECT_TRUE(runs_->GetRun(Alice().get(), request, &run).ok());
      if (Ended(run.state())) return run;
      absl::SleepFor(absl::Milliseconds(20));
    }
    ADD_FAILURE() << "run " << id << " did not end";
    return run;
  }

  pb::PipelineRun RunToEnd(const std::string& file) {
    pb::CreateRunRequest request;
    request.set_spec(ReadTestPipeline(file));
    absl::StatusOr<pb::PipelineRun> created = CreateRun(request);
    EXPECT_TRUE(created.ok()) << created.status();
    if (!created.ok()) return {};
    pb::PipelineRun run = WaitForEnd(created->id());
    EXPECT_EQ(run.state(), pb::PIPELINE_RUN_STATE_SUCCEEDED) << run.error_message();
    return run;
  }

  std::vector<std::string> CacheFingerprints() {
    pb::ListCacheEntriesResponse response;
    EXPECT_TRUE(catalog_->ListCacheEntries(Alice().get(), {}, &response).ok());
    std::vector<std::string> out;
    for (const pb::CacheEntry& e : response.entries()) out.push_back(e.fingerprint());
    return out;
  }

  std::unique_ptr<pb::PipelineService::Stub> catalog_;
  std::unique_ptr<pb::RunService::Stub> runs_;
};

TEST_F(PipelineCatalogTest, UploadListGetVersionsAndDelete) {
  absl::StatusOr<pb::CreatePipelineResponse> created = Upload("counting", "artifacts.yaml");
  ASSERT_TRUE(created.ok()) << created.status();
  EXPECT_EQ(created->pipeline().name(), "counting");
  EXPECT_EQ(created->pipeline().display_name(), "counting");
  EXPECT_EQ(created->pipeline().owner(), "alice");
  EXPECT_EQ(created->version().name(), "v1");
  EXPECT_EQ(created->version().pipeline_id(), created->pipeline().id());
  EXPECT_THAT(created->version().spec_json(), HasSubstr("\"comp-make-data\""));

  // A second version, and the pipeline found by name and by id.
  pb::CreatePipelineVersionRequest add;
  add.set_pipeline("counting");
  add.set_name("v2");
  add.set_spec(ReadTestPipeline("params.yaml"));
  pb::PipelineVersion v2;
  ASSERT_TRUE(catalog_->CreatePipelineVersion(Bob().get(), add, &v2).ok());
  pb::PipelineVersion duplicate;
  grpc::Status again = catalog_->CreatePipelineVersion(Alice().get(), add, &duplicate);
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(again.error_message(), HasSubstr("already has a version \"v2\""));

  for (const std::string& ref : {std::string("counting"), created->pipeline().id()}) {
    pb::GetPipelineRequest get;
    get.set_pipeline(ref);
    pb::Pipeline found;
    ASSERT_TRUE(catalog_->GetPipeline(Bob().get(), get, &found).ok()) << ref;
    EXPECT_EQ(found.id(), created->pipeline().id());
  }
  pb::ListPipelinesResponse listed;
  ASSERT_TRUE(catalog_->ListPipelines(Bob().get(), {}, &listed).ok());
  ASSERT_EQ(listed.pipelines_size(), 1);
  EXPECT_EQ(listed.pipelines(0).name(), "counting");

  pb::ListPipelineVersionsRequest versions_request;
  versions_request.set_pipeline("counting");
  pb::ListPipelineVersionsResponse versions;
  ASSERT_TRUE(catalog_->ListPipelineVersions(Bob().get(), versions_request, &versions).ok());
  ASSERT_EQ(versions.versions_size(), 2);
  EXPECT_EQ(versions.versions(0).name(), "v2");  // newest first
  EXPECT_EQ(versions.versions(1).name(), "v1");

  // A run from the pipeline uses its newest version.
  pb::CreateRunRequest run_request;
  run_request.set_pipeline("counting");
  absl::StatusOr<pb::PipelineRun> run = CreateRun(run_request);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->pipeline_version_id(), v2.id());

  // Versions can be deleted by anyone; the pipeline only by its owner (or delete_queue holders).
  pb::DeletePipelineVersionRequest delete_version;
  delete_version.set_version_id(v2.id());
  pb::DeletePipelineVersionResponse version_deleted;
  ASSERT_TRUE(catalog_->DeletePipelineVersion(Bob().get(), delete_version, &version_deleted).ok());
  pb::GetPipelineVersionRequest get_version;
  get_version.set_version_id(v2.id());
  pb::PipelineVersion gone;
  grpc::Status missing = catalog_->GetPipelineVersion(Bob().get(), get_version, &gone);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(missing.error_message(), HasSubstr("version_id: version"));

  pb::DeletePipelineRequest del;
  del.set_pipeline("counting");
  pb::DeletePipelineResponse deleted;
  grpc::Status denied = catalog_->DeletePipeline(Bob().get(), del, &deleted);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(denied.error_message(), HasSubstr("may not delete pipeline \"counting\""));
  ASSERT_TRUE(catalog_->DeletePipeline(Alice().get(), del, &deleted).ok());
  pb::GetPipelineRequest get;
  get.set_pipeline("counting");
  pb::Pipeline after;
  grpc::Status status = catalog_->GetPipeline(Alice().get(), get, &after);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "pipeline: pipeline \"counting\" does not exist");
  get_version.set_version_id(created->version().id());
  EXPECT_EQ(catalog_->GetPipelineVersion(Alice().get(), get_version, &gone).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(PipelineCatalogTest, DuplicateNameAndInvalidSpecAreRejected) {
  ASSERT_TRUE(Upload("dup", "params.yaml").ok());
  absl::StatusOr<pb::CreatePipelineResponse> again = Upload("dup", "artifacts.yaml", "bob");
  EXPECT_EQ(again.status().code(), absl::StatusCode::kAlreadyExists);
  EXPECT_EQ(again.status().message(), "name: pipeline \"dup\" already exists");

  pb::CreatePipelineRequest bad;
  bad.set_name("bad");
  bad.set_spec("pipelineInfo: {name: x}\nroot: {dag: {tasks: {a: {componentRef: {name: nope}}}}}");
  pb::CreatePipelineResponse response;
  grpc::Status status = catalog_->CreatePipeline(Alice().get(), bad, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("spec: "));
  bad.set_spec("");
  status = catalog_->CreatePipeline(Alice().get(), bad, &response);
  EXPECT_EQ(status.error_message(), "spec: required");
  bad.clear_name();
  status = catalog_->CreatePipeline(Alice().get(), bad, &response);
  EXPECT_EQ(status.error_message(), "name: required");
  // Nothing of the rejected uploads was recorded.
  pb::ListPipelinesResponse listed;
  ASSERT_TRUE(catalog_->ListPipelines(Alice().get(), {}, &listed).ok());
  ASSERT_EQ(listed.pipelines_size(), 1);
}

TEST_F(PipelineCatalogTest, ExperimentsArchiveAndDeleteRefusedWhileARunIsActive) {
  pb::CreateExperimentRequest create;
  create.set_name("tuning");
  create.set_description("lr sweep");
  pb::Experiment experiment;
  ASSERT_TRUE(catalog_->CreateExperiment(Bob().get(), create, &experiment).ok());
  EXPECT_EQ(experiment.owner(), "bob");
  pb::Experiment duplicate;
  grpc::Status again = catalog_->CreateExperiment(Alice().get(), create, &duplicate);
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(again.error_message(), "name: experiment \"tuning\" already exists");

  // "Default" made here is the run service's default experiment.
  pb::CreateExperimentRequest create_default;
  create_default.set_name("Default");
  pb::Experiment default_experiment;
  ASSERT_TRUE(catalog_->CreateExperiment(Alice().get(), create_default, &default_experiment).ok());
  EXPECT_EQ(default_experiment.id(), "default");

  // A long run in the experiment blocks its deletion.
  pb::CreateRunRequest run_request;
  run_request.set_spec(ReadTestPipeline("sleepy.yaml"));
  (*run_request.mutable_parameters())["seconds"] = "60";
  run_request.set_experiment("tuning");
  absl::StatusOr<pb::PipelineRun> run = CreateRun(run_request);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->experiment_id(), experiment.id());
  pb::DeleteExperimentRequest del;
  del.set_experiment("tuning");
  pb::DeleteExperimentResponse deleted;
  grpc::Status refused = catalog_->DeleteExperiment(Alice().get(), del, &deleted);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(refused.error_message(), HasSubstr(run->id()));

  // Archived: listed only on request, and no new runs.
  pb::ArchiveExperimentRequest archive;
  archive.set_experiment(experiment.id());
  pb::Experiment archived;
  ASSERT_TRUE(catalog_->ArchiveExperiment(Alice().get(), archive, &archived).ok());
  EXPECT_TRUE(archived.archived());
  pb::ListExperimentsResponse listed;
  ASSERT_TRUE(catalog_->ListExperiments(Alice().get(), {}, &listed).ok());
  std::vector<std::string> names;
  for (const auto& e : listed.experiments()) names.push_back(e.name());
  EXPECT_THAT(names, ElementsAre("Default"));
  pb::ListExperimentsRequest with_archived;
  with_archived.set_include_archived(true);
  ASSERT_TRUE(catalog_->ListExperiments(Alice().get(), with_archived, &listed).ok());
  EXPECT_EQ(listed.experiments_size(), 2);
  pb::CreateRunRequest into_archived = run_request;
  EXPECT_EQ(CreateRun(into_archived).status().code(), absl::StatusCode::kFailedPrecondition);
  ASSERT_TRUE(catalog_->UnarchiveExperiment(Alice().get(), archive, &archived).ok());
  EXPECT_FALSE(archived.archived());

  // Once the run ended, the experiment can go.
  pb::RunIdRequest terminate;
  terminate.set_run_id(run->id());
  pb::PipelineRun terminated;
  ASSERT_TRUE(runs_->TerminateRun(Alice().get(), terminate, &terminated).ok());
  EXPECT_EQ(WaitForEnd(run->id()).state(), pb::PIPELINE_RUN_STATE_CANCELED);
  ASSERT_TRUE(catalog_->DeleteExperiment(Alice().get(), del, &deleted).ok());
  pb::GetExperimentRequest get;
  get.set_experiment("tuning");
  grpc::Status status = catalog_->GetExperiment(Alice().get(), get, &experiment);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "experiment: experiment \"tuning\" does not exist");
}

TEST_F(PipelineCatalogTest, ArtifactsAndLineageAfterARunAndItsCachedRepeat) {
  pb::PipelineRun first = RunToEnd("artifacts.yaml");
  pb::ListArtifactsRequest list;
  list.set_run_id(first.id());
  pb::ListArtifactsResponse artifacts;
  // Artifacts are read like their run: bob may not watch the run's queue.
  EXPECT_EQ(catalog_->ListArtifacts(Bob().get(), list, &artifacts).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(catalog_->ListArtifacts(Alice().get(), list, &artifacts).ok());
  ASSERT_EQ(artifacts.artifacts_size(), 1);
  const pb::PipelineArtifact& dataset = artifacts.artifacts(0);
  EXPECT_EQ(dataset.name(), "dataset");
  EXPECT_EQ(dataset.schema_title(), "system.Dataset");
  EXPECT_EQ(dataset.task_path(), "make-data");
  EXPECT_EQ(dataset.run_id(), first.id());

  pb::GetArtifactRequest get;
  get.set_artifact_id(dataset.id());
  pb::PipelineArtifact fetched;
  ASSERT_TRUE(catalog_->GetArtifact(Alice().get(), get, &fetched).ok());
  EXPECT_EQ(fetched.uri(), dataset.uri());
  EXPECT_THAT(fetched.metadata_json(), HasSubstr("\"rows\""));

  pb::PipelineRun second = RunToEnd("artifacts.yaml");
  pb::GetArtifactLineageRequest lineage_request;
  lineage_request.set_artifact_id(dataset.id());
  pb::ArtifactLineageResponse lineage;
  ASSERT_TRUE(catalog_->GetArtifactLineage(Alice().get(), lineage_request, &lineage).ok());
  EXPECT_EQ(lineage.artifact().id(), dataset.id());
  EXPECT_EQ(lineage.producer().run_id(), first.id());
  EXPECT_EQ(lineage.producer().task_path(), "make-data");
  EXPECT_EQ(lineage.producer().io_name(), "dataset");
  EXPECT_EQ(lineage.producer().task_state(), pb::PIPELINE_TASK_STATE_SUCCEEDED);
  std::vector<std::string> consumers;
  for (const auto& c : lineage.consumers()) {
    consumers.push_back(absl::StrCat(c.run_id() == first.id() ? "first" : "second", "/",
                                     c.task_path(), "/", c.io_name()));
  }
  // The cached count-lines of the second run read the same artifact.
  EXPECT_THAT(consumers, UnorderedElementsAre("first/count-lines/data", "second/count-lines/data"));
  ASSERT_EQ(lineage.republished_by_size(), 1);
  EXPECT_EQ(lineage.republished_by(0).run_id(), second.id());
  EXPECT_EQ(lineage.republished_by(0).task_path(), "make-data");
  EXPECT_EQ(lineage.republished_by(0).task_state(), pb::PIPELINE_TASK_STATE_CACHED);

  get.set_artifact_id("nope");
  grpc::Status missing = catalog_->GetArtifact(Bob().get(), get, &fetched);
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(missing.error_message(), "artifact_id: artifact \"nope\" does not exist");
  lineage_request.set_artifact_id("nope");
  EXPECT_EQ(catalog_->GetArtifactLineage(Bob().get(), lineage_request, &lineage).error_code(),
            grpc::StatusCode::NOT_FOUND);
}

TEST_F(PipelineCatalogTest, CacheListAndPruneNamedThenAll) {
  RunToEnd("artifacts.yaml");
  std::vector<std::string> fingerprints = CacheFingerprints();
  ASSERT_EQ(fingerprints.size(), 2u);  // make-data and count-lines

  // One cache serves every queue: only holders of delete_queue prune it, even expired entries.
  pb::PruneCacheResponse pruned;
  pb::PruneCacheRequest everything;
  everything.set_all(true);
  grpc::Status denied = catalog_->PruneCache(Bob().get(), everything, &pruned);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(denied.error_message(), HasSubstr("may not prune the step cache"));
  EXPECT_THAT(denied.error_message(), HasSubstr("delete_queue"));
  EXPECT_EQ(catalog_->PruneCache(Bob().get(), {}, &pruned).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(CacheFingerprints().size(), 2u);

  // Nothing expires without a TTL.
  ASSERT_TRUE(catalog_->PruneCache(Alice().get(), {}, &pruned).ok());
  EXPECT_EQ(pruned.deleted(), 0);

  pb::PruneCacheRequest named;
  named.add_fingerprints(fingerprints[0]);
  named.add_fingerprints("0000");  // unknown: not counted
  ASSERT_TRUE(catalog_->PruneCache(Alice().get(), named, &pruned).ok());
  EXPECT_EQ(pruned.deleted(), 1);
  EXPECT_THAT(CacheFingerprints(), ElementsAre(fingerprints[1]));

  pb::PruneCacheRequest both;
  both.set_all(true);
  both.add_fingerprints(fingerprints[1]);
  EXPECT_EQ(catalog_->PruneCache(Alice().get(), both, &pruned).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  pb::PruneCacheRequest all;
  all.set_all(true);
  ASSERT_TRUE(catalog_->PruneCache(Alice().get(), all, &pruned).ok());
  EXPECT_EQ(pruned.deleted(), 1);
  EXPECT_TRUE(CacheFingerprints().empty());

  // With the cache gone, the same pipeline runs its steps again.
  pb::PipelineRun again = RunToEnd("artifacts.yaml");
  for (const pb::PipelineTask& task : again.tasks()) {
    EXPECT_EQ(task.state(), pb::PIPELINE_TASK_STATE_SUCCEEDED) << task.path();
  }
}

class PipelineCatalogTtlTest : public PipelineCatalogTest {
 protected:
  void SetUp() override {
    extra_overrides_ = {"pipelines.cacheTtl=3s"};
    PipelineCatalogTest::SetUp();
  }
};

TEST_F(PipelineCatalogTtlTest, PruneWithoutArgumentsDeletesOnlyExpiredEntries) {
  RunToEnd("artifacts.yaml");
  ASSERT_EQ(CacheFingerprints().size(), 2u);
  absl::SleepFor(absl::Milliseconds(3100));
  RunToEnd("params.yaml");  // fresh entries, not expired yet
  const size_t total = CacheFingerprints().size();
  ASSERT_GT(total, 2u);
  pb::PruneCacheResponse pruned;
  ASSERT_TRUE(catalog_->PruneCache(Alice().get(), {}, &pruned).ok());
  EXPECT_EQ(pruned.deleted(), 2);
  EXPECT_EQ(CacheFingerprints().size(), total - 2);
}

}  // namespace
}  // namespace regatta::testing
