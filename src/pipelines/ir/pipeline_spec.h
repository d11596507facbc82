#ifndef REGATTA_SRC_PIPELINES_IR_PIPELINE_SPEC_H_
#define REGATTA_SRC_PIPELINES_IR_PIPELINE_SPEC_H_

// The Kubeflow Pipelines IR (PipelineSpec, schemaVersion 2.1.0) as plain structs. Field names
// follow the IR's JSON names in snake_case; maps are std::map so iteration order is the sorted
// key order the kfp SDK also emits. Parameter values (defaults, constants) are JSON values.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace regatta::pipelines::ir {

enum class ParameterType {
  kNumberDouble,
  kNumberInteger,
  kString,
  kBoolean,
  kList,
  kStruct,
  kTaskFinalStatus,
};
// The IR spelling, e.g. "NUMBER_INTEGER".
absl::string_view ParameterTypeName(ParameterType type);

struct ParameterSpec {
  ParameterType parameter_type = ParameterType::kString;
  std::optional<nlohmann::json> default_value;
  bool is_optional = false;
  std::string description;
};

// ArtifactTypeSchema: schemaTitle (e.g. "system.Dataset") or instanceSchema, plus version.
struct ArtifactTypeSchema {
  std::string schema_title;
  std::string instance_schema;
  std::string schema_version;
};

struct ArtifactSpec {
  ArtifactTypeSchema artifact_type;
  bool is_artifact_list = false;
  bool is_optional = false;
  std::string description;
};

// inputDefinitions / outputDefinitions of a component.
struct IoDefinitions {
  std::map<std::string, ParameterSpec> parameters;
  std::map<std::string, ArtifactSpec> artifacts;
};

// TaskInputsSpec.InputParameterSpec: exactly one source, plus an optional selector applied to
// the value (e.g. `parseJson(string_value)["a"]` on a loop item).
struct TaskInputParameter {
  enum class Kind {
    kComponentInputParameter,  // component_input_parameter
    kTaskOutputParameter,      // producer_task + output_parameter_key
    kRuntimeValue,             // constant
    kTaskFinalStatus,          // producer_task
  };
  Kind kind = Kind::kRuntimeValue;
  std::string component_input_parameter;
  std::string producer_task;
  std::string output_parameter_key;
  nlohmann::json constant;
  std::string parameter_expression_selector;
};

// TaskInputsSpec.InputArtifactSpec.
struct TaskInputArtifact {
  enum class Kind {
    kTaskOutputArtifact,     // producer_task + output_artifact_key
    kComponentInputArtifact  // component_input_artifact
  };
  Kind kind = Kind::kTaskOutputArtifact;
  std::string producer_task;
  std::string output_artifact_key;
  std::string component_input_artifact;
};

struct CachingOptions {
  bool enable_cache = false;  // the IR default when cachingOptions is absent
  std::string cache_key;
};

enum class TriggerStrategy {
  kUnspecified,  // behaves as kAllUpstreamTasksSucceeded
  kAllUpstreamTasksSucceeded,
  kAllUpstreamTasksCompleted,
};

struct TriggerPolicy {
  std::string condition;  // CEL; empty = always
  TriggerStrategy strategy = TriggerStrategy::kUnspecified;
};

// ParallelFor over a JSON array: either literal (`items.raw`, a JSON string) or the value of
// one of the task's input parameters (`items.inputParameter`); each item is passed to the
// iterated component as its input `item_input`.
struct ParameterIterator {
  std::optional<std::string> items_raw;
  std::optional<std::string> items_input_parameter;
  std::string item_input;
};

// ParallelFor over a list of artifacts (`items.inputArtifact`).
struct ArtifactIterator {
  std::string items_input_artifact;
  std::string item_input;
};

// Defaults from the IR are applied at parse time: backoff_factor 2 and backoff_max_duration one
// hour when unset (the IR also caps the latter at one hour).
struct RetryPolicy {
  int32_t max_retry_count = 0;
  absl::Duration backoff_duration = absl::ZeroDuration();
  double backoff_factor = 2.0;
  absl::Duration backoff_max_duration = absl::Hours(1);
};

