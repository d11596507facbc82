#include "src/pipelines/ir/parse.h"

#include <cmath>
#include <ostream>
#include <string>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/pipelines/ir/write.h"
#include "tests/unit/pipelines_ir/testdata.h"

namespace regatta::pipelines::ir {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

PipelineSpec MustLoad(const std::string& file) {
  absl::StatusOr<PipelineSpec> spec = LoadPipelineSpec(ReadPipelineFile(file));
  EXPECT_TRUE(spec.ok()) << file << ": " << spec.status();
  return spec.ok() ? *std::move(spec) : PipelineSpec{};
}

TEST(ParsePipelineSpecTest, HelloWorldWithPlatformSpec) {
  PipelineSpec spec = MustLoad("hello_world.yaml");
  EXPECT_EQ(spec.pipeline_info.name, "hello-world");
  EXPECT_EQ(spec.pipeline_info.display_name, "Hello world");
  EXPECT_EQ(spec.pipeline_info.description, "One container step that echoes a greeting.");
  EXPECT_EQ(spec.schema_version, "2.1.0");
  EXPECT_EQ(spec.sdk_version, "kfp-2.13.0");

  const ParameterSpec& recipient = spec.root.input_definitions.parameters.at("recipient");
  EXPECT_EQ(recipient.parameter_type, ParameterType::kString);
  EXPECT_TRUE(recipient.is_optional);
  EXPECT_EQ(recipient.default_value, json("World"));

  ASSERT_TRUE(spec.root.dag.has_value());
  const TaskSpec& task = spec.root.dag->tasks.at("say-hello");
  EXPECT_EQ(task.name, "say-hello");
  EXPECT_EQ(task.display_name, "say-hello");
  EXPECT_EQ(task.component_ref, "comp-say-hello");
  EXPECT_TRUE(task.caching_options.enable_cache);
  const TaskInputParameter& input = task.input_parameters.at("recipient");
  EXPECT_EQ(input.kind, TaskInputParameter::Kind::kComponentInputParameter);
  EXPECT_EQ(input.component_input_parameter, "recipient");

  const DagOutputParameter& output = spec.root.dag->output_parameters.at("Output");
  EXPECT_FALSE(output.from_oneof);
  ASSERT_EQ(output.selectors.size(), 1u);
  EXPECT_EQ(output.selectors[0].producer_subtask, "say-hello");
  EXPECT_EQ(output.selectors[0].output_parameter_key, "greeting");

  EXPECT_EQ(spec.components.at("comp-say-hello").executor_label, "exec-say-hello");
  const ExecutorSpec& executor = spec.executors.at("exec-say-hello");
  ASSERT_EQ(executor.kind, ExecutorSpec::Kind::kContainer);
  EXPECT_EQ(executor.container.image, "alpine:3.20");
  EXPECT_THAT(executor.container.command, ElementsAre("sh", "-c"));
  EXPECT_THAT(
      executor.container.args,
      ElementsAre("echo \"Hello, $0!\" | tee \"$1\"", "{{$.inputs.parameters['recipient']}}",
                  "{{$.outputs.parameters['greeting'].output_file}}"));

  ASSERT_TRUE(spec.platform_spec.has_value());
  EXPECT_EQ((*spec.platform_spec)["platforms"]["kubernetes"]["deploymentSpec"]["executors"]
                                 ["exec-say-hello"]["nodeSelector"]["labels"]["disktype"],
            "ssd");
}

TEST(ParsePipelineSpecTest, ProducerConsumerParametersAndTypedDefaults) {
  PipelineSpec spec = MustLoad("producer_consumer.yaml");
  EXPECT_FALSE(spec.platform_spec.has_value());
  const auto& params = spec.root.input_definitions.parameters;
  EXPECT_EQ(params.at("count").parameter_type, ParameterType::kNumberInteger);
  EXPECT_EQ(params.at("count").default_value, json(3.0));
  EXPECT_EQ(params.at("ratio").parameter_type, ParameterType::kNumberDouble);
  EXPECT_EQ(params.at("ratio").default_value, json(0.5));
  EXPECT_EQ(params.at("shout").parameter_type, ParameterType::kBoolean);
  EXPECT_EQ(params.at("shout").default_value, json(false));
  EXPECT_EQ(params.at("words").parameter_type, ParameterType::kList);
  EXPECT_EQ(params.at("words").default_value, json::parse(R"(["a","b"])"));
  EXPECT_EQ(params.at("flags").parameter_type, ParameterType::kStruct);
  EXPECT_EQ(params.at("flags").default_value, json::parse(R"({"verbose":true})"));

  const TaskSpec& producer = spec.root.dag->tasks.at("producer");
  EXPECT_TRUE(producer.caching_options.enable_cache);
  EXPECT_EQ(producer.caching_options.cache_key, "producer-v1");
  const TaskInputParameter& shout = producer.input_parameters.at("shout");
  EXPECT_EQ(shout.kind, TaskInputParameter::Kind::kRuntimeValue);
  EXPECT_EQ(shout.constant, json(true));

  const TaskSpec& consumer = spec.root.dag->tasks.at("consumer");
  EXPECT_FALSE(consumer.caching_options.enable_cache);
  EXPECT_THAT(consumer.dependent_tasks, ElementsAre("producer"));
  const TaskInputParameter& text = consumer.input_parameters.at("text");
  EXPECT_EQ(text.kind, TaskInputParameter::Kind::kTaskOutputParameter);
  EXPECT_EQ(text.producer_task, "producer");
  EXPECT_EQ(text.output_parameter_key, "Output");

  const ContainerSpec& container = spec.executors.at("exec-producer").container;
  ASSERT_EQ(container.env.size(), 2u);
  EXPECT_EQ(container.env[0].name, "LOG_LEVEL");
  EXPECT_EQ(container.env[0].value, "debug");
  EXPECT_EQ(container.env[1].name, "EMPTY");
  EXPECT_EQ(container.env[1].value, "");
}

TEST(ParsePipelineSpecTest, ArtifactPassingAndResources) {
  PipelineSpec spec = MustLoad("artifact_passing.yaml");
  const TaskInputArtifact& dataset = spec.root.dag->tasks.at("train").input_artifacts.at("dataset");
  EXPECT_EQ(dataset.kind, TaskInputArtifact::Kind::kTaskOutputArtifact);
  EXPECT_EQ(dataset.producer_task, "make-dataset");
  EXPECT_EQ(dataset.output_artifact_key, "dataset");

  const ComponentSpec& train = spec.components.at("comp-train");
  EXPECT_EQ(train.input_definitions.artifacts.at("dataset").artifact_type.schema_title,
            "system.Dataset");
  EXPECT_EQ(train.input_definitions.artifacts.at("dataset").artifact_type.schema_version, "0.0.1");
  EXPECT_TRUE(train.input_definitions.artifacts.at("extra").is_optional);
  EXPECT_EQ(train.output_definitions.artifacts.at("model").artifact_type.schema_title,
            "system.Model");

  const DagOutputArtifact& metrics = spec.root.dag->output_artifacts.at("train-metrics");
  ASSERT_EQ(metrics.selectors.size(), 1u);
  EXPECT_EQ(metrics.selectors[0].producer_subtask, "train");
  EXPECT_EQ(metrics.selectors[0].output_artifact_key, "metrics");

  const ResourceSpec& resources = spec.executors.at("exec-train").container.resources;
  EXPECT_DOUBLE_EQ(resources.cpu_limit, 4.0);
  EXPECT_DOUBLE_EQ(resources.cpu_request, 2.0);
  EXPECT_DOUBLE_EQ(resources.memory_limit, 8.589934592);
  EXPECT_DOUBLE_EQ(resources.memory_request, 4.294967296);
  EXPECT_EQ(resources.resource_cpu_limit, "4");
  EXPECT_EQ(resources.resource_cpu_request, "2");
  EXPECT_EQ(resources.resource_memory_limit, "8Gi");
  EXPECT_EQ(resources.resource_memory_request, "4Gi");
  ASSERT_TRUE(resources.accelerator.has_value());
  EXPECT_EQ(resources.accelerator->type, "nvidia.com/gpu");
  EXPECT_EQ(resources.accelerator->count, 1);  // written as the string '1' (proto int64)
  EXPECT_EQ(resources.accelerator->resource_type, "nvidia.com/gpu");
  EXPECT_EQ(resources.accelerator->resource_count, "1");
}

TEST(ParsePipelineSpecTest, ConditionSubDags) {
  PipelineSpec spec = MustLoad("condition.yaml");
  const ComponentSpec& branches = spec.components.at("comp-condition-branches-1");
  ASSERT_TRUE(branches.dag.has_value());
  EXPECT_TRUE(branches.executor_label.empty());
  const TaskSpec& heads = branches.dag->tasks.at("condition-2");
  EXPECT_EQ(heads.trigger_policy.condition,
            "inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads' && "
            "int(inputs.parameter_values['pipelinechannel--threshold']) > 2");
  EXPECT_EQ(heads.trigger_policy.strategy, TriggerStrategy::kUnspecified);
  EXPECT_EQ(branches.dag->tasks.at("condition-3").trigger_policy.condition,
            "!(inputs.parameter_values['pipelinechannel--flip-coin-Output'] == 'heads' && "
            "int(inputs.parameter_values['pipelinechannel--threshold']) > 2)");
  EXPECT_EQ(spec.components.at("comp-condition-3")
                .dag->tasks.at("print-tails")
                .input_parameters.at("msg")
                .constant,
            json("it was tails"));
}

TEST(ParsePipelineSpecTest, ParallelForWithLimitFanInAndRetry) {
  PipelineSpec spec = MustLoad("parallel_for.yaml");
  const TaskSpec& loop = spec.root.dag->tasks.at("for-loop-2");
  ASSERT_TRUE(loop.parameter_iterator.has_value());
  EXPECT_EQ(loop.parameter_iterator->item_input, "pipelinechannel--loop-item-param-1");
  EXPECT_EQ(loop.parameter_iterator->items_raw, "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]");
  EXPECT_FALSE(loop.parameter_iterator->items_input_parameter.has_value());
  EXPECT_EQ(loop.parallelism_limit, 5);

  const ComponentSpec& body = spec.components.at("comp-for-loop-2");
  EXPECT_EQ(
      body.output_definitions.parameters.at("pipelinechannel--add-offset-Output").parameter_type,
      ParameterType::kList);
  EXPECT_EQ(body.dag->output_parameters.at("pipelinechannel--add-offset-Output")
                .selectors[0]
                .producer_subtask,
            "add-offset");

  const TaskSpec& add = body.dag->tasks.at("add-offset");
  ASSERT_TRUE(add.retry_policy.has_value());
  EXPECT_EQ(add.retry_policy->max_retry_count, 2);
  EXPECT_EQ(add.retry_policy->backoff_duration, absl::Seconds(1));
  EXPECT_DOUBLE_EQ(add.retry_policy->backoff_factor, 2.0);
  EXPECT_EQ(add.retry_policy->backoff_max_duration, absl::Seconds(60));

  const TaskInputParameter& nums = spec.root.dag->tasks.at("sum-all").input_parameters.at("nums");
  EXPECT_EQ(nums.producer_task, "for-loop-2");
  EXPECT_EQ(nums.output_parameter_key, "pipelinechannel--add-offset-Output");
}

TEST(ParsePipelineSpecTest, ExitHandlerWithTaskFinalStatus) {
  PipelineSpec spec = MustLoad("exit_handler.yaml");
  const TaskSpec& exit_op = spec.root.dag->tasks.at("exit-op");
  EXPECT_EQ(exit_op.trigger_policy.strategy, TriggerStrategy::kAllUpstreamTasksCompleted);
  EXPECT_THAT(exit_op.dependent_tasks, ElementsAre("exit-handler-1"));
  const TaskInputParameter& status = exit_op.input_parameters.at("status");
  EXPECT_EQ(status.kind, TaskInputParameter::Kind::kTaskFinalStatus);
  EXPECT_EQ(status.producer_task, "exit-handler-1");
  EXPECT_EQ(
      spec.components.at("comp-exit-op").input_definitions.parameters.at("status").parameter_type,
      ParameterType::kTaskFinalStatus);
  EXPECT_EQ(spec.root.dag->tasks.at("exit-handler-1").display_name, "my-pipeline");

  const TaskSpec& fail = spec.components.at("comp-exit-handler-1").dag->tasks.at("fail-op");
  ASSERT_TRUE(fail.retry_policy.has_value());
  EXPECT_EQ(fail.retry_policy->max_retry_count, 3);
  EXPECT_EQ(fail.retry_policy->backoff_duration, absl::ZeroDuration());
  EXPECT_EQ(fail.retry_policy->backoff_max_duration, absl::Hours(1));
}

TEST(ParsePipelineSpecTest, Importer) {
  PipelineSpec spec = MustLoad("importer.yaml");
  const ExecutorSpec& constant = spec.executors.at("exec-importer");
  ASSERT_EQ(constant.kind, ExecutorSpec::Kind::kImporter);
  EXPECT_EQ(constant.importer.artifact_uri.constant, json("file:///data/shakespeare1.txt"));
  EXPECT_EQ(constant.importer.type_schema.schema_title, "system.Dataset");
  EXPECT_EQ(constant.importer.metadata, json::parse(R"({"key":"value","rows":42})"));
  EXPECT_FALSE(constant.importer.reimport);

  const ExecutorSpec& runtime = spec.executors.at("exec-importer-2");
  ASSERT_EQ(runtime.kind, ExecutorSpec::Kind::kImporter);
  EXPECT_FALSE(runtime.importer.artifact_uri.constant.has_value());
  EXPECT_EQ(runtime.importer.artifact_uri.runtime_parameter, "uri");
  EXPECT_TRUE(runtime.importer.reimport);
}

TEST(ParsePipelineSpecTest, ArtifactIteratorOverCollectedArtifacts) {
  PipelineSpec spec = MustLoad("parallel_for_artifacts.yaml");
  const TaskSpec& produce = spec.root.dag->tasks.at("for-loop-1");
  ASSERT_TRUE(produce.parameter_iterator.has_value());
  EXPECT_EQ(produce.parameter_iterator->items_input_parameter, "pipelinechannel--texts");
  EXPECT_FALSE(produce.parameter_iterator->items_raw.has_value());
  EXPECT_EQ(spec.components.at("comp-for-loop-1")
                .output_definitions.artifacts.at("pipelinechannel--make-dataset-Output")
                .is_artifact_list,
            true);

  const TaskSpec& consume = spec.root.dag->tasks.at("for-loop-2");
  EXPECT_FALSE(consume.parameter_iterator.has_value());
  ASSERT_TRUE(consume.artifact_iterator.has_value());
  EXPECT_EQ(consume.artifact_iterator->items_input_artifact,
            "pipelinechannel--for-loop-1-pipelinechannel--make-dataset-Output");
  EXPECT_EQ(consume.artifact_iterator->item_input,
            "pipelinechannel--for-loop-1-pipelinechannel--make-dataset-Output-loop-item");
  const TaskInputArtifact& item = spec.components.at("comp-for-loop-2")
                                      .dag->tasks.at("print-dataset")
                                      .input_artifacts.at("dataset");
  EXPECT_EQ(item.kind, TaskInputArtifact::Kind::kComponentInputArtifact);
  EXPECT_EQ(item.component_input_artifact,
            "pipelinechannel--for-loop-1-pipelinechannel--make-dataset-Output-loop-item");
}

TEST(ParsePipelineSpecTest, OneOfOutput) {
  PipelineSpec spec = MustLoad("if_else_oneof.yaml");
  const DagOutputParameter& oneof =
      spec.components.at("comp-condition-branches-1")
          .dag->output_parameters.at("pipelinechannel--condition-branches-1-oneof-1");
  EXPECT_TRUE(oneof.from_oneof);
  ASSERT_EQ(oneof.selectors.size(), 2u);
  EXPECT_EQ(oneof.selectors[0].producer_subtask, "condition-2");
  EXPECT_EQ(oneof.selectors[0].output_parameter_key, "pipelinechannel--print-and-return-Output");
  EXPECT_EQ(oneof.selectors[1].producer_subtask, "condition-3");
  EXPECT_EQ(oneof.selectors[1].output_parameter_key, "pipelinechannel--print-and-return-2-Output");
}

TEST(ParsePipelineSpecTest, JsonInputParsesLikeYaml) {
  const std::string text = R"({
    "pipelineInfo": {"name": "json-pipeline"},
    "schemaVersion": "2.1.0",
    "sdkVersion": "kfp-2.13.0",
    "components": {"comp-a": {"executorLabel": "exec-a",
      "inputDefinitions": {"parameters": {"n": {"parameterType": "NUMBER_INTEGER"}}}}},
    "deploymentSpec": {"executors": {"exec-a": {"container": {"image": "alpine",
      "resources": {"accelerator": {"count": 2}}}}}},
    "root": {"dag": {"tasks": {"a": {"taskInfo": {"name": "a"}, "componentRef": {"name": "comp-a"},
      "inputs": {"parameters": {"n": {"runtimeValue": {"constant": 7}}}},
      "iteratorPolicy": {"parallelismLimit": 0}}}}}
  })";
  absl::StatusOr<PipelineSpec> spec = LoadPipelineSpec(text);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->pipeline_info.name, "json-pipeline");
  EXPECT_EQ(spec->root.dag->tasks.at("a").input_parameters.at("n").constant, json(7));
  EXPECT_EQ(spec->executors.at("exec-a").container.resources.accelerator->count, 2);
}

