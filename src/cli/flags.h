#ifndef REGATTA_SRC_CLI_FLAGS_H_
#define REGATTA_SRC_CLI_FLAGS_H_

// Parsing of the CLI's structured flag values. Pure functions, so they are unit-tested without a
// command line; errors are INVALID_ARGUMENT messages fit to print after the flag name.

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/types.pb.h"

namespace regatta::cli {

// "k=v" -> {k, v}. The key must be non-empty; the value may be empty ("k=").
absl::StatusOr<std::pair<std::string, std::string>> ParseKeyValue(absl::string_view text);
// Repeated "k=v" flags; a key given twice is an error.
absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(
    const std::vector<std::string>& texts);

// "group:team-a=submit,cancel" or "user:alice,group:ops=all": subjects (kind:name, kind user or
// group) '=' verbs (submit, cancel, reprioritize, preempt, watch; "all" for every verb).
absl::StatusOr<regatta::v1::QueuePermission> ParsePermission(absl::string_view text);

// "armada-default:cpu=0.5,memory=0.5" -> {"armada-default", {cpu: 0.5, memory: 0.5}}; each
// fraction must be in [0, 1].
absl::StatusOr<std::pair<std::string, regatta::v1::PriorityClassResourceLimits>> ParseResourceLimit(
    absl::string_view text);

// "QUEUED,running" or "JOB_STATE_QUEUED": comma-separated job states, case-insensitive, with or
// without the JOB_STATE_ prefix. Repeated flags are concatenated.
absl::StatusOr<std::vector<regatta::v1::JobState>> ParseJobStates(
    const std::vector<std::string>& texts);

// "30s", "5m", "1h30m", "250ms", or a bare number of seconds. Must be positive.
absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view text);

// The queue-spec flags of `queue create` / `queue update`.
struct QueueSpecFlags {
  std::optional<double> priority_factor;
  std::vector<std::string> permissions;
  std::vector<std::string> labels;
  std::vector<std::string> limits;
};

// Applies the flags that were given to `queue`: a given flag replaces that part of the spec
// (all --permission flags together replace the permission list, and so on).
absl::Status ApplyQueueFlags(const QueueSpecFlags& flags, regatta::v1::Queue* queue);

// A Queue from YAML (lowerCamelCase fields, as `queue get -o yaml` prints it).
absl::StatusOr<regatta::v1::Queue> ParseQueueFile(absl::string_view text);
// True if the queue file sets `cordoned` explicitly (update keeps the current value otherwise).
bool QueueFileSetsCordoned(absl::string_view text);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_FLAGS_H_
