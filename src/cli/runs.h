#ifndef REGATTA_SRC_CLI_RUNS_H_
#define REGATTA_SRC_CLI_RUNS_H_

// Pipeline runs from the command line: `regatta pipeline run FILE`, `regatta run ...` and
// `regatta recurring ...` (the RunService).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "src/cli/commands.h"

namespace regatta::cli {

struct RunCreateOptions {
  // Exactly one of: a pipeline file (kfp IR YAML/JSON), an uploaded pipeline (id or name, its
  // newest version), a pipeline version id.
  std::string file;
  std::string pipeline;
  std::string version;
  std::vector<std::string> params;  // "k=v": v as JSON if it parses, else a string
  std::string name;
  std::string experiment;
  std::string queue;
  std::string root;
  bool no_cache = false;
  bool watch = false;
  std::optional<absl::Duration> timeout;  // of --watch
  absl::Duration poll = absl::Milliseconds(200);
};
// Prints the run id; with --watch, the tasks as they change, then the outcome. The exit code:
// 0 created (or, watching, SUCCEEDED/SKIPPED), 1 the run ended otherwise, 2 timed out.
absl::StatusOr<int> RunCreate(const CommandEnv& env, const RunCreateOptions& options);
absl::StatusOr<int> RunWatch(const CommandEnv& env, const std::string& run_id,
                             std::optional<absl::Duration> timeout,
                             absl::Duration poll = absl::Milliseconds(200));
absl::Status RunGet(const CommandEnv& env, const std::string& run_id);

struct RunListOptions {
  std::string experiment;
  std::string pipeline;
  std::string recurring;
  std::vector<std::string> states;
  bool archived = false;
  int limit = 50;
};
absl::Status RunList(const CommandEnv& env, const RunListOptions& options);
// "terminate", "retry", "archive", "unarchive", "delete".
absl::Status RunChange(const CommandEnv& env, const std::string& verb, const std::string& run_id);

struct RecurringCreateOptions {
  std::string name;
  std::string pipeline;  // id or name
  std::string version;   // a version id instead
  std::string cron;
  std::string every;  // an interval, e.g. 1h
  std::string start;  // RFC 3339
  std::string end;
  int max_concurrency = 1;
  bool no_catchup = false;
  std::vector<std::string> params;
  std::string experiment;
  std::string queue;
};
absl::Status RecurringCreate(const CommandEnv& env, const RecurringCreateOptions& options);
absl::Status RecurringList(const CommandEnv& env);
// "get", "enable", "disable", "delete".
absl::Status RecurringChange(const CommandEnv& env, const std::string& verb, const std::string& id);

// "k=v" pairs into name -> JSON text; INVALID_ARGUMENT naming the bad pair.
absl::StatusOr<std::map<std::string, std::string>> ParseParams(
    const std::vector<std::string>& params);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_RUNS_H_
