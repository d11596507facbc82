#ifndef REGATTA_SRC_EXECUTOR_RUN_BACKEND_H_
#define REGATTA_SRC_EXECUTOR_RUN_BACKEND_H_

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "regatta/v1/executor_service.pb.h"
#include "src/executor/local/process_supervisor.h"

namespace regatta::executor {

// What an Executor runs its leases on: local processes (local_executor.h) or simulated runs
// (simulated_executor.h). The Executor does the server side (leases, admission against node
// capacity, run events, retries); a backend only starts, stops and ends runs. Thread-safe.
class RunBackend {
 public:
  virtual ~RunBackend() = default;

  // Runs of an earlier executor process, each returned once (reported by their result).
  virtual std::vector<RecoveredRun> TakeRecovered() = 0;

  // Starts the lease's run. OK: it runs and its result follows from WaitResults.
  // ALREADY_EXISTS: the run is known already. FAILED_PRECONDITION: it can never run (reported
  // FAILED with CannotExecute). Other errors: the lease is returned to the server.
  virtual absl::Status Start(const regatta::v1::JobRunLease& lease) = 0;

  // Ends a running run as `why` (kCancelled or kPreempted); its result follows from
  // WaitResults. NOT_FOUND if the run is not running (unknown, or ended already).
  virtual absl::Status Stop(absl::string_view run_id, RunEnd why) = 0;

  // Results of runs that ended since the last call, each once; waits up to `timeout` for one.
  virtual std::vector<RunResult> WaitResults(absl::Duration timeout) = 0;

  // The server has the run's result: drop it. Ignored for unknown or still running runs.
  virtual void Forget(absl::string_view run_id) = 0;

  // Shutdown: ends every run within `grace`; Start fails with UNAVAILABLE afterwards.
  virtual void StopAll(absl::Duration grace) = 0;

  // The run's log for ExecutorLogService (see ProcessSupervisor::ReadLog and TailOffset).
  virtual absl::StatusOr<LogRead> ReadLog(absl::string_view run_id, int64_t offset,
                                          int64_t max_bytes) const = 0;
  virtual absl::StatusOr<int64_t> TailOffset(absl::string_view run_id, int lines) const = 0;
};

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_RUN_BACKEND_H_
