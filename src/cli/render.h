#ifndef REGATTA_SRC_CLI_RENDER_H_
#define REGATTA_SRC_CLI_RENDER_H_

// The human (table) rendering of each API response the CLI prints.

#include <string>
#include <vector>

#include "regatta/v1/event_service.pb.h"
#include "regatta/v1/job_service.pb.h"
#include "regatta/v1/report_service.pb.h"
#include "regatta/v1/submit_service.pb.h"
#include "regatta/v1/types.pb.h"
#include "src/cli/table.h"

namespace regatta::cli {

// "group:team-a=submit,cancel": the syntax of the --permission flag.
std::string FormatPermission(const regatta::v1::QueuePermission& permission);
// "armada-default:cpu=0.5,memory=0.5": the syntax of the --limit flag.
std::string FormatLimit(const std::string& priority_class,
                        const regatta::v1::PriorityClassResourceLimits& limits);
// "CONTAINER_ERROR (exit code 1): boom"; "" for an empty error.
std::string FormatJobError(const regatta::v1::Error& error);
// "k1=v1,k2=v2" in key order.
std::string FormatMap(const google::protobuf::Map<std::string, std::string>& map);

std::string RenderQueueTable(const std::vector<regatta::v1::Queue>& queues,
                             const RenderContext& ctx);
std::string RenderQueueDetails(const regatta::v1::Queue& queue, const RenderContext& ctx);
std::string RenderSubmitResults(const regatta::v1::SubmitJobsResponse& response);
std::string RenderJobTable(const std::vector<regatta::v1::JobSummary>& jobs,
                           const RenderContext& ctx);
// Summary, error, runs and (when present) the spec as YAML.
std::string RenderJobDetails(const regatta::v1::JobDetails& details, const RenderContext& ctx);
// The job's state, the one-paragraph answer, then the reason per pool.
std::string RenderJobReport(const regatta::v1::JobReport& report, const RenderContext& ctx);
// One row per (queue, pool): weight, fair / adjusted / demand / actual share, last cycle.
std::string RenderQueueReport(const regatta::v1::QueueReportResponse& response,
                              const RenderContext& ctx);
// One line per event: time, job id, type, details (no trailing newline).
std::string RenderEventLine(const regatta::v1::JobSetEvent& event, const RenderContext& ctx);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_RENDER_H_
