#ifndef REGATTA_SRC_EXECUTOR_LOCAL_RUN_FILES_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_RUN_FILES_H_

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/executor/local/process_supervisor.h"

// The files of one run in <root>/runs/<run_id>/: state.json (what was started, and the process
// once it exists), result.json (how it ended) and output.log. JSON, one object per file. Once
// the run is forgotten (reported), state.json is renamed forgotten.json until the directory is
// pruned.
namespace regatta::executor::local {

inline constexpr char kStateFile[] = "state.json";
inline constexpr char kForgottenStateFile[] = "forgotten.json";
inline constexpr char kResultFile[] = "result.json";
inline constexpr char kLogFile[] = "output.log";
inline constexpr char kWorkDir[] = "work";

// What state.json holds. Written before the process is spawned (pid 0) and again after.
struct RunState {
  std::string run_id;
  std::string metadata;  // opaque bytes (base64 in the file)
  std::vector<std::string> argv;
  std::string working_dir;
  pid_t pid = 0;                // also the process group id
  uint64_t pid_start_time = 0;  // /proc/<pid>/stat field 22
  absl::Time started = absl::InfinitePast();
  absl::Duration active_deadline = absl::ZeroDuration();
  absl::Duration termination_grace = absl::ZeroDuration();
  int64_t memory_limit_bytes = 0;
  std::string cgroup_dir;  // empty: no cgroup
};

std::string EncodeRunState(const RunState& state);
absl::StatusOr<RunState> DecodeRunState(absl::string_view json);

std::string EncodeRunResult(const RunResult& result);
absl::StatusOr<RunResult> DecodeRunResult(absl::string_view json);

absl::string_view RunEndName(RunEnd end);

// A run id is one path component: 1 to 200 characters of [A-Za-z0-9._:@+=-], not "." or "..".
// INVALID_ARGUMENT naming `field` otherwise.
absl::Status ValidateRunId(absl::string_view run_id, absl::string_view field = "run_id");

}  // namespace regatta::executor::local

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_RUN_FILES_H_
