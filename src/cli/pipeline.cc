#include "src/cli/pipeline.h"

#include <cstdint>
#include <fstream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/cli/yaml_json.h"
#include "src/common/status_macros.h"
#include "src/pipelines/authoring/authoring.h"
#include "src/pipelines/ir/validate.h"
#include "src/pipelines/ir/write.h"

namespace regatta::cli {
namespace {

namespace ir = ::regatta::pipelines::ir;

// The default as the parameter's type reads it: the SDK writes integers as doubles (3.0).
nlohmann::json DefaultOf(const ir::ParameterSpec& spec) {
  const nlohmann::json& value = *spec.default_value;
  if (spec.parameter_type == ir::ParameterType::kNumberInteger && value.is_number_float() &&
      value.get<double>() == static_cast<double>(static_cast<int64_t>(value.get<double>()))) {
    return static_cast<int64_t>(value.get<double>());
  }
  return value;
}

// "n (NUMBER_INTEGER, default 3)" / "msg (STRING, required)".
std::string DescribeParameter(const std::string& name, const ir::ParameterSpec& spec) {
  std::string text = absl::StrCat(name, " (", ir::ParameterTypeName(spec.parameter_type));
  if (spec.default_value.has_value()) {
    absl::StrAppend(&text, ", default ", DefaultOf(spec).dump());
  } else if (!spec.is_optional) {
    absl::StrAppend(&text, ", required");
  }
  return absl::StrCat(text, ")");
}

// The pipeline in `file`, either kind, checked; errors are prefixed with the file.
absl::StatusOr<ir::PipelineSpec> LoadPipelineFile(const CommandEnv& env, const std::string& file) {
  ASSIGN_OR_RETURN(std::string text, ReadInput(env, file));
  absl::StatusOr<ir::PipelineSpec> spec = pipelines::authoring::LoadAnyPipelineFile(text);
  if (!spec.ok()) {
    return absl::Status(spec.status().code(), absl::StrCat(file, ": ", spec.status().message()));
  }
  return spec;
}

}  // namespace

absl::Status ValidatePipeline(const CommandEnv& env, const std::string& file) {
  ASSIGN_OR_RETURN(ir::PipelineSpec loaded, LoadPipelineFile(env, file));
  const ir::PipelineSpec* spec = &loaded;
  std::vector<std::string> order;
  if (spec->root.dag.has_value()) {
    ASSIGN_OR_RETURN(order, ir::TopologicalOrder(*spec->root.dag));
  }
  const auto& parameters = spec->root.input_definitions.parameters;
  const auto& artifacts = spec->root.input_definitions.artifacts;
  if (env.output != OutputFormat::kTable) {
    OrderedJson out;
    out["name"] = spec->pipeline_info.name;
    out["schemaVersion"] = spec->schema_version;
    out["sdkVersion"] = spec->sdk_version;
    out["components"] = spec->components.size();
    out["executors"] = spec->executors.size();
    OrderedJson params = OrderedJson::object();
    for (const auto& [name, p] : parameters) {
      OrderedJson entry;
      entry["type"] = std::string(ir::ParameterTypeName(p.parameter_type));
      if (p.default_value.has_value()) entry["default"] = OrderedJson::parse(DefaultOf(p).dump());
      entry["optional"] = p.is_optional || p.default_value.has_value();
      params[name] = std::move(entry);
    }
    out["parameters"] = std::move(params);
    out["rootTasks"] = order;
    out["platformSpec"] = spec->platform_spec.has_value();
    *env.out << (env.output == OutputFormat::kJson ? out.dump(2) + "\n" : JsonToYaml(out));
    return absl::OkStatus();
  }
  std::vector<std::string> described;
  for (const auto& [name, p] : parameters) described.push_back(DescribeParameter(name, p));
  for (const auto& [name, a] : artifacts) {
    described.push_back(absl::StrCat(name, " (artifact ", a.artifact_type.schema_title, ")"));
  }
  std::ostream& out = *env.out;
  out << "pipeline    " << spec->pipeline_info.name << "\n";
  out << "schema      " << spec->schema_version
      << (spec->sdk_version.empty() ? "" : absl::StrCat(" (", spec->sdk_version, ")")) << "\n";
  out << "components  " << spec->components.size() << " (" << spec->executors.size()
      << " executors)" << (spec->platform_spec.has_value() ? ", with a platform spec" : "") << "\n";
  out << "parameters  " << (described.empty() ? "none" : absl::StrJoin(described, ", ")) << "\n";
  out << "root tasks  " << order.size() << ": " << absl::StrJoin(order, ", ") << "\n";
  out << "valid\n";
  return absl::OkStatus();
}

absl::Status CompilePipeline(const CommandEnv& env, const std::string& file,
                             const std::string& out_file) {
  ASSIGN_OR_RETURN(ir::PipelineSpec spec, LoadPipelineFile(env, file));
  const OrderedJson ir_json = ir::PipelineSpecToJson(spec);
  std::string text;
  if (env.output == OutputFormat::kJson) {
    text = ir_json.dump(2) + "\n";
  } else {
    // The header the kfp SDK writes, so the file reads like one it compiled.
    text = absl::StrCat("# PIPELINE DEFINITION\n# Name: ", spec.pipeline_info.name, "\n",
                        JsonToYaml(ir_json));
    if (spec.platform_spec.has_value()) {
      absl::StrAppend(&text, "---\n", JsonToYaml(OrderedJson::parse(spec.platform_spec->dump())));
    }
  }
  if (out_file.empty()) {
    *env.out << text;
    return absl::OkStatus();
  }
  std::ofstream out(out_file, std::ios::binary | std::ios::trunc);
  out << text;
  if (!out.good()) return absl::UnavailableError(absl::StrCat(out_file, ": cannot write"));
  *env.out << "wrote " << out_file << " (" << spec.components.size() << " components, "
           << spec.executors.size() << " executors)\n";
  return absl::OkStatus();
}

}  // namespace regatta::cli
