#ifndef REGATTA_SRC_API_IN_PROCESS_EXECUTOR_API_H_
#define REGATTA_SRC_API_IN_PROCESS_EXECUTOR_API_H_

#include <memory>

#include "src/api/auth/principal.h"
#include "src/api/executor_service.h"
#include "src/executor/api/executor_api.h"

namespace regatta::api {

// The executor API for the executor embedded in the server's process: leases and reports go
// straight to `service` as `principal`, with no serialisation and no gRPC stream between them
// (the same checks apply). Each lease session is served on a thread of its own, as a gRPC
// stream would be. `service` must outlive every session.
std::unique_ptr<executor::ExecutorApi> NewInProcessExecutorApi(ExecutorService* service,
                                                               auth::Principal principal);

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_IN_PROCESS_EXECUTOR_API_H_
