#include "src/api/report_service.h"

#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "src/api/read_access.h"
#include "src/api/serve.h"
#include "src/common/status_macros.h"

namespace regatta::api {
namespace {

namespace v1 = regatta::v1;

std::string StateName(v1::JobState state) {
  return std::string(absl::StripPrefix(v1::JobState_Name(state), "JOB_STATE_"));
}

// The queue's position in each pool it was scheduled in, for a queued job the scheduler did not
// reach in its latest cycle.
std::string QueueSummary(const std::vector<scheduler::QueueShareReport>& shares) {
  std::vector<std::string> parts;
  for (const scheduler::QueueShareReport& q : shares) {
    parts.push_back(absl::StrFormat(
        "in pool %s the queue holds %.3f of the pool (fair share %.3f, adjusted %.3f)%s", q.pool,
        q.actual_share, q.fair_share, q.adjusted_fair_share,
        q.stop_reason.empty() ? "" : absl::StrCat(" and stopped: ", q.stop_reason)));
  }
  return absl::StrJoin(parts, "; ");
}

std::string RunSummary(const v1::JobDetails& details) {
  for (auto it = details.runs().rbegin(); it != details.runs().rend(); ++it) {
    if (it->run_id() != details.summary().latest_run_id()) continue;
    return absl::StrCat(" on node ", it->node_id(), " of pool ", it->pool(), " (executor ",
                        it->executor_id(), ", run ", it->run_id(), ")");
  }
  return "";
}

}  // namespace

absl::StatusOr<v1::JobReport> ReportService::JobReport(const auth::Principal& principal,
                                                       const v1::GetJobReportRequest& request) {
  if (request.job_id().empty()) return absl::InvalidArgumentError("job_id: required");
  ASSIGN_OR_RETURN(auto details, ctx_->store->GetJobDetails({request.job_id()}, false));
  if (details.empty()) {
    return absl::NotFoundError(absl::StrCat("job_id: job ", request.job_id(), " not found"));
  }
  const v1::JobDetails& job = details.front();
  const v1::JobSummary& summary = job.summary();
  ReadAccess access(*ctx_, principal);
  RETURN_IF_ERROR(access.Check(summary.queue(), absl::StrCat("job ", summary.job_id())));
  v1::JobReport report;
  report.set_job_id(summary.job_id());
  report.set_queue(summary.queue());
  report.set_state(summary.state());
  const std::string state = StateName(summary.state());
  switch (summary.state()) {
    case v1::JOB_STATE_SUBMITTED:
      report.set_summary("submitted; the server has not yet added it to its queue");
      break;
    case v1::JOB_STATE_QUEUED: {
      if (summary.cancel_requested()) {
        report.set_summary("queued with a cancel request; the scheduler cancels it next cycle");
        break;
      }
      std::vector<scheduler::JobReason> reasons = reports_->ReasonsFor(summary.job_id());
      std::vector<std::string> lines;
      for (const scheduler::JobReason& r : reasons) {
        v1::PoolJobReason* out = report.add_reasons();
        out->set_pool(r.pool);
        out->set_code(r.code);
        out->set_reason(r.reason);
        SetTimestamp(r.time, out->mutable_time());
        lines.push_back(absl::StrCat("pool ", r.pool, ": ", r.reason));
      }
      if (!lines.empty()) {
        report.set_summary(absl::StrCat("queued: ", absl::StrJoin(lines, "; ")));
      } else if (!reports_->ready()) {
        report.set_summary("queued; the scheduler has not completed a cycle yet (starting up)");
      } else if (std::vector<scheduler::QueueShareReport> shares =
                     reports_->Queues(summary.queue());
                 !shares.empty()) {
        report.set_summary(absl::StrCat(
            "queued; the scheduler did not reach this job in its latest cycle (jobs ahead of it "
            "in its queue, or other queues, were served first): ",
            QueueSummary(shares)));
      } else {
        report.set_summary(
            "queued; no pool has scheduled this queue yet (is an executor with nodes "
            "connected?)");
      }
      break;
    }
    case v1::JOB_STATE_LEASED:
    case v1::JOB_STATE_PENDING:
    case v1::JOB_STATE_RUNNING:
      report.set_summary(absl::StrCat(absl::AsciiStrToLower(state), RunSummary(job)));
      break;
    default: {
      std::string text = absl::StrCat(absl::AsciiStrToLower(state), RunSummary(job));
      if (!job.error().message().empty()) absl::StrAppend(&text, ": ", job.error().message());
      if (!job.cancel_reason().empty()) absl::StrAppend(&text, ": ", job.cancel_reason());
      report.set_summary(text);
    }
  }
  return report;
}

v1::QueueReportResponse ReportService::QueueReport(const v1::GetQueueReportRequest& request) {
  v1::QueueReportResponse response;
  response.set_scheduler_ready(reports_->ready());
  for (const scheduler::QueueShareReport& q : reports_->Queues(request.queue())) {
    v1::QueueShareReport* out = response.add_queues();
    out->set_queue(q.queue);
    out->set_pool(q.pool);
    out->set_weight(q.weight);
    out->set_fair_share(q.fair_share);
    out->set_adjusted_fair_share(q.adjusted_fair_share);
    out->set_demand_share(q.demand_share);
    out->set_actual_share(q.actual_share);
    out->set_leased_last_cycle(q.leased);
    out->set_preempted_last_cycle(q.preempted);
    out->set_stop_reason(q.stop_reason);
    SetTimestamp(q.time, out->mutable_time());
  }
  return response;
}

grpc::Status ReportService::GetJobReport(grpc::ServerContext* call,
                                         const v1::GetJobReportRequest* request,
                                         v1::JobReport* response) {
  return Serve(ctx_, call, response,
               [&](const auth::Principal& p) { return JobReport(p, *request); });
}

grpc::Status ReportService::GetQueueReport(grpc::ServerContext* call,
                                           const v1::GetQueueReportRequest* request,
                                           v1::QueueReportResponse* response) {
  return Serve(ctx_, call, response, [&](const auth::Principal&) {
    return absl::StatusOr<v1::QueueReportResponse>(QueueReport(*request));
  });
}

}  // namespace regatta::api
