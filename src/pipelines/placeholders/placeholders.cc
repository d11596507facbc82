#include "src/pipelines/placeholders/placeholders.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"

namespace regatta::pipelines::placeholders {

using nlohmann::json;

namespace {

constexpr int kMaxNesting = 32;  // Concat/IfPresent depth; bounds recursion on hostile specs

// file:///x is /x for the kfp executor (Artifact.path is the uri itself unless it is a bucket's).
std::string ExecutorUri(const std::string& uri) {
  absl::string_view rest = uri;
  if (absl::ConsumePrefix(&rest, "file://")) {
    absl::ConsumePrefix(&rest, "localhost");
    if (absl::StartsWith(rest, "/")) return std::string(rest);
  }
  return uri;
}

json ArtifactListJson(const std::vector<RuntimeArtifact>& artifacts) {
  json list = json::array();
  for (const RuntimeArtifact& artifact : artifacts) {
    list.push_back(
        {{"name", artifact.name},
         {"type",
          {{"schemaTitle", artifact.schema_title}, {"schemaVersion", artifact.schema_version}}},
         {"uri", ExecutorUri(artifact.uri)},
         {"metadata", artifact.metadata}});
  }
  return {{"artifacts", std::move(list)}};
}

// The launcher's rendering of a parameter value: strings raw, numbers as Go's
// strconv.FormatFloat(d, 'f', -1, 64) (the shortest digits that read back as d, never an
// exponent: kfp carries integers as doubles, so 3.0 renders "3"), everything else as JSON.
std::string ParameterText(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_number_float()) return value.dump();
  double d = value.get<double>();
  if (!std::isfinite(d)) return value.dump();
  if (d == 0) return std::signbit(d) ? "-0" : "0";
  // Shortest round-trip digits in scientific form, e.g. "-1.25e-07".
  std::string scientific;
  for (int precision = 0; precision <= 16; ++precision) {
    scientific = absl::StrFormat("%.*e", precision, d);
    double back = 0;
    if (absl::SimpleAtod(scientific, &back) && back == d) break;
  }
  size_t e = scientific.find('e');
  int exponent = std::atoi(scientific.c_str() + e + 1);
  std::string sign = scientific[0] == '-' ? "-" : "";
  std::string digits;
  for (size_t i = sign.size(); i < e; ++i) {
    if (scientific[i] != '.') digits.push_back(scientific[i]);
  }
  const int count = static_cast<int>(digits.size());
  if (exponent >= count - 1) return sign + digits + std::string(exponent - (count - 1), '0');
  if (exponent >= 0)
    return sign + digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
  return sign + "0." + std::string(-exponent - 1, '0') + digits;
}

bool IsPipelineValueName(absl::string_view name) {
  static constexpr absl::string_view kNames[] = {"pipeline_job_name",
                                                 "pipeline_job_resource_name",
                                                 "pipeline_job_uuid",
                                                 "pipeline_task_name",
                                                 "pipeline_task_uuid",
                                                 "pipeline_root",
                                                 "pipeline_job_create_time_utc",
                                                 "pipeline_job_schedule_time_utc"};
  for (absl::string_view known : kNames) {
    if (name == known) return true;
  }
  return false;
}

absl::Status Unknown(absl::string_view placeholder) {
  return absl::InvalidArgumentError(absl::StrCat("unknown placeholder '", placeholder, "'"));
}

class Resolver {
 public:
  explicit Resolver(const ExecutorValues& values) : values_(values) {}

  absl::StatusOr<std::string> ResolveString(absl::string_view text) {
    std::string out;
    size_t pos = 0;
    while (true) {
      // Only "{{$}}" and "{{$." open a placeholder, so shell and template text such as "{{$x}}"
      // passes through untouched.
      size_t start = FindOpening(text, pos);
      if (start == absl::string_view::npos) break;
      size_t end = text.find("}}", start + 3);
      if (end == absl::string_view::npos) {
        return absl::InvalidArgumentError(
            absl::StrCat("unterminated placeholder '", text.substr(start), "'"));
      }
      out.append(text.data() + pos, start - pos);
      ASSIGN_OR_RETURN(std::string value, Placeholder(text.substr(start, end + 2 - start)));
      out += value;
      pos = end + 2;
    }
    out.append(text.data() + pos, text.size() - pos);
    return out;
  }

  // One element of a command or args list -> zero or more arguments.
  absl::Status ResolveArg(const std::string& arg, std::vector<std::string>& out) {
    std::optional<json> structure = AsStructure(arg);
    if (!structure.has_value()) {
      ASSIGN_OR_RETURN(std::string value, ResolveString(arg));
      out.push_back(std::move(value));
      return absl::OkStatus();
    }
    return ResolveStructure(*structure, 0, out);
  }

