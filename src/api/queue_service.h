#ifndef REGATTA_SRC_API_QUEUE_SERVICE_H_
#define REGATTA_SRC_API_QUEUE_SERVICE_H_

#include "absl/synchronization/mutex.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "src/api/api_context.h"

namespace regatta::api {

// Queue administration. Changes are published to the log like everything else (the queues
// table is a view); each call waits until the view shows its change, so a create followed by a
// submit always finds the queue.
class QueueService final : public regatta::v1::QueueService::Service {
 public:
  explicit QueueService(const ApiContext* ctx) : ctx_(ctx) {}

  grpc::Status CreateQueue(grpc::ServerContext* call,
                           const regatta::v1::CreateQueueRequest* request,
                           regatta::v1::Queue* response) override;
  grpc::Status UpdateQueue(grpc::ServerContext* call,
                           const regatta::v1::UpdateQueueRequest* request,
                           regatta::v1::Queue* response) override;
  grpc::Status DeleteQueue(grpc::ServerContext* call,
                           const regatta::v1::DeleteQueueRequest* request,
                           regatta::v1::DeleteQueueResponse* response) override;
  grpc::Status GetQueue(grpc::ServerContext* call, const regatta::v1::GetQueueRequest* request,
                        regatta::v1::Queue* response) override;
  grpc::Status ListQueues(grpc::ServerContext* call, const regatta::v1::ListQueuesRequest* request,
                          regatta::v1::ListQueuesResponse* response) override;
  grpc::Status CordonQueue(grpc::ServerContext* call,
                           const regatta::v1::CordonQueueRequest* request,
                           regatta::v1::Queue* response) override;
  grpc::Status UncordonQueue(grpc::ServerContext* call,
                             const regatta::v1::CordonQueueRequest* request,
                             regatta::v1::Queue* response) override;

  absl::StatusOr<regatta::v1::Queue> Create(const auth::Principal& principal,
                                            regatta::v1::Queue queue);
  absl::StatusOr<regatta::v1::Queue> Update(const auth::Principal& principal,
                                            regatta::v1::Queue queue);
  absl::Status Delete(const auth::Principal& principal, absl::string_view name);
  absl::StatusOr<regatta::v1::ListQueuesResponse> List(const regatta::v1::ListQueuesRequest& r);
  absl::StatusOr<regatta::v1::Queue> SetCordoned(const auth::Principal& principal,
                                                 absl::string_view name, bool cordoned);

 private:
  // Appends one queue event and waits until the views have applied it.
  absl::Status PublishAndWait(const auth::Principal& principal, absl::string_view queue,
                              regatta::v1::Event event);
  absl::StatusOr<regatta::v1::Queue> CheckedSpec(regatta::v1::Queue queue) const;
  // Ensures the views reflect every earlier queue change before deciding on a new one.
  absl::Status CatchUp();

  const ApiContext* ctx_;
  // Queue changes are check-then-publish; one at a time keeps names unique.
  absl::Mutex admin_mu_;
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_QUEUE_SERVICE_H_
