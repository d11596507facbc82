#ifndef REGATTA_SRC_EXECUTOR_LOCAL_PROCESS_SUPERVISOR_TESTING_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_PROCESS_SUPERVISOR_TESTING_H_

#include "src/executor/local/process_supervisor.h"

namespace regatta::executor {

// Tests only: simulates kill -9 of the executor. The supervisor stops its thread and releases
// its root directory without signalling, reaping or recording anything; its processes keep
// running. The object must then only be destroyed (a new supervisor on the same root recovers
// the runs).
void AbandonProcessesForTesting(ProcessSupervisor& supervisor);

// Tests only: runs started while set are supervised without a pidfd (the fallback used when
// pidfd_open fails: waitid(WNOHANG) every 20 ms).
void DisablePidfdForTesting(bool disable);

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_PROCESS_SUPERVISOR_TESTING_H_
