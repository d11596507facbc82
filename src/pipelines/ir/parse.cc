#include "src/pipelines/ir/parse.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"
#include "src/pipelines/ir/parameters.h"
#include "src/pipelines/ir/validate.h"
#include "yaml-cpp/yaml.h"

namespace regatta::pipelines::ir {
namespace {

using json = nlohmann::json;

absl::Status Invalid(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

std::string Join(absl::string_view path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

// YAML 1.2 core schema for plain scalars; quoted scalars (tag "!") are always strings, so `'1'`
// stays the string the SDK meant.
json PlainScalarToJson(const std::string& s) {
  if (s.empty() || s == "~" || s == "null" || s == "Null" || s == "NULL") return nullptr;
  if (s == "true" || s == "True" || s == "TRUE") return true;
  if (s == "false" || s == "False" || s == "FALSE") return false;
  if (s == ".inf" || s == ".Inf" || s == "+.inf") return std::numeric_limits<double>::infinity();
  if (s == "-.inf" || s == "-.Inf") return -std::numeric_limits<double>::infinity();
  if (s == ".nan" || s == ".NaN") return std::numeric_limits<double>::quiet_NaN();
  // SimpleAtod alone would also take "inf", "nan" and hex, which YAML reads as strings.
  const bool numeric = absl::c_all_of(s, [](char c) {
    return absl::ascii_isdigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
  });
  if (numeric) {
    int64_t i = 0;
    if (absl::SimpleAtoi(s, &i)) return i;
    double d = 0;
    if (absl::SimpleAtod(s, &d)) return d;
  }
  return s;
}

// Deeper documents are not pipelines; the limit keeps recursion bounded on hostile input.
constexpr int kMaxDepth = 64;

// The JSON path takes what YamlToJson would; anything deeper goes to the YAML path, whose
// error names the place.
ParseLimits JsonPathLimits() {
  ParseLimits limits;
  limits.max_depth = kMaxDepth;
  return limits;
}

absl::StatusOr<json> YamlToJson(const YAML::Node& node, const std::string& path, int depth = 0) {
  if (depth > kMaxDepth) return Invalid(path, "nested too deeply");
  switch (node.Type()) {
    case YAML::NodeType::Undefined:
    case YAML::NodeType::Null:
      return nullptr;
    case YAML::NodeType::Scalar:
      if (node.Tag() == "!") return node.Scalar();
      return PlainScalarToJson(node.Scalar());
    case YAML::NodeType::Sequence: {
      json out = json::array();
      for (size_t i = 0; i < node.size(); ++i) {
        ASSIGN_OR_RETURN(json item,
                         YamlToJson(node[i], absl::StrCat(path, "[", i, "]"), depth + 1));
        out.push_back(std::move(item));
      }
      return out;
    }
    case YAML::NodeType::Map: {
      json out = json::object();
      for (const auto& kv : node) {
        if (!kv.first.IsScalar()) return Invalid(path, "map keys must be strings");
        const std::string key = kv.first.Scalar();
        ASSIGN_OR_RETURN(json value, YamlToJson(kv.second, Join(path, key), depth + 1));
        out[key] = std::move(value);
      }
      return out;
    }
  }
  return Invalid(path, "unsupported YAML node");
}

const char* TypeName(const json& j) { return j.type_name(); }

// Field readers: an absent (or null) key leaves *out untouched; a present key of the wrong type
// is an error naming `path.key`.
absl::Status ExpectObject(const json& j, const std::string& path) {
  if (!j.is_object()) return Invalid(path, absl::StrCat("expected a map, got ", TypeName(j)));
  return absl::OkStatus();
}

const json* Find(const json& obj, absl::string_view key) {
  auto it = obj.find(std::string(key));
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

absl::Status ReadString(const json& obj, absl::string_view key, const std::string& path,
                        std::string* out) {
  const json* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_string()) {
    return Invalid(Join(path, key), absl::StrCat("expected a string, got ", TypeName(*v)));
  }
  *out = v->get<std::string>();
  return absl::OkStatus();
}

absl::Status ReadRequiredString(const json& obj, absl::string_view key, const std::string& path,
                                std::string* out) {
  if (Find(obj, key) == nullptr) return Invalid(Join(path, key), "missing");
  return ReadString(obj, key, path, out);
}

absl::Status ReadBool(const json& obj, absl::string_view key, const std::string& path, bool* out) {
  const json* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_boolean()) {
    return Invalid(Join(path, key), absl::StrCat("expected a boolean, got ", TypeName(*v)));
  }
  *out = v->get<bool>();
  return absl::OkStatus();
}

absl::Status ReadDouble(const json& obj, absl::string_view key, const std::string& path,
                        double* out) {
  const json* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  if (!v->is_number()) {
    return Invalid(Join(path, key), absl::StrCat("expected a number, got ", TypeName(*v)));
  }
  *out = v->get<double>();
  return absl::OkStatus();
}

// Protobuf JSON writes int64 as a string ("1") and int32 as a number; both are accepted.
absl::Status ReadInt64(const json& obj, absl::string_view key, const std::string& path,
                       int64_t* out) {
  const json* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  if (v->is_number_integer()) {
    *out = v->get<int64_t>();
    return absl::OkStatus();
  }
  if (v->is_number_float()) {
    double d = v->get<double>();
    if (std::trunc(d) == d && std::abs(d) < 9.2e18) {
      *out = static_cast<int64_t>(d);
      return absl::OkStatus();
    }
  }
  if (v->is_string() && absl::SimpleAtoi(v->get<std::string>(), out)) return absl::OkStatus();
  return Invalid(Join(path, key), absl::StrCat("expected an integer, got ", v->dump()));
}

absl::Status ReadInt32(const json& obj, absl::string_view key, const std::string& path,
                       int32_t* out) {
  int64_t value = *out;
  RETURN_IF_ERROR(ReadInt64(obj, key, path, &value));
  if (value < std::numeric_limits<int32_t>::min() || value > std::numeric_limits<int32_t>::max()) {
    return Invalid(Join(path, key), "out of the int32 range");
  }
  *out = static_cast<int32_t>(value);
  return absl::OkStatus();
}

absl::Status ReadStringList(const json& obj, absl::string_view key, const std::string& path,
                            std::vector<std::string>* out) {
  const json* v = Find(obj, key);
  if (v == nullptr) return absl::OkStatus();
  const std::string field = Join(path, key);
  if (!v->is_array()) return Invalid(field, absl::StrCat("expected a list, got ", TypeName(*v)));
  for (size_t i = 0; i < v->size(); ++i) {
    if (!(*v)[i].is_string()) {
      return Invalid(absl::StrCat(field, "[", i, "]"),
                     absl::StrCat("expected a string, got ", TypeName((*v)[i])));
    }
    out->push_back((*v)[i].get<std::string>());
  }
  return absl::OkStatus();
}

// A map-valued field: nullptr when absent, else the object (error if not a map).
absl::StatusOr<const json*> ReadObject(const json& obj, absl::string_view key,
                                       const std::string& path) {
  const json* v = Find(obj, key);
  if (v == nullptr) return nullptr;
  RETURN_IF_ERROR(ExpectObject(*v, Join(path, key)));
  return v;
}

// protobuf Duration JSON: "3600s", "0.5s".
absl::Status ReadDuration(const json& obj, absl::string_view key, const std::string& path,
                          absl::Duration* out) {
  std::string text;
  RETURN_IF_ERROR(ReadString(obj, key, path, &text));
  if (text.empty()) return absl::OkStatus();
  double seconds = 0;
  if (text.back() != 's' ||
      !absl::SimpleAtod(absl::string_view(text).substr(0, text.size() - 1), &seconds)) {
    return Invalid(Join(path, key),
                   absl::StrCat("expected a duration like \"30s\", got \"", text, "\""));
  }
  *out = absl::Seconds(seconds);
  return absl::OkStatus();
}

absl::StatusOr<ParameterType> ParseParameterType(absl::string_view name, const std::string& path) {
  for (ParameterType type : {ParameterType::kNumberDouble, ParameterType::kNumberInteger,
                             ParameterType::kString, ParameterType::kBoolean, ParameterType::kList,
                             ParameterType::kStruct, ParameterType::kTaskFinalStatus}) {
    if (ParameterTypeName(type) == name) return type;
  }
  return Invalid(path, absl::StrCat("unknown parameter type '", name, "'"));
}

// PrimitiveType (deprecated in the IR, still read by the kfp backend): INT, DOUBLE, STRING.
absl::StatusOr<ParameterType> ParsePrimitiveType(absl::string_view name, const std::string& path) {
  if (name == "INT") return ParameterType::kNumberInteger;
  if (name == "DOUBLE") return ParameterType::kNumberDouble;
  if (name == "STRING") return ParameterType::kString;
  return Invalid(
      path, absl::StrCat("unknown primitive type '", name, "' (expected INT, DOUBLE or STRING)"));
}

absl::Status ParseArtifactTypeSchema(const json& obj, const std::string& path,
                                     ArtifactTypeSchema* out) {
  RETURN_IF_ERROR(ExpectObject(obj, path));
  RETURN_IF_ERROR(ReadString(obj, "schemaTitle", path, &out->schema_title));
  RETURN_IF_ERROR(ReadString(obj, "instanceSchema", path, &out->instance_schema));
  RETURN_IF_ERROR(ReadString(obj, "schemaVersion", path, &out->schema_version));
  return absl::OkStatus();
}

absl::Status ParseIoDefinitions(const json& obj, const std::string& path, IoDefinitions* out) {
  ASSIGN_OR_RETURN(const json* parameters, ReadObject(obj, "parameters", path));
  if (parameters != nullptr) {
    for (const auto& [name, value] : parameters->items()) {
      const std::string p = Join(Join(path, "parameters"), name);
      RETURN_IF_ERROR(ExpectObject(value, p));
      ParameterSpec spec;
      std::string type;
      RETURN_IF_ERROR(ReadString(value, "parameterType", p, &type));
      if (!type.empty()) {
        ASSIGN_OR_RETURN(spec.parameter_type, ParseParameterType(type, Join(p, "parameterType")));
      } else if (Find(value, "type") != nullptr) {
        // schemaVersion 2.0.0 and kfp 1.8's v2 mode wrote the deprecated PrimitiveType.
        RETURN_IF_ERROR(ReadString(value, "type", p, &type));
        ASSIGN_OR_RETURN(spec.parameter_type, ParsePrimitiveType(type, Join(p, "type")));
      } else {
        return Invalid(Join(p, "parameterType"), "missing");
      }
      if (const json* d = Find(value, "defaultValue")) {
        spec.default_value = NormalizeDefaultValue(*d, spec.parameter_type);
      }
      RETURN_IF_ERROR(ReadBool(value, "isOptional", p, &spec.is_optional));
      RETURN_IF_ERROR(ReadString(value, "description", p, &spec.description));
      out->parameters.emplace(name, std::move(spec));
    }
  }
  ASSIGN_OR_RETURN(const json* artifacts, ReadObject(obj, "artifacts", path));
  if (artifacts != nullptr) {
    for (const auto& [name, value] : artifacts->items()) {
      const std::string p = Join(Join(path, "artifacts"), name);
      RETURN_IF_ERROR(ExpectObject(value, p));
      ArtifactSpec spec;
      ASSIGN_OR_RETURN(const json* type, ReadObject(value, "artifactType", p));
      if (type == nullptr) return Invalid(Join(p, "artifactType"), "missing");
      RETURN_IF_ERROR(ParseArtifactTypeSchema(*type, Join(p, "artifactType"), &spec.artifact_type));
      RETURN_IF_ERROR(ReadBool(value, "isArtifactList", p, &spec.is_artifact_list));
      RETURN_IF_ERROR(ReadBool(value, "isOptional", p, &spec.is_optional));
      RETURN_IF_ERROR(ReadString(value, "description", p, &spec.description));
      out->artifacts.emplace(name, std::move(spec));
    }
  }
  return absl::OkStatus();
}

// ml_pipelines.Value: exactly one of intValue (int64, so maybe a string), doubleValue,
// stringValue.
absl::Status ParseOldValue(const json& obj, const std::string& path, json* out) {
  if (obj.size() != 1) {
    return Invalid(path, "needs exactly one of intValue, doubleValue, stringValue");
  }
  if (Find(obj, "intValue") != nullptr) {
    int64_t value = 0;
    RETURN_IF_ERROR(ReadInt64(obj, "intValue", path, &value));
    *out = value;
    return absl::OkStatus();
  }
  if (Find(obj, "doubleValue") != nullptr) {
    double value = 0;
    RETURN_IF_ERROR(ReadDouble(obj, "doubleValue", path, &value));
    *out = value;
    return absl::OkStatus();
  }
  if (Find(obj, "stringValue") != nullptr) {
    std::string value;
    RETURN_IF_ERROR(ReadString(obj, "stringValue", path, &value));
    *out = value;
    return absl::OkStatus();
  }
  return Invalid(path, "needs exactly one of intValue, doubleValue, stringValue");
}

absl::Status ParseTaskInputParameter(const json& obj, const std::string& path,
                                     TaskInputParameter* out) {
  RETURN_IF_ERROR(ExpectObject(obj, path));
  std::vector<std::string> sources;
  for (const char* key :
       {"componentInputParameter", "taskOutputParameter", "runtimeValue", "taskFinalStatus"}) {
    if (Find(obj, key) != nullptr) sources.push_back(key);
  }
  if (sources.size() != 1) {
    return Invalid(path,
                   sources.empty()
                       ? "needs one of componentInputParameter, taskOutputParameter, "
                         "runtimeValue, taskFinalStatus"
                       : absl::StrCat("has more than one source: ", absl::StrJoin(sources, ", ")));
  }
  RETURN_IF_ERROR(
      ReadString(obj, "parameterExpressionSelector", path, &out->parameter_expression_selector));
  const std::string& source = sources[0];
  const std::string p = Join(path, source);
  if (source == "componentInputParameter") {
    out->kind = TaskInputParameter::Kind::kComponentInputParameter;
    return ReadString(obj, source, path, &out->component_input_parameter);
  }
  ASSIGN_OR_RETURN(const json* value, ReadObject(obj, source, path));
  if (source == "taskOutputParameter") {
    out->kind = TaskInputParameter::Kind::kTaskOutputParameter;
    RETURN_IF_ERROR(ReadRequiredString(*value, "producerTask", p, &out->producer_task));
    return ReadRequiredString(*value, "outputParameterKey", p, &out->output_parameter_key);
  }
  if (source == "runtimeValue") {
    out->kind = TaskInputParameter::Kind::kRuntimeValue;
    if (const json* constant = Find(*value, "constant")) {
      out->constant = *constant;
      return absl::OkStatus();
    }
    // The deprecated `constantValue` of schema 2.0.0: {intValue|doubleValue|stringValue}.
    ASSIGN_OR_RETURN(const json* old_constant, ReadObject(*value, "constantValue", p));
    if (old_constant == nullptr) return Invalid(Join(p, "constant"), "missing");
    return ParseOldValue(*old_constant, Join(p, "constantValue"), &out->constant);
  }
  out->kind = TaskInputParameter::Kind::kTaskFinalStatus;
  return ReadRequiredString(*value, "producerTask", p, &out->producer_task);
}

absl::Status ParseTaskInputArtifact(const json& obj, const std::string& path,
                                    TaskInputArtifact* out) {
  RETURN_IF_ERROR(ExpectObject(obj, path));
  const bool from_task = Find(obj, "taskOutputArtifact") != nullptr;
  const bool from_component = Find(obj, "componentInputArtifact") != nullptr;
  if (from_task == from_component) {
    return Invalid(path, "needs exactly one of taskOutputArtifact, componentInputArtifact");
  }
  if (from_component) {
    out->kind = TaskInputArtifact::Kind::kComponentInputArtifact;
    return ReadString(obj, "componentInputArtifact", path, &out->component_input_artifact);
  }
  out->kind = TaskInputArtifact::Kind::kTaskOutputArtifact;
  ASSIGN_OR_RETURN(const json* value, ReadObject(obj, "taskOutputArtifact", path));
  const std::string p = Join(path, "taskOutputArtifact");
  RETURN_IF_ERROR(ReadRequiredString(*value, "producerTask", p, &out->producer_task));
  return ReadRequiredString(*value, "outputArtifactKey", p, &out->output_artifact_key);
}

absl::StatusOr<TriggerStrategy> ParseTriggerStrategy(absl::string_view name,
                                                     const std::string& path) {
  if (name.empty() || name == "TRIGGER_STRATEGY_UNSPECIFIED") return TriggerStrategy::kUnspecified;
  if (name == "ALL_UPSTREAM_TASKS_SUCCEEDED") return TriggerStrategy::kAllUpstreamTasksSucceeded;
  if (name == "ALL_UPSTREAM_TASKS_COMPLETED") return TriggerStrategy::kAllUpstreamTasksCompleted;
  return Invalid(path, absl::StrCat("unknown trigger strategy '", name,
                                    "' (expected ALL_UPSTREAM_TASKS_SUCCEEDED or "
                                    "ALL_UPSTREAM_TASKS_COMPLETED)"));
}

absl::Status ParseTask(const json& obj, const std::string& path, TaskSpec* task) {
  RETURN_IF_ERROR(ExpectObject(obj, path));
  ASSIGN_OR_RETURN(const json* info, ReadObject(obj, "taskInfo", path));
  if (info != nullptr) {
    RETURN_IF_ERROR(ReadString(*info, "name", Join(path, "taskInfo"), &task->display_name));
  }
  ASSIGN_OR_RETURN(const json* ref, ReadObject(obj, "componentRef", path));
  if (ref == nullptr) return Invalid(Join(path, "componentRef"), "missing");
  RETURN_IF_ERROR(
      ReadRequiredString(*ref, "name", Join(path, "componentRef"), &task->component_ref));
  RETURN_IF_ERROR(ReadStringList(obj, "dependentTasks", path, &task->dependent_tasks));

  ASSIGN_OR_RETURN(const json* inputs, ReadObject(obj, "inputs", path));
  if (inputs != nullptr) {
    const std::string inputs_path = Join(path, "inputs");
    ASSIGN_OR_RETURN(const json* parameters, ReadObject(*inputs, "parameters", inputs_path));
    if (parameters != nullptr) {
      for (const auto& [name, value] : parameters->items()) {
        RETURN_IF_ERROR(ParseTaskInputParameter(value, Join(Join(inputs_path, "parameters"), name),
                                                &task->input_parameters[name]));
      }
    }
    ASSIGN_OR_RETURN(const json* artifacts, ReadObject(*inputs, "artifacts", inputs_path));
    if (artifacts != nullptr) {
      for (const auto& [name, value] : artifacts->items()) {
        RETURN_IF_ERROR(ParseTaskInputArtifact(value, Join(Join(inputs_path, "artifacts"), name),
                                               &task->input_artifacts[name]));
      }
    }
  }

  ASSIGN_OR_RETURN(const json* caching, ReadObject(obj, "cachingOptions", path));
  if (caching != nullptr) {
    const std::string p = Join(path, "cachingOptions");
    RETURN_IF_ERROR(ReadBool(*caching, "enableCache", p, &task->caching_options.enable_cache));
    RETURN_IF_ERROR(ReadString(*caching, "cacheKey", p, &task->caching_options.cache_key));
  }

  ASSIGN_OR_RETURN(const json* trigger, ReadObject(obj, "triggerPolicy", path));
  if (trigger != nullptr) {
    const std::string p = Join(path, "triggerPolicy");
    RETURN_IF_ERROR(ReadString(*trigger, "condition", p, &task->trigger_policy.condition));
    std::string strategy;
    RETURN_IF_ERROR(ReadString(*trigger, "strategy", p, &strategy));
    ASSIGN_OR_RETURN(task->trigger_policy.strategy,
                     ParseTriggerStrategy(strategy, Join(p, "strategy")));
  }

  ASSIGN_OR_RETURN(const json* param_iter, ReadObject(obj, "parameterIterator", path));
  ASSIGN_OR_RETURN(const json* artifact_iter, ReadObject(obj, "artifactIterator", path));
  if (param_iter != nullptr && artifact_iter != nullptr) {
    return Invalid(path, "has both parameterIterator and artifactIterator");
  }
  if (param_iter != nullptr) {
    const std::string p = Join(path, "parameterIterator");
    ParameterIterator it;
    RETURN_IF_ERROR(ReadRequiredString(*param_iter, "itemInput", p, &it.item_input));
    ASSIGN_OR_RETURN(const json* items, ReadObject(*param_iter, "items", p));
    if (items == nullptr) return Invalid(Join(p, "items"), "missing");
    const std::string items_path = Join(p, "items");
    const bool has_raw = Find(*items, "raw") != nullptr;
    const bool has_input = Find(*items, "inputParameter") != nullptr;
    if (has_raw == has_input) {
      return Invalid(items_path, "needs exactly one of raw, inputParameter");
    }
    std::string value;
    if (has_raw) {
      RETURN_IF_ERROR(ReadString(*items, "raw", items_path, &value));
      it.items_raw = value;
    } else {
      RETURN_IF_ERROR(ReadString(*items, "inputParameter", items_path, &value));
      it.items_input_parameter = value;
    }
    task->parameter_iterator = std::move(it);
  }
  if (artifact_iter != nullptr) {
    const std::string p = Join(path, "artifactIterator");
    ArtifactIterator it;
    RETURN_IF_ERROR(ReadRequiredString(*artifact_iter, "itemInput", p, &it.item_input));
    ASSIGN_OR_RETURN(const json* items, ReadObject(*artifact_iter, "items", p));
    if (items == nullptr) return Invalid(Join(p, "items"), "missing");
    RETURN_IF_ERROR(
        ReadRequiredString(*items, "inputArtifact", Join(p, "items"), &it.items_input_artifact));
    task->artifact_iterator = std::move(it);
  }
  ASSIGN_OR_RETURN(const json* iter_policy, ReadObject(obj, "iteratorPolicy", path));
  if (iter_policy != nullptr) {
    RETURN_IF_ERROR(ReadInt32(*iter_policy, "parallelismLimit", Join(path, "iteratorPolicy"),
                              &task->parallelism_limit));
  }

  ASSIGN_OR_RETURN(const json* retry, ReadObject(obj, "retryPolicy", path));
  if (retry != nullptr) {
    const std::string p = Join(path, "retryPolicy");
    RetryPolicy policy;
    RETURN_IF_ERROR(ReadInt32(*retry, "maxRetryCount", p, &policy.max_retry_count));
    RETURN_IF_ERROR(ReadDuration(*retry, "backoffDuration", p, &policy.backoff_duration));
    RETURN_IF_ERROR(ReadDouble(*retry, "backoffFactor", p, &policy.backoff_factor));
    // 0 is the proto default, i.e. unset.
    if (policy.backoff_factor == 0) policy.backoff_factor = 2.0;
    RETURN_IF_ERROR(ReadDuration(*retry, "backoffMaxDuration", p, &policy.backoff_max_duration));
    if (policy.backoff_max_duration == absl::ZeroDuration() ||
        policy.backoff_max_duration > absl::Hours(1)) {
      policy.backoff_max_duration = absl::Hours(1);
    }
    task->retry_policy = policy;
  }
  return absl::OkStatus();
}

absl::Status ParseDagOutputs(const json& obj, const std::string& path, DagSpec* dag) {
  ASSIGN_OR_RETURN(const json* parameters, ReadObject(obj, "parameters", path));
  if (parameters != nullptr) {
    for (const auto& [name, value] : parameters->items()) {
      const std::string p = Join(Join(path, "parameters"), name);
      RETURN_IF_ERROR(ExpectObject(value, p));
      DagOutputParameter out;
      ASSIGN_OR_RETURN(const json* single, ReadObject(value, "valueFromParameter", p));
      ASSIGN_OR_RETURN(const json* oneof, ReadObject(value, "valueFromOneof", p));
      if ((single == nullptr) == (oneof == nullptr)) {
        return Invalid(p, "needs exactly one of valueFromParameter, valueFromOneof");
      }
      auto read_selector = [&](const json& s, const std::string& sp) -> absl::Status {
        RETURN_IF_ERROR(ExpectObject(s, sp));
        ParameterSelector selector;
        RETURN_IF_ERROR(ReadRequiredString(s, "producerSubtask", sp, &selector.producer_subtask));
        RETURN_IF_ERROR(
            ReadRequiredString(s, "outputParameterKey", sp, &selector.output_parameter_key));
        out.selectors.push_back(std::move(selector));
        return absl::OkStatus();
      };
      if (single != nullptr) {
        RETURN_IF_ERROR(read_selector(*single, Join(p, "valueFromParameter")));
      } else {
        out.from_oneof = true;
        const std::string sp = Join(Join(p, "valueFromOneof"), "parameterSelectors");
        const json* selectors = Find(*oneof, "parameterSelectors");
        if (selectors == nullptr || !selectors->is_array()) return Invalid(sp, "expected a list");
        for (size_t i = 0; i < selectors->size(); ++i) {
          RETURN_IF_ERROR(read_selector((*selectors)[i], absl::StrCat(sp, "[", i, "]")));
        }
      }
      dag->output_parameters.emplace(name, std::move(out));
    }
  }
  ASSIGN_OR_RETURN(const json* artifacts, ReadObject(obj, "artifacts", path));
  if (artifacts != nullptr) {
    for (const auto& [name, value] : artifacts->items()) {
      const std::string p = Join(Join(path, "artifacts"), name);
      RETURN_IF_ERROR(ExpectObject(value, p));
      const std::string sp = Join(p, "artifactSelectors");
      const json* selectors = Find(value, "artifactSelectors");
      if (selectors == nullptr || !selectors->is_array()) return Invalid(sp, "expected a list");
      DagOutputArtifact out;
      for (size_t i = 0; i < selectors->size(); ++i) {
        const std::string ip = absl::StrCat(sp, "[", i, "]");
        RETURN_IF_ERROR(ExpectObject((*selectors)[i], ip));
        ArtifactSelector selector;
        RETURN_IF_ERROR(
            ReadRequiredString((*selectors)[i], "producerSubtask", ip, &selector.producer_subtask));
        RETURN_IF_ERROR(ReadRequiredString((*selectors)[i], "outputArtifactKey", ip,
                                           &selector.output_artifact_key));
        out.selectors.push_back(std::move(selector));
      }
      dag->output_artifacts.emplace(name, std::move(out));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseComponent(const json& obj, const std::string& path, ComponentSpec* component) {
  RETURN_IF_ERROR(ExpectObject(obj, path));
  ASSIGN_OR_RETURN(const json* inputs, ReadObject(obj, "inputDefinitions", path));
  if (inputs != nullptr) {
    RETURN_IF_ERROR(
        ParseIoDefinitions(*inputs, Join(path, "inputDefinitions"), &component->input_definitions));
  }
  ASSIGN_OR_RETURN(const json* outputs, ReadObject(obj, "outputDefinitions", path));
  if (outputs != nullptr) {
    RETURN_IF_ERROR(ParseIoDefinitions(*outputs, Join(path, "outputDefinitions"),
                                       &component->output_definitions));
  }
  RETURN_IF_ERROR(ReadString(obj, "executorLabel", path, &component->executor_label));
  ASSIGN_OR_RETURN(const json* dag, ReadObject(obj, "dag", path));
  if ((dag == nullptr) == component->executor_label.empty()) {
    return Invalid(path, "needs exactly one of dag, executorLabel");
  }
  if (dag != nullptr) {
    const std::string dag_path = Join(path, "dag");
    DagSpec& spec = component->dag.emplace();
    ASSIGN_OR_RETURN(const json* tasks, ReadObject(*dag, "tasks", dag_path));
    if (tasks != nullptr) {
      for (const auto& [name, value] : tasks->items()) {
        TaskSpec& task = spec.tasks[name];
        task.name = name;
        RETURN_IF_ERROR(ParseTask(value, Join(Join(dag_path, "tasks"), name), &task));
      }
    }
    ASSIGN_OR_RETURN(const json* outputs, ReadObject(*dag, "outputs", dag_path));
    if (outputs != nullptr) {
      RETURN_IF_ERROR(ParseDagOutputs(*outputs, Join(dag_path, "outputs"), &spec));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseResources(const json& obj, const std::string& path, ResourceSpec* out) {
  RETURN_IF_ERROR(ReadDouble(obj, "cpuLimit", path, &out->cpu_limit));
  RETURN_IF_ERROR(ReadDouble(obj, "memoryLimit", path, &out->memory_limit));
  RETURN_IF_ERROR(ReadDouble(obj, "cpuRequest", path, &out->cpu_request));
  RETURN_IF_ERROR(ReadDouble(obj, "memoryRequest", path, &out->memory_request));
  RETURN_IF_ERROR(ReadString(obj, "resourceCpuLimit", path, &out->resource_cpu_limit));
  RETURN_IF_ERROR(ReadString(obj, "resourceMemoryLimit", path, &out->resource_memory_limit));
  RETURN_IF_ERROR(ReadString(obj, "resourceCpuRequest", path, &out->resource_cpu_request));
  RETURN_IF_ERROR(ReadString(obj, "resourceMemoryRequest", path, &out->resource_memory_request));
  ASSIGN_OR_RETURN(const json* accelerator, ReadObject(obj, "accelerator", path));
  if (accelerator != nullptr) {
    const std::string p = Join(path, "accelerator");
    AcceleratorConfig config;
    RETURN_IF_ERROR(ReadString(*accelerator, "type", p, &config.type));
    RETURN_IF_ERROR(ReadInt64(*accelerator, "count", p, &config.count));
    RETURN_IF_ERROR(ReadString(*accelerator, "resourceType", p, &config.resource_type));
    RETURN_IF_ERROR(ReadString(*accelerator, "resourceCount", p, &config.resource_count));
    out->accelerator = std::move(config);
  }
  return absl::OkStatus();
}

absl::Status ParseExecutor(const json& obj, const std::string& path, ExecutorSpec* executor) {
  RETURN_IF_ERROR(ExpectObject(obj, path));
  ASSIGN_OR_RETURN(const json* container, ReadObject(obj, "container", path));
  ASSIGN_OR_RETURN(const json* importer, ReadObject(obj, "importer", path));
  if ((container == nullptr) == (importer == nullptr)) {
    // Other executor kinds (resolver, Vertex custom jobs) have no meaning here.
    return Invalid(path, "needs exactly one of container, importer");
  }
  if (container != nullptr) {
    executor->kind = ExecutorSpec::Kind::kContainer;
    const std::string p = Join(path, "container");
    ContainerSpec& spec = executor->container;
    RETURN_IF_ERROR(ReadString(*container, "image", p, &spec.image));
    RETURN_IF_ERROR(ReadStringList(*container, "command", p, &spec.command));
    RETURN_IF_ERROR(ReadStringList(*container, "args", p, &spec.args));
    const json* env = Find(*container, "env");
    if (env != nullptr) {
      const std::string env_path = Join(p, "env");
      if (!env->is_array()) return Invalid(env_path, "expected a list");
      for (size_t i = 0; i < env->size(); ++i) {
        const std::string ip = absl::StrCat(env_path, "[", i, "]");
        RETURN_IF_ERROR(ExpectObject((*env)[i], ip));
        EnvVar var;
        RETURN_IF_ERROR(ReadRequiredString((*env)[i], "name", ip, &var.name));
        RETURN_IF_ERROR(ReadString((*env)[i], "value", ip, &var.value));
        spec.env.push_back(std::move(var));
      }
    }
    ASSIGN_OR_RETURN(const json* resources, ReadObject(*container, "resources", p));
    if (resources != nullptr) {
      RETURN_IF_ERROR(ParseResources(*resources, Join(p, "resources"), &spec.resources));
    }
    return absl::OkStatus();
  }
  executor->kind = ExecutorSpec::Kind::kImporter;
  const std::string p = Join(path, "importer");
  ImporterSpec& spec = executor->importer;
  ASSIGN_OR_RETURN(const json* uri, ReadObject(*importer, "artifactUri", p));
  const std::string uri_path = Join(p, "artifactUri");
  if (uri == nullptr) return Invalid(uri_path, "missing");
  if (const json* constant = Find(*uri, "constant")) {
    spec.artifact_uri.constant = *constant;
  } else {
    RETURN_IF_ERROR(ReadRequiredString(*uri, "runtimeParameter", uri_path,
                                       &spec.artifact_uri.runtime_parameter));
  }
  ASSIGN_OR_RETURN(const json* type, ReadObject(*importer, "typeSchema", p));
  if (type != nullptr) {
    RETURN_IF_ERROR(ParseArtifactTypeSchema(*type, Join(p, "typeSchema"), &spec.type_schema));
  }
  ASSIGN_OR_RETURN(const json* metadata, ReadObject(*importer, "metadata", p));
  if (metadata != nullptr) spec.metadata = *metadata;
  return ReadBool(*importer, "reimport", p, &spec.reimport);
}

absl::StatusOr<PipelineSpec> FromJson(const json& doc) {
  RETURN_IF_ERROR(ExpectObject(doc, "(document)"));
  PipelineSpec spec;
  ASSIGN_OR_RETURN(const json* info, ReadObject(doc, "pipelineInfo", ""));
  if (info != nullptr) {
    RETURN_IF_ERROR(ReadString(*info, "name", "pipelineInfo", &spec.pipeline_info.name));
    RETURN_IF_ERROR(
        ReadString(*info, "displayName", "pipelineInfo", &spec.pipeline_info.display_name));
    RETURN_IF_ERROR(
        ReadString(*info, "description", "pipelineInfo", &spec.pipeline_info.description));
  }
  RETURN_IF_ERROR(ReadString(doc, "sdkVersion", "", &spec.sdk_version));
  RETURN_IF_ERROR(ReadString(doc, "schemaVersion", "", &spec.schema_version));
  RETURN_IF_ERROR(ReadString(doc, "defaultPipelineRoot", "", &spec.default_pipeline_root));

  ASSIGN_OR_RETURN(const json* components, ReadObject(doc, "components", ""));
  if (components != nullptr) {
    for (const auto& [name, value] : components->items()) {
      RETURN_IF_ERROR(ParseComponent(value, Join("components", name), &spec.components[name]));
    }
  }
  ASSIGN_OR_RETURN(const json* deployment, ReadObject(doc, "deploymentSpec", ""));
  if (deployment != nullptr) {
    ASSIGN_OR_RETURN(const json* executors, ReadObject(*deployment, "executors", "deploymentSpec"));
    if (executors != nullptr) {
      for (const auto& [label, value] : executors->items()) {
        RETURN_IF_ERROR(
            ParseExecutor(value, Join("deploymentSpec.executors", label), &spec.executors[label]));
      }
    }
  }
  ASSIGN_OR_RETURN(const json* root, ReadObject(doc, "root", ""));
  if (root == nullptr) return Invalid("root", "missing");
  RETURN_IF_ERROR(ParseComponent(*root, "root", &spec.root));
  return spec;
}

}  // namespace

absl::string_view ParameterTypeName(ParameterType type) {
  switch (type) {
    case ParameterType::kNumberDouble:
      return "NUMBER_DOUBLE";
    case ParameterType::kNumberInteger:
      return "NUMBER_INTEGER";
    case ParameterType::kString:
      return "STRING";
    case ParameterType::kBoolean:
      return "BOOLEAN";
    case ParameterType::kList:
      return "LIST";
    case ParameterType::kStruct:
      return "STRUCT";
    case ParameterType::kTaskFinalStatus:
      return "TASK_FINAL_STATUS";
  }
  return "UNKNOWN";
}

std::optional<json> ParseJsonObject(absl::string_view text) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first == absl::string_view::npos || text[first] != '{') return std::nullopt;
  // Over a limit, the YAML reader (JSON is YAML) refuses the text and names the limit.
  absl::StatusOr<json> parsed = ParseJson(text, JsonPathLimits());
  if (!parsed.ok() || !parsed->is_object()) return std::nullopt;
  return *std::move(parsed);
}

absl::StatusOr<PipelineSpec> ParsePipelineSpec(absl::string_view text) {
  if (std::optional<json> pipeline = ParseJsonObject(text)) return FromJson(*pipeline);
  absl::StatusOr<std::vector<YAML::Node>> loaded = LoadAllYaml(text);
  if (!loaded.ok()) {
    return absl::InvalidArgumentError(ParseErrorText(loaded.status(), "not valid YAML or JSON"));
  }
  std::vector<YAML::Node> docs = *std::move(loaded);
  // `---` before the first document or after the last yields empty documents; skip them.
  std::vector<YAML::Node> non_empty;
  for (const YAML::Node& doc : docs) {
    if (!doc.IsNull()) non_empty.push_back(doc);
  }
  if (non_empty.empty()) return absl::InvalidArgumentError("empty pipeline spec");
  if (non_empty.size() > 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected the pipeline spec and at most one platform spec document, got ",
                     non_empty.size(), " documents"));
  }
  ASSIGN_OR_RETURN(json pipeline, YamlToJson(non_empty[0], ""));
  ASSIGN_OR_RETURN(PipelineSpec spec, FromJson(pipeline));
  if (non_empty.size() == 2) {
    ASSIGN_OR_RETURN(json platform, YamlToJson(non_empty[1], "(platform spec)"));
    if (!platform.is_object()) {
      return Invalid("(platform spec)", absl::StrCat("expected a map, got ", TypeName(platform)));
    }
    spec.platform_spec = std::move(platform);
  }
  return spec;
}

absl::StatusOr<PipelineSpec> LoadPipelineSpec(absl::string_view text) {
  ASSIGN_OR_RETURN(PipelineSpec spec, ParsePipelineSpec(text));
  RETURN_IF_ERROR(ValidatePipelineSpec(spec));
  return spec;
}

}  // namespace regatta::pipelines::ir
