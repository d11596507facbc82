#ifndef REGATTA_SRC_COMMON_CONFIG_H_
#define REGATTA_SRC_COMMON_CONFIG_H_

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "yaml-cpp/yaml.h"

namespace regatta {

// Builds one configuration tree from, in increasing precedence:
//   1. `defaults` (YAML text compiled into the binary),
//   2. the YAML file at `file_path` (if not empty; a missing file is an error),
//   3. environment variables REGATTA_<PATH> where PATH is the key path in upper snake case with
//      "__" between levels (REGATTA_API__GRPC_PORT=0 sets api.grpcPort; camelCase keys match
//      their snake_case spelling),
//   4. `overrides`: "a.b.c=value" strings from --set flags.
// Values from env and flags are parsed as YAML scalars/flow values ("[a, b]" is a list).
// Unknown keys in 2-4 are errors naming the key, so typos do not pass silently — except inside
// `open_maps`: dotted paths of maps whose keys are the user's (priority classes, resource
// names), "*" matching any one segment; new keys there are taken as given (the caller checks
// what they hold).
absl::StatusOr<YAML::Node> LoadConfigTree(absl::string_view defaults, absl::string_view file_path,
                                          const std::map<std::string, std::string>& env,
                                          const std::vector<std::string>& overrides,
                                          const std::vector<std::string>& open_maps = {});

// The process environment as a map (for LoadConfigTree).
std::map<std::string, std::string> ProcessEnvironment();

// Reads a whole file; NOT_FOUND or an I/O error naming the path.
absl::StatusOr<std::string> ReadFileToString(absl::string_view path);

}  // namespace regatta

#endif  // REGATTA_SRC_COMMON_CONFIG_H_
