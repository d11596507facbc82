#ifndef REGATTA_SRC_CLI_COMMANDS_H_
#define REGATTA_SRC_CLI_COMMANDS_H_

// The CLI verbs, one function each, called by app.cc once the command line is parsed. Each makes
// its gRPC calls through Client and prints through the env's streams.

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "src/cli/client.h"
#include "src/cli/flags.h"
#include "src/cli/table.h"
#include "src/cli/yaml_json.h"

namespace regatta::cli {

enum class OutputFormat { kTable, kJson, kYaml };

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view text);

struct CommandEnv {
  ClientOptions client;
  OutputFormat output = OutputFormat::kTable;
  std::istream* in = nullptr;
  std::ostream* out = nullptr;
  std::ostream* err = nullptr;
  // True when `in` is the terminal, so passwords are prompted for without echo.
  bool interactive_stdin = false;
  RenderContext render;
};

// A status that app.cc reports as a usage error (exit code 2) rather than a failed call.
absl::Status UsageError(absl::string_view message);
bool IsUsageError(const absl::Status& status);

// Reads a file, or standard input for "-".
absl::StatusOr<std::string> ReadInput(const CommandEnv& env, absl::string_view path);

// The server's INVALID_ARGUMENT about what a verb sent from `file` (a problem in the file),
// with the file named: "FILE: message" ("stdin" for "-"). Other statuses (a name taken, a
// permission missing: not the file's fault) are returned as they are.
absl::Status AboutFile(const absl::Status& status, absl::string_view file);

// Prints `j` as the output format asks (YAML for -o yaml, else JSON).
void PrintJson(const CommandEnv& env, const OrderedJson& j);

// Prints `message` as JSON or YAML, or calls `table` for the human form.
void PrintMessage(const CommandEnv& env, const google::protobuf::Message& message,
                  const std::string& table);

struct QueueOptions {
  std::string name;
  std::string file;  // -f: a Queue in YAML
  QueueSpecFlags spec;
};
absl::Status QueueCreate(const CommandEnv& env, const QueueOptions& options);
absl::Status QueueUpdate(const CommandEnv& env, const QueueOptions& options);
absl::Status QueueGet(const CommandEnv& env, const std::string& name);
absl::Status QueueList(const CommandEnv& env);
absl::Status QueueDelete(const CommandEnv& env, const std::string& name);
absl::Status QueueCordon(const CommandEnv& env, const std::string& name, bool cordon);

// `regatta submit FILE` (src/cli/submit.cc): all or nothing for the whole file. A file of one
// request is one SubmitJobs call (atomic on the server). A bigger one has every request checked
// by the server (ValidateSubmit) before the first is submitted; only a change on the server in
// between (a queue cordoned, a permission revoked, the server failing) can still stop it part
// way, which the error then says.
struct SubmitOptions {
  std::string file;
  bool dry_run = false;
  bool local = false;  // with dry_run: check the file here only, without the server
  int batch_size = 1000;
};
absl::Status Submit(const CommandEnv& env, const SubmitOptions& options);

// Job ids, or a whole job set (queue + job set) where the verb allows it. Cancel and preempt
// also take everything of a queue (--queue alone) or on an executor (--executor [--node]
// [--queue]), optionally only some priority classes.
struct JobSelection {
  std::vector<std::string> job_ids;
  std::string queue;
  std::string job_set;
  std::string executor;
  std::string node;
  std::vector<std::string> priority_classes;  // entries may be comma-separated lists
};

absl::Status Cancel(const CommandEnv& env, const JobSelection& jobs,
                    const std::vector<std::string>& states, const std::string& reason);
absl::Status Reprioritize(const CommandEnv& env, const JobSelection& jobs, int64_t priority);
absl::Status Preempt(const CommandEnv& env, const JobSelection& jobs, const std::string& reason);

struct JobsListOptions {
  std::string queue;
  std::string job_set;
  std::vector<std::string> states;
  std::string owner;
  std::string namespace_;  // Armada's namespace
  std::vector<std::string> labels;
  int limit = 100;
  bool all = false;
  bool newest_first = false;
};
absl::Status JobsList(const CommandEnv& env, const JobsListOptions& options);
absl::Status JobsGet(const CommandEnv& env, const std::string& job_id, bool spec);

struct WatchOptions {
  std::string queue;
  std::string job_set;
  std::string from_id;
  bool no_follow = false;
  std::optional<absl::Duration> timeout;
  // Pause before resuming a stream the server ended (tests shorten it).
  absl::Duration reconnect_delay = absl::Seconds(1);
};
// The exit code: 0 all succeeded, 1 some job unsuccessful, 2 timed out (its line printed).
absl::StatusOr<int> Watch(const CommandEnv& env, const WatchOptions& options);

// Reads one line (without its newline) from the env's input; prompts without echo when
// interactive.
absl::StatusOr<std::string> ReadSecret(const CommandEnv& env, absl::string_view prompt,
                                       bool confirm);

absl::Status Version(const CommandEnv& env);

struct LogsOptions {
  std::string job_id;
  std::string run_id;  // empty: the latest run
  bool follow = false;
  int tail_lines = 0;  // 0: everything
};
// Prints a run's output as it is (stdout and stderr interleaved).
absl::Status Logs(const CommandEnv& env, const LogsOptions& options);

// `regatta why JOB_ID`: why the job is (not) running, from the scheduler's latest cycle.
absl::Status Why(const CommandEnv& env, const std::string& job_id);
// `regatta queue report [QUEUE]`: fair, adjusted and actual shares per queue and pool.
absl::Status QueueReport(const CommandEnv& env, const std::string& queue);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_COMMANDS_H_
