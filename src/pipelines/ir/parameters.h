#ifndef REGATTA_SRC_PIPELINES_IR_PARAMETERS_H_
#define REGATTA_SRC_PIPELINES_IR_PARAMETERS_H_

#include <map>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "src/pipelines/ir/pipeline_spec.h"

namespace regatta::pipelines::ir {

// Whether `value` is a valid value of `type`. NUMBER_INTEGER accepts integral doubles (the SDK
// writes integer defaults as `200.0`); TASK_FINAL_STATUS has no literal values.
bool ValueMatchesType(const nlohmann::json& value, ParameterType type);

// A parameter value typed from text, as given on a command line (`--param k=v`): STRING as is,
// numbers and booleans parsed, LIST and STRUCT as JSON.
absl::StatusOr<nlohmann::json> ParseParameterValue(absl::string_view text, ParameterType type);

// A defaultValue in the spellings kfp SDKs write, as a value of `type`: a NUMBER_INTEGER as
// "5" or 5.0, a NUMBER_DOUBLE as "0.5", a BOOLEAN as "true"/"True", a LIST or STRUCT as its JSON
// text. A value that is none of these is returned unchanged (the validator then names it).
nlohmann::json NormalizeDefaultValue(const nlohmann::json& value, ParameterType type);

// The run's pipeline parameters: `given` checked against root.inputDefinitions (known names,
// matching types), defaults filled in, required ones present. Integral NUMBER_INTEGER values are
// normalised to JSON integers. Optional parameters without default and not given are absent.
absl::StatusOr<std::map<std::string, nlohmann::json>> ResolvePipelineParameters(
    const PipelineSpec& spec, const std::map<std::string, nlohmann::json>& given);

}  // namespace regatta::pipelines::ir

#endif  // REGATTA_SRC_PIPELINES_IR_PARAMETERS_H_
