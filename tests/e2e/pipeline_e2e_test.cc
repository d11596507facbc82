// Pipelines through the built binary: `regatta up`, `regatta pipeline run --watch`, the cache,
// lineage, and a kill -9 of the server in the middle of a run.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/up_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;

std::string TestPipeline(const std::string& name) {
  return std::string(REGATTA_PIPELINE_TESTDATA_DIR) + "/run/" + name;
}

class PipelineE2eTest : public UpFixture {
 protected:
  nlohmann::json GetRun(const std::string& id) {
    RunResult r = Cli({"run", "get", id, "-o", "json"});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return nlohmann::json::parse(r.out, nullptr, false);
  }

  static const nlohmann::json* TaskOf(const nlohmann::json& run, const std::string& path) {
    if (!run.contains("tasks")) return nullptr;
    for (const auto& task : run["tasks"]) {
      if (task.value("path", "") == path) return &task;
    }
    return nullptr;
  }
};

TEST_F(PipelineE2eTest, RunWatchCacheAndLineage) {
  RunResult first = Cli({"pipeline", "run", TestPipeline("artifacts.yaml"), "-p", "rows=7",
                         "--watch", "--timeout", "60s"});
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  EXPECT_THAT(first.out, HasSubstr("count-lines SUCCEEDED"));
  EXPECT_THAT(first.out, HasSubstr("run SUCCEEDED"));
  EXPECT_THAT(first.out, HasSubstr("Output lines:"));

  RunResult second = Cli({"pipeline", "run", TestPipeline("artifacts.yaml"), "-p", "rows=7",
                          "--watch", "--timeout", "60s", "-o", "json"});
  ASSERT_EQ(second.exit_code, 0) << second.err;
  nlohmann::json summary = nlohmann::json::parse(second.out, nullptr, false);
  ASSERT_TRUE(summary.is_object()) << second.out;
  nlohmann::json run = GetRun(summary["id"]);
  ASSERT_EQ(run["tasks"].size(), 2u);
  std::string dataset;
  for (const auto& task : run["tasks"]) {
    EXPECT_EQ(task["state"], "PIPELINE_TASK_STATE_CACHED") << task.dump();
    EXPECT_FALSE(task.contains("jobIds")) << task.dump();
    if (task["path"] == "make-data") {
      dataset = task["outputArtifacts"]["dataset"]["artifacts"][0]["id"];
    }
  }
  ASSERT_FALSE(dataset.empty());
  RunResult lineage = Cli({"lineage", dataset});
  ASSERT_EQ(lineage.exit_code, 0) << lineage.err;
  EXPECT_THAT(lineage.out, HasSubstr("make-data"));
  EXPECT_THAT(lineage.out, HasSubstr("count-lines"));
  RunResult cache = Cli({"cache", "list", "-o", "json"});
  ASSERT_EQ(cache.exit_code, 0) << cache.err;
  EXPECT_EQ(nlohmann::json::parse(cache.out)["entries"].size(), 2u);
}

TEST_F(PipelineE2eTest, AFailedRunExitsOne) {
  RunResult r =
      Cli({"pipeline", "run", TestPipeline("exit_handler.yaml"), "--watch", "--timeout", "60s"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("exit-op SUCCEEDED"));
  EXPECT_THAT(r.out, HasSubstr("run FAILED"));
}

TEST_F(PipelineE2eTest, KillNineMidRunThenTheRunCompletesAfterTheRestart) {
  RunResult created =
      Cli({"pipeline", "run", TestPipeline("sleepy.yaml"), "-p", "seconds=2", "-o", "json"});
  ASSERT_EQ(created.exit_code, 0) << created.err;
  nlohmann::json created_run = nlohmann::json::parse(created.out, nullptr, false);
  ASSERT_TRUE(created_run.is_object()) << created.out;
  const std::string id = created_run["id"];
  bool napping = false;
  for (int i = 0; i < 600 && !napping; ++i) {
    const nlohmann::json run = GetRun(id);
    const nlohmann::json* nap = TaskOf(run, "nap");
    napping = nap != nullptr && (*nap)["state"] == "PIPELINE_TASK_STATE_RUNNING";
    if (!napping) usleep(20000);
  }
  ASSERT_TRUE(napping);
  up_->Kill(SIGKILL);
  StartUp();
  RunResult watched = Cli({"run", "watch", id, "--timeout", "90s"});
  EXPECT_EQ(watched.exit_code, 0) << watched.out << watched.err;
  nlohmann::json run = GetRun(id);
  EXPECT_EQ(run["state"], "PIPELINE_RUN_STATE_SUCCEEDED") << run.dump();
  EXPECT_EQ(run["outputs"]["result"], "\"rested well\"");
  // The step that was running when the server died was not started twice by the pipeline.
  EXPECT_EQ((*TaskOf(run, "nap"))["jobIds"].size(), 1u);
}

}  // namespace
}  // namespace regatta::testing
