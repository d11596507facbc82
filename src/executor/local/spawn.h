#ifndef REGATTA_SRC_EXECUTOR_LOCAL_SPAWN_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_SPAWN_H_

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// Starting one run's process: posix_spawn (never fork) into its own process group.
namespace regatta::executor::local {

struct SpawnRequest {
  std::vector<std::string> argv;
  // The complete environment, "NAME=value".
  std::vector<std::string> env;
  // Must exist; the process starts there.
  std::string working_dir;
  // stdout and stderr are appended to this file (created if needed).
  std::string log_path;
};

// `base` with `overrides` applied (an override replaces the base entry of the same name in place;
// new names are appended in order), as "NAME=value" strings.
std::vector<std::string> MergeEnvironment(
    const std::vector<std::pair<std::string, std::string>>& base,
    const std::vector<std::pair<std::string, std::string>>& overrides);

// The value of NAME in a "NAME=value" environment, or nullptr.
const std::string* FindEnv(const std::vector<std::string>& env, absl::string_view name);

// Where execvp would find `program`: a name with a slash is taken as is (relative to
// `working_dir`), otherwise each entry of `path` (colon-separated; empty entries and relative
// entries are relative to `working_dir`) is tried. FAILED_PRECONDITION "cannot execute 'prog':
// No such file or directory" (or "Permission denied" when only non-executable files matched).
absl::StatusOr<std::string> ResolveProgram(const std::string& program, absl::string_view path,
                                           const std::string& working_dir);

// Starts the process: argv[0] resolved against the PATH of `env` (else the default path), in a
// new process group (pgid = pid), signal mask empty and every signal disposition reset to the
// default, stdin from /dev/null, stdout and stderr appended to `log_path`, working directory
// `working_dir`, and no file descriptor above 2 inherited.
// FAILED_PRECONDITION (naming the program or the directory) if it cannot be executed; nothing is
// left running then. Other errors: the log file cannot be opened.
absl::StatusOr<pid_t> SpawnProcess(const SpawnRequest& request);

}  // namespace regatta::executor::local

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_SPAWN_H_
