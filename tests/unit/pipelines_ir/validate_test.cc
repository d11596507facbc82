#include "src/pipelines/ir/validate.h"

#include <functional>
#include <ostream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/pipelines/ir/parse.h"
#include "tests/unit/pipelines_ir/testdata.h"

namespace regatta::pipelines::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

PipelineSpec MustParse(const std::string& file) {
  absl::StatusOr<PipelineSpec> spec = ParsePipelineSpec(ReadPipelineFile(file));
  EXPECT_TRUE(spec.ok()) << file << ": " << spec.status();
  return spec.ok() ? *std::move(spec) : PipelineSpec{};
}

TEST(ValidatePipelineSpecTest, AllTestPipelinesAreValid) {
  for (const char* file : {"hello_world.yaml", "producer_consumer.yaml", "artifact_passing.yaml",
                           "condition.yaml", "parallel_for.yaml", "exit_handler.yaml",
                           "importer.yaml", "parallel_for_artifacts.yaml", "if_else_oneof.yaml"}) {
    EXPECT_TRUE(ValidatePipelineSpec(MustParse(file)).ok())
        << file << ": " << ValidatePipelineSpec(MustParse(file));
  }
}

TEST(ValidatePipelineSpecTest, SchemaVersion20IsAccepted) {
  PipelineSpec spec = MustParse("hello_world.yaml");
  spec.schema_version = "2.0.0";
  EXPECT_TRUE(ValidatePipelineSpec(spec).ok());
}

struct InvalidCase {
  std::string name;
  std::string file;
  std::function<void(PipelineSpec&)> mutate;
  std::string error;

  // Failure messages show the case name, not the struct's bytes.
  friend void PrintTo(const InvalidCase& c, std::ostream* os) { *os << c.name; }
};

class InvalidSpecTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(InvalidSpecTest, NamesThePath) {
  const InvalidCase& c = GetParam();
  PipelineSpec spec = MustParse(c.file);
  ASSERT_TRUE(ValidatePipelineSpec(spec).ok());
  c.mutate(spec);
  absl::Status status = ValidatePipelineSpec(spec);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), c.error);
}

TaskSpec& RootTask(PipelineSpec& spec, const std::string& name) {
  return spec.root.dag->tasks.at(name);
}

