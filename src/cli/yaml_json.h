#ifndef REGATTA_SRC_CLI_YAML_JSON_H_
#define REGATTA_SRC_CLI_YAML_JSON_H_

// Conversions between YAML files, JSON and protobuf messages for the CLI's input files and its
// `-o json|yaml` output.

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

namespace regatta::cli {

// Output JSON keeps the protobuf field order, so `-o json|yaml` reads like the proto.
using OrderedJson = nlohmann::ordered_json;

// Joins a field path and a child name the way errors print it: "jobs[3].task.command",
// "labels.team", `requests["nvidia.com/gpu"]`.
std::string JoinPath(absl::string_view path, absl::string_view child);
std::string IndexPath(absl::string_view path, size_t index);

// Converts a YAML mapping to the protobuf JSON of message type `descriptor`, using the schema to
// type YAML's untyped scalars (so `cpu: 1` is the string "1" and `priority: "3"` the number 3).
// Field names may be lowerCamelCase or snake_case (or lowerCamelCase in any case); durations may be
// "30s", "1m30s" or a number of seconds; YAML merge keys ("<<: *anchor") are honoured; null values
// leave a field unset. Errors name the field: "<path>.task.command: expected a list, got a string".
absl::StatusOr<nlohmann::json> YamlToJsonForMessage(const YAML::Node& node,
                                                    const google::protobuf::Descriptor* descriptor,
                                                    absl::string_view path);

// The JSON value of one field (map, list or singular) from its YAML value (not null).
absl::StatusOr<nlohmann::json> FieldToJson(const google::protobuf::FieldDescriptor* field,
                                           const YAML::Node& value, absl::string_view path);

// INVALID_ARGUMENT `<path>.<name>: unknown field "<name>"`, with a suggestion from the fields of
// `candidates` when one is close.
absl::Status UnknownFieldError(absl::string_view path, absl::string_view name,
                               const std::vector<const google::protobuf::Descriptor*>& candidates);

// YamlToJsonForMessage followed by the protobuf JSON parser.
absl::Status YamlToMessage(const YAML::Node& node, absl::string_view path,
                           google::protobuf::Message* message);

// Parses one JSON value into `message` with the protobuf JSON mapping (unknown fields rejected);
// errors are prefixed with `path` when it is not empty.
absl::Status JsonToMessage(const nlohmann::json& json, absl::string_view path,
                           google::protobuf::Message* message);

// Protobuf JSON (lowerCamelCase names, default values left out) of `message`.
std::string MessageToJson(const google::protobuf::Message& message, bool pretty = true);
OrderedJson MessageToJsonValue(const google::protobuf::Message& message);

// Renders JSON as block-style YAML. Strings that YAML would read back as another type ("true",
// "10", "null") are quoted, so the output parses back to the same JSON.
std::string JsonToYaml(const OrderedJson& json);

// Parses YAML text, turning yaml-cpp's exceptions into INVALID_ARGUMENT "line L, column C: ...".
absl::StatusOr<YAML::Node> ParseYaml(absl::string_view text);
// Every document of a multi-document YAML stream.
absl::StatusOr<std::vector<YAML::Node>> ParseYamlDocuments(absl::string_view text);

// The entries of a YAML mapping (null: none) with merge keys ("<<") expanded; explicit keys win
// over merged ones. Errors name `path`.
absl::StatusOr<std::vector<std::pair<std::string, YAML::Node>>> MappingEntries(
    const YAML::Node& node, absl::string_view path);

// Finds a field by its proto name or its JSON (lowerCamelCase) name, else by its JSON name
// ignoring case (as Go's encoding/json, which armadactl and kubectl read files with).
const google::protobuf::FieldDescriptor* FindField(const google::protobuf::Descriptor* descriptor,
                                                   absl::string_view name);

// "a mapping", "a list", "a string", "null": for errors.
std::string DescribeNode(const YAML::Node& node);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_YAML_JSON_H_
