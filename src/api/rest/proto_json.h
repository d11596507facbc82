#ifndef REGATTA_SRC_API_REST_PROTO_JSON_H_
#define REGATTA_SRC_API_REST_PROTO_JSON_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "src/api/rest/router.h"

namespace regatta::rest {

// Parses a JSON request body into `message`. Field names may be lowerCamelCase or the proto
// names; unknown fields are errors so typos do not pass silently. An empty body is `{}`.
// Errors are INVALID_ARGUMENT and name the problem.
absl::Status JsonToProto(absl::string_view json, google::protobuf::Message* message);

// Prints `message` as one line of JSON: lowerCamelCase names, enums as names, scalar fields
// even at their default so clients need not know proto3's defaults.
std::string ProtoToJson(const google::protobuf::Message& message);

struct QueryMapping {
  // Extra spellings for a parameter, e.g. "state" -> "states", "label" -> "labels".
  absl::flat_hash_map<std::string, std::string> aliases;
  // Proto field names bound by the path; a query parameter may not set them too.
  absl::flat_hash_set<std::string> path_fields;
};

// Sets fields of `message` from query parameters (grpc-gateway style). A parameter names a
// top-level field by its JSON or proto name (or an alias); scalars and enums are parsed from
// text, repeated fields take every occurrence, map<string, string> fields take "key=value".
// Enum values may omit the enum's prefix and ignore case ("queued" for JOB_STATE_QUEUED).
// Unknown parameters are INVALID_ARGUMENT errors.
absl::Status ApplyQueryParams(const QueryParams& params, const QueryMapping& mapping,
                              google::protobuf::Message* message);

}  // namespace regatta::rest

#endif  // REGATTA_SRC_API_REST_PROTO_JSON_H_
