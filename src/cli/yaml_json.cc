#include "src/cli/yaml_json.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "google/protobuf/util/json_util.h"
#include "src/common/bounded_parse.h"
#include "src/common/pod/pod.h"
#include "src/common/status_macros.h"

namespace regatta::cli {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using nlohmann::json;

absl::Status FieldError(absl::string_view path, absl::string_view problem) {
  return absl::InvalidArgumentError(path.empty() ? std::string(problem)
                                                 : absl::StrCat(path, ": ", problem));
}

bool IsSimpleName(absl::string_view name) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
  });
}

size_t EditDistance(absl::string_view a, absl::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub =
          prev[j - 1] + (absl::ascii_tolower(a[i - 1]) == absl::ascii_tolower(b[j - 1]) ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

absl::StatusOr<std::string> ScalarText(const YAML::Node& node, absl::string_view path,
                                       absl::string_view expected) {
  if (!node.IsScalar()) {
    return FieldError(path, absl::StrCat("expected ", expected, ", got ", DescribeNode(node)));
  }
  return node.Scalar();
}

absl::StatusOr<json> DurationToJson(const YAML::Node& node, absl::string_view path) {
  ASSIGN_OR_RETURN(std::string text, ScalarText(node, path, "a duration such as \"30s\""));
  absl::Duration d;
  double seconds = 0;
  if (absl::SimpleAtod(text, &seconds) && std::isfinite(seconds)) {
    d = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(text, &d) || d == absl::InfiniteDuration() ||
             d == -absl::InfiniteDuration()) {
    return FieldError(path, absl::StrCat("invalid duration \"", text,
                                         "\" (use e.g. \"30s\", \"5m\", \"1h30m\")"));
  }
  if (d < absl::ZeroDuration()) return FieldError(path, "duration must not be negative");
  int64_t nanos = absl::ToInt64Nanoseconds(d);
  int64_t secs = nanos / 1'000'000'000;
  int64_t frac = nanos % 1'000'000'000;
  if (frac == 0) return json(absl::StrCat(secs, "s"));
  return json(absl::StrFormat("%d.%09ds", secs, frac));
}

absl::StatusOr<json> EnumToJson(const FieldDescriptor* field, const YAML::Node& node,
                                absl::string_view path) {
  const auto* type = field->enum_type();
  ASSIGN_OR_RETURN(std::string text, ScalarText(node, path, "an enum value name"));
  int number = 0;
  if (absl::SimpleAtoi(text, &number)) {
    if (type->FindValueByNumber(number) != nullptr) return json(number);
  } else {
    std::string upper = absl::AsciiStrToUpper(text);
    for (int i = 0; i < type->value_count(); ++i) {
      const std::string& name = type->value(i)->name();
      // Accept "QUEUED" for "JOB_STATE_QUEUED": enum values carry the type's prefix.
      if (name == upper || absl::EndsWith(name, absl::StrCat("_", upper))) return json(name);
    }
  }
  std::string names;
  for (int i = 0; i < type->value_count(); ++i) {
    if (type->value(i)->number() == 0) continue;
    absl::StrAppend(&names, names.empty() ? "" : ", ", type->value(i)->name());
  }
  return FieldError(path, absl::StrCat("invalid value \"", text, "\" (one of ", names, ")"));
}

absl::StatusOr<json> SingularToJson(const FieldDescriptor* field, const YAML::Node& node,
                                    absl::string_view path) {
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_MESSAGE: {
      const std::string& type = field->message_type()->full_name();
      if (type == "google.protobuf.Duration") return DurationToJson(node, path);
      if (type == "google.protobuf.Timestamp") {
        ASSIGN_OR_RETURN(std::string text, ScalarText(node, path, "an RFC 3339 timestamp"));
        return json(text);
      }
      return YamlToJsonForMessage(node, field->message_type(), path);
    }
    case FieldDescriptor::CPPTYPE_STRING: {
      ASSIGN_OR_RETURN(std::string text, ScalarText(node, path, "a string"));
      return json(text);
    }
    case FieldDescriptor::CPPTYPE_BOOL: {
      ASSIGN_OR_RETURN(std::string text, ScalarText(node, path, "true or false"));
      std::string lower = absl::AsciiStrToLower(text);
      if (lower == "true" || lower == "yes" || lower == "on") return json(true);
      if (lower == "false" || lower == "no" || lower == "off") return json(false);
      return FieldError(path, absl::StrCat("expected true or false, got \"", text, "\""));
    }
    case FieldDescriptor::CPPTYPE_INT32:
    case FieldDescriptor::CPPTYPE_INT64: {
      ASSIGN_OR_RETURN(std::string text, ScalarText(node, path, "an integer"));
      int64_t v = 0;
      if (!absl::SimpleAtoi(text, &v)) {
        return FieldError(path, absl::StrCat("expected an integer, got \"", text, "\""));
      }
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_INT32 &&
          (v < std::numeric_limits<int32_t>::min() || v > std::numeric_limits<int32_t>::max())) {
        return FieldError(path, absl::StrCat(text, " is out of range"));
      }
      return json(v);
    }
    case FieldDescriptor::CPPTYPE_UINT32:
    case FieldDescriptor::CPPTYPE_UINT64: {
      ASSIGN_OR_RETURN(std::string text, ScalarText(node, path, "a non-negative integer"));
      int64_t signed_v = 0;
      if (absl::SimpleAtoi(text, &signed_v) && signed_v < 0) {
        return FieldError(path, absl::StrCat("must not be negative, got ", text));
      }
      uint64_t v = 0;
      if (!absl::SimpleAtoi(text, &v)) {
        return FieldError(path,
                          absl::StrCat("expected a non-negative integer, got \"", text, "\""));
      }
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_UINT32 &&
          v > std::numeric_limits<uint32_t>::max()) {
        return FieldError(path, absl::StrCat(text, " is out of range"));
      }
      return json(v);
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      ASSIGN_OR_RETURN(std::string text, ScalarText(node, path, "a number"));
      double v = 0;
      if (!absl::SimpleAtod(text, &v) || !std::isfinite(v)) {
        return FieldError(path, absl::StrCat("expected a number, got \"", text, "\""));
      }
      return json(v);
    }
    case FieldDescriptor::CPPTYPE_ENUM:
      return EnumToJson(field, node, path);
  }
  return FieldError(path, "unsupported field type");
}

