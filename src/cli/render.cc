#include "src/cli/render.h"

#include <algorithm>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/cli/yaml_json.h"

namespace regatta::cli {
namespace {

using regatta::v1::JobEventType;

std::string FormatFactor(double factor) { return absl::StrCat(factor == 0 ? 1.0 : factor); }

std::string Quoted(const std::string& s) {
  return s.find(' ') == std::string::npos ? s : absl::StrCat("\"", s, "\"");
}

}  // namespace

std::string FormatPermission(const regatta::v1::QueuePermission& permission) {
  std::vector<std::string> subjects;
  for (const auto& s : permission.subjects())
    subjects.push_back(absl::StrCat(s.kind(), ":", s.name()));
  return absl::StrCat(absl::StrJoin(subjects, ","), "=", absl::StrJoin(permission.verbs(), ","));
}

std::string FormatLimit(const std::string& priority_class,
                        const regatta::v1::PriorityClassResourceLimits& limits) {
  std::map<std::string, double> sorted(limits.maximum_resource_fraction().begin(),
                                       limits.maximum_resource_fraction().end());
  return absl::StrCat(priority_class, ":", absl::StrJoin(sorted, ",", absl::PairFormatter("=")));
}

std::string FormatJobError(const regatta::v1::Error& error) {
  if (error.reason() == 0 && error.message().empty() && error.exit_code() == 0 &&
      error.signal() == 0) {
    return "";
  }
  std::string out = ErrorReasonName(error.reason());
  std::vector<std::string> extras;
  if (error.exit_code() != 0) extras.push_back(absl::StrCat("exit code ", error.exit_code()));
  if (error.signal() != 0) extras.push_back(absl::StrCat("signal ", error.signal()));
  if (!error.terminal()) extras.push_back("retryable");
  if (!extras.empty()) absl::StrAppend(&out, " (", absl::StrJoin(extras, ", "), ")");
  if (!error.message().empty()) absl::StrAppend(&out, ": ", error.message());
  return out;
}

std::string FormatMap(const google::protobuf::Map<std::string, std::string>& map) {
  std::map<std::string, std::string> sorted(map.begin(), map.end());
  return absl::StrJoin(sorted, ",", absl::PairFormatter("="));
}

std::string RenderQueueTable(const std::vector<regatta::v1::Queue>& queues,
                             const RenderContext& ctx) {
  Table table({"NAME", "PRIORITY FACTOR", "CORDONED", "PERMISSIONS", "LABELS", "AGE"});
  for (const auto& q : queues) {
    std::vector<std::string> permissions;
    for (const auto& p : q.permissions()) permissions.push_back(FormatPermission(p));
    table.AddRow({q.name(), FormatFactor(q.priority_factor()), q.cordoned() ? "yes" : "no",
                  absl::StrJoin(permissions, " "), FormatMap(q.labels()),
                  FormatAge(q.create_time(), ctx)});
  }
  return table.Render();
}

std::string RenderQueueDetails(const regatta::v1::Queue& q, const RenderContext& ctx) {
  Details d;
  d.Add("Name", q.name());
  d.Add("Priority factor", FormatFactor(q.priority_factor()));
  d.Add("Cordoned", q.cordoned() ? "yes" : "no");
  d.Add("Labels", FormatMap(q.labels()));
  if (q.permissions().empty()) d.Add("Permissions", "");
  for (int i = 0; i < q.permissions_size(); ++i) {
    d.Add(i == 0 ? "Permissions" : "", FormatPermission(q.permissions(i)));
  }
  std::map<std::string, regatta::v1::PriorityClassResourceLimits> limits(
      q.resource_limits_by_priority_class().begin(), q.resource_limits_by_priority_class().end());
  if (limits.empty()) d.Add("Resource limits", "");
  bool first = true;
  for (const auto& [pc, l] : limits) {
    d.Add(first ? "Resource limits" : "", FormatLimit(pc, l));
    first = false;
  }
  d.Add("Created", FormatTimeWithAge(q.create_time(), ctx));
  d.Add("Updated", FormatTimeWithAge(q.update_time(), ctx));
  return d.Render();
}

std::string RenderSubmitResults(const regatta::v1::SubmitJobsResponse& response) {
  Table table({"JOB ID", "CLIENT ID", "DUPLICATE"});
  for (const auto& item : response.items()) {
    table.AddRow({item.job_id(), item.client_id(), item.duplicate() ? "yes" : "no"});
  }
  return table.Render();
}

std::string RenderJobTable(const std::vector<regatta::v1::JobSummary>& jobs,
                           const RenderContext& ctx) {
  // A NAMESPACE column only when some job has one (Armada's job files set it).
  const bool namespaces =
      std::any_of(jobs.begin(), jobs.end(), [](const auto& j) { return !j.namespace_().empty(); });
  std::vector<std::string> header = {"JOB ID", "QUEUE", "JOB SET", "STATE", "PRIORITY", "OWNER"};
  if (namespaces) header.push_back("NAMESPACE");
  header.insert(header.end(), {"REQUESTS", "AGE"});
  Table table(header);
  for (const auto& j : jobs) {
    std::string state = JobStateName(j.state());
    if (j.cancel_requested() && state != "CANCELLED") absl::StrAppend(&state, " (cancelling)");
    std::vector<std::string> row = {
        j.job_id(), j.queue(), j.job_set(), state, absl::StrCat(j.priority()), j.owner()};
    if (namespaces) row.push_back(j.namespace_());
    row.push_back(FormatMap(j.requests()));
    row.push_back(FormatAge(j.submit_time(), ctx));
    table.AddRow(std::move(row));
  }
  return table.Render();
}

std::string RenderJobDetails(const regatta::v1::JobDetails& details, const RenderContext& ctx) {
  const auto& s = details.summary();
  Details d;
  d.Add("Job ID", s.job_id());
  d.Add("Queue", s.queue());
  d.Add("Job set", s.job_set());
  d.Add("Owner", s.owner());
  if (!s.namespace_().empty()) d.Add("Namespace", s.namespace_());
  d.Add("State", JobStateName(s.state()));
  d.Add("Priority", absl::StrCat(s.priority()));
  d.Add("Priority class", s.priority_class());
  d.Add("Client ID", s.client_id());
  d.Add("Requests", FormatMap(s.requests()));
  d.Add("Submitted", FormatTimeWithAge(s.submit_time(), ctx));
  d.Add("Last transition", FormatTimeWithAge(s.last_transition_time(), ctx));
  if (s.cancel_requested() || !details.cancel_reason().empty()) {
    std::string cancel = "requested";
    if (!details.cancel_user().empty()) absl::StrAppend(&cancel, " by ", details.cancel_user());
    if (!details.cancel_reason().empty()) absl::StrAppend(&cancel, ": ", details.cancel_reason());
    d.Add("Cancel", cancel);
  }
  if (s.preempt_requested()) d.Add("Preempt", "requested");
  if (details.has_error()) d.Add("Error", FormatJobError(details.error()));
  std::string out = d.Render();

  absl::StrAppend(&out, "\nRuns:");
  if (details.runs().empty()) {
    absl::StrAppend(&out, " none\n");
  } else {
    absl::StrAppend(&out, "\n");
    Table runs(
        {"RUN ID", "STATE", "EXECUTOR", "NODE", "POOL", "LEASED", "STARTED", "FINISHED", "ERROR"});
    for (const auto& r : details.runs()) {
      runs.AddRow({r.run_id(), RunStateName(r.state()), r.executor_id(), r.node_id(), r.pool(),
                   FormatTime(r.leased_time(), ctx), FormatTime(r.started_time(), ctx),
                   FormatTime(r.finished_time(), ctx), FormatJobError(r.error())});
    }
    std::string rendered = runs.Render();
    // Indent the runs table under its heading.
    for (absl::string_view line : absl::StrSplit(rendered, '\n', absl::SkipEmpty())) {
      absl::StrAppend(&out, "  ", line, "\n");
    }
  }
  if (details.has_job()) {
    absl::StrAppend(&out, "\nSpec:\n");
    std::string yaml = JsonToYaml(MessageToJsonValue(details.job()));
    for (absl::string_view line : absl::StrSplit(yaml, '\n', absl::SkipEmpty())) {
      absl::StrAppend(&out, "  ", line, "\n");
    }
  }
  return out;
}

std::string RenderEventLine(const regatta::v1::JobSetEvent& e, const RenderContext& ctx) {
  std::vector<std::string> parts;
  if (!e.run_id().empty()) parts.push_back(absl::StrCat("run=", e.run_id()));
  if (!e.executor_id().empty()) parts.push_back(absl::StrCat("executor=", e.executor_id()));
  if (!e.node_id().empty()) parts.push_back(absl::StrCat("node=", e.node_id()));
  if (e.type() == regatta::v1::JOB_EVENT_TYPE_REPRIORITIZING ||
      e.type() == regatta::v1::JOB_EVENT_TYPE_REPRIORITIZED) {
    parts.push_back(absl::StrCat("priority=", e.new_priority()));
  }
  if (!e.states().empty()) {
    std::vector<std::string> states;
    for (int s : e.states()) states.push_back(JobStateName(static_cast<regatta::v1::JobState>(s)));
    parts.push_back(absl::StrCat("states=", absl::StrJoin(states, ",")));
  }
  if (!e.user_id().empty()) parts.push_back(absl::StrCat("by=", e.user_id()));
  if (!e.reason().empty()) parts.push_back(absl::StrCat("reason=", Quoted(e.reason())));
  if (e.has_error()) parts.push_back(FormatJobError(e.error()));

  std::string job = e.job_id().empty() ? "-" : e.job_id();
  std::string type = EventTypeName(e.type());
  // Fixed widths (a ULID is 26 characters) keep a stream of lines aligned without buffering.
  job.resize(std::max<size_t>(job.size(), 26), ' ');
  type.resize(std::max<size_t>(type.size(), 14), ' ');
  std::string line = absl::StrCat(FormatTimeMillis(e.created(), ctx), "  ", job, "  ", type, "  ",
                                  absl::StrJoin(parts, " "));
  return std::string(absl::StripTrailingAsciiWhitespace(line));
}

std::string RenderJobReport(const regatta::v1::JobReport& report, const RenderContext& ctx) {
  Details d;
  d.Add("Job", report.job_id());
  d.Add("Queue", report.queue());
  d.Add("State", JobStateName(report.state()));
  d.Add("Why", report.summary());
  for (int i = 0; i < report.reasons_size(); ++i) {
    const auto& r = report.reasons(i);
    d.Add(i == 0 ? "Reasons" : "", absl::StrCat(r.pool(), ": ", r.code(), " ", r.reason(), " (",
                                                FormatAge(r.time(), ctx), " ago)"));
  }
  return d.Render();
}

std::string RenderQueueReport(const regatta::v1::QueueReportResponse& response,
                              const RenderContext& ctx) {
  Table table({"QUEUE", "POOL", "WEIGHT", "FAIR SHARE", "ADJUSTED", "DEMAND", "ACTUAL", "LEASED",
               "PREEMPTED", "STOPPED BECAUSE", "AGE"});
  auto share = [](double v) { return absl::StrFormat("%.3f", v); };
  for (const auto& q : response.queues()) {
    table.AddRow({q.queue(), q.pool(), absl::StrFormat("%g", q.weight()), share(q.fair_share()),
                  share(q.adjusted_fair_share()), share(q.demand_share()), share(q.actual_share()),
                  absl::StrCat(q.leased_last_cycle()), absl::StrCat(q.preempted_last_cycle()),
                  q.stop_reason(), FormatAge(q.time(), ctx)});
  }
  return table.Render();
}

}  // namespace regatta::cli
