#ifndef REGATTA_SRC_API_JOB_SERVICE_H_
#define REGATTA_SRC_API_JOB_SERVICE_H_

#include <functional>
#include <map>
#include <memory>
#include <string>

#include "absl/synchronization/mutex.h"
#include "grpcpp/channel.h"
#include "regatta/v1/job_service.grpc.pb.h"
#include "src/api/api_context.h"

namespace regatta::api {

// Reads jobs from the query views. A job is readable with its queue's `watch` verb or the
// global `watch_all_events` permission, as its events are (ReadAccess).
class JobService final : public regatta::v1::JobService::Service {
 public:
  explicit JobService(const ApiContext* ctx) : ctx_(ctx) {}

  grpc::Status GetJobStatus(grpc::ServerContext* call,
                            const regatta::v1::GetJobStatusRequest* request,
                            regatta::v1::GetJobStatusResponse* response) override;
  grpc::Status GetJobDetails(grpc::ServerContext* call,
                             const regatta::v1::GetJobDetailsRequest* request,
                             regatta::v1::GetJobDetailsResponse* response) override;
  grpc::Status ListJobs(grpc::ServerContext* call, const regatta::v1::ListJobsRequest* request,
                        regatta::v1::ListJobsResponse* response) override;
  grpc::Status GetJobLogs(grpc::ServerContext* call, const regatta::v1::GetJobLogsRequest* request,
                          grpc::ServerWriter<regatta::v1::LogChunk>* writer) override;

  // Relays the run's log from its executor, chunk by chunk, to `sink` (false: stop). `cancelled`
  // is polled to stop following.
  absl::Status StreamLogs(const auth::Principal& principal,
                          const regatta::v1::GetJobLogsRequest& request,
                          const std::function<bool(const regatta::v1::LogChunk&)>& sink,
                          const std::function<bool()>& cancelled);

  // PERMISSION_DENIED naming the first job the principal may not read (unknown ids are
  // answered as today: UNSPECIFIED, or left out of the details).
  absl::StatusOr<regatta::v1::GetJobStatusResponse> Status(
      const auth::Principal& principal, const regatta::v1::GetJobStatusRequest& request);
  absl::StatusOr<regatta::v1::GetJobDetailsResponse> Details(
      const auth::Principal& principal, const regatta::v1::GetJobDetailsRequest& request);
  // Only jobs of readable queues; PERMISSION_DENIED if the request names an unreadable queue.
  absl::StatusOr<regatta::v1::ListJobsResponse> List(const auth::Principal& principal,
                                                     const regatta::v1::ListJobsRequest& request);

  static constexpr int kMaxIdsPerRequest = 10000;
  static constexpr int kDefaultPageSize = 100;
  static constexpr int kMaxPageSize = 10000;

 private:
  std::shared_ptr<grpc::Channel> ExecutorChannel(const std::string& address,
                                                 absl::string_view executor_id);

  const ApiContext* ctx_;
  absl::Mutex channels_mu_;
  // Per address: the credentials its channel was made with (new ones after a TLS reload).
  std::map<std::string,
           std::pair<std::shared_ptr<grpc::ChannelCredentials>, std::shared_ptr<grpc::Channel>>>
      channels_ ABSL_GUARDED_BY(channels_mu_);
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_JOB_SERVICE_H_
