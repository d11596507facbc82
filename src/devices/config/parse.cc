// Resource files for `regatta config apply FILE` (config.h): YAML or JSON documents, Akri-like.
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/duration.pb.h"
#include "google/protobuf/message.h"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"
#include "src/devices/config/config.h"
#include "src/devices/config/field_error.h"
#include "yaml-cpp/yaml.h"

namespace regatta::devices {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

std::string Join(absl::string_view path, absl::string_view child) {
  return path.empty() ? std::string(child) : absl::StrCat(path, ".", child);
}

std::string Describe(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map:
      return "a mapping";
    case YAML::NodeType::Sequence:
      return "a list";
    case YAML::NodeType::Null:
      return "null";
    default:
      return absl::StrCat("'", node.Scalar(), "'");
  }
}

absl::Status Expect(const YAML::Node& node, YAML::NodeType::value type, absl::string_view what,
                    absl::string_view path) {
  if (node.Type() == type) return absl::OkStatus();
  return FieldError(path, absl::StrCat("expected ", what, ", got ", Describe(node)));
}

// ---- YAML -> protobuf, by the message's schema ----------------------------------------------
// Field names as lowerCamelCase (Akri's spelling) or snake_case; scalars typed by the field;
// durations as "30s" or "1m30s"; null leaves a field unset.

absl::Status ReadMessage(const YAML::Node& node, absl::string_view path, Message* message);

absl::Status ReadDuration(const YAML::Node& node, absl::string_view path,
                          google::protobuf::Duration* out) {
  RETURN_IF_ERROR(Expect(node, YAML::NodeType::Scalar, "a duration such as \"30s\"", path));
  absl::Duration d;
  int64_t seconds = 0;
  if (absl::SimpleAtoi(node.Scalar(), &seconds)) {
    d = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(node.Scalar(), &d)) {
    return FieldError(path,
                      absl::StrCat("expected a duration such as \"30s\", got ", Describe(node)));
  }
  out->set_seconds(absl::IDivDuration(d, absl::Seconds(1), &d));
  out->set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(d)));
  return absl::OkStatus();
}

