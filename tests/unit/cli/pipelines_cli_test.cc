// The pipeline catalogue verbs against an in-process fake PipelineService: upload (new pipeline
// and new version), list with paging, lineage as a tree, cache prune flags.
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "regatta/v1/pipeline_service.grpc.pb.h"
#include "src/cli/app.h"
#include "tests/unit/cli/fake_server_test_base.h"

namespace regatta::cli {
namespace {

namespace v1 = regatta::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Pipelines by name; lists them one per page to exercise paging.
class FakeCatalog final : public v1::PipelineService::Service {
 public:
  grpc::Status CreatePipeline(grpc::ServerContext*, const v1::CreatePipelineRequest* r,
                              v1::CreatePipelineResponse* out) override {
    absl::MutexLock lock(&mu);
    if (absl::StrContains(r->spec(), "bad")) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          "line 1, column 15: pipelineInfo.name: invalid");
    }
    for (const v1::Pipeline& p : pipelines) {
      if (p.name() == r->name()) {
        return grpc::Status(grpc::StatusCode::ALREADY_EXISTS,
                            absl::StrCat("name: pipeline \"", r->name(), "\" already exists"));
      }
    }
    v1::Pipeline& p = pipelines.emplace_back();
    p.set_id(absl::StrCat("p", pipelines.size()));
    p.set_name(r->name());
    p.set_owner("alice");
    *out->mutable_pipeline() = p;
    out->mutable_version()->set_id("ver-1");
    out->mutable_version()->set_name(r->version_name().empty() ? "v1" : r->version_name());
    last_spec = r->spec();
    return grpc::Status::OK;
  }
  grpc::Status CreatePipelineVersion(grpc::ServerContext*,
                                     const v1::CreatePipelineVersionRequest* r,
                                     v1::PipelineVersion* out) override {
    absl::MutexLock lock(&mu);
    last_version = *r;
    out->set_id("ver-2");
    out->set_name(r->name());
    return grpc::Status::OK;
  }
  grpc::Status ListPipelines(grpc::ServerContext*, const v1::ListPipelinesRequest* r,
                             v1::ListPipelinesResponse* out) override {
    absl::MutexLock lock(&mu);
    const size_t index = r->page_token().empty() ? 0 : std::stoul(r->page_token());
    if (index < pipelines.size()) *out->add_pipelines() = pipelines[index];
    if (index + 1 < pipelines.size()) out->set_next_page_token(std::to_string(index + 1));
    return grpc::Status::OK;
  }
  grpc::Status GetArtifactLineage(grpc::ServerContext*, const v1::GetArtifactLineageRequest* r,
                                  v1::ArtifactLineageResponse* out) override {
    v1::PipelineArtifact& a = *out->mutable_artifact();
    a.set_id(r->artifact_id());
    a.set_name("dataset");
    a.set_schema_title("system.Dataset");
    a.set_uri("file:///art/r1/make-data/dataset");
    auto ref = [](v1::LineageTaskRef* t, const char* run, const char* task, const char* io,
                  v1::PipelineTaskState state) {
      t->set_run_id(run);
      t->set_task_path(task);
      t->set_io_name(io);
      t->set_task_state(state);
    };
    ref(out->mutable_producer(), "r1", "make-data", "dataset", v1::PIPELINE_TASK_STATE_SUCCEEDED);
    ref(out->add_consumers(), "r1", "count-lines", "data", v1::PIPELINE_TASK_STATE_SUCCEEDED);
    ref(out->add_consumers(), "r2", "count-lines", "data", v1::PIPELINE_TASK_STATE_CACHED);
    ref(out->add_republished_by(), "r2", "make-data", "dataset", v1::PIPELINE_TASK_STATE_CACHED);
    return grpc::Status::OK;
  }
  grpc::Status PruneCache(grpc::ServerContext*, const v1::PruneCacheRequest* r,
                          v1::PruneCacheResponse* out) override {
    absl::MutexLock lock(&mu);
    last_prune = *r;
    out->set_deleted(r->all() ? 7 : r->fingerprints_size());
    return grpc::Status::OK;
  }

  absl::Mutex mu;
  std::vector<v1::Pipeline> pipelines;
  std::string last_spec;
  v1::CreatePipelineVersionRequest last_version;
  v1::PruneCacheRequest last_prune;
};