 private:
  static size_t FindOpening(absl::string_view text, size_t from) {
    while (true) {
      size_t start = text.find("{{$", from);
      if (start == absl::string_view::npos) return start;
      absl::string_view rest = text.substr(start + 3);
      if (absl::StartsWith(rest, "}}") || absl::StartsWith(rest, ".")) return start;
      from = start + 1;
    }
  }

  // {"Concat": ...} or {"IfPresent": ...}; anything else (including other JSON) is a plain string.
  static std::optional<json> AsStructure(const std::string& arg) {
    if (arg.empty() || arg.front() != '{') return std::nullopt;
    absl::StatusOr<json> bounded = ParseJson(arg);
    if (!bounded.ok()) return std::nullopt;
    json parsed = *std::move(bounded);
    if (!parsed.is_object() || parsed.size() != 1) return std::nullopt;
    if (!parsed.contains("Concat") && !parsed.contains("IfPresent")) return std::nullopt;
    return parsed;
  }

  absl::Status ResolveStructure(const json& node, int depth, std::vector<std::string>& out) {
    if (depth > kMaxNesting)
      return absl::InvalidArgumentError("Concat/IfPresent nested too deeply");
    if (node.is_string()) {
      ASSIGN_OR_RETURN(std::string value, ResolveString(node.get_ref<const std::string&>()));
      out.push_back(std::move(value));
      return absl::OkStatus();
    }
    if (node.is_object() && node.size() == 1 && node.contains("Concat")) {
      const json& pieces = node["Concat"];
      if (!pieces.is_array()) return absl::InvalidArgumentError("Concat: expected a list");
      std::string joined;
      for (const json& piece : pieces) {
        std::vector<std::string> parts;
        RETURN_IF_ERROR(ResolveStructure(piece, depth + 1, parts));
        for (const std::string& part : parts) joined += part;
      }
      out.push_back(std::move(joined));
      return absl::OkStatus();
    }
    if (node.is_object() && node.size() == 1 && node.contains("IfPresent")) {
      const json& spec = node["IfPresent"];
      if (!spec.is_object() || !spec.contains("InputName") || !spec["InputName"].is_string()) {
        return absl::InvalidArgumentError("IfPresent: expected an object with a string InputName");
      }
      for (auto it = spec.begin(); it != spec.end(); ++it) {
        if (it.key() != "InputName" && it.key() != "Then" && it.key() != "Else") {
          return absl::InvalidArgumentError(
              absl::StrCat("IfPresent: unknown key '", it.key(), "'"));
        }
      }
      const std::string& input = spec["InputName"].get_ref<const std::string&>();
      auto artifact = values_.input_artifacts.find(input);
      bool present = values_.parameter_values.count(input) > 0 ||
                     (artifact != values_.input_artifacts.end() && !artifact->second.empty());
      const char* branch = present ? "Then" : "Else";
      if (!spec.contains(branch)) return absl::OkStatus();
      const json& chosen = spec[branch];
      if (chosen.is_array()) {
        for (const json& element : chosen) {
          RETURN_IF_ERROR(ResolveStructure(element, depth + 1, out));
        }
        return absl::OkStatus();
      }
      return ResolveStructure(chosen, depth + 1, out);
    }
    return absl::InvalidArgumentError(
        absl::StrCat("expected a string, a Concat or an IfPresent, got '", node.dump(), "'"));
  }

