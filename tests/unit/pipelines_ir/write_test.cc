// PipelineSpecToJson: what it writes parses back to the same model (round trip over every test
// pipeline), in the IR's names.
#include "src/pipelines/ir/write.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/pipelines/ir/parse.h"
#include "tests/unit/pipelines_ir/testdata.h"

namespace regatta::pipelines::ir {
namespace {

class WriteRoundTripTest : public ::testing::TestWithParam<std::string> {};

TEST_P(WriteRoundTripTest, WrittenSpecParsesBackToTheSameSpec) {
  absl::StatusOr<PipelineSpec> original = LoadPipelineSpec(ReadPipelineFile(GetParam()));
  ASSERT_TRUE(original.ok()) << original.status();
  const std::string written = PipelineSpecToJson(*original).dump();
  absl::StatusOr<PipelineSpec> reread = LoadPipelineSpec(written);
  ASSERT_TRUE(reread.ok()) << reread.status() << "\n" << written;
  // The model has no operator==: equal models write equal JSON, and every field is written.
  EXPECT_EQ(PipelineSpecToJson(*reread).dump(), written);
}

INSTANTIATE_TEST_SUITE_P(TestPipelines, WriteRoundTripTest,
                         ::testing::Values("hello_world.yaml", "producer_consumer.yaml",
                                           "artifact_passing.yaml", "condition.yaml",
                                           "parallel_for.yaml", "exit_handler.yaml",
                                           "importer.yaml", "parallel_for_artifacts.yaml",
                                           "if_else_oneof.yaml"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           return name;
                         });

TEST(WriteTest, UsesTheIrNamesAndKeepsWhatTheDriverNeeds) {
  absl::StatusOr<PipelineSpec> spec = LoadPipelineSpec(ReadPipelineFile("parallel_for.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  nlohmann::ordered_json json = PipelineSpecToJson(*spec);
  EXPECT_EQ(json["schemaVersion"], "2.1.0");
  EXPECT_EQ(json["pipelineInfo"]["name"], "parallel-for");
  const auto& loop = json["root"]["dag"]["tasks"]["for-loop-2"];
  EXPECT_EQ(loop["iteratorPolicy"]["parallelismLimit"], 5);
  EXPECT_TRUE(loop.contains("parameterIterator"));
  EXPECT_EQ(loop["componentRef"]["name"], spec->root.dag->tasks.at("for-loop-2").component_ref);
  EXPECT_FALSE(json.contains("platformSpec"));  // the second document is not part of this one
}

}  // namespace
}  // namespace regatta::pipelines::ir
