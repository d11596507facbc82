#ifndef REGATTA_SRC_EXECUTOR_API_EXECUTOR_API_H_
#define REGATTA_SRC_EXECUTOR_API_EXECUTOR_API_H_

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "regatta/v1/executor_service.pb.h"

namespace regatta::executor {

// One lease session (the LeaseJobRuns stream): lease requests go up, leases, cancellations,
// preemptions and answer ends come down. Write and WritesDone from one thread, Read from one
// other; Cancel from any.
class LeaseSession {
 public:
  virtual ~LeaseSession() = default;
  // False once the session is over.
  virtual bool Write(const regatta::v1::LeaseRequest& request) = 0;
  // No more requests will come.
  virtual void WritesDone() = 0;
  // Waits for the next message; false once the session is over.
  virtual bool Read(regatta::v1::LeaseStreamMessage* message) = 0;
  // Ends the session: Reads and Writes waiting or to come fail.
  virtual void Cancel() = 0;
  // Why the session ended. Call once Read returned false and the writer is done.
  virtual absl::Status Finish() = 0;
};

// The server's executor API as an executor uses it (see executor_service.proto).
class ExecutorApi {
 public:
  virtual ~ExecutorApi() = default;
  virtual std::unique_ptr<LeaseSession> OpenLeaseSession() = 0;
  virtual absl::StatusOr<regatta::v1::ReportEventsResponse> ReportEvents(
      const regatta::v1::ReportEventsRequest& request, absl::Duration timeout) = 0;
};

// Over gRPC; `authorization` ("Bearer ...", "Basic ...", or empty) goes with every call.
std::unique_ptr<ExecutorApi> NewGrpcExecutorApi(std::shared_ptr<grpc::Channel> channel,
                                                std::string authorization);

}  // namespace regatta::executor

#endif  // REGATTA_SRC_EXECUTOR_API_EXECUTOR_API_H_