INSTANTIATE_TEST_SUITE_P(
    Rules, InvalidSpecTest,
    ::testing::Values(
        InvalidCase{"SchemaVersion", "hello_world.yaml",
                    [](PipelineSpec& s) { s.schema_version = "1.0.0"; },
                    "schemaVersion: unsupported version '1.0.0' (expected 2.1.x or 2.0.x)"},
        InvalidCase{"MissingSchemaVersion", "hello_world.yaml",
                    [](PipelineSpec& s) { s.schema_version.clear(); }, "schemaVersion: missing"},
        InvalidCase{"MissingPipelineName", "hello_world.yaml",
                    [](PipelineSpec& s) { s.pipeline_info.name.clear(); },
                    "pipelineInfo.name: missing"},
        InvalidCase{"ComponentRefMissing", "producer_consumer.yaml",
                    [](PipelineSpec& s) { RootTask(s, "consumer").component_ref = "comp-nope"; },
                    "root.dag.tasks.consumer.componentRef.name: component 'comp-nope' does not "
                    "exist"},
        InvalidCase{"ExecutorLabelMissing", "hello_world.yaml",
                    [](PipelineSpec& s) { s.executors.erase("exec-say-hello"); },
                    "components.comp-say-hello.executorLabel: executor 'exec-say-hello' does not "
                    "exist in deploymentSpec.executors"},
        InvalidCase{"DependentTaskMissing", "producer_consumer.yaml",
                    [](PipelineSpec& s) { RootTask(s, "consumer").dependent_tasks = {"prod"}; },
                    "root.dag.tasks.consumer.dependentTasks: task 'prod' does not exist"},
        InvalidCase{"ProducerTaskMissing", "producer_consumer.yaml",
                    [](PipelineSpec& s) {
                      RootTask(s, "consumer").input_parameters.at("text").producer_task = "prod";
                    },
                    "root.dag.tasks.consumer.inputs.parameters.text: producer task 'prod' does "
                    "not exist"},
        InvalidCase{"ProducerInAnotherDag", "parallel_for.yaml",
                    [](PipelineSpec& s) {
                      // add-offset exists, but inside the loop's sub-DAG, not the root DAG.
                      RootTask(s, "sum-all").input_parameters.at("nums").producer_task =
                          "add-offset";
                    },
                    "root.dag.tasks.sum-all.inputs.parameters.nums: producer task 'add-offset' "
                    "does not exist"},
        InvalidCase{"OutputParameterKeyMissing", "producer_consumer.yaml",
                    [](PipelineSpec& s) {
                      RootTask(s, "consumer").input_parameters.at("text").output_parameter_key =
                          "Result";
                    },
                    "root.dag.tasks.consumer.inputs.parameters.text: producer task 'producer' "
                    "has no output parameter 'Result'"},
        InvalidCase{"OutputArtifactKeyMissing", "artifact_passing.yaml",
                    [](PipelineSpec& s) {
                      RootTask(s, "train").input_artifacts.at("dataset").output_artifact_key =
                          "data";
                    },
                    "root.dag.tasks.train.inputs.artifacts.dataset: producer task 'make-dataset' "
                    "has no output artifact 'data'"},
        InvalidCase{"ComponentInputParameterMissing", "condition.yaml",
                    [](PipelineSpec& s) {
                      s.components.at("comp-condition-2")
                          .dag->tasks.at("print-heads")
                          .input_parameters.at("msg")
                          .component_input_parameter = "pipelinechannel--coin";
                    },
                    "components.comp-condition-2.dag.tasks.print-heads.inputs.parameters.msg: "
                    "component input parameter 'pipelinechannel--coin' is not an input of the "
                    "enclosing component 'comp-condition-2'"},
        InvalidCase{"InputNotDeclaredByComponent", "hello_world.yaml",
                    [](PipelineSpec& s) {
                      RootTask(s, "say-hello").input_parameters["volume"] =
                          TaskInputParameter{.constant = json(11)};
                    },
                    "root.dag.tasks.say-hello.inputs.parameters.volume: 'volume' is not an input "
                    "parameter of component 'comp-say-hello'"},
        InvalidCase{
            "RequiredInputNotSupplied", "producer_consumer.yaml",
            [](PipelineSpec& s) { RootTask(s, "consumer").input_parameters.erase("count"); },
            "root.dag.tasks.consumer.inputs.parameters: required input 'count' of "
            "component 'comp-consumer' is not supplied"},
        InvalidCase{"RequiredArtifactNotSupplied", "artifact_passing.yaml",
                    [](PipelineSpec& s) { RootTask(s, "train").input_artifacts.clear(); },
                    "root.dag.tasks.train.inputs.artifacts: required input artifact 'dataset' of "
                    "component 'comp-train' is not supplied"},
        InvalidCase{"DependencyCycle", "producer_consumer.yaml",
                    [](PipelineSpec& s) { RootTask(s, "producer").dependent_tasks = {"consumer"}; },
                    "root.dag.tasks: dependency cycle consumer -> producer -> consumer"},
        InvalidCase{"ItemInputNotAnInput", "parallel_for.yaml",
                    [](PipelineSpec& s) {
                      RootTask(s, "for-loop-2").parameter_iterator->item_input = "item";
                    },
                    "root.dag.tasks.for-loop-2.parameterIterator.itemInput: 'item' is not an "
                    "input parameter of component 'comp-for-loop-2'"},
        InvalidCase{"IteratorItemsNotAnArray", "parallel_for.yaml",
                    [](PipelineSpec& s) {
                      RootTask(s, "for-loop-2").parameter_iterator->items_raw = "{\"a\": 1}";
                    },
                    "root.dag.tasks.for-loop-2.parameterIterator.items.raw: must be a JSON array"},
        InvalidCase{"IteratorItemsInputNotSupplied", "parallel_for.yaml",
                    [](PipelineSpec& s) {
                      ParameterIterator& it = *RootTask(s, "for-loop-2").parameter_iterator;
                      it.items_raw.reset();
                      it.items_input_parameter = "numbers";
                    },
                    "root.dag.tasks.for-loop-2.parameterIterator.items.inputParameter: 'numbers' "
                    "is not an input parameter of this task"},
        InvalidCase{"TaskFinalStatusOutsideExitHandler", "exit_handler.yaml",
                    [](PipelineSpec& s) { RootTask(s, "exit-op").dependent_tasks.clear(); },
                    "root.dag.tasks.exit-op.inputs.parameters.status: taskFinalStatus producer "
                    "'exit-handler-1' must be listed in dependentTasks"},
        InvalidCase{"TaskFinalStatusFromAnotherSource", "exit_handler.yaml",
                    [](PipelineSpec& s) {
                      RootTask(s, "exit-op").input_parameters.at("status") =
                          TaskInputParameter{.constant = json("SUCCEEDED")};
                    },
                    "root.dag.tasks.exit-op.inputs.parameters.status: a TASK_FINAL_STATUS input "
                    "takes exactly a taskFinalStatus source (or the enclosing component's "
                    "TASK_FINAL_STATUS input)"},
        InvalidCase{"EmptyImage", "hello_world.yaml",
                    [](PipelineSpec& s) { s.executors.at("exec-say-hello").container.image = ""; },
                    "deploymentSpec.executors.exec-say-hello.container.image: must not be empty"},
        InvalidCase{"NegativeParallelismLimit", "parallel_for.yaml",
                    [](PipelineSpec& s) { RootTask(s, "for-loop-2").parallelism_limit = -1; },
                    "root.dag.tasks.for-loop-2.iteratorPolicy.parallelismLimit: must be >= 0, "
                    "got -1"},
        InvalidCase{"NegativeRetryCount", "exit_handler.yaml",
                    [](PipelineSpec& s) {
                      s.components.at("comp-exit-handler-1")
                          .dag->tasks.at("fail-op")
                          .retry_policy->max_retry_count = -2;
                    },
                    "components.comp-exit-handler-1.dag.tasks.fail-op.retryPolicy.maxRetryCount: "
                    "must be >= 0, got -2"},
        InvalidCase{"NegativeBackoff", "exit_handler.yaml",
                    [](PipelineSpec& s) {
                      s.components.at("comp-exit-handler-1")
                          .dag->tasks.at("fail-op")
                          .retry_policy->backoff_duration = absl::Seconds(-1);
                    },
                    "components.comp-exit-handler-1.dag.tasks.fail-op.retryPolicy."
                    "backoffDuration: must be >= 0"},
        InvalidCase{"DefaultOfWrongType", "producer_consumer.yaml",
                    [](PipelineSpec& s) {
                      s.root.input_definitions.parameters.at("count").default_value = json("3");
                    },
                    "root.inputDefinitions.parameters.count.defaultValue: \"3\" is not a "
                    "NUMBER_INTEGER"},
        InvalidCase{"DagOutputProducerMissing", "hello_world.yaml",
                    [](PipelineSpec& s) {
                      s.root.dag->output_parameters.at("Output").selectors[0].producer_subtask =
                          "greet";
                    },
                    "root.dag.outputs.parameters.Output: producer task 'greet' does not exist"},
        InvalidCase{"DagOutputNotDeclared", "artifact_passing.yaml",
                    [](PipelineSpec& s) { s.root.output_definitions.artifacts.clear(); },
                    "root.dag.outputs.artifacts.train-metrics: 'train-metrics' is not in "
                    "outputDefinitions.artifacts"},
        InvalidCase{"ArtifactItemInputNotAnInput", "parallel_for_artifacts.yaml",
                    [](PipelineSpec& s) {
                      RootTask(s, "for-loop-2").artifact_iterator->item_input = "item";
                    },
                    "root.dag.tasks.for-loop-2.artifactIterator.itemInput: 'item' is not an "
                    "input artifact of component 'comp-for-loop-2'"},
        InvalidCase{"ArtifactItemsNotSupplied", "parallel_for_artifacts.yaml",
                    [](PipelineSpec& s) {
                      RootTask(s, "for-loop-2").artifact_iterator->items_input_artifact = "all";
                    },
                    "root.dag.tasks.for-loop-2.artifactIterator.items.inputArtifact: 'all' is "
                    "not an input artifact of this task"},
        InvalidCase{"OneOfSelectorKeyMissing", "if_else_oneof.yaml",
                    [](PipelineSpec& s) {
                      s.components.at("comp-condition-branches-1")
                          .dag->output_parameters
                          .at("pipelinechannel--condition-branches-1-oneof-1")
                          .selectors[1]
                          .output_parameter_key = "Output";
                    },
                    "components.comp-condition-branches-1.dag.outputs.parameters."
                    "pipelinechannel--condition-branches-1-oneof-1: producer task 'condition-3' "
                    "has no output parameter 'Output'"},
        InvalidCase{"ImporterRuntimeParameterMissing", "importer.yaml",
                    [](PipelineSpec& s) {
                      s.executors.at("exec-importer-2").importer.artifact_uri.runtime_parameter =
                          "url";
                    },
                    "deploymentSpec.executors.exec-importer-2.importer.artifactUri."
                    "runtimeParameter: 'url' is not an input parameter of component "
                    "'comp-importer-2'"}),
    [](const ::testing::TestParamInfo<InvalidCase>& info) { return info.param.name; });

