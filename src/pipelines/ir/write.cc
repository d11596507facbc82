#include "src/pipelines/ir/write.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"

namespace regatta::pipelines::ir {
namespace {

using Json = nlohmann::ordered_json;

// nlohmann::json -> ordered_json, keeping the value.
Json Value(const nlohmann::json& value) { return Json::parse(value.dump()); }

// protobuf Duration JSON: "3600s", "0.5s".
std::string DurationText(absl::Duration d) {
  return absl::StrCat(absl::ToDoubleSeconds(d), "s");  // StrCat: shortest exact form, "0.5"
}

Json TypeSchema(const ArtifactTypeSchema& schema) {
  Json out = Json::object();
  if (!schema.schema_title.empty()) out["schemaTitle"] = schema.schema_title;
  if (!schema.instance_schema.empty()) out["instanceSchema"] = schema.instance_schema;
  if (!schema.schema_version.empty()) out["schemaVersion"] = schema.schema_version;
  return out;
}

Json Definitions(const IoDefinitions& io) {
  Json out = Json::object();
  if (!io.artifacts.empty()) {
    Json& artifacts = out["artifacts"];
    for (const auto& [name, a] : io.artifacts) {
      Json& entry = artifacts[name];
      entry["artifactType"] = TypeSchema(a.artifact_type);
      if (a.is_artifact_list) entry["isArtifactList"] = true;
      if (a.is_optional) entry["isOptional"] = true;
      if (!a.description.empty()) entry["description"] = a.description;
    }
  }
  if (!io.parameters.empty()) {
    Json& parameters = out["parameters"];
    for (const auto& [name, p] : io.parameters) {
      Json& entry = parameters[name];
      if (p.default_value.has_value()) entry["defaultValue"] = Value(*p.default_value);
      if (!p.description.empty()) entry["description"] = p.description;
      if (p.is_optional) entry["isOptional"] = true;
      entry["parameterType"] = std::string(ParameterTypeName(p.parameter_type));
    }
  }
  return out;
}

Json TaskInputs(const TaskSpec& task) {
  Json out = Json::object();
  if (!task.input_artifacts.empty()) {
    Json& artifacts = out["artifacts"];
    for (const auto& [name, a] : task.input_artifacts) {
      Json& entry = artifacts[name];
      if (a.kind == TaskInputArtifact::Kind::kComponentInputArtifact) {
        entry["componentInputArtifact"] = a.component_input_artifact;
      } else {
        entry["taskOutputArtifact"] = {{"outputArtifactKey", a.output_artifact_key},
                                       {"producerTask", a.producer_task}};
      }
    }
  }
  if (!task.input_parameters.empty()) {
    Json& parameters = out["parameters"];
    for (const auto& [name, p] : task.input_parameters) {
      Json& entry = parameters[name];
      switch (p.kind) {
        case TaskInputParameter::Kind::kComponentInputParameter:
          entry["componentInputParameter"] = p.component_input_parameter;
          break;
        case TaskInputParameter::Kind::kTaskOutputParameter:
          entry["taskOutputParameter"] = {{"outputParameterKey", p.output_parameter_key},
                                          {"producerTask", p.producer_task}};
          break;
        case TaskInputParameter::Kind::kRuntimeValue:
          entry["runtimeValue"] = {{"constant", Value(p.constant)}};
          break;
        case TaskInputParameter::Kind::kTaskFinalStatus:
          entry["taskFinalStatus"] = {{"producerTask", p.producer_task}};
          break;
      }
      if (!p.parameter_expression_selector.empty()) {
        entry["parameterExpressionSelector"] = p.parameter_expression_selector;
      }
    }
  }
  return out;
}

Json Task(const TaskSpec& task) {
  Json out = Json::object();
  if (task.artifact_iterator.has_value()) {
    out["artifactIterator"] = {
        {"itemInput", task.artifact_iterator->item_input},
        {"items", {{"inputArtifact", task.artifact_iterator->items_input_artifact}}}};
  }
  if (task.caching_options.enable_cache || !task.caching_options.cache_key.empty()) {
    Json& caching = out["cachingOptions"];
    caching = Json::object();
    if (!task.caching_options.cache_key.empty())
      caching["cacheKey"] = task.caching_options.cache_key;
    if (task.caching_options.enable_cache) caching["enableCache"] = true;
  }
  out["componentRef"] = {{"name", task.component_ref}};
  if (!task.dependent_tasks.empty()) out["dependentTasks"] = task.dependent_tasks;
  Json inputs = TaskInputs(task);
  if (!inputs.empty()) out["inputs"] = std::move(inputs);
  if (task.parallelism_limit > 0) {
    out["iteratorPolicy"] = {{"parallelismLimit", task.parallelism_limit}};
  }
  if (task.parameter_iterator.has_value()) {
    const ParameterIterator& it = *task.parameter_iterator;
    Json items = Json::object();
    if (it.items_input_parameter.has_value()) items["inputParameter"] = *it.items_input_parameter;
    if (it.items_raw.has_value()) items["raw"] = *it.items_raw;
    out["parameterIterator"] = {{"itemInput", it.item_input}, {"items", std::move(items)}};
  }
  if (task.retry_policy.has_value()) {
    const RetryPolicy& r = *task.retry_policy;
    out["retryPolicy"] = {{"backoffDuration", DurationText(r.backoff_duration)},
                          {"backoffFactor", r.backoff_factor},
                          {"backoffMaxDuration", DurationText(r.backoff_max_duration)},
                          {"maxRetryCount", r.max_retry_count}};
  }
  out["taskInfo"] = {{"name", task.display_name.empty() ? task.name : task.display_name}};
  if (!task.trigger_policy.condition.empty() ||
      task.trigger_policy.strategy != TriggerStrategy::kUnspecified) {
    Json& trigger = out["triggerPolicy"];
    trigger = Json::object();
    if (!task.trigger_policy.condition.empty())
      trigger["condition"] = task.trigger_policy.condition;
    if (task.trigger_policy.strategy == TriggerStrategy::kAllUpstreamTasksSucceeded) {
      trigger["strategy"] = "ALL_UPSTREAM_TASKS_SUCCEEDED";
    } else if (task.trigger_policy.strategy == TriggerStrategy::kAllUpstreamTasksCompleted) {
      trigger["strategy"] = "ALL_UPSTREAM_TASKS_COMPLETED";
    }
  }
  return out;
}

Json Dag(const DagSpec& dag) {
  Json out = Json::object();
  if (!dag.output_artifacts.empty() || !dag.output_parameters.empty()) {
    Json& outputs = out["outputs"];
    outputs = Json::object();
    for (const auto& [name, a] : dag.output_artifacts) {
      Json selectors = Json::array();
      for (const ArtifactSelector& s : a.selectors) {
        selectors.push_back({{"outputArtifactKey", s.output_artifact_key},
                             {"producerSubtask", s.producer_subtask}});
      }
      outputs["artifacts"][name]["artifactSelectors"] = std::move(selectors);
    }
    for (const auto& [name, p] : dag.output_parameters) {
      Json selectors = Json::array();
      for (const ParameterSelector& s : p.selectors) {
        selectors.push_back({{"outputParameterKey", s.output_parameter_key},
                             {"producerSubtask", s.producer_subtask}});
      }
      if (p.from_oneof) {
        outputs["parameters"][name]["valueFromOneof"]["parameterSelectors"] = std::move(selectors);
      } else if (!selectors.empty()) {
        outputs["parameters"][name]["valueFromParameter"] = selectors[0];
      }
    }
  }
  Json& tasks = out["tasks"];
  tasks = Json::object();
  for (const auto& [name, task] : dag.tasks) tasks[name] = Task(task);
  return out;
}

Json Component(const ComponentSpec& component) {
  Json out = Json::object();
  if (component.dag.has_value()) out["dag"] = Dag(*component.dag);
  if (!component.executor_label.empty()) out["executorLabel"] = component.executor_label;
  Json inputs = Definitions(component.input_definitions);
  if (!inputs.empty()) out["inputDefinitions"] = std::move(inputs);
  Json outputs = Definitions(component.output_definitions);
  if (!outputs.empty()) out["outputDefinitions"] = std::move(outputs);
  return out;
}

Json Resources(const ResourceSpec& r) {
  Json out = Json::object();
  if (r.accelerator.has_value()) {
    Json& a = out["accelerator"];
    a = Json::object();
    // int64 in the protobuf JSON mapping: a string, as the SDK writes it.
    if (r.accelerator->count != 0) a["count"] = absl::StrCat(r.accelerator->count);
    if (!r.accelerator->resource_count.empty()) a["resourceCount"] = r.accelerator->resource_count;
    if (!r.accelerator->resource_type.empty()) a["resourceType"] = r.accelerator->resource_type;
    if (!r.accelerator->type.empty()) a["type"] = r.accelerator->type;
  }
  if (r.cpu_limit != 0) out["cpuLimit"] = r.cpu_limit;
  if (r.cpu_request != 0) out["cpuRequest"] = r.cpu_request;
  if (r.memory_limit != 0) out["memoryLimit"] = r.memory_limit;
  if (r.memory_request != 0) out["memoryRequest"] = r.memory_request;
  if (!r.resource_cpu_limit.empty()) out["resourceCpuLimit"] = r.resource_cpu_limit;
  if (!r.resource_cpu_request.empty()) out["resourceCpuRequest"] = r.resource_cpu_request;
  if (!r.resource_memory_limit.empty()) out["resourceMemoryLimit"] = r.resource_memory_limit;
  if (!r.resource_memory_request.empty()) out["resourceMemoryRequest"] = r.resource_memory_request;
  return out;
}

Json Executor(const ExecutorSpec& executor) {
  Json out = Json::object();
  if (executor.kind == ExecutorSpec::Kind::kImporter) {
    const ImporterSpec& importer = executor.importer;
    Json& i = out["importer"];
    if (importer.artifact_uri.constant.has_value()) {
      i["artifactUri"] = {{"constant", Value(*importer.artifact_uri.constant)}};
    } else {
      i["artifactUri"] = {{"runtimeParameter", importer.artifact_uri.runtime_parameter}};
    }
    if (!importer.metadata.empty()) i["metadata"] = Value(importer.metadata);
    if (importer.reimport) i["reimport"] = true;
    i["typeSchema"] = TypeSchema(importer.type_schema);
    return out;
  }
  const ContainerSpec& c = executor.container;
  Json& container = out["container"];
  if (!c.args.empty()) container["args"] = c.args;
  if (!c.command.empty()) container["command"] = c.command;
  if (!c.env.empty()) {
    Json env = Json::array();
    for (const EnvVar& e : c.env) {
      Json var = {{"name", e.name}};
      if (!e.value.empty()) var["value"] = e.value;  // the SDK leaves an empty value out
      env.push_back(std::move(var));
    }
    container["env"] = std::move(env);
  }
  container["image"] = c.image;
  Json resources = Resources(c.resources);
  if (!resources.empty()) container["resources"] = std::move(resources);
  return out;
}

}  // namespace

nlohmann::ordered_json PipelineSpecToJson(const PipelineSpec& spec) {
  Json out = Json::object();
  Json& components = out["components"];
  components = Json::object();
  for (const auto& [name, component] : spec.components) components[name] = Component(component);
  if (!spec.default_pipeline_root.empty()) out["defaultPipelineRoot"] = spec.default_pipeline_root;
  Json& executors = out["deploymentSpec"]["executors"];
  executors = Json::object();
  for (const auto& [label, executor] : spec.executors) executors[label] = Executor(executor);
  Json& info = out["pipelineInfo"];
  if (!spec.pipeline_info.description.empty()) info["description"] = spec.pipeline_info.description;
  if (!spec.pipeline_info.display_name.empty()) {
    info["displayName"] = spec.pipeline_info.display_name;
  }
  info["name"] = spec.pipeline_info.name;
  out["root"] = Component(spec.root);
  out["schemaVersion"] = spec.schema_version;
  if (!spec.sdk_version.empty()) out["sdkVersion"] = spec.sdk_version;
  return out;
}

}  // namespace regatta::pipelines::ir
