#include "src/pipelines/authoring/values.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "src/common/status_macros.h"

namespace regatta::pipelines::authoring {
namespace {

using json = nlohmann::json;
using ir::ParameterType;

// Deeper documents are not pipelines; the limit keeps recursion bounded on hostile input.
constexpr int kMaxDepth = 64;

}  // namespace

absl::Status Invalid(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

std::string Child(absl::string_view path, absl::string_view key) {
  return path.empty() ? std::string(key) : absl::StrCat(path, ".", key);
}

// ---- YAML values

json ScalarValue(const YAML::Node& node) {
  const std::string& text = node.Scalar();
  if (node.Tag() == "!") return text;
  if (text.empty() || text == "~" || absl::EqualsIgnoreCase(text, "null")) return nullptr;
  if (absl::EqualsIgnoreCase(text, "true")) return true;
  if (absl::EqualsIgnoreCase(text, "false")) return false;
  const bool number_like = !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return absl::ascii_isdigit(c) || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
  });
  int64_t integer = 0;
  double real = 0;
  if (number_like && absl::SimpleAtoi(text, &integer)) return integer;
  if (number_like && absl::SimpleAtod(text, &real)) return real;
  return text;
}

absl::StatusOr<json> ValueOf(const YAML::Node& node, const std::string& path, int depth) {
  if (depth > kMaxDepth) return Invalid(path, "nested too deeply");
  if (node.IsScalar()) return ScalarValue(node);
  if (node.IsSequence()) {
    json list = json::array();
    for (size_t i = 0; i < node.size(); ++i) {
      ASSIGN_OR_RETURN(json item, ValueOf(node[i], absl::StrCat(path, "[", i, "]"), depth + 1));
      list.push_back(std::move(item));
    }
    return list;
  }
  if (node.IsMap()) {
    json object = json::object();
    for (const auto& entry : node) {
      const std::string key = entry.first.as<std::string>();
      ASSIGN_OR_RETURN(object[key], ValueOf(entry.second, Child(path, key), depth + 1));
    }
    return object;
  }
  return json(nullptr);
}

// The entries of a map node in document order (task order decides the group numbering, as the
// order of statements does for the kfp SDK). Null is an empty map.
absl::StatusOr<std::vector<std::pair<std::string, YAML::Node>>> Entries(const YAML::Node& node,
                                                                        const std::string& path) {
  std::vector<std::pair<std::string, YAML::Node>> entries;
  if (!node || node.IsNull()) return entries;
  if (!node.IsMap()) return Invalid(path, "expected a map");
  for (const auto& entry : node) {
    if (!entry.first.IsScalar()) return Invalid(path, "keys must be strings");
    entries.emplace_back(entry.first.Scalar(), entry.second);
  }
  return entries;
}

absl::Status CheckKeys(const YAML::Node& node, const std::string& path,
                       const std::vector<absl::string_view>& known) {
  ASSIGN_OR_RETURN(auto entries, Entries(node, path));
  for (const auto& [key, value] : entries) {
    if (std::find(known.begin(), known.end(), key) == known.end()) {
      return Invalid(
          Child(path, key),
          absl::StrCat("unknown key (expected one of: ", absl::StrJoin(known, ", "), ")"));
    }
  }
  return absl::OkStatus();
}

YAML::Node Get(const YAML::Node& map, absl::string_view key) {
  const YAML::Node value = map[std::string(key)];
  if (!value || value.IsNull()) return YAML::Node(YAML::NodeType::Undefined);
  return value;
}

absl::StatusOr<std::string> StringOf(const YAML::Node& node, const std::string& path) {
  if (!node.IsScalar()) return Invalid(path, "expected a string");
  return node.Scalar();
}

absl::StatusOr<std::vector<std::string>> StringsOf(const YAML::Node& node,
                                                   const std::string& path) {
  if (!node.IsSequence()) return Invalid(path, "expected a list of strings");
  std::vector<std::string> out;
  for (size_t i = 0; i < node.size(); ++i) {
    ASSIGN_OR_RETURN(std::string item, StringOf(node[i], absl::StrCat(path, "[", i, "]")));
    out.push_back(std::move(item));
  }
  return out;
}

absl::StatusOr<bool> BoolOf(const YAML::Node& node, const std::string& path) {
  json value = node.IsScalar() ? ScalarValue(node) : json(nullptr);
  if (!value.is_boolean()) return Invalid(path, "expected true or false");
  return value.get<bool>();
}

absl::StatusOr<int64_t> IntOf(const YAML::Node& node, const std::string& path) {
  json value = node.IsScalar() ? ScalarValue(node) : json(nullptr);
  if (!value.is_number_integer()) return Invalid(path, "expected an integer");
  return value.get<int64_t>();
}