  // `placeholder` is the full "{{$...}}" text.
  absl::StatusOr<std::string> Placeholder(absl::string_view placeholder) {
    absl::string_view rest = placeholder.substr(2, placeholder.size() - 4);  // without {{ }}
    if (rest == "$") {
      if (!executor_input_.has_value()) executor_input_ = ExecutorInputJson(values_).dump();
      return *executor_input_;
    }
    if (!absl::ConsumePrefix(&rest, "$.")) return Unknown(placeholder);
    if (rest == "outputs.output_file") return values_.output_file;
    if (IsPipelineValueName(rest)) {
      auto it = values_.pipeline_values.find(std::string(rest));
      if (it == values_.pipeline_values.end()) {
        return absl::InvalidArgumentError(absl::StrCat(placeholder, ": no value for this run"));
      }
      return it->second;
    }
    bool input;
    if (absl::ConsumePrefix(&rest, "inputs.")) {
      input = true;
    } else if (absl::ConsumePrefix(&rest, "outputs.")) {
      input = false;
    } else {
      return Unknown(placeholder);
    }
    bool parameter;
    if (absl::ConsumePrefix(&rest, "parameters[")) {
      parameter = true;
    } else if (absl::ConsumePrefix(&rest, "artifacts[")) {
      parameter = false;
    } else {
      return Unknown(placeholder);
    }
    // A quoted name: 'x' (what the SDK writes) or "x".
    if (rest.empty() || (rest.front() != '\'' && rest.front() != '"')) return Unknown(placeholder);
    char quote = rest.front();
    size_t close = rest.find(quote, 1);
    if (close == absl::string_view::npos || rest.substr(close + 1, 1) != "]") {
      return Unknown(placeholder);
    }
    std::string name(rest.substr(1, close - 1));
    absl::string_view field = rest.substr(close + 2);

    if (parameter && input) {
      if (!field.empty()) return Unknown(placeholder);
      auto it = values_.parameter_values.find(name);
      if (it == values_.parameter_values.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(placeholder, ": no input parameter '", name, "'"));
      }
      return ParameterText(it->second);
    }
    if (parameter) {
      if (field != ".output_file") return Unknown(placeholder);
      auto it = values_.output_parameter_files.find(name);
      if (it == values_.output_parameter_files.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(placeholder, ": no output parameter '", name, "'"));
      }
      return it->second;
    }
    if (field != ".uri" && field != ".path" && field != ".metadata") return Unknown(placeholder);
    const auto& artifacts = input ? values_.input_artifacts : values_.output_artifacts;
    auto it = artifacts.find(name);
    if (it == artifacts.end() || it->second.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(placeholder, ": no ", input ? "input" : "output", " artifact '", name, "'"));
    }
    // Like the kfp launcher, a list of artifacts is addressed by its first element.
    const RuntimeArtifact& artifact = it->second.front();
    if (field == ".uri") return artifact.uri;
    if (field == ".metadata") return artifact.metadata.dump();
    if (!artifact.local_path.empty()) return artifact.local_path;
    absl::StatusOr<std::string> path = LocalPathForUri(artifact.uri);
    if (!path.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(placeholder, ": ", path.status().message()));
    }
    return path;
  }

  const ExecutorValues& values_;
  std::optional<std::string> executor_input_;  // {{$}}, rendered once per resolver
};

}  // namespace

absl::StatusOr<std::string> LocalPathForUri(absl::string_view uri) {
  absl::string_view rest = uri;
  if (absl::ConsumePrefix(&rest, "file://")) {
    absl::ConsumePrefix(&rest, "localhost");
    if (!absl::StartsWith(rest, "/")) {
      return absl::InvalidArgumentError(
          absl::StrCat("artifact uri '", uri, "': file uris must name an absolute local path"));
    }
    return std::string(rest);
  }
  if (absl::StartsWith(uri, "/")) return std::string(uri);
  static constexpr std::pair<absl::string_view, absl::string_view> kMounts[] = {
      {"gs://", "/gcs/"}, {"minio://", "/minio/"}, {"s3://", "/s3/"}};
  for (const auto& [scheme, mount] : kMounts) {
    if (absl::ConsumePrefix(&rest, scheme)) return absl::StrCat(mount, rest);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("artifact uri '", uri,
                   "': no local path for this scheme (supported: file://, "
                   "gs://, minio://, s3:// and absolute paths)"));
}

absl::StatusOr<std::string> HostPathForUri(absl::string_view uri, absl::string_view buckets_dir) {
  ASSIGN_OR_RETURN(std::string path, LocalPathForUri(uri));
  if (absl::StrContains(uri, "://") && !absl::StartsWith(uri, "file://") && buckets_dir != "/") {
    return absl::StrCat(absl::StripSuffix(buckets_dir, "/"), path);
  }
  return path;
}

json ExecutorInputJson(const ExecutorValues& values) {
  json inputs = json::object();
  if (!values.parameter_values.empty()) inputs["parameterValues"] = values.parameter_values;
  if (!values.input_artifacts.empty()) {
    json& artifacts = inputs["artifacts"] = json::object();
    for (const auto& [name, list] : values.input_artifacts)
      artifacts[name] = ArtifactListJson(list);
  }
  json outputs = json::object();
  if (!values.output_parameter_files.empty()) {
    json& parameters = outputs["parameters"] = json::object();
    for (const auto& [name, file] : values.output_parameter_files) {
      parameters[name] = {{"outputFile", file}};
    }
  }
  if (!values.output_artifacts.empty()) {
    json& artifacts = outputs["artifacts"] = json::object();
    for (const auto& [name, list] : values.output_artifacts) {
      artifacts[name] = ArtifactListJson(list);
    }
  }
  if (!values.output_file.empty()) outputs["outputFile"] = values.output_file;
  return {{"inputs", std::move(inputs)}, {"outputs", std::move(outputs)}};
}

absl::StatusOr<std::vector<std::string>> ResolveArgs(const std::vector<std::string>& args,
                                                     const ExecutorValues& values,
                                                     absl::string_view field) {
  Resolver resolver(values);
  std::vector<std::string> out;
  out.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    absl::Status status = resolver.ResolveArg(args[i], out);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(field, "[", i, "]: ", status.message()));
    }
  }
  return out;
}

absl::StatusOr<std::string> ResolveString(absl::string_view text, const ExecutorValues& values) {
  Resolver resolver(values);
  return resolver.ResolveString(text);
}

}  // namespace regatta::pipelines::placeholders