bool LooksLikeNonString(const std::string& s) {
  static const std::set<std::string>* kWords = new std::set<std::string>{
      "", "~", "null", "true", "false", "yes", "no", "on", "off", "y", "n"};
  if (kWords->count(absl::AsciiStrToLower(s)) > 0) return true;
  double d = 0;
  if (absl::SimpleAtod(s, &d)) return true;
  // Things YAML resolves as numbers that SimpleAtod rejects, and leading/trailing spaces.
  if (absl::StartsWith(s, "0x") || absl::StartsWith(s, "0o") || absl::StartsWith(s, ".")) {
    return true;
  }
  return s.front() == ' ' || s.back() == ' ';
}

void EmitJson(YAML::Emitter& out, const OrderedJson& j) {
  switch (j.type()) {
    case OrderedJson::value_t::object:
      if (j.empty()) {
        out << YAML::Flow << YAML::BeginMap << YAML::EndMap;
        return;
      }
      out << YAML::BeginMap;
      for (const auto& [key, value] : j.items()) {
        out << YAML::Key;
        if (LooksLikeNonString(key)) out << YAML::DoubleQuoted;
        out << key << YAML::Value;
        EmitJson(out, value);
      }
      out << YAML::EndMap;
      return;
    case OrderedJson::value_t::array:
      if (j.empty()) {
        out << YAML::Flow << YAML::BeginSeq << YAML::EndSeq;
        return;
      }
      out << YAML::BeginSeq;
      for (const auto& value : j) EmitJson(out, value);
      out << YAML::EndSeq;
      return;
    case OrderedJson::value_t::string: {
      const auto& s = j.get_ref<const std::string&>();
      if (LooksLikeNonString(s)) out << YAML::DoubleQuoted;
      out << s;
      return;
    }
    case OrderedJson::value_t::boolean:
      out << (j.get<bool>() ? "true" : "false");
      return;
    case OrderedJson::value_t::null:
      out << YAML::Null;
      return;
    default:  // numbers: nlohmann prints the shortest text that reads back exactly
      out << j.dump();
      return;
  }
}

}  // namespace

