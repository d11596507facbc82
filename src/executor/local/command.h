#ifndef REGATTA_SRC_EXECUTOR_LOCAL_COMMAND_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_COMMAND_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

// Running a short helper command (a container runtime's `ps`, `rm`, `version`) to its end and
// reading what it printed. Runs' own processes go through the ProcessSupervisor instead.
namespace regatta::executor::local {

struct CommandOutput {
  int exit_code = 0;   // 128 + signal if it was killed
  std::string output;  // stdout and stderr interleaved, at most `max_output` bytes
};

// Runs argv (argv[0] an absolute path) with the caller's environment plus `extra_env`
// ("NAME=value" each), stdin from /dev/null, in its own process group. A command still running
// after `timeout` has its group killed (SIGKILL) and DEADLINE_EXCEEDED is returned.
// FAILED_PRECONDITION: it cannot be executed.
absl::StatusOr<CommandOutput> RunCommand(const std::vector<std::string>& argv,
                                         absl::Duration timeout, size_t max_output = 1 << 20,
                                         const std::vector<std::string>& extra_env = {});

// Where `program` is on the caller's PATH, or "" (a name with a slash is returned if executable).
std::string FindInPath(const std::string& program);

}  // namespace regatta::executor::local

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_COMMAND_H_