// JSON objects skip yaml-cpp (ParseJsonObject); they must read exactly as their YAML source.
TEST(ParsePipelineSpecTest, EveryTestPipelineReadsTheSameFromItsJsonForm) {
  for (const char* name : {"hello_world.yaml", "producer_consumer.yaml", "artifact_passing.yaml",
                           "condition.yaml", "exit_handler.yaml", "if_else_oneof.yaml",
                           "importer.yaml", "parallel_for.yaml", "parallel_for_artifacts.yaml"}) {
    absl::StatusOr<PipelineSpec> from_yaml = ParsePipelineSpec(ReadPipelineFile(name));
    ASSERT_TRUE(from_yaml.ok()) << name << ": " << from_yaml.status();
    const std::string as_json = PipelineSpecToJson(*from_yaml).dump(2);
    ASSERT_TRUE(ParseJsonObject(as_json).has_value()) << name;
    absl::StatusOr<PipelineSpec> from_json = ParsePipelineSpec(as_json);
    ASSERT_TRUE(from_json.ok()) << name << ": " << from_json.status();
    EXPECT_EQ(PipelineSpecToJson(*from_json), PipelineSpecToJson(*from_yaml)) << name;
  }
}

TEST(ParsePipelineSpecTest, OnlyAJsonObjectTakesTheJsonPath) {
  EXPECT_TRUE(ParseJsonObject(" \n {\"a\": [1, {\"b\": null}]}").has_value());
  EXPECT_FALSE(ParseJsonObject("a: 1").has_value());                   // YAML
  EXPECT_FALSE(ParseJsonObject("{a: 1}").has_value());                 // YAML flow map
  EXPECT_FALSE(ParseJsonObject("[1, 2]").has_value());                 // not an object
  EXPECT_FALSE(ParseJsonObject("{\"a\": 1} {\"b\": 2}").has_value());  // two documents
  // Too deep for the JSON path: the YAML path reports it with its path, or beyond the reader's
  // limit with its line and column.
  std::string deep = "{\"x\": " + std::string(100, '[') + std::string(100, ']') + "}";
  EXPECT_FALSE(ParseJsonObject(deep).has_value());
  absl::StatusOr<PipelineSpec> spec = ParsePipelineSpec(deep);
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("x[0][0][0]"));
  EXPECT_THAT(spec.status().message(), HasSubstr("nested too deeply"));
  deep = "{\"x\": " + std::string(200, '[') + std::string(200, ']') + "}";
  spec = ParsePipelineSpec(deep);
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(),
              HasSubstr("line 1, column 134: YAML nests more than 128 levels deep"));
  // A JSON spec's errors name the same paths as a YAML one's.
  spec = ParsePipelineSpec(
      R"({"root": {"dag": {"tasks": {"t": {"componentRef": {"name": "c"}, "dependentTasks": 3}}}}})");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("root.dag.tasks.t.dependentTasks"));
}