std::string JoinPath(absl::string_view path, absl::string_view child) {
  if (!IsSimpleName(child)) return absl::StrCat(path, "[\"", child, "\"]");
  if (path.empty()) return std::string(child);
  return absl::StrCat(path, ".", child);
}

std::string IndexPath(absl::string_view path, size_t index) {
  return absl::StrCat(path, "[", index, "]");
}

std::string DescribeNode(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Scalar:
      return absl::StrCat("\"", node.Scalar(), "\"");
    default:
      return "null";
  }
}

const FieldDescriptor* FindField(const Descriptor* descriptor, absl::string_view name) {
  std::string key(name);
  if (const auto* f = descriptor->FindFieldByName(key); f != nullptr) return f;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    if (descriptor->field(i)->json_name() == key) return descriptor->field(i);
  }
  // Then ignoring case, as Go's encoding/json matches keys (armadactl and kubectl read files
  // with it): "ClientId", "PodSpec".
  for (int i = 0; i < descriptor->field_count(); ++i) {
    if (absl::EqualsIgnoreCase(descriptor->field(i)->json_name(), key)) return descriptor->field(i);
  }
  return nullptr;
}

absl::Status UnknownFieldError(absl::string_view path, absl::string_view name,
                               const std::vector<const Descriptor*>& candidates) {
  std::string best;
  size_t best_distance = std::max<size_t>(2, name.size() / 3) + 1;
  for (const auto* d : candidates) {
    for (int i = 0; i < d->field_count(); ++i) {
      const std::string& candidate = d->field(i)->json_name();
      size_t distance = EditDistance(name, candidate);
      if (distance < best_distance) {
        best_distance = distance;
        best = candidate;
      }
    }
  }
  // A Kubernetes field outside the pod model, not a typo: say what the model has instead.
  if (best.empty() && candidates.size() == 1 && pod::IsPodModelMessage(candidates[0])) {
    return FieldError(JoinPath(path, name), pod::UnsupportedFieldProblem(candidates[0]));
  }
  std::string problem = absl::StrCat("unknown field \"", name, "\"");
  if (!best.empty()) absl::StrAppend(&problem, " (did you mean \"", best, "\"?)");
  return FieldError(JoinPath(path, name), problem);
}

absl::StatusOr<std::vector<std::pair<std::string, YAML::Node>>> MappingEntries(
    const YAML::Node& node, absl::string_view path) {
  std::vector<std::pair<std::string, YAML::Node>> entries;
  if (!node.IsDefined() || node.IsNull()) return entries;
  if (!node.IsMap()) {
    return FieldError(path, absl::StrCat("expected a mapping, got ", DescribeNode(node)));
  }
  std::set<std::string> explicit_keys;
  std::vector<YAML::Node> merges;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) return FieldError(path, "mapping keys must be strings");
    const std::string& key = kv.first.Scalar();
    if (key == "<<" && kv.first.Tag() != "!") {
      if (kv.second.IsSequence()) {
        for (const auto& m : kv.second) merges.push_back(m);
      } else {
        merges.push_back(kv.second);
      }
      continue;
    }
    if (!explicit_keys.insert(key).second) {
      return FieldError(JoinPath(path, key), "duplicate key");
    }
    entries.emplace_back(key, kv.second);
  }
  // Earlier merge sources win over later ones, as in YAML's merge key spec.
  std::set<std::string> merged_keys;
  for (const auto& m : merges) {
    if (!m.IsMap()) {
      return FieldError(JoinPath(path, "<<"), "a merge key needs a mapping or a list of them");
    }
    ASSIGN_OR_RETURN(auto merged, MappingEntries(m, path));
    for (auto& [key, value] : merged) {
      if (explicit_keys.count(key) > 0 || !merged_keys.insert(key).second) continue;
      entries.emplace_back(key, value);
    }
  }
  return entries;
}

