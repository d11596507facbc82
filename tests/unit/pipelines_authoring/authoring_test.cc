// CompileAuthoring: each construct of the authoring YAML compiles to the IR the kfp SDK emits
// for the same pipeline (two test pipelines rebuilt and compared whole), and the result is valid.
#include "src/pipelines/authoring/authoring.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/pipelines/cel/condition.h"
#include "src/pipelines/ir/parse.h"
#include "src/pipelines/ir/validate.h"
#include "src/pipelines/ir/write.h"

namespace regatta::pipelines::authoring {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;
using ir::ParameterType;
using ir::TaskInputParameter;

std::string ReadTestPipeline(const std::string& name) {
  std::ifstream in(std::string(REGATTA_PIPELINE_TESTDATA_DIR) + "/" + name);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

ir::PipelineSpec MustCompile(const std::string& yaml) {
  absl::StatusOr<ir::PipelineSpec> spec = CompileAuthoring(yaml);
  EXPECT_TRUE(spec.ok()) << spec.status();
  if (!spec.ok()) return {};
  EXPECT_TRUE(ir::ValidatePipelineSpec(*spec).ok());
  return *std::move(spec);
}

// The IR as JSON without what legitimately differs from an SDK-compiled file.
nlohmann::ordered_json Comparable(ir::PipelineSpec spec) {
  spec.sdk_version.clear();
  // The SDK writes integer defaults as doubles (10.0); the compiler keeps the integer.
  for (auto& [name, parameter] : spec.root.input_definitions.parameters) {
    if (parameter.default_value && parameter.default_value->is_number_float() &&
        parameter.parameter_type == ParameterType::kNumberInteger) {
      parameter.default_value = parameter.default_value->get<int64_t>();
    }
  }
  return ir::PipelineSpecToJson(spec);
}

TEST(CompileAuthoringTest, ParallelForWithFanInIsWhatTheSdkEmits) {
  ir::PipelineSpec compiled = MustCompile(R"(
name: parallel-for
params:
  offset: {type: int, default: 10}
tasks:
  add-offset:
    image: alpine:3.20
    for_each: {items: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], parallelism: 5, as: num}
    inputs: {num: num, offset: params.offset}
    command: [sh, -c]
    args: ['echo -n $(($0 + $1)) > "$2"', '{{inputs.num}}', '{{inputs.offset}}',
           '{{outputs.Output}}']
    outputs: {Output: int}
    retry: {max: 2, backoff: 1s, factor: 2, max_backoff: 60s}
  sum-all:
    image: stedolan/jq
    inputs: {nums: 'add-offset.Output[*]'}
    command: [sh, -c]
    args: ['echo "$0" | jq add > "$1"', '{{inputs.nums}}', '{{outputs.Output}}']
    outputs: {Output: int}
outputs:
  Output: sum-all.Output
)");
  absl::StatusOr<ir::PipelineSpec> sdk =
      ir::LoadPipelineSpec(ReadTestPipeline("parallel_for.yaml"));
  ASSERT_TRUE(sdk.ok()) << sdk.status();
  // The SDK names the collected channel after the loop's output; ours is the same name.
  EXPECT_EQ(Comparable(compiled).dump(2), Comparable(*sdk).dump(2));
}

TEST(CompileAuthoringTest, ExitHandlerIsWhatTheSdkEmits) {
  ir::PipelineSpec compiled = MustCompile(R"(
name: exit-handler
params:
  message: {type: str, default: Hello World!}
tasks:
  print-op:
    image: alpine:3.20
    inputs: {message: params.message}
    command: [echo]
    args: ['{{inputs.message}}']
  fail-op:
    image: alpine:3.20
    after: print-op
    inputs: {message: Task failed.}
    command: [sh, -c]
    args: ['echo "$0"; exit 1', '{{inputs.message}}']
    retry: {max: 3, backoff: 0s}
exit_handler:
  exit-op:
    image: registry.example.com/status-reporter:1.0
    inputs: {status: $status, user_input: params.message}
    command: [/bin/report-status]
    args: [--executor_input, '{{$}}']
)");
  absl::StatusOr<ir::PipelineSpec> sdk =
      ir::LoadPipelineSpec(ReadTestPipeline("exit_handler.yaml"));
  ASSERT_TRUE(sdk.ok()) << sdk.status();
  // The SDK names the exit handler's task after the pipeline function (my_pipeline); the
  // compiler after the pipeline.
  EXPECT_EQ(compiled.root.dag->tasks.at("exit-handler-1").display_name, "exit-handler");
  sdk->root.dag->tasks.at("exit-handler-1").display_name = "exit-handler";
  EXPECT_EQ(Comparable(compiled).dump(2), Comparable(*sdk).dump(2));
}

}  // namespace
}  // namespace regatta::pipelines::authoring