TEST(TopologicalOrderTest, UpstreamBeforeDownstreamTiesByName) {
  DagSpec dag;
  auto add = [&](const std::string& name, std::vector<std::string> deps) {
    TaskSpec& t = dag.tasks[name];
    t.name = name;
    t.dependent_tasks = std::move(deps);
  };
  add("d", {"b", "c"});
  add("c", {"a"});
  add("b", {"a"});
  add("a", {});
  add("e", {});
  TaskInputParameter from_e;
  from_e.kind = TaskInputParameter::Kind::kTaskOutputParameter;
  from_e.producer_task = "e";
  from_e.output_parameter_key = "out";
  dag.tasks["a"].input_parameters["x"] = from_e;
  absl::StatusOr<std::vector<std::string>> order = TopologicalOrder(dag);
  ASSERT_TRUE(order.ok()) << order.status();
  EXPECT_THAT(*order, ElementsAre("e", "a", "b", "c", "d"));
}

TEST(TopologicalOrderTest, SelfDependencyIsACycle) {
  DagSpec dag;
  dag.tasks["a"].dependent_tasks = {"a"};
  EXPECT_THAT(TopologicalOrder(dag).status().message(), HasSubstr("dependency cycle a -> a"));
}

TEST(TopologicalOrderTest, TaskFinalStatusProducerIsUpstream) {
  PipelineSpec spec = MustParse("exit_handler.yaml");
  EXPECT_THAT(UpstreamTasks(spec.root.dag->tasks.at("exit-op")), ElementsAre("exit-handler-1"));
  absl::StatusOr<std::vector<std::string>> order = TopologicalOrder(*spec.root.dag);
  ASSERT_TRUE(order.ok());
  EXPECT_THAT(*order, ElementsAre("exit-handler-1", "exit-op"));
}

}  // namespace
}  // namespace regatta::pipelines::ir