absl::StatusOr<json> FieldToJson(const FieldDescriptor* field, const YAML::Node& value,
                                 absl::string_view path) {
  if (field->is_map()) {
    if (!value.IsMap()) {
      return FieldError(path, absl::StrCat("expected a mapping, got ", DescribeNode(value)));
    }
    const FieldDescriptor* value_field = field->message_type()->map_value();
    json out = json::object();
    ASSIGN_OR_RETURN(auto entries, MappingEntries(value, path));
    for (const auto& [key, v] : entries) {
      std::string child = JoinPath(path, key);
      if (!v.IsDefined() || v.IsNull()) {
        if (value_field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
          out[key] = "";
          continue;
        }
        return FieldError(child, "value is missing");
      }
      ASSIGN_OR_RETURN(out[key], SingularToJson(value_field, v, child));
    }
    return out;
  }
  if (field->is_repeated()) {
    if (!value.IsSequence()) {
      return FieldError(path, absl::StrCat("expected a list, got ", DescribeNode(value)));
    }
    json out = json::array();
    for (size_t i = 0; i < value.size(); ++i) {
      std::string child = IndexPath(path, i);
      if (value[i].IsNull()) return FieldError(child, "list items must not be null");
      ASSIGN_OR_RETURN(json item, SingularToJson(field, value[i], child));
      out.push_back(std::move(item));
    }
    return out;
  }
  return SingularToJson(field, value, path);
}

absl::StatusOr<json> YamlToJsonForMessage(const YAML::Node& node, const Descriptor* descriptor,
                                          absl::string_view path) {
  json out = json::object();
  ASSIGN_OR_RETURN(auto entries, MappingEntries(node, path));
  std::set<const FieldDescriptor*> seen;
  for (const auto& [key, value] : entries) {
    const FieldDescriptor* field = FindField(descriptor, key);
    if (field == nullptr) return UnknownFieldError(path, key, {descriptor});
    std::string child = JoinPath(path, key);
    if (!seen.insert(field).second) {
      return FieldError(child, absl::StrCat("field given twice (as \"", field->name(), "\" and \"",
                                            field->json_name(), "\")"));
    }
    if (!value.IsDefined() || value.IsNull()) continue;
    ASSIGN_OR_RETURN(out[field->json_name()], FieldToJson(field, value, child));
  }
  return out;
}

absl::Status JsonToMessage(const json& j, absl::string_view path,
                           google::protobuf::Message* message) {
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(j.dump(), message, options);
  if (status.ok()) return absl::OkStatus();
  std::string text(status.message().data(), status.message().size());
  return FieldError(path, text);
}

absl::Status YamlToMessage(const YAML::Node& node, absl::string_view path,
                           google::protobuf::Message* message) {
  ASSIGN_OR_RETURN(json j, YamlToJsonForMessage(node, message->GetDescriptor(), path));
  return JsonToMessage(j, path, message);
}

std::string MessageToJson(const google::protobuf::Message& message, bool pretty) {
  OrderedJson j = MessageToJsonValue(message);
  return pretty ? j.dump(2) : j.dump();
}

OrderedJson MessageToJsonValue(const google::protobuf::Message& message) {
  std::string text;
  google::protobuf::util::JsonPrintOptions options;
  options.preserve_proto_field_names = false;
  auto status = google::protobuf::util::MessageToJsonString(message, &text, options);
  if (!status.ok()) return OrderedJson::object();  // only for invalid UTF-8, never built here
  return OrderedJson::parse(text, nullptr, /*allow_exceptions=*/false);
}

std::string JsonToYaml(const OrderedJson& j) {
  YAML::Emitter out;
  out.SetIndent(2);
  EmitJson(out, j);
  return absl::StrCat(out.c_str(), "\n");
}

absl::StatusOr<YAML::Node> ParseYaml(absl::string_view text) { return LoadYaml(text); }

absl::StatusOr<std::vector<YAML::Node>> ParseYamlDocuments(absl::string_view text) {
  return LoadAllYaml(text);
}

}  // namespace regatta::cli