// One value of `field` (a list element or a singular field) into `message`.
absl::Status ReadValue(const YAML::Node& node, absl::string_view path, const FieldDescriptor* field,
                       Message* message) {
  const Reflection* reflection = message->GetReflection();
  const bool repeated = field->is_repeated();
  if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    Message* child = repeated ? reflection->AddMessage(message, field)
                              : reflection->MutableMessage(message, field);
    if (field->message_type()->full_name() == "google.protobuf.Duration") {
      return ReadDuration(node, path, static_cast<google::protobuf::Duration*>(child));
    }
    return ReadMessage(node, path, child);
  }
  RETURN_IF_ERROR(Expect(node, YAML::NodeType::Scalar, "a scalar", path));
  const std::string& text = node.Scalar();
  auto wrong = [&](absl::string_view what) {
    return FieldError(path, absl::StrCat("expected ", what, ", got ", Describe(node)));
  };
  switch (field->cpp_type()) {
    case FieldDescriptor::CPPTYPE_STRING:
      repeated ? reflection->AddString(message, field, text)
               : reflection->SetString(message, field, text);
      return absl::OkStatus();
    case FieldDescriptor::CPPTYPE_BOOL: {
      bool value = false;
      if (!absl::SimpleAtob(text, &value)) return wrong("true or false");
      repeated ? reflection->AddBool(message, field, value)
               : reflection->SetBool(message, field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT32: {
      int32_t value = 0;
      if (!absl::SimpleAtoi(text, &value)) return wrong("an integer");
      repeated ? reflection->AddInt32(message, field, value)
               : reflection->SetInt32(message, field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_INT64: {
      int64_t value = 0;
      if (!absl::SimpleAtoi(text, &value)) return wrong("an integer");
      repeated ? reflection->AddInt64(message, field, value)
               : reflection->SetInt64(message, field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t value = 0;
      if (!absl::SimpleAtoi(text, &value)) return wrong("a non-negative integer");
      repeated ? reflection->AddUInt32(message, field, value)
               : reflection->SetUInt32(message, field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t value = 0;
      if (!absl::SimpleAtoi(text, &value)) return wrong("a non-negative integer");
      repeated ? reflection->AddUInt64(message, field, value)
               : reflection->SetUInt64(message, field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_DOUBLE:
    case FieldDescriptor::CPPTYPE_FLOAT: {
      double value = 0;
      if (!absl::SimpleAtod(text, &value)) return wrong("a number");
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_FLOAT) {
        repeated ? reflection->AddFloat(message, field, static_cast<float>(value))
                 : reflection->SetFloat(message, field, static_cast<float>(value));
      } else {
        repeated ? reflection->AddDouble(message, field, value)
                 : reflection->SetDouble(message, field, value);
      }
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_ENUM: {
      const google::protobuf::EnumValueDescriptor* value =
          field->enum_type()->FindValueByName(text);
      if (value == nullptr) return wrong(absl::StrCat("a ", field->enum_type()->name(), " name"));
      repeated ? reflection->AddEnum(message, field, value)
               : reflection->SetEnum(message, field, value);
      return absl::OkStatus();
    }
    case FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return FieldError(path, "unsupported field type");
}

absl::Status ReadField(const YAML::Node& node, absl::string_view path, const FieldDescriptor* field,
                       Message* message) {
  if (field->is_map()) {
    RETURN_IF_ERROR(Expect(node, YAML::NodeType::Map, "a mapping", path));
    const FieldDescriptor* key_field = field->message_type()->map_key();
    const FieldDescriptor* value_field = field->message_type()->map_value();
    for (const auto& entry : node) {
      const std::string key = entry.first.as<std::string>();
      const std::string entry_path = absl::StrCat(path, "[\"", absl::CEscape(key), "\"]");
      if (entry.second.IsNull()) return FieldError(entry_path, "expected a value, got null");
      Message* pair = message->GetReflection()->AddMessage(message, field);
      pair->GetReflection()->SetString(pair, key_field, key);
      RETURN_IF_ERROR(ReadValue(entry.second, entry_path, value_field, pair));
    }
    return absl::OkStatus();
  }
  if (field->is_repeated()) {
    RETURN_IF_ERROR(Expect(node, YAML::NodeType::Sequence, "a list", path));
    for (size_t i = 0; i < node.size(); ++i) {
      RETURN_IF_ERROR(ReadValue(node[i], absl::StrCat(path, "[", i, "]"), field, message));
    }
    return absl::OkStatus();
  }
  return ReadValue(node, path, field, message);
}

absl::Status ReadMessage(const YAML::Node& node, absl::string_view path, Message* message) {
  if (node.IsNull()) return absl::OkStatus();
  RETURN_IF_ERROR(Expect(node, YAML::NodeType::Map, "a mapping", path.empty() ? "document" : path));
  const google::protobuf::Descriptor* descriptor = message->GetDescriptor();
  for (const auto& entry : node) {
    const std::string name = entry.first.as<std::string>();
    const std::string field_path = Join(path, name);
    const FieldDescriptor* field = descriptor->FindFieldByName(name);
    if (field == nullptr) field = descriptor->FindFieldByCamelcaseName(name);
    if (field == nullptr) return FieldError(field_path, "unknown field");
    if (entry.second.IsNull()) continue;
    const google::protobuf::OneofDescriptor* oneof = field->real_containing_oneof();
    if (oneof != nullptr && message->GetReflection()->HasOneof(*message, oneof)) {
      std::vector<std::string> names;
      for (int i = 0; i < oneof->field_count(); ++i) names.push_back(oneof->field(i)->json_name());
      return FieldError(path.empty() ? "document" : path,
                        absl::StrCat("exactly one of ", absl::StrJoin(names, ", ")));
    }
    RETURN_IF_ERROR(ReadField(entry.second, field_path, field, message));
  }
  return absl::OkStatus();
}

// ---- Documents ------------------------------------------------------------------------------

// The text of an optional scalar (absent or null: empty).
absl::StatusOr<std::string> ScalarAt(const YAML::Node& node, absl::string_view path) {
  if (!node.IsDefined() || node.IsNull()) return std::string();
  RETURN_IF_ERROR(Expect(node, YAML::NodeType::Scalar, "a string", path));
  return node.Scalar();
}

// The envelope keys every kind shares, and what each kind adds.
bool IsEnvelopeKey(absl::string_view key) {
  return key == "apiVersion" || key == "kind" || key == "metadata" || key == "name";
}

absl::StatusOr<std::string> DocumentName(const YAML::Node& document) {
  std::string name;
  if (document["metadata"]) {
    const YAML::Node metadata = document["metadata"];
    RETURN_IF_ERROR(Expect(metadata, YAML::NodeType::Map, "a mapping", "metadata"));
    for (const auto& entry : metadata) {
      const std::string key = entry.first.as<std::string>();
      // Kubernetes metadata Regatta has no use for is accepted and ignored, and so is what the
      // API server sets (a manifest saved with `kubectl get -o yaml` carries it).
      if (key == "namespace" || key == "labels" || key == "annotations" || key == "uid" ||
          key == "generation" || key == "resourceVersion" || key == "creationTimestamp" ||
          key == "managedFields" || key == "selfLink") {
        continue;
      }
      if (key != "name") return FieldError(absl::StrCat("metadata.", key), "unknown field");
    }
    ASSIGN_OR_RETURN(name, ScalarAt(metadata["name"], "metadata.name"));
  }
  if (document["name"]) {
    if (!name.empty()) return FieldError("name", "given both here and in metadata.name");
    ASSIGN_OR_RETURN(name, ScalarAt(document["name"], "name"));
  }
  return name;
}

absl::Status CheckKeys(const YAML::Node& document, const std::set<std::string>& allowed,
                       absl::string_view kind) {
  for (const auto& entry : document) {
    const std::string key = entry.first.as<std::string>();
    if (!IsEnvelopeKey(key) && allowed.count(key) == 0) {
      return FieldError(key, absl::StrCat("unknown field of a ", kind));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<regatta::v1::Configuration> ParseConfiguration(const YAML::Node& document,
                                                              const std::string& name) {
  regatta::v1::Configuration configuration;
  if (document["spec"]) {
    RETURN_IF_ERROR(CheckKeys(document, {"spec"}, "Configuration"));
    RETURN_IF_ERROR(ReadMessage(document["spec"], "spec", &configuration));
  } else {
    // The concise form: the fields at the top level, next to the envelope.
    YAML::Node fields(YAML::NodeType::Map);
    for (const auto& entry : document) {
      const std::string key = entry.first.as<std::string>();
      if (!IsEnvelopeKey(key)) fields[key] = entry.second;
    }
    RETURN_IF_ERROR(ReadMessage(fields, "", &configuration));
  }
  if (!configuration.name().empty() && configuration.name() != name) {
    return FieldError("spec.name", "the name belongs in metadata.name");
  }
  configuration.set_name(name);
  ApplyDefaults(configuration);
  absl::Status valid = ValidateConfiguration(configuration);
  if (!valid.ok() && document["spec"] && !absl::StartsWith(valid.message(), "name:")) {
    // The fields sit under spec in this file: say so.
    return absl::Status(valid.code(), absl::StrCat("spec.", valid.message()));
  }
  RETURN_IF_ERROR(valid);
  return configuration;
}

absl::StatusOr<regatta::v1::Secret> ParseSecret(const YAML::Node& document,
                                                const std::string& name) {
  RETURN_IF_ERROR(CheckKeys(document, {"data", "stringData", "type"}, "Secret"));
  regatta::v1::Secret secret;
  secret.set_name(name);
  if (document["type"]) {
    ASSIGN_OR_RETURN(std::string type, ScalarAt(document["type"], "type"));
    if (!type.empty() && type != "Opaque") {
      return FieldError("type", absl::StrCat("'", type, "' is not supported (Opaque only)"));
    }
  }
  for (const char* key : {"data", "stringData"}) {
    const YAML::Node data = document[key];
    if (!data || data.IsNull()) continue;
    RETURN_IF_ERROR(Expect(data, YAML::NodeType::Map, "a mapping", key));
    const bool base64 = absl::string_view(key) == "data";
    for (const auto& entry : data) {
      const std::string data_key = entry.first.as<std::string>();
      const std::string path = absl::StrCat(key, "[\"", absl::CEscape(data_key), "\"]");
      ASSIGN_OR_RETURN(std::string value, ScalarAt(entry.second, path));
      if (base64) {
        std::string decoded;
        if (!absl::Base64Unescape(value, &decoded)) return FieldError(path, "not base64");
        value = std::move(decoded);
      }
      // stringData wins over data for the same key, as in Kubernetes.
      (*secret.mutable_data())[data_key] = std::move(value);
    }
  }
  RETURN_IF_ERROR(ValidateSecret(secret));
  return secret;
}

absl::StatusOr<regatta::v1::ConfigMap> ParseConfigMap(const YAML::Node& document,
                                                      const std::string& name) {
  RETURN_IF_ERROR(CheckKeys(document, {"data"}, "ConfigMap"));
  regatta::v1::ConfigMap config_map;
  config_map.set_name(name);
  if (document["data"] && !document["data"].IsNull()) {
    const FieldDescriptor* data = config_map.GetDescriptor()->FindFieldByName("data");
    RETURN_IF_ERROR(ReadField(document["data"], "data", data, &config_map));
  }
  RETURN_IF_ERROR(ValidateConfigMap(config_map));
  return config_map;
}

absl::StatusOr<Resource> ParseDocument(const YAML::Node& document, std::string& kind,
                                       std::string& name) {
  RETURN_IF_ERROR(Expect(document, YAML::NodeType::Map, "a mapping", "document"));
  ASSIGN_OR_RETURN(std::string api_version, ScalarAt(document["apiVersion"], "apiVersion"));
  if (!api_version.empty() && api_version != "akri.sh/v0" && api_version != "regatta.dev/v1" &&
      api_version != "v1") {
    return FieldError("apiVersion",
                      absl::StrCat("'", api_version, "' is not akri.sh/v0, regatta.dev/v1 or v1"));
  }
  ASSIGN_OR_RETURN(kind, ScalarAt(document["kind"], "kind"));
  if (kind.empty()) kind = "Configuration";
  ASSIGN_OR_RETURN(name, DocumentName(document));
  if (kind == "Configuration") return ParseConfiguration(document, name);
  if (kind == "Secret") return ParseSecret(document, name);
  if (kind == "ConfigMap") return ParseConfigMap(document, name);
  return FieldError("kind", absl::StrCat("'", kind, "' is not Configuration, Secret or ConfigMap"));
}

}  // namespace

absl::StatusOr<std::vector<Resource>> ParseResources(absl::string_view text) {
  ASSIGN_OR_RETURN(std::vector<YAML::Node> documents, LoadAllYaml(text));
  std::vector<Resource> out;
  for (size_t i = 0; i < documents.size(); ++i) {
    if (documents[i].IsNull()) continue;  // "---" with nothing after it
    std::string kind;
    std::string name;
    absl::StatusOr<Resource> resource;
    try {
      resource = ParseDocument(documents[i], kind, name);
    } catch (const YAML::Exception& e) {  // a key that is not a scalar, and the like
      resource = absl::InvalidArgumentError(e.msg);
    }
    if (!resource.ok()) {
      std::string what = absl::StrCat("document ", i + 1);
      if (!kind.empty()) {
        absl::StrAppend(&what, " (", kind, name.empty() ? "" : " ", name, ")");
      }
      return absl::Status(resource.status().code(),
                          absl::StrCat(what, ": ", resource.status().message()));
    }
    out.push_back(*std::move(resource));
  }
  return out;
}

}  // namespace regatta::devices