TEST(ParsePipelineSpecTest, QuotedNumbersStayStrings) {
  std::string text = ReadPipelineFile("producer_consumer.yaml");
  text = absl::StrReplaceAll(text, {{"constant: true", "constant: 'true'"}});
  absl::StatusOr<PipelineSpec> spec = ParsePipelineSpec(text);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->root.dag->tasks.at("producer").input_parameters.at("shout").constant,
            json("true"));
}

TEST(ParsePipelineSpecTest, PlainScalarsFollowTheYamlCoreSchema) {
  std::string text = ReadPipelineFile("hello_world.yaml");
  text = absl::StrReplaceAll(text, {{"defaultValue: World",
                                     "defaultValue: [1, -2, 1.5, 1e3, .inf, true, ~, inf, 0x1F, "
                                     "1.2.3, '7', \"8\"]"}});
  absl::StatusOr<PipelineSpec> spec = ParsePipelineSpec(text);
  ASSERT_TRUE(spec.ok()) << spec.status();
  const json& value = *spec->root.input_definitions.parameters.at("recipient").default_value;
  ASSERT_EQ(value.size(), 12u);
  EXPECT_TRUE(value[0].is_number_integer());
  EXPECT_EQ(value[0], 1);
  EXPECT_EQ(value[1], -2);
  EXPECT_TRUE(value[2].is_number_float());
  EXPECT_DOUBLE_EQ(value[2].get<double>(), 1.5);
  EXPECT_DOUBLE_EQ(value[3].get<double>(), 1000.0);
  EXPECT_TRUE(std::isinf(value[4].get<double>()));
  EXPECT_EQ(value[5], true);
  EXPECT_TRUE(value[6].is_null());
  EXPECT_EQ(value[7], "inf");
  EXPECT_EQ(value[8], "0x1F");
  EXPECT_EQ(value[9], "1.2.3");
  EXPECT_EQ(value[10], "7");
  EXPECT_EQ(value[11], "8");
}

