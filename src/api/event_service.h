#ifndef REGATTA_SRC_API_EVENT_SERVICE_H_
#define REGATTA_SRC_API_EVENT_SERVICE_H_

#include <atomic>

#include "regatta/v1/event_service.grpc.pb.h"
#include "src/api/api_context.h"

namespace regatta::api {

// Streams a job set's events from the log, converted to JobSetEvents, from an offset; with
// `watch` it follows the log until the client goes away or the server shuts down.
class EventService final : public regatta::v1::EventService::Service {
 public:
  explicit EventService(const ApiContext* ctx) : ctx_(ctx) {}

  grpc::Status GetJobSetEvents(grpc::ServerContext* call,
                               const regatta::v1::JobSetEventsRequest* request,
                               grpc::ServerWriter<regatta::v1::JobSetEvent>* writer) override;

  // Ends every open watch (called before the gRPC server shuts down, so Shutdown does not wait
  // for streams that would otherwise run forever).
  void StopWatches() { stopping_ = true; }

 private:
  const ApiContext* ctx_;
  std::atomic<bool> stopping_{false};
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_EVENT_SERVICE_H_
