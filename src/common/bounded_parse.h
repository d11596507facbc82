#ifndef REGATTA_SRC_COMMON_BOUNDED_PARSE_H_
#define REGATTA_SRC_COMMON_BOUNDED_PARSE_H_

// YAML and JSON parsing with limits on the work an input can cause. Every YAML or JSON text that
// a user hands the server or the CLI (specs, job files, Configurations, the users file, the
// config, request bodies, parameter values) goes through here.
//
// yaml-cpp shares an aliased node instead of copying it, so a few hundred bytes of nested
// anchors and aliases ("billion laughs") load into a small graph; the blow-up comes when code
// walks or copies that graph (YAML to JSON, merge keys). LoadYaml therefore first scans the
// parser's events and computes, in one linear pass, how many nodes and scalar bytes the input
// expands to and how deep it nests once every alias is replaced by what it refers to, and
// refuses before building anything.
//
// Scalars must be UTF-8 (as JSON and protobuf strings must), which yaml-cpp does not check.
//
// Errors are INVALID_ARGUMENT. A syntax error reads "line L, column C: <yaml-cpp's message>"; a
// limit reads "line L, column C: YAML aliases expand to more than 1000000 nodes (limit: 1000000
// expanded nodes)" and carries a payload that IsParseLimitError recognises, so callers that
// prefix syntax errors with "not valid YAML" can leave it off.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "yaml-cpp/yaml.h"

namespace regatta {

struct ParseLimits {
  size_t max_input_bytes = 64 << 20;
  // Levels of nested sequences, maps, arrays and objects, counted through aliases.
  int max_depth = 128;
  // Alias uses (`*name`) in the whole input; JSON has none.
  size_t max_aliases = 10'000;
  // Nodes (YAML) or values (JSON) once every alias is expanded; a map entry's key counts too.
  size_t max_expanded_nodes = 1'000'000;
  // Bytes of scalar text once every alias is expanded.
  size_t max_expanded_scalar_bytes = 64 << 20;
};

// The YAML behind a yaml-cpp Node graph: at most one document (an empty input is a Null node).
absl::StatusOr<YAML::Node> LoadYaml(absl::string_view text, const ParseLimits& limits = {});
// Every document of a multi-document (`---`) input; the limits apply to the input as a whole.
absl::StatusOr<std::vector<YAML::Node>> LoadAllYaml(absl::string_view text,
                                                    const ParseLimits& limits = {});

// Parses one JSON value. Syntax errors read "line L, column C: <nlohmann's message>".
absl::StatusOr<nlohmann::json> ParseJson(absl::string_view text, const ParseLimits& limits = {});
// The same for nlohmann::ordered_json, which keeps the order of object members.
absl::StatusOr<nlohmann::ordered_json> ParseOrderedJson(absl::string_view text,
                                                        const ParseLimits& limits = {});

// Checks only the limits of a JSON text (size, depth, values), e.g. before handing it to
// another parser such as protobuf's JSON mapping.
absl::Status CheckJsonLimits(absl::string_view text, const ParseLimits& limits = {});

// True for a status from this file that reports an exceeded limit (not a syntax error).
bool IsParseLimitError(const absl::Status& status);

// The text of an error from this file for a caller's message: an exceeded limit as it is, a
// syntax error after `syntax_prefix`, e.g. "not valid YAML: line 2, column 1: ...".
std::string ParseErrorText(const absl::Status& status, absl::string_view syntax_prefix);

}  // namespace regatta

#endif  // REGATTA_SRC_COMMON_BOUNDED_PARSE_H_
