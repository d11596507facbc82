// The `regatta` binary: every verb lives in src/cli (regatta_cli).
#include "absl/synchronization/mutex.h"
#include "src/cli/app.h"

int main(int argc, char** argv) {
#ifdef NDEBUG
  // Debian builds Abseil with its Mutex deadlock detection on, which records every lock
  // acquisition in one process-wide graph under one global lock: measurable CPU and contention
  // in a server whose components hand work between threads. Release binaries turn it off;
  // tests (which do not run this main) and debug builds keep it.
  absl::SetMutexDeadlockDetectionMode(absl::OnDeadlockCycle::kIgnore);
#endif
  return regatta::cli::Main(argc, argv);
}