absl::StatusOr<absl::Duration> DurationOf(const YAML::Node& node, const std::string& path) {
  json value = node.IsScalar() ? ScalarValue(node) : json(nullptr);
  absl::Duration duration;
  if (value.is_number()) return absl::Seconds(value.get<double>());
  if (!value.is_string() || !absl::ParseDuration(value.get<std::string>(), &duration)) {
    return Invalid(path, "expected a duration such as 1s, 1m30s or 2h");
  }
  return duration;
}

// ---- names and types

bool IsIdentifier(absl::string_view name) {
  if (name.empty() || !(absl::ascii_isalpha(name[0]) || name[0] == '_')) return false;
  return std::all_of(name.begin(), name.end(),
                     [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

// Task names are DAG keys and parts of component names: lowercase words joined by dashes.
bool IsTaskName(absl::string_view name) {
  if (name.empty() || !absl::ascii_islower(name[0]) || name.back() == '-') return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '-';
  });
}

bool IsGroupName(absl::string_view name) {
  for (absl::string_view prefix : {"condition-", "for-loop-", "exit-handler-"}) {
    int64_t n = 0;
    if (absl::ConsumePrefix(&name, prefix) && absl::SimpleAtoi(name, &n)) return true;
  }
  return false;
}

std::optional<ParameterType> ParameterTypeNamed(absl::string_view name) {
  static const auto* const kTypes = new std::map<std::string, ParameterType, std::less<>>{
      {"int", ParameterType::kNumberInteger},  {"integer", ParameterType::kNumberInteger},
      {"float", ParameterType::kNumberDouble}, {"double", ParameterType::kNumberDouble},
      {"str", ParameterType::kString},         {"string", ParameterType::kString},
      {"bool", ParameterType::kBoolean},       {"boolean", ParameterType::kBoolean},
      {"list", ParameterType::kList},          {"dict", ParameterType::kStruct},
      {"struct", ParameterType::kStruct},
  };
  auto it = kTypes->find(name);
  if (it == kTypes->end()) return std::nullopt;
  return it->second;
}

std::optional<std::string> ArtifactSchemaNamed(absl::string_view name) {
  static const auto* const kSchemas = new std::map<std::string, std::string, std::less<>>{
      {"artifact", "system.Artifact"},
      {"dataset", "system.Dataset"},
      {"model", "system.Model"},
      {"metrics", "system.Metrics"},
      {"classification_metrics", "system.ClassificationMetrics"},
      {"html", "system.HTML"},
      {"markdown", "system.Markdown"},
  };
  auto it = kSchemas->find(name);
  if (it == kSchemas->end()) return std::nullopt;
  return it->second;
}

ParameterType TypeOfValue(const json& value) {
  if (value.is_boolean()) return ParameterType::kBoolean;
  if (value.is_number_integer()) return ParameterType::kNumberInteger;
  if (value.is_number()) return ParameterType::kNumberDouble;
  if (value.is_array()) return ParameterType::kList;
  if (value.is_object()) return ParameterType::kStruct;
  return ParameterType::kString;
}

ir::ArtifactSpec ArtifactSpecOf(const std::string& schema_title, bool list) {
  ir::ArtifactSpec spec;
  spec.artifact_type.schema_title = schema_title;
  spec.artifact_type.schema_version = "0.0.1";
  spec.is_artifact_list = list;
  return spec;
}

ir::ParameterSpec ParameterSpecOf(ParameterType type) {
  ir::ParameterSpec spec;
  spec.parameter_type = type;
  return spec;
}

std::string PythonJson(const json& value) {
  if (value.is_array()) {
    std::vector<std::string> items;
    for (const json& item : value) items.push_back(PythonJson(item));
    return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
  }
  if (value.is_object()) {
    std::vector<std::string> items;
    for (const auto& [key, item] : value.items()) {
      items.push_back(absl::StrCat(json(key).dump(), ": ", PythonJson(item)));
    }
    return absl::StrCat("{", absl::StrJoin(items, ", "), "}");
  }
  return value.dump();
}

std::optional<double> ParseQuantity(absl::string_view text) {
  static const auto* const kSuffixes = new std::vector<std::pair<std::string, double>>{
      {"Ki", 1024.0},
      {"Mi", std::pow(1024.0, 2)},
      {"Gi", std::pow(1024.0, 3)},
      {"Ti", std::pow(1024.0, 4)},
      {"Pi", std::pow(1024.0, 5)},
      {"Ei", std::pow(1024.0, 6)},
      {"m", 1e-3},
      {"k", 1e3},
      {"K", 1e3},
      {"M", 1e6},
      {"G", 1e9},
      {"T", 1e12},
      {"P", 1e15},
      {"E", 1e18},
  };
  double factor = 1;
  for (const auto& [suffix, scale] : *kSuffixes) {
    if (absl::ConsumeSuffix(&text, suffix)) {
      factor = scale;
      break;
    }
  }
  double number = 0;
  if (!absl::SimpleAtod(text, &number) || number < 0) return std::nullopt;
  return number * factor;
}

}  // namespace regatta::pipelines::authoring