class PipelinesCliTest : public FakeServerCliTest {
 protected:
  void SetUp() override {
    StartServer(&catalog_);
    spec_file_ = absl::StrCat(::testing::TempDir(), "/pipelines_cli_test.yaml");
    std::ofstream(spec_file_) << "pipelineInfo: {name: x}\n";
  }

  FakeCatalog catalog_;
  std::string spec_file_;
};

TEST_F(PipelinesCliTest, UploadErrorAboutTheSpecNamesTheFile) {
  std::ofstream(spec_file_) << "pipelineInfo: {name: bad}\n";
  Result r = Run({"pipeline", "upload", spec_file_, "--name", "counting"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, absl::StrCat("regatta: pipeline upload: INVALID_ARGUMENT: ", spec_file_,
                                ": line 1, column 15: pipelineInfo.name: invalid\n"));
}

TEST_F(PipelinesCliTest, UploadCreatesThePipelineThenAddsVersions) {
  Result r = Run({"pipeline", "upload", spec_file_, "--name", "counting"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "pipeline counting (p1) created with version v1 (ver-1)\n");
  {
    absl::MutexLock lock(&catalog_.mu);
    EXPECT_EQ(catalog_.last_spec, "pipelineInfo: {name: x}\n");
  }
  // The name is taken: without --version that is the error, with it a new version.
  r = Run({"pipeline", "upload", spec_file_, "--name", "counting"});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr("already exists"));
  r = Run({"pipeline", "upload", spec_file_, "--name", "counting", "--version", "v2",
           "--description", "faster"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "pipeline counting version v2 (ver-2) created\n");
  absl::MutexLock lock(&catalog_.mu);
  EXPECT_EQ(catalog_.last_version.pipeline(), "counting");
  EXPECT_EQ(catalog_.last_version.description(), "faster");

  EXPECT_EQ(Run({"pipeline", "upload", spec_file_}).code, 2);  // --name is required
}

TEST_F(PipelinesCliTest, ListPagesAndPrintsATableOrJson) {
  EXPECT_EQ(Run({"pipeline", "list"}).out, "No pipelines found.\n");
  for (const char* name : {"a", "b", "c"}) {
    ASSERT_EQ(Run({"pipeline", "upload", spec_file_, "--name", name}).code, 0);
  }
  Result r = Run({"pipeline", "list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "ID   NAME   OWNER   DESCRIPTION   AGE\n"
            "p1   a      alice\n"
            "p2   b      alice\n"
            "p3   c      alice\n");
  r = Run({"pipeline", "list", "-o", "json"});
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["pipelines"].size(), 3u);
  EXPECT_EQ(j["pipelines"][2]["name"], "c");
}

TEST_F(PipelinesCliTest, LineageIsATreeOfProducerConsumersAndRepublishers) {
  Result r = Run({"lineage", "a1"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "artifact a1 dataset (system.Dataset)\n"
            "  uri file:///art/r1/make-data/dataset\n"
            "├─ produced by r1/make-data output \"dataset\" SUCCEEDED\n"
            "├─ consumed by r1/count-lines input \"data\" SUCCEEDED\n"
            "├─ consumed by r2/count-lines input \"data\" CACHED\n"
            "└─ republished by r2/make-data output \"dataset\" CACHED\n");
  r = Run({"lineage", "a1", "-o", "json"});
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["consumers"].size(), 2u);
}

TEST_F(PipelinesCliTest, CachePruneFlags) {
  Result r = Run({"cache", "prune", "--fingerprint", "f1", "--fingerprint", "f2"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "2 entries deleted\n");
  {
    absl::MutexLock lock(&catalog_.mu);
    EXPECT_THAT(catalog_.last_prune.fingerprints(), ElementsAre("f1", "f2"));
    EXPECT_FALSE(catalog_.last_prune.all());
  }
  r = Run({"cache", "prune", "--all"});
  EXPECT_EQ(r.out, "7 entries deleted\n");
  r = Run({"cache", "prune", "--all", "--fingerprint", "f1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr("exclude each other"));
}

}  // namespace
}  // namespace regatta::cli