TEST(ParsePipelineSpecTest, DeepNestingIsAnErrorNotACrash) {
  std::string text = ReadPipelineFile("hello_world.yaml");
  text = absl::StrReplaceAll(
      text,
      {{"defaultValue: World", "defaultValue: " + std::string(200, '[') + std::string(200, ']')}});
  absl::StatusOr<PipelineSpec> spec = ParsePipelineSpec(text);
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.status().message(), HasSubstr("YAML nests more than 128 levels deep"));
}

TEST(ParsePipelineSpecTest, UnknownKeysAreAccepted) {
  std::string text = ReadPipelineFile("hello_world.yaml");
  text = absl::StrReplaceAll(
      text, {{"sdkVersion: kfp-2.13.0", "sdkVersion: kfp-2.13.0\nfutureField:\n  x: 1"},
             {"        taskInfo:\n", "        somethingNew: [1, 2]\n        taskInfo:\n"}});
  absl::StatusOr<PipelineSpec> spec = LoadPipelineSpec(text);
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->root.dag->tasks.contains("say-hello"));
}

struct ParseErrorCase {
  std::string name;
  std::string file;
  std::string from;
  std::string to;
  std::string error;

  // Failure messages show the case name, not the struct's bytes.
  friend void PrintTo(const ParseErrorCase& c, std::ostream* os) { *os << c.name; }
};

