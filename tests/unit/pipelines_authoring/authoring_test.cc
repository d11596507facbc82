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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ReadTestPipeline(const std::string& name) {
  return ReadFile(std::string(REGATTA_PIPELINE_TESTDATA_DIR) + "/" + name);
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

TEST(CompileAuthoringTest, ImportTasksAreWhatTheSdkEmits) {
  ir::PipelineSpec compiled = MustCompile(R"(
name: importer
params:
  dataset_uri: {type: str, default: 'file:///data/shakespeare2.txt'}
tasks:
  importer:
    import: {uri: 'file:///data/shakespeare1.txt', type: dataset, metadata: {key: value, rows: 42}}
  importer-2:
    import: {uri: params.dataset_uri, type: dataset, reimport: true}
  count-lines:
    inputs: {first: importer.artifact, second: importer-2.artifact}
    command: [sh, -c]
    args: ['cat "$0" "$1" | wc -l > "$2"', '{{inputs.first}}', '{{inputs.second}}',
           '{{outputs.Output}}']
    outputs: {Output: int}
)");
  absl::StatusOr<ir::PipelineSpec> sdk = ir::LoadPipelineSpec(ReadTestPipeline("importer.yaml"));
  ASSERT_TRUE(sdk.ok()) << sdk.status();
  EXPECT_EQ(Comparable(compiled).dump(2), Comparable(*sdk).dump(2));
}

TEST(CompileAuthoringTest, ParamsInputsAndPlaceholders) {
  ir::PipelineSpec spec = MustCompile(R"(
name: producer-consumer
description: Two steps.
params:
  rows: {type: int, default: 1000}
  lr: float
  tag: {default: nightly}
tasks:
  producer:
    command: [sh, -c, 'seq $0 > $1; echo -n 7 > $2', '{{params.rows}}', '{{outputs.data}}',
              '{{outputs.count}}']
    outputs: {data: dataset, count: int}
  consumer:
    image: python:3.12
    inputs: {data: producer.data, n: producer.count, lr: params.lr, epochs: 3, ratio: 0.5,
             verbose: true, name: 'it was tails', dotted: {value: v1.2}, layers: [8, 4],
             opts: {a: 1}}
    command: [train, '--data={{inputs.data}}', '{{inputs.data.uri}}', '{{inputs.n}}',
              '{{producer.count}}', '{{params.tag}}']
)");
  EXPECT_EQ(spec.pipeline_info.name, "producer-consumer");
  EXPECT_EQ(spec.pipeline_info.description, "Two steps.");
  EXPECT_EQ(spec.schema_version, "2.1.0");
  const auto& params = spec.root.input_definitions.parameters;
  EXPECT_EQ(params.at("rows").parameter_type, ParameterType::kNumberInteger);
  EXPECT_EQ(params.at("rows").default_value, json(1000));
  EXPECT_TRUE(params.at("rows").is_optional);
  EXPECT_EQ(params.at("lr").parameter_type, ParameterType::kNumberDouble);
  EXPECT_FALSE(params.at("lr").is_optional);
  EXPECT_EQ(params.at("tag").parameter_type, ParameterType::kString);  // from the default

  // The producer reads rows through an input the placeholder declared.
  const ir::ComponentSpec& producer = spec.components.at("comp-producer");
  EXPECT_EQ(producer.executor_label, "exec-producer");
  EXPECT_EQ(producer.input_definitions.parameters.at("rows").parameter_type,
            ParameterType::kNumberInteger);
  EXPECT_EQ(producer.output_definitions.artifacts.at("data").artifact_type.schema_title,
            "system.Dataset");
  EXPECT_EQ(producer.output_definitions.parameters.at("count").parameter_type,
            ParameterType::kNumberInteger);
  const ir::ContainerSpec& produce = spec.executors.at("exec-producer").container;
  EXPECT_EQ(produce.image, "alpine:3.20");  // the default image
  EXPECT_THAT(produce.command,
              ElementsAre("sh", "-c", "seq $0 > $1; echo -n 7 > $2",
                          "{{$.inputs.parameters['rows']}}", "{{$.outputs.artifacts['data'].path}}",
                          "{{$.outputs.parameters['count'].output_file}}"));
  const ir::TaskSpec& producer_task = spec.root.dag->tasks.at("producer");
  EXPECT_EQ(producer_task.component_ref, "comp-producer");
  EXPECT_TRUE(producer_task.caching_options.enable_cache);
  EXPECT_EQ(producer_task.input_parameters.at("rows").component_input_parameter, "rows");

  const ir::TaskSpec& consumer = spec.root.dag->tasks.at("consumer");
  EXPECT_THAT(consumer.dependent_tasks, ElementsAre("producer"));
  EXPECT_EQ(consumer.input_artifacts.at("data").producer_task, "producer");
  EXPECT_EQ(consumer.input_artifacts.at("data").output_artifact_key, "data");
  EXPECT_EQ(consumer.input_parameters.at("n").kind, TaskInputParameter::Kind::kTaskOutputParameter);
  EXPECT_EQ(consumer.input_parameters.at("n").output_parameter_key, "count");
  EXPECT_EQ(consumer.input_parameters.at("lr").component_input_parameter, "lr");
  EXPECT_EQ(consumer.input_parameters.at("epochs").constant, json(3));
  EXPECT_EQ(consumer.input_parameters.at("dotted").constant, json("v1.2"));
  EXPECT_EQ(consumer.input_parameters.at("name").constant, json("it was tails"));
  const auto& defs = spec.components.at("comp-consumer").input_definitions;
  EXPECT_EQ(defs.artifacts.at("data").artifact_type.schema_title, "system.Dataset");
  EXPECT_EQ(defs.parameters.at("n").parameter_type, ParameterType::kNumberInteger);
  EXPECT_EQ(defs.parameters.at("lr").parameter_type, ParameterType::kNumberDouble);
  EXPECT_EQ(defs.parameters.at("epochs").parameter_type, ParameterType::kNumberInteger);
  EXPECT_EQ(defs.parameters.at("ratio").parameter_type, ParameterType::kNumberDouble);
  EXPECT_EQ(defs.parameters.at("verbose").parameter_type, ParameterType::kBoolean);
  EXPECT_EQ(defs.parameters.at("name").parameter_type, ParameterType::kString);
  EXPECT_EQ(defs.parameters.at("layers").parameter_type, ParameterType::kList);
  EXPECT_EQ(defs.parameters.at("opts").parameter_type, ParameterType::kStruct);
  // {{producer.count}} reuses the input n that reads the same output; {{params.tag}} declares tag.
  EXPECT_THAT(spec.executors.at("exec-consumer").container.command,
              ElementsAre("train", "--data={{$.inputs.artifacts['data'].path}}",
                          "{{$.inputs.artifacts['data'].uri}}", "{{$.inputs.parameters['n']}}",
                          "{{$.inputs.parameters['n']}}", "{{$.inputs.parameters['tag']}}"));
  EXPECT_EQ(spec.executors.at("exec-consumer").container.image, "python:3.12");
}

TEST(CompileAuthoringTest, TaskSettings) {
  ir::PipelineSpec spec = MustCompile(R"(
name: settings
image: registry.example.com/base:1
cache: false
tasks:
  a:
    command: [run]
    retry: {max: 2, backoff: 1s, factor: 3, max_backoff: 60s}
    resources: {cpu: 500m, memory: 64Mi, accelerator: {type: nvidia.com/gpu, count: 2}}
    env: {LOG_LEVEL: debug, N: 3}
  b:
    after: [a]
    command: [run]
    cache: true
    cache_key: b-v1
    retry: 4
)");
  const ir::TaskSpec& a = spec.root.dag->tasks.at("a");
  EXPECT_FALSE(a.caching_options.enable_cache);  // the document's default
  ASSERT_TRUE(a.retry_policy.has_value());
  EXPECT_EQ(a.retry_policy->max_retry_count, 2);
  EXPECT_EQ(a.retry_policy->backoff_duration, absl::Seconds(1));
  EXPECT_EQ(a.retry_policy->backoff_factor, 3);
  EXPECT_EQ(a.retry_policy->backoff_max_duration, absl::Seconds(60));
  const ir::ContainerSpec& container = spec.executors.at("exec-a").container;
  EXPECT_EQ(container.image, "registry.example.com/base:1");
  EXPECT_DOUBLE_EQ(container.resources.cpu_limit, 0.5);
  EXPECT_EQ(container.resources.resource_cpu_request, "500m");
  EXPECT_DOUBLE_EQ(container.resources.memory_limit, 64.0 * 1024 * 1024 / 1e9);
  EXPECT_EQ(container.resources.resource_memory_limit, "64Mi");
  ASSERT_TRUE(container.resources.accelerator.has_value());
  EXPECT_EQ(container.resources.accelerator->resource_type, "nvidia.com/gpu");
  EXPECT_EQ(container.resources.accelerator->resource_count, "2");
  ASSERT_EQ(container.env.size(), 2u);
  EXPECT_EQ(container.env[0].name, "LOG_LEVEL");
  EXPECT_EQ(container.env[1].value, "3");

  const ir::TaskSpec& b = spec.root.dag->tasks.at("b");
  EXPECT_THAT(b.dependent_tasks, ElementsAre("a"));
  EXPECT_TRUE(b.caching_options.enable_cache);
  EXPECT_EQ(b.caching_options.cache_key, "b-v1");
  EXPECT_EQ(b.retry_policy->max_retry_count, 4);
  EXPECT_EQ(b.retry_policy->backoff_max_duration, absl::Hours(1));  // the IR's default
}

absl::StatusOr<bool> EvaluateTrigger(const ir::TaskSpec& task, const json& values) {
  absl::StatusOr<cel::CompiledCondition> condition =
      cel::ParseCondition(task.trigger_policy.condition);
  if (!condition.ok()) return condition.status();
  return cel::Evaluate(*condition, values);
}

TEST(CompileAuthoringTest, WhenBecomesAConditionSubDag) {
  ir::PipelineSpec spec = MustCompile(R"yaml(
name: conditional
params: {rows: int, mode: {default: fast}}
tasks:
  flip:
    command: [flip, '{{outputs.side}}']
    outputs: {side: str}
  heads:
    when: "flip.side == 'heads' && params.rows > 10 || !(params.mode != 'params.rows')"
    inputs: {rows: params.rows}
    command: [echo, '{{inputs.rows}}']
)yaml");
  const ir::TaskSpec& group = spec.root.dag->tasks.at("condition-1");
  EXPECT_EQ(group.component_ref, "comp-condition-1");
  EXPECT_THAT(group.dependent_tasks, ElementsAre("flip"));
  // Integers are cast as the SDK does; the quoted 'params.rows' stays a string.
  EXPECT_EQ(group.trigger_policy.condition,
            "inputs.parameter_values['pipelinechannel--flip-side'] == 'heads' && "
            "int(inputs.parameter_values['pipelinechannel--rows']) > 10 || "
            "!(inputs.parameter_values['pipelinechannel--mode'] != 'params.rows')");
  EXPECT_EQ(group.input_parameters.at("pipelinechannel--flip-side").producer_task, "flip");
  EXPECT_EQ(group.input_parameters.at("pipelinechannel--rows").component_input_parameter, "rows");
  const ir::ComponentSpec& component = spec.components.at("comp-condition-1");
  EXPECT_EQ(component.input_definitions.parameters.at("pipelinechannel--rows").parameter_type,
            ParameterType::kNumberInteger);
  const ir::TaskSpec& inner = component.dag->tasks.at("heads");
  EXPECT_EQ(inner.input_parameters.at("rows").component_input_parameter, "pipelinechannel--rows");
  EXPECT_TRUE(inner.dependent_tasks.empty());
  EXPECT_FALSE(spec.root.dag->tasks.contains("heads"));

  json values = {{"pipelinechannel--flip-side", "heads"},
                 {"pipelinechannel--rows", 11.0},
                 {"pipelinechannel--mode", "fast"}};
  EXPECT_EQ(EvaluateTrigger(group, values).value(), true);
  values["pipelinechannel--rows"] = 3;
  EXPECT_EQ(EvaluateTrigger(group, values).value(), false);
}

TEST(CompileAuthoringTest, LoopOverAListParameterWithAConditionOnAnItemField) {
  ir::PipelineSpec spec = MustCompile(R"(
name: loops
params:
  shards: {type: list, default: [{id: 1, name: a}]}
  bucket: str
tasks:
  work:
    for_each: {items: params.shards, as: shard}
    when: shard.id > 0
    command: [work, '{{shard.name}}', '{{params.bucket}}', '{{shard}}']
)");
  const ir::TaskSpec& loop = spec.root.dag->tasks.at("for-loop-1");
  ASSERT_TRUE(loop.parameter_iterator.has_value());
  EXPECT_EQ(loop.parameter_iterator->items_input_parameter, "pipelinechannel--shards");
  EXPECT_EQ(loop.parameter_iterator->item_input, "pipelinechannel--shards-loop-item");
  EXPECT_EQ(loop.input_parameters.at("pipelinechannel--shards").component_input_parameter,
            "shards");
  EXPECT_EQ(loop.parallelism_limit, 0);
  const ir::ComponentSpec& loop_component = spec.components.at("comp-for-loop-1");
  EXPECT_EQ(loop_component.input_definitions.parameters.at("pipelinechannel--shards-loop-item")
                .parameter_type,
            ParameterType::kStruct);  // the default's first element

  const ir::TaskSpec& condition = loop_component.dag->tasks.at("condition-2");
  const TaskInputParameter& id =
      condition.input_parameters.at("pipelinechannel--shards-loop-item-subvar-id");
  EXPECT_EQ(id.component_input_parameter, "pipelinechannel--shards-loop-item");
  EXPECT_EQ(id.parameter_expression_selector, "parseJson(string_value)[\"id\"]");
  EXPECT_EQ(condition.trigger_policy.condition,
            "int(inputs.parameter_values['pipelinechannel--shards-loop-item-subvar-id']) > 0");

  const ir::ComponentSpec& condition_component = spec.components.at("comp-condition-2");
  const ir::TaskSpec& work = condition_component.dag->tasks.at("work");
  EXPECT_EQ(work.input_parameters.at("shard_name").component_input_parameter,
            "pipelinechannel--shards-loop-item");
  EXPECT_EQ(work.input_parameters.at("shard_name").parameter_expression_selector,
            "parseJson(string_value)[\"name\"]");
  EXPECT_EQ(work.input_parameters.at("shard").component_input_parameter,
            "pipelinechannel--shards-loop-item");
  EXPECT_EQ(work.input_parameters.at("bucket").component_input_parameter,
            "pipelinechannel--bucket");
  // bucket is passed down both levels.
  EXPECT_EQ(condition.input_parameters.at("pipelinechannel--bucket").component_input_parameter,
            "pipelinechannel--bucket");
  EXPECT_EQ(loop.input_parameters.at("pipelinechannel--bucket").component_input_parameter,
            "bucket");
  EXPECT_EQ(
      spec.components.at("comp-work").input_definitions.parameters.at("shard_name").parameter_type,
      ParameterType::kString);
}

TEST(CompileAuthoringTest, LoopOverATaskOutputAndArtifactFanIn) {
  ir::PipelineSpec spec = MustCompile(R"(
name: fan-in
tasks:
  list:
    command: [ls, '{{outputs.names}}']
    outputs: {names: list}
  make:
    for_each: {items: list.names, parallelism: 2, type: str}
    command: [make, '{{item}}', '{{outputs.file}}']
    outputs: {file: artifact}
  merge:
    inputs: {files: 'make.file[*]'}
    command: [merge, '{{inputs.files}}']
outputs:
  files: 'make.file[*]'
)");
  const ir::TaskSpec& loop = spec.root.dag->tasks.at("for-loop-1");
  EXPECT_THAT(loop.dependent_tasks, ElementsAre("list"));
  EXPECT_EQ(loop.parallelism_limit, 2);
  EXPECT_EQ(loop.parameter_iterator->items_input_parameter, "pipelinechannel--list-names");
  EXPECT_EQ(loop.input_parameters.at("pipelinechannel--list-names").producer_task, "list");
  const ir::ComponentSpec& loop_component = spec.components.at("comp-for-loop-1");
  const auto& exported =
      loop_component.output_definitions.artifacts.at("pipelinechannel--make-file");
  EXPECT_TRUE(exported.is_artifact_list);
  EXPECT_EQ(loop_component.dag->output_artifacts.at("pipelinechannel--make-file")
                .selectors.at(0)
                .producer_subtask,
            "make");
  const ir::TaskSpec& merge = spec.root.dag->tasks.at("merge");
  EXPECT_THAT(merge.dependent_tasks, ElementsAre("for-loop-1"));
  EXPECT_EQ(merge.input_artifacts.at("files").producer_task, "for-loop-1");
  EXPECT_EQ(merge.input_artifacts.at("files").output_artifact_key, "pipelinechannel--make-file");
  EXPECT_TRUE(
      spec.components.at("comp-merge").input_definitions.artifacts.at("files").is_artifact_list);
  EXPECT_EQ(spec.root.dag->output_artifacts.at("files").selectors.at(0).producer_subtask,
            "for-loop-1");
  EXPECT_TRUE(spec.root.output_definitions.artifacts.at("files").is_artifact_list);
}

TEST(CompileAuthoringTest, ExitHandlerWrapsTheTasksAndReadsTheStatus) {
  ir::PipelineSpec spec = MustCompile(R"(
name: with-exit
params: {n: {default: 3}}
tasks:
  work:
    for_each: {items: [a, b]}
    command: [work, '{{item}}', '{{params.n}}']
exit_handler:
  notify:
    inputs: {status: $status, n: params.n}
    command: [notify, '{{inputs.status}}', '{{$status}}', '{{$}}', '{{$.pipeline_job_name}}']
)");
  ASSERT_EQ(spec.root.dag->tasks.size(), 2u);
  const ir::TaskSpec& group = spec.root.dag->tasks.at("exit-handler-1");
  EXPECT_EQ(group.input_parameters.at("pipelinechannel--n").component_input_parameter, "n");
  const ir::ComponentSpec& body = spec.components.at("comp-exit-handler-1");
  // Numbered as the SDK does: the exit handler, the loop's item, then the loop.
  const ir::TaskSpec& loop = body.dag->tasks.at("for-loop-3");
  EXPECT_EQ(loop.parameter_iterator->items_raw, "[\"a\", \"b\"]");
  EXPECT_EQ(loop.parameter_iterator->item_input, "pipelinechannel--loop-item-param-2");
  EXPECT_EQ(loop.input_parameters.at("pipelinechannel--n").component_input_parameter,
            "pipelinechannel--n");

  const ir::TaskSpec& notify = spec.root.dag->tasks.at("notify");
  EXPECT_THAT(notify.dependent_tasks, ElementsAre("exit-handler-1"));
  EXPECT_EQ(notify.trigger_policy.strategy, ir::TriggerStrategy::kAllUpstreamTasksCompleted);
  EXPECT_EQ(notify.input_parameters.at("status").kind, TaskInputParameter::Kind::kTaskFinalStatus);
  EXPECT_EQ(notify.input_parameters.at("status").producer_task, "exit-handler-1");
  EXPECT_EQ(notify.input_parameters.at("n").component_input_parameter, "n");
  // {{$status}} reuses the input that reads it; kfp's own placeholders pass through.
  EXPECT_THAT(spec.executors.at("exec-notify").container.command,
              ElementsAre("notify", "{{$.inputs.parameters['status']}}",
                          "{{$.inputs.parameters['status']}}", "{{$}}", "{{$.pipeline_job_name}}"));
  const auto& status = spec.components.at("comp-notify").input_definitions.parameters.at("status");
  EXPECT_EQ(status.parameter_type, ParameterType::kTaskFinalStatus);
  EXPECT_TRUE(status.is_optional);
}

TEST(CompileAuthoringTest, CompiledSpecRoundTripsThroughTheIrReader) {
  ir::PipelineSpec spec = MustCompile(R"(
name: round-trip
params: {xs: {default: [1, 2]}}
tasks:
  a:
    for_each: {items: params.xs, as: x}
    command: [a, '{{x}}', '{{outputs.y}}']
    outputs: {y: int}
  b:
    inputs: {ys: 'a.y[*]'}
    command: [b, '{{inputs.ys}}']
    retry: {max: 1}
  c:
    when: params.xs != '[]'
    command: [c]
)");
  const std::string written = ir::PipelineSpecToJson(spec).dump();
  absl::StatusOr<ir::PipelineSpec> reread = ir::LoadPipelineSpec(written);
  ASSERT_TRUE(reread.ok()) << reread.status() << "\n" << written;
  EXPECT_EQ(ir::PipelineSpecToJson(*reread).dump(), written);
}

TEST(LoadAnyPipelineFileTest, TellsAuthoringFromIr) {
  const std::string authoring = "name: p\ntasks:\n  a: {command: [echo]}\n";
  EXPECT_TRUE(IsAuthoringDocument(authoring));
  EXPECT_FALSE(IsAuthoringDocument(ReadTestPipeline("producer_consumer.yaml")));
  EXPECT_FALSE(IsAuthoringDocument("{not yaml"));
  EXPECT_FALSE(IsAuthoringDocument("- a\n- b\n"));
  EXPECT_FALSE(IsAuthoringDocument("{\"pipelineInfo\": {\"name\": \"p\"}}"));
  // Without the IR's keys it is authoring, so a misspelt key is named as such.
  EXPECT_TRUE(IsAuthoringDocument("name: p\ntask: {}\n"));
  EXPECT_THAT(std::string(LoadAnyPipelineFile("name: p\ntask: {}\n").status().message()),
              HasSubstr("task: unknown key"));

  absl::StatusOr<ir::PipelineSpec> compiled = LoadAnyPipelineFile(authoring);
  ASSERT_TRUE(compiled.ok()) << compiled.status();
  EXPECT_TRUE(compiled->root.dag->tasks.contains("a"));
  absl::StatusOr<ir::PipelineSpec> sdk = LoadAnyPipelineFile(ReadTestPipeline("hello_world.yaml"));
  ASSERT_TRUE(sdk.ok()) << sdk.status();
  EXPECT_TRUE(sdk->platform_spec.has_value());
  // Each kind reports its own errors.
  EXPECT_THAT(std::string(LoadAnyPipelineFile("name: p\ntasks:\n  a: {}\n").status().message()),
              HasSubstr("tasks.a.command: missing"));
  EXPECT_THAT(std::string(LoadAnyPipelineFile("root: {}\n").status().message()),
              HasSubstr("root: needs exactly one of dag, executorLabel"));
}

TEST(CompileAuthoringTest, AfterALoopWaitsForTheWholeLoop) {
  ir::PipelineSpec spec = MustCompile(R"(
name: after-loop
params: {dry: {default: false}}
tasks:
  each:
    for_each: [a, b]
    when: item != 'b' && !params.dry
    command: [each, '{{item}}']
  done:
    after: each
    command: [done]
)");
  EXPECT_THAT(spec.root.dag->tasks.at("done").dependent_tasks, ElementsAre("for-loop-2"));
  // The condition inside the loop sees the item and the parameter as its own inputs.
  const ir::TaskSpec& condition =
      spec.components.at("comp-for-loop-2").dag->tasks.at("condition-3");
  EXPECT_EQ(condition.trigger_policy.condition,
            "inputs.parameter_values['pipelinechannel--loop-item-param-1'] != 'b' && "
            "!inputs.parameter_values['pipelinechannel--dry']");
  json values = {{"pipelinechannel--loop-item-param-1", "a"}, {"pipelinechannel--dry", false}};
  EXPECT_EQ(EvaluateTrigger(condition, values).value(), true);
  values["pipelinechannel--loop-item-param-1"] = "b";
  EXPECT_EQ(EvaluateTrigger(condition, values).value(), false);
}

TEST(CompileAuthoringTest, TasksOfASharedLoopRunPerItemInOneSubDag) {
  ir::PipelineSpec spec = MustCompile(R"(
name: shards
params: {shards: {default: [a, b]}, min: {default: 1}}
loops:
  per-shard: {items: params.shards, as: shard, parallelism: 2}
tasks:
  prep:
    command: [prep]
  fetch:
    loop: per-shard
    after: [prep]
    command: [fetch, '{{shard}}', '{{outputs.file}}', '{{outputs.size}}']
    outputs: {file: dataset, size: int}
  parse:
    loop: per-shard
    inputs: {file: fetch.file}
    command: [parse, '{{inputs.file}}', '{{outputs.rows}}']
    outputs: {rows: int}
  check:
    loop: per-shard
    when: fetch.size > params.min
    command: [check]
  merge:
    inputs: {rows: 'parse.rows[*]'}
    command: [merge, '{{inputs.rows}}']
)");
  const ir::DagSpec& root = *spec.root.dag;
  ASSERT_EQ(root.tasks.size(), 3u);  // prep, the loop, merge
  const ir::TaskSpec& loop = root.tasks.at("for-loop-1");
  EXPECT_THAT(loop.dependent_tasks, ElementsAre("prep"));
  EXPECT_EQ(loop.parallelism_limit, 2);
  EXPECT_EQ(loop.parameter_iterator->item_input, "pipelinechannel--shards-loop-item");
  EXPECT_THAT(root.tasks.at("merge").dependent_tasks, ElementsAre("for-loop-1"));
  EXPECT_EQ(root.tasks.at("merge").input_parameters.at("rows").output_parameter_key,
            "pipelinechannel--parse-rows");

  const ir::DagSpec& body = *spec.components.at("comp-for-loop-1").dag;
  ASSERT_EQ(body.tasks.size(), 3u);  // fetch, parse, condition-2
  EXPECT_TRUE(body.tasks.at("fetch").dependent_tasks.empty());
  const ir::TaskSpec& parse = body.tasks.at("parse");
  EXPECT_THAT(parse.dependent_tasks, ElementsAre("fetch"));
  EXPECT_EQ(parse.input_artifacts.at("file").producer_task, "fetch");
  EXPECT_EQ(parse.input_artifacts.at("file").output_artifact_key, "file");
  const ir::TaskSpec& condition = body.tasks.at("condition-2");
  EXPECT_THAT(condition.dependent_tasks, ElementsAre("fetch"));
  EXPECT_EQ(condition.input_parameters.at("pipelinechannel--fetch-size").producer_task, "fetch");
  EXPECT_EQ(condition.input_parameters.at("pipelinechannel--min").component_input_parameter,
            "pipelinechannel--min");
  EXPECT_EQ(condition.trigger_policy.condition,
            "int(inputs.parameter_values['pipelinechannel--fetch-size']) > "
            "int(inputs.parameter_values['pipelinechannel--min'])");
  EXPECT_TRUE(spec.components.at("comp-condition-2").dag->tasks.contains("check"));
  EXPECT_EQ(
      body.output_parameters.at("pipelinechannel--parse-rows").selectors.at(0).producer_subtask,
      "parse");
}

TEST(CompileAuthoringTest, TheExamplesCompile) {
  for (const std::string name : {"train_and_eval.yaml"}) {
    absl::StatusOr<ir::PipelineSpec> spec =
        CompileAuthoring(ReadFile(std::string(REGATTA_EXAMPLES_DIR) + "/" + name));
    EXPECT_TRUE(spec.ok()) << name << ": " << spec.status();
  }
}

}  // namespace
}  // namespace regatta::pipelines::authoring
