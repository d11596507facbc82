#ifndef REGATTA_SRC_API_JOB_SERVICE_H_
#define REGATTA_SRC_API_JOB_SERVICE_H_

#include "regatta/v1/job_service.grpc.pb.h"
#include "src/api/api_context.h"

namespace regatta::api {

// Reads jobs from the query views. Any authenticated caller may read, as in Armada's Lookout.
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

  absl::StatusOr<regatta::v1::GetJobStatusResponse> Status(
      const regatta::v1::GetJobStatusRequest& request);
  absl::StatusOr<regatta::v1::GetJobDetailsResponse> Details(
      const regatta::v1::GetJobDetailsRequest& request);
  absl::StatusOr<regatta::v1::ListJobsResponse> List(const regatta::v1::ListJobsRequest& request);

  static constexpr int kMaxIdsPerRequest = 10000;
  static constexpr int kDefaultPageSize = 100;
  static constexpr int kMaxPageSize = 10000;

 private:
  const ApiContext* ctx_;
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_JOB_SERVICE_H_
