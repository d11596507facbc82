#include "src/pipelines/ir/parameters.h"

#include <cmath>
#include <cstdint>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "src/common/bounded_parse.h"

namespace regatta::pipelines::ir {

using json = nlohmann::json;

bool ValueMatchesType(const json& value, ParameterType type) {
  switch (type) {
    case ParameterType::kNumberDouble:
      return value.is_number();
    case ParameterType::kNumberInteger:
      return value.is_number() && std::trunc(value.get<double>()) == value.get<double>();
    case ParameterType::kString:
      return value.is_string();
    case ParameterType::kBoolean:
      return value.is_boolean();
    case ParameterType::kList:
      return value.is_array();
    case ParameterType::kStruct:
      return value.is_object();
    case ParameterType::kTaskFinalStatus:
      return false;
  }
  return false;
}

json NormalizeDefaultValue(const json& value, ParameterType type) {
  if (type == ParameterType::kNumberInteger && value.is_number_float() &&
      ValueMatchesType(value, type) && std::abs(value.get<double>()) < 9.2e18) {
    return static_cast<int64_t>(value.get<double>());
  }
  if (!value.is_string() || type == ParameterType::kString) return value;
  const std::string text = value.get<std::string>();
  if (type == ParameterType::kBoolean) {
    if (text == "True" || text == "TRUE") return true;
    if (text == "False" || text == "FALSE") return false;
  }
  absl::StatusOr<json> parsed = ParseParameterValue(text, type);
  if (!parsed.ok() && type == ParameterType::kNumberInteger) {
    // "200.0": an integral double in text.
    absl::StatusOr<json> number = ParseParameterValue(text, ParameterType::kNumberDouble);
    if (number.ok() && ValueMatchesType(*number, type)) return NormalizeDefaultValue(*number, type);
  }
  return parsed.ok() ? *std::move(parsed) : value;
}

absl::StatusOr<json> ParseParameterValue(absl::string_view text, ParameterType type) {
  auto invalid = [&]() {
    return absl::InvalidArgumentError(
        absl::StrCat("'", text, "' is not a ", ParameterTypeName(type)));
  };
  switch (type) {
    case ParameterType::kString:
      return json(std::string(text));
    case ParameterType::kNumberInteger: {
      int64_t value = 0;
      if (!absl::SimpleAtoi(text, &value)) return invalid();
      return json(value);
    }
    case ParameterType::kNumberDouble: {
      double value = 0;
      if (!absl::SimpleAtod(text, &value) || !std::isfinite(value)) return invalid();
      return json(value);
    }
    case ParameterType::kBoolean:
      if (text == "true") return json(true);
      if (text == "false") return json(false);
      return invalid();
    case ParameterType::kList:
    case ParameterType::kStruct: {
      absl::StatusOr<json> value = ParseJson(text);
      if (!value.ok() && IsParseLimitError(value.status())) return value.status();
      if (!value.ok() || !ValueMatchesType(*value, type)) return invalid();
      return *std::move(value);
    }
    case ParameterType::kTaskFinalStatus:
      break;
  }
  return invalid();
}

absl::StatusOr<std::map<std::string, json>> ResolvePipelineParameters(
    const PipelineSpec& spec, const std::map<std::string, json>& given) {
  const auto& definitions = spec.root.input_definitions.parameters;
  for (const auto& [name, value] : given) {
    if (!definitions.contains(name)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "parameter '", name, "' is not an input of pipeline '", spec.pipeline_info.name, "'"));
    }
  }
  std::map<std::string, json> values;
  for (const auto& [name, definition] : definitions) {
    auto it = given.find(name);
    if (it == given.end()) {
      if (definition.default_value) {
        values[name] = *definition.default_value;
      } else if (!definition.is_optional) {
        return absl::InvalidArgumentError(absl::StrCat("parameter '", name, "' is required"));
      } else {
        continue;
      }
    } else {
      if (!ValueMatchesType(it->second, definition.parameter_type)) {
        return absl::InvalidArgumentError(
            absl::StrCat("parameter '", name, "': ", it->second.dump(), " is not a ",
                         ParameterTypeName(definition.parameter_type)));
      }
      values[name] = it->second;
    }
    json& value = values[name];
    if (definition.parameter_type == ParameterType::kNumberInteger && value.is_number_float()) {
      value = static_cast<int64_t>(value.get<double>());
    }
  }
  return values;
}

}  // namespace regatta::pipelines::ir
