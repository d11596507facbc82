#ifndef REGATTA_SRC_EXECUTOR_LOCAL_PROCESS_SUPERVISOR_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_PROCESS_SUPERVISOR_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/types.pb.h"
#include "src/common/clock.h"

namespace regatta::executor {

// What to start for one run.
struct RunLaunch {
  std::string run_id;
  // command + args; argv[0] is looked up in PATH (of `env`, else the executor's).
  std::vector<std::string> argv;
  // Added to (and overriding) the supervisor's base environment.
  std::vector<std::pair<std::string, std::string>> env;
  // Empty: the run's own directory (created by the supervisor: <root_dir>/runs/<run_id>/work, so
  // the process cannot clobber the supervisor's files next to it).
  std::string working_dir;
  absl::Duration active_deadline = absl::ZeroDuration();    // zero: none
  absl::Duration termination_grace = absl::ZeroDuration();  // zero: the supervisor default
  int64_t memory_limit_bytes = 0;  // 0: none; enforced only where cgroup v2 allows
  // Opaque to the supervisor; persisted with the run and given back on recovery (the executor
  // keeps the serialized lease here).
  std::string metadata;
};

enum class RunEnd {
  kSucceeded,  // exit code 0
  kFailed,     // non-zero exit, killed by a signal, deadline exceeded, out of memory
  kCancelled,  // stopped by Stop(kCancelled)
  kPreempted,  // stopped by Stop(kPreempted)
  kLost,       // the executor restarted and cannot know the outcome (retryable)
};

struct RunResult {
  std::string run_id;
  RunEnd end = RunEnd::kLost;
  // For kFailed and kLost: reason, message, category, terminal, exit_code, signal.
  //   non-zero exit  -> CONTAINER_ERROR, category "ContainerError", terminal, exit_code
  //   killed by a signal it did not get from us -> CONTAINER_ERROR with signal, terminal
  //   deadline       -> DEADLINE_EXCEEDED, category "DeadlineExceeded", terminal
  //   OOM (cgroup)   -> OUT_OF_MEMORY, category "OutOfMemory", terminal
  //   lost           -> EXECUTOR_LOST, category "Infrastructure", not terminal
  regatta::v1::Error error;
  int exit_code = 0;
  int signal = 0;
  absl::Time started;
  absl::Time finished;
};

// A run found on disk from an earlier executor process.
struct RecoveredRun {
  std::string run_id;
  std::string metadata;
  // The recorded result if the run had finished; otherwise the process (if it still existed)
  // was killed with its whole process group and the result is kLost.
  RunResult result;
};

struct LogRead {
  std::string data;
  int64_t next_offset = 0;
  // The run has ended and `next_offset` is the end of its log.
  bool finished = false;
};

struct SupervisorOptions {
  // Runs live in <root_dir>/runs/<run_id>/ (state, result, output.log).
  std::string root_dir;
  const Clock* clock = nullptr;  // times in results; timers use real time
  absl::Duration default_termination_grace = absl::Seconds(30);
  // Base environment for every run (the executor's own environment is NOT inherited).
  std::vector<std::pair<std::string, std::string>> base_env;
  // Try cgroup v2 memory limits (falls back to accounting only when the machine does not allow).
  bool use_cgroups = true;
  // fsync state and result files (and their directory) before acting on them. Without it a
  // crash of the executor process still loses nothing (the kernel keeps the written files);
  // only a crash of the whole machine can lose a file, and that also ends every run, which the
  // server then expires. The local executor turns it off: it costs ~7 fsyncs per run.
  bool sync_state = true;
  // Finished runs' directories (and logs) older than this are pruned by Prune().
  absl::Duration log_retention = absl::Hours(24);
  // Make this process a child subreaper (prctl PR_SET_CHILD_SUBREAPER; process-wide, never
  // undone) so that processes orphaned inside a run are reparented here and reaped with their
  // group, and a finished run's process group is gone (kill(-pgid, 0) == ESRCH) when its result
  // is reported, instead of lingering as zombies until init gets to them. The supervisor reaps
  // only members of its runs' process groups and orphans that left this process's session; it
  // never calls waitpid(-1).
  bool reap_orphans = true;
};

// Starts and supervises the processes of the local executor's runs. Each run is one process
// started with posix_spawn (never fork) in its own process group, with stdin from /dev/null,
// stdout and stderr appended to <run dir>/output.log, signals unblocked and reset, and no
// inherited file descriptors. When the main process ends, whatever is left of its process group
// is killed (container semantics). Every state change is written to disk (atomically) before
// it is acted on or reported, so a restarted supervisor finds every run of its predecessor.
// Thread-safe.
class ProcessSupervisor {
 public:
  // Creates the root directory if needed and recovers the previous process's runs (see
  // TakeRecovered). Errors: the directory cannot be created or read.
  static absl::StatusOr<std::unique_ptr<ProcessSupervisor>> Open(SupervisorOptions options);
  virtual ~ProcessSupervisor() = default;