class ParseErrorTest : public ::testing::TestWithParam<ParseErrorCase> {};

TEST_P(ParseErrorTest, NamesThePath) {
  const ParseErrorCase& c = GetParam();
  std::string text = ReadPipelineFile(c.file);
  ASSERT_NE(text.find(c.from), std::string::npos) << c.from;
  text = absl::StrReplaceAll(text, {{c.from, c.to}});
  absl::StatusOr<PipelineSpec> spec = ParsePipelineSpec(text);
  ASSERT_FALSE(spec.ok());
  EXPECT_EQ(spec.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(spec.status().message(), HasSubstr(c.error));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ParseErrorTest,
    ::testing::Values(
        ParseErrorCase{"UnknownTriggerStrategy", "exit_handler.yaml",
                       "strategy: ALL_UPSTREAM_TASKS_COMPLETED", "strategy: WHENEVER",
                       "root.dag.tasks.exit-op.triggerPolicy.strategy: unknown trigger strategy "
                       "'WHENEVER'"},
        ParseErrorCase{"DependentTasksNotAList", "producer_consumer.yaml",
                       "dependentTasks:\n        - producer", "dependentTasks: producer",
                       "root.dag.tasks.consumer.dependentTasks: expected a list, got string"},
        ParseErrorCase{"ImageNotAString", "hello_world.yaml", "image: alpine:3.20",
                       "image: [alpine]",
                       "deploymentSpec.executors.exec-say-hello.container.image: expected a "
                       "string, got array"},
        ParseErrorCase{"UnknownParameterType", "hello_world.yaml",
                       "recipient:\n          parameterType: STRING",
                       "recipient:\n          parameterType: TEXT",
                       "components.comp-say-hello.inputDefinitions.parameters.recipient."
                       "parameterType: unknown parameter type 'TEXT'"},
        ParseErrorCase{"TwoInputSources", "producer_consumer.yaml",
                       "              componentInputParameter: count\n",
                       "              componentInputParameter: count\n"
                       "              runtimeValue: {constant: 1}\n",
                       "root.dag.tasks.consumer.inputs.parameters.count: has more than one "
                       "source"},
        ParseErrorCase{"ParallelismLimitNotAnInteger", "parallel_for.yaml", "parallelismLimit: 5",
                       "parallelismLimit: five",
                       "root.dag.tasks.for-loop-2.iteratorPolicy.parallelismLimit: expected an "
                       "integer"},
        ParseErrorCase{"BadBackoffDuration", "parallel_for.yaml", "backoffDuration: 1s",
                       "backoffDuration: soon",
                       "components.comp-for-loop-2.dag.tasks.add-offset.retryPolicy."
                       "backoffDuration: expected a duration"},
        ParseErrorCase{"ComponentWithoutDagOrExecutor", "hello_world.yaml",
                       "    executorLabel: exec-say-hello\n", "",
                       "components.comp-say-hello: needs exactly one of dag, executorLabel"},
        ParseErrorCase{"ThreeDocuments", "hello_world.yaml", "platforms:",
                       "platforms: {}\n---\nmore:", "at most one platform spec document"},
        ParseErrorCase{"NotYaml", "hello_world.yaml", "components:", "components: [",
                       "not valid YAML or JSON"}),
    [](const ::testing::TestParamInfo<ParseErrorCase>& info) { return info.param.name; });

}  // namespace
}  // namespace regatta::pipelines::ir