struct TaskSpec {
  std::string name;           // key in dag.tasks
  std::string display_name;   // taskInfo.name
  std::string component_ref;  // componentRef.name
  std::vector<std::string> dependent_tasks;
  std::map<std::string, TaskInputParameter> input_parameters;
  std::map<std::string, TaskInputArtifact> input_artifacts;
  CachingOptions caching_options;
  TriggerPolicy trigger_policy;
  std::optional<ParameterIterator> parameter_iterator;
  std::optional<ArtifactIterator> artifact_iterator;
  int32_t parallelism_limit = 0;  // iteratorPolicy.parallelismLimit; 0 = unlimited
  std::optional<RetryPolicy> retry_policy;
};

// DagOutputsSpec: an output parameter comes from one subtask (valueFromParameter) or from the
// first of several that ran (valueFromOneof, dsl.OneOf); an output artifact from its selectors.
struct ParameterSelector {
  std::string producer_subtask;
  std::string output_parameter_key;
};
struct DagOutputParameter {
  bool from_oneof = false;
  std::vector<ParameterSelector> selectors;  // exactly one unless from_oneof
};
struct ArtifactSelector {
  std::string producer_subtask;
  std::string output_artifact_key;
};
struct DagOutputArtifact {
  std::vector<ArtifactSelector> selectors;
};

struct DagSpec {
  std::map<std::string, TaskSpec> tasks;
  std::map<std::string, DagOutputParameter> output_parameters;
  std::map<std::string, DagOutputArtifact> output_artifacts;
};

// A component is either a DAG of tasks or a single executor.
struct ComponentSpec {
  IoDefinitions input_definitions;
  IoDefinitions output_definitions;
  std::optional<DagSpec> dag;
  std::string executor_label;  // set iff !dag
};

struct EnvVar {
  std::string name;
  std::string value;
};

struct AcceleratorConfig {
  std::string type;   // deprecated `type`
  int64_t count = 0;  // deprecated `count`
  std::string resource_type;
  std::string resource_count;
};

// The deprecated numeric fields (cpu cores, memory in GB) and their string successors
// (resourceCpuLimit: "4", resourceMemoryLimit: "14Gi"); kfp 2.x emits both.
struct ResourceSpec {
  double cpu_limit = 0;
  double memory_limit = 0;
  double cpu_request = 0;
  double memory_request = 0;
  std::string resource_cpu_limit;
  std::string resource_memory_limit;
  std::string resource_cpu_request;
  std::string resource_memory_request;
  std::optional<AcceleratorConfig> accelerator;
};

struct ContainerSpec {
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<EnvVar> env;
  ResourceSpec resources;
};

// ValueOrRuntimeParameter: a constant, or the name of an input parameter of the component.
struct ValueOrRuntimeParameter {
  std::optional<nlohmann::json> constant;
  std::string runtime_parameter;  // set iff !constant
};

struct ImporterSpec {
  ValueOrRuntimeParameter artifact_uri;
  ArtifactTypeSchema type_schema;
  nlohmann::json metadata = nlohmann::json::object();
  bool reimport = false;
};

struct ExecutorSpec {
  enum class Kind { kContainer, kImporter };
  Kind kind = Kind::kContainer;
  ContainerSpec container;  // when kContainer
  ImporterSpec importer;    // when kImporter
};

struct PipelineInfo {
  std::string name;
  std::string display_name;
  std::string description;
};

struct PipelineSpec {
  PipelineInfo pipeline_info;
  std::string sdk_version;
  std::string schema_version;
  std::string default_pipeline_root;
  std::map<std::string, ComponentSpec> components;
  std::map<std::string, ExecutorSpec> executors;  // deploymentSpec.executors
  ComponentSpec root;  // root.inputDefinitions are the pipeline parameters
  // The optional second YAML document (e.g. `platforms: {kubernetes: ...}`), kept as is.
  std::optional<nlohmann::json> platform_spec;
};

}  // namespace regatta::pipelines::ir

#endif  // REGATTA_SRC_PIPELINES_IR_PIPELINE_SPEC_H_
