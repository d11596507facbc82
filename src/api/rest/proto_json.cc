#include "src/api/rest/proto_json.h"

#include <cstdint>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"
#include "src/common/bounded_parse.h"
#include "src/common/pod/pod.h"

namespace regatta::rest {
namespace {

namespace pb = google::protobuf;

std::string ToStd(pb::StringPiece s) { return std::string(s.data(), s.size()); }

const pb::FieldDescriptor* FindField(const pb::Descriptor* descriptor, const std::string& key) {
  if (const pb::FieldDescriptor* f = descriptor->FindFieldByName(key)) return f;
  for (int i = 0; i < descriptor->field_count(); ++i) {
    const pb::FieldDescriptor* f = descriptor->field(i);
    if (f->json_name() == key) return f;
  }
  return nullptr;
}

// "JobState" -> "JOB_STATE_": the prefix protobuf style gives every value of an enum.
std::string EnumValuePrefix(const pb::EnumDescriptor* type) {
  std::string out;
  for (char c : type->name()) {
    if (absl::ascii_isupper(static_cast<unsigned char>(c)) && !out.empty()) out.push_back('_');
    out.push_back(absl::ascii_toupper(static_cast<unsigned char>(c)));
  }
  out.push_back('_');
  return out;
}

// Finds an enum value by name, by name without the enum's prefix, case-insensitively, or by
// number.
const pb::EnumValueDescriptor* FindEnumValue(const pb::EnumDescriptor* type,
                                             const std::string& text) {
  if (const pb::EnumValueDescriptor* v = type->FindValueByName(text)) return v;
  const std::string upper = absl::AsciiStrToUpper(text);
  if (const pb::EnumValueDescriptor* v = type->FindValueByName(upper)) return v;
  if (const pb::EnumValueDescriptor* v = type->FindValueByName(EnumValuePrefix(type) + upper)) {
    return v;
  }
  int number;
  if (absl::SimpleAtoi(text, &number)) return type->FindValueByNumber(number);
  return nullptr;
}

absl::Status BadValue(const std::string& key, const std::string& value, absl::string_view want) {
  return absl::InvalidArgumentError(
      absl::StrCat("query parameter ", key, ": \"", value, "\" is not ", want));
}

bool ParseBool(const std::string& text, bool* out) {
  if (text == "true" || text == "True" || text == "TRUE" || text == "1" || text == "t" ||
      text == "T") {
    *out = true;
    return true;
  }
  if (text == "false" || text == "False" || text == "FALSE" || text == "0" || text == "f" ||
      text == "F") {
    *out = false;
    return true;
  }
  return false;
}

absl::Status SetScalar(const std::string& key, const std::string& value,
                       const pb::FieldDescriptor* field, pb::Message* message) {
  const pb::Reflection* r = message->GetReflection();
  const bool repeated = field->is_repeated();
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING:
      if (field->type() == pb::FieldDescriptor::TYPE_BYTES) {
        return absl::InvalidArgumentError(
            absl::StrCat("query parameter ", key, ": bytes fields cannot be set from the query"));
      }
      repeated ? r->AddString(message, field, value) : r->SetString(message, field, value);
      return absl::OkStatus();
    case pb::FieldDescriptor::CPPTYPE_INT32: {
      int32_t v;
      if (!absl::SimpleAtoi(value, &v)) return BadValue(key, value, "a 32-bit integer");
      repeated ? r->AddInt32(message, field, v) : r->SetInt32(message, field, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_INT64: {
      int64_t v;
      if (!absl::SimpleAtoi(value, &v)) return BadValue(key, value, "a 64-bit integer");
      repeated ? r->AddInt64(message, field, v) : r->SetInt64(message, field, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_UINT32: {
      uint32_t v;
      if (!absl::SimpleAtoi(value, &v)) return BadValue(key, value, "an unsigned 32-bit integer");
      repeated ? r->AddUInt32(message, field, v) : r->SetUInt32(message, field, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_UINT64: {
      uint64_t v;
      if (!absl::SimpleAtoi(value, &v)) return BadValue(key, value, "an unsigned 64-bit integer");
      repeated ? r->AddUInt64(message, field, v) : r->SetUInt64(message, field, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: {
      double v;
      if (!absl::SimpleAtod(value, &v)) return BadValue(key, value, "a number");
      repeated ? r->AddDouble(message, field, v) : r->SetDouble(message, field, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_FLOAT: {
      float v;
      if (!absl::SimpleAtof(value, &v)) return BadValue(key, value, "a number");
      repeated ? r->AddFloat(message, field, v) : r->SetFloat(message, field, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_BOOL: {
      bool v;
      if (!ParseBool(value, &v)) return BadValue(key, value, "true or false");
      repeated ? r->AddBool(message, field, v) : r->SetBool(message, field, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_ENUM: {
      const pb::EnumValueDescriptor* v = FindEnumValue(field->enum_type(), value);
      if (v == nullptr) {
        return BadValue(key, value, absl::StrCat("a value of ", field->enum_type()->full_name()));
      }
      repeated ? r->AddEnum(message, field, v) : r->SetEnum(message, field, v);
      return absl::OkStatus();
    }
    case pb::FieldDescriptor::CPPTYPE_MESSAGE:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "query parameter ", key, ": message fields cannot be set from the query; use the POST form"));
}

absl::Status SetMapEntry(const std::string& key, const std::string& value,
                         const pb::FieldDescriptor* field, pb::Message* message) {
  const pb::Descriptor* entry = field->message_type();
  const pb::FieldDescriptor* key_field = entry->map_key();
  const pb::FieldDescriptor* value_field = entry->map_value();
  if (key_field->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING ||
      value_field->cpp_type() != pb::FieldDescriptor::CPPTYPE_STRING) {
    return absl::InvalidArgumentError(
        absl::StrCat("query parameter ", key, ": this map cannot be set from the query"));
  }
  const size_t eq = value.find('=');
  if (eq == std::string::npos || eq == 0) return BadValue(key, value, "of the form key=value");
  // Maps are repeated entry messages underneath; a later duplicate key wins, as in JSON.
  pb::Message* added = message->GetReflection()->AddMessage(message, field);
  const pb::Reflection* er = added->GetReflection();
  er->SetString(added, key_field, value.substr(0, eq));
  er->SetString(added, value_field, value.substr(eq + 1));
  return absl::OkStatus();
}

std::string JoinKey(const std::string& path, const std::string& key) {
  return path.empty() ? key : absl::StrCat(path, ".", key);
}

// The first key of `value` that no field of `descriptor` has, as "PATH: problem" in the names
// the body used ("items[0].task.podSpec.volumes[0].persistentVolumeClaim"); empty when there is
// none. Protobuf's own message names neither the path nor, for the pod model, what is
// supported instead.
std::string FindUnknownField(const nlohmann::json& value, const pb::Descriptor* descriptor,
                             const std::string& path) {
  if (!value.is_object()) return "";
  for (const auto& [key, child] : value.items()) {
    const pb::FieldDescriptor* field = FindField(descriptor, key);
    const std::string at = JoinKey(path, key);
    if (field == nullptr) {
      return absl::StrCat(at, ": ",
                          pod::IsPodModelMessage(descriptor)
                              ? pod::UnsupportedFieldProblem(descriptor)
                              : absl::StrCat("unknown field \"", key, "\""));
    }
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) continue;
    if (field->is_map()) {
      const pb::FieldDescriptor* map_value = field->message_type()->map_value();
      if (map_value->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE || !child.is_object()) {
        continue;
      }
      for (const auto& [entry_key, entry] : child.items()) {
        std::string found = FindUnknownField(entry, map_value->message_type(),
                                             absl::StrCat(at, "[", entry_key, "]"));
        if (!found.empty()) return found;
      }
      continue;
    }
    const pb::Descriptor* type = field->message_type();
    if (type->file()->package() == "google.protobuf") continue;  // well-known types
    if (field->is_repeated() && child.is_array()) {
      for (size_t i = 0; i < child.size(); ++i) {
        std::string found = FindUnknownField(child[i], type, absl::StrCat(at, "[", i, "]"));
        if (!found.empty()) return found;
      }
      continue;
    }
    std::string found = FindUnknownField(child, type, at);
    if (!found.empty()) return found;
  }
  return "";
}

}  // namespace

absl::Status JsonToProto(absl::string_view json, pb::Message* message) {
  // Treat an all-whitespace body as an empty object: clients often POST nothing.
  size_t start = 0;
  while (start < json.size() && absl::ascii_isspace(static_cast<unsigned char>(json[start]))) {
    ++start;
  }
  if (start == json.size()) return absl::OkStatus();
  if (absl::Status bounded = CheckJsonLimits(json); !bounded.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid JSON for ", message->GetDescriptor()->full_name(), ": ", bounded.message()));
  }
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status =
      pb::util::JsonStringToMessage(pb::StringPiece(json.data(), json.size()), message, options);
  if (!status.ok()) {
    // Only on failure: parsing the body twice would slow every large submit.
    const nlohmann::json parsed = nlohmann::json::parse(json, nullptr, /*allow_exceptions=*/false);
    if (!parsed.is_discarded()) {
      std::string unknown = FindUnknownField(parsed, message->GetDescriptor(), "");
      if (!unknown.empty()) return absl::InvalidArgumentError(unknown);
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid JSON for ", message->GetDescriptor()->full_name(), ": ", ToStd(status.message())));
  }
  return absl::OkStatus();
}

std::string ProtoToJson(const pb::Message& message) {
  pb::util::JsonPrintOptions options;
  options.add_whitespace = false;
  options.always_print_primitive_fields = true;
  options.always_print_enums_as_ints = false;
  options.preserve_proto_field_names = false;
  std::string out;
  const auto status = pb::util::MessageToJsonString(message, &out, options);
  if (!status.ok()) {
    // Only a broken message gets here; answer with something a client can still parse.
    return "{}";
  }
  return out;
}

absl::Status ApplyQueryParams(const QueryParams& params, const QueryMapping& mapping,
                              pb::Message* message) {
  const pb::Descriptor* descriptor = message->GetDescriptor();
  absl::flat_hash_set<const pb::FieldDescriptor*> seen;
  for (const auto& [key, value] : params) {
    std::string name = key;
    if (auto it = mapping.aliases.find(key); it != mapping.aliases.end()) name = it->second;
    const pb::FieldDescriptor* field = FindField(descriptor, name);
    if (field == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("unknown query parameter \"", key, "\""));
    }
    if (mapping.path_fields.contains(field->name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("query parameter \"", key, "\" repeats a field taken from the path"));
    }
    if (field->is_map()) {
      if (absl::Status s = SetMapEntry(key, value, field, message); !s.ok()) return s;
      continue;
    }
    if (!field->is_repeated() && !seen.insert(field).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("query parameter \"", key, "\" given more than once"));
    }
    if (absl::Status s = SetScalar(key, value, field, message); !s.ok()) return s;
  }
  return absl::OkStatus();
}

}  // namespace regatta::rest