  // Runs of an earlier process found by Open, each returned once.
  virtual std::vector<RecoveredRun> TakeRecovered() = 0;

  // Persists the run and starts its process. OK: the process is running. ALREADY_EXISTS: the
  // run is known (running or finished and not forgotten). FAILED_PRECONDITION naming the
  // program and errno text: it cannot be executed (not found, not executable, bad working
  // dir); nothing is left running and no result will follow. INVALID_ARGUMENT: run_id is not
  // 1-200 characters of [A-Za-z0-9._:@+=-] (it names a directory), or argv is empty.
  // UNAVAILABLE: after StopAll. Other errors: disk I/O.
  virtual absl::Status Start(const RunLaunch& launch) = 0;

  // SIGTERM to the run's process group, SIGKILL after the grace (zero: the run's own grace).
  // The result (kCancelled or kPreempted, unless it ended first) follows via WaitResults.
  // NOT_FOUND if the run is not running: unknown, or its process has already ended (its own
  // result then follows, or has been returned). A stop of a run whose deadline already expired
  // only brings the SIGKILL forward; its result stays DEADLINE_EXCEEDED. `why` must be
  // kCancelled or kPreempted (INVALID_ARGUMENT otherwise).
  virtual absl::Status Stop(absl::string_view run_id, RunEnd why,
                            absl::Duration grace = absl::ZeroDuration()) = 0;

  // Results of runs that ended since the last call, each once; waits up to `timeout` for one.
  virtual std::vector<RunResult> WaitResults(absl::Duration timeout) = 0;

  // The executor has reported the run's result: drop its state (the log stays until pruned).
  // Ignored for unknown runs and for runs that have not ended.
  virtual void Forget(absl::string_view run_id) = 0;

  // Runs started and not yet forgotten, with whether they are still running.
  virtual std::vector<std::pair<std::string, bool>> ListRuns() const = 0;

  // Up to `max_bytes` of the run's log from `offset`. Works for forgotten runs until they are
  // pruned. NOT_FOUND for an unknown run (no log).
  virtual absl::StatusOr<LogRead> ReadLog(absl::string_view run_id, int64_t offset,
                                          int64_t max_bytes) const = 0;
  // The offset where the last `lines` lines of the run's log begin (an unterminated last line
  // counts as a line; lines <= 0: the end of the log).
  virtual absl::StatusOr<int64_t> TailOffset(absl::string_view run_id, int lines) const = 0;

  // Deletes directories of forgotten runs older than the retention.
  virtual void Prune() = 0;

  // Shutdown: SIGTERM to every running process group, SIGKILL after `grace`, waits for them,
  // and records each as kLost ("the executor shut down") for the next process to report (no
  // process outlives the executor that started it, except after kill -9 of the executor,
  // which recovery then cleans up). These results are not returned by WaitResults; runs that
  // end on their own meanwhile are. Start fails with UNAVAILABLE afterwards. Destroying the
  // supervisor does StopAll(zero grace) if runs are still running.
  virtual void StopAll(absl::Duration grace) = 0;

  // Whether memory limits are enforced (cgroup v2) or accounted only.
  virtual bool EnforcesMemoryLimits() const = 0;
};

// What the machine offers: cpu (online CPUs, capped by a cgroup cpu quota) and memory
// (MemTotal, capped by a cgroup memory limit), as interned resources.
struct MachineResources {
  int64_t cpu_milli = 0;
  int64_t memory_bytes = 0;
  std::string hostname;
};
MachineResources DetectMachineResources();

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_PROCESS_SUPERVISOR_H_
