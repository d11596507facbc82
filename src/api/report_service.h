#ifndef REGATTA_SRC_API_REPORT_SERVICE_H_
#define REGATTA_SRC_API_REPORT_SERVICE_H_

#include "absl/status/statusor.h"
#include "regatta/v1/report_service.grpc.pb.h"
#include "src/api/api_context.h"
#include "src/scheduler/reports.h"

namespace regatta::api {

// Answers "why is my job not running?" and "how are the pools shared?" from the job views and
// the scheduler's latest reports.
class ReportService final : public regatta::v1::SchedulingReportService::Service {
 public:
  ReportService(const ApiContext* ctx, const scheduler::SchedulingReports* reports)
      : ctx_(ctx), reports_(reports) {}

  grpc::Status GetJobReport(grpc::ServerContext* call,
                            const regatta::v1::GetJobReportRequest* request,
                            regatta::v1::JobReport* response) override;
  grpc::Status GetQueueReport(grpc::ServerContext* call,
                              const regatta::v1::GetQueueReportRequest* request,
                              regatta::v1::QueueReportResponse* response) override;

  // Readable like the job itself (ReadAccess). The queue report holds fair shares only, no job
  // data, and stays authentication-only like getting a queue.
  absl::StatusOr<regatta::v1::JobReport> JobReport(const auth::Principal& principal,
                                                   const regatta::v1::GetJobReportRequest& request);
  regatta::v1::QueueReportResponse QueueReport(const regatta::v1::GetQueueReportRequest& request);

 private:
  const ApiContext* ctx_;
  const scheduler::SchedulingReports* reports_;
};

}  // namespace regatta::api

#endif  // REGATTA_SRC_API_REPORT_SERVICE_H_
