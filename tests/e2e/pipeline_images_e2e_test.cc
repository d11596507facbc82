// End to end: kfp-compiled pipeline steps run in their components' images
// (pipelines.stepRunner=container): two lightweight Python components (the SDK's pip line, then
// kfp.dsl.executor_main, here the project's stand-in) and a container component, in the test
// image localhost/regatta-python:3.11-kfp2.7.0 built by scripts/test-images.sh python. Outputs
// pass between the steps through mounted artifact directories, the ExecutorOutput file is read,
// the cache and lineage work as for host steps, and a gs:// pipeline root lands in the buckets
// directory while the steps see kfp's /gcs/ paths. Skipped, saying why, where the machine cannot
// build the image or run containers.
#include <cstdlib>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/execution_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;

std::string Pipeline() {
  return absl::StrCat(REGATTA_SOURCE_DIR, "/tests/testdata/kfp/python_in_image.yaml");
}

class PipelineImagesTest : public ExecutionTest {
 protected:
  static void SetUpTestSuite() {
    const std::string err = ::testing::TempDir() + "/pipeline-images.err";
    const std::string script = absl::StrCat(REGATTA_SOURCE_DIR, "/scripts/test-images.sh");
    if (std::system(absl::StrCat(script, " probe 2> ", err).c_str()) != 0 ||
        std::system(absl::StrCat(script, " python > /dev/null 2> ", err).c_str()) != 0) {
      skip_reason_ = absl::StrCat("this machine cannot run the python test image: ", Slurp(err));
    }
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ExecutionTest::SetUp();
    StartServer("up", {"pipelines.stepRunner=container"});
  }

  // `pipeline run --watch` of the test pipeline; the run as `run get` shows it.
  json RunPipeline(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"pipeline", "run",       Pipeline(), "-p", "rows=4",
                                     "--watch",  "--timeout", "240s",     "-o", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    RunResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    json summary = json::parse(r.out, nullptr, false);
    if (!summary.is_object()) return json();
    RunResult got = Cli({"run", "get", summary.value("id", ""), "-o", "json"});
    EXPECT_EQ(got.exit_code, 0) << got.err;
    return json::parse(got.out, nullptr, false);
  }

  static json TaskOf(const json& run, const std::string& path) {
    if (run.is_object() && run.contains("tasks")) {
      for (const json& task : run["tasks"]) {
        if (task.value("path", "") == path) return task;
      }
    }
    return json::object();
  }

  static json Artifact(const json& task, const std::string& name) {
    return task["outputArtifacts"][name]["artifacts"][0];
  }

  static std::string PathOf(const std::string& uri) {
    absl::string_view path = uri;
    absl::ConsumePrefix(&path, "file://");
    return std::string(path);
  }

  static std::string skip_reason_;
};
std::string PipelineImagesTest::skip_reason_;

TEST_F(PipelineImagesTest, PythonAndContainerComponentsRunInTheirImageWithCacheAndLineage) {
  json run = RunPipeline();
  ASSERT_EQ(run.value("state", ""), "PIPELINE_RUN_STATE_SUCCEEDED") << run.dump(2);
  // make-rows ran in the image (its marker file) and reported through output_metadata.json.
  json make_rows = TaskOf(run, "make-rows");
  EXPECT_EQ(make_rows["outputParameters"].value("Output", ""), "40") << make_rows.dump(2);
  json table = Artifact(make_rows, "table");
  json metadata = json::parse(table.value("metadataJson", "{}"), nullptr, false);
  EXPECT_EQ(metadata.value("rows", 0), 4) << table.dump();
  EXPECT_EQ(metadata.value("inside", false), true) << "make-rows did not run in its image";
  EXPECT_EQ(Slurp(PathOf(table.value("uri", ""))), "row 0\nrow 1\nrow 2\nrow 3\n");
  // summarize read the upstream artifact, its metadata and parameter.
  json summarize = TaskOf(run, "summarize");
  EXPECT_EQ(summarize["outputParameters"].value("Output", ""), "\"4 rows, expected 40, from 4\"")
      << summarize.dump(2);
  json metrics = json::parse(Artifact(summarize, "metrics").value("metadataJson", "{}"));
  EXPECT_EQ(metrics.value("rows", 0), 4);
  // The container component wrote its artifact and its output parameter file.
  json shout = TaskOf(run, "shout");
  EXPECT_EQ(shout["outputParameters"].value("lines", ""), "\"4\"") << shout.dump(2);
  EXPECT_EQ(Slurp(PathOf(Artifact(shout, "loud").value("uri", ""))),
            "ROW 0\nROW 1\nROW 2\nROW 3\ndone\n");

  // The same run again: every step from the cache, no job.
  json again = RunPipeline();
  ASSERT_EQ(again.value("state", ""), "PIPELINE_RUN_STATE_SUCCEEDED") << again.dump(2);
  for (const json& task : again["tasks"]) {
    EXPECT_EQ(task.value("state", ""), "PIPELINE_TASK_STATE_CACHED") << task.dump();
  }
  RunResult lineage = Cli({"lineage", table.value("id", "")});
  ASSERT_EQ(lineage.exit_code, 0) << lineage.err;
  EXPECT_THAT(lineage.out, HasSubstr("make-rows"));
  EXPECT_THAT(lineage.out, HasSubstr("summarize"));
  EXPECT_THAT(lineage.out, HasSubstr("shout"));
}

TEST_F(PipelineImagesTest, ABucketRootIsKeptInTheBucketsDirectoryAndSeenAtKfpsPaths) {
  json run = RunPipeline({"--root", "gs://team-bucket/experiments", "--no-cache"});
  ASSERT_EQ(run.value("state", ""), "PIPELINE_RUN_STATE_SUCCEEDED") << run.dump(2);
  const std::string uri = Artifact(TaskOf(run, "shout"), "loud").value("uri", "");
  ASSERT_TRUE(absl::StartsWith(uri, "gs://team-bucket/experiments/")) << uri;
  // On the host under <dataDir>/buckets/gcs/, in the step at /gcs/ (where it wrote it).
  const std::string host =
      (dir_ / "data" / "buckets" / "gcs").string() + uri.substr(std::string("gs:/").size());
  EXPECT_EQ(Slurp(host), "ROW 0\nROW 1\nROW 2\nROW 3\ndone\n") << host;
  EXPECT_EQ(TaskOf(run, "summarize")["outputParameters"].value("Output", ""),
            "\"4 rows, expected 40, from 4\"");
}

}  // namespace
}  // namespace regatta::testing
