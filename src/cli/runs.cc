#include "src/cli/runs.h"

#include <algorithm>
#include <map>
#include <ostream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/time_util.h"
#include "nlohmann/json.hpp"
#include "src/cli/table.h"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"

namespace regatta::cli {

namespace pb = regatta::v1;

namespace {

std::ostream& Out(const CommandEnv& env) { return *env.out; }

std::string RunStateText(pb::PipelineRunState state) {
  absl::string_view name = pb::PipelineRunState_Name(state);
  absl::ConsumePrefix(&name, "PIPELINE_RUN_STATE_");
  return std::string(name);
}

std::string TaskStateText(pb::PipelineTaskState state) {
  absl::string_view name = pb::PipelineTaskState_Name(state);
  absl::ConsumePrefix(&name, "PIPELINE_TASK_STATE_");
  return std::string(name);
}

bool Ended(pb::PipelineRunState state) {
  return state == pb::PIPELINE_RUN_STATE_SUCCEEDED || state == pb::PIPELINE_RUN_STATE_SKIPPED ||
         state == pb::PIPELINE_RUN_STATE_FAILED || state == pb::PIPELINE_RUN_STATE_CANCELED;
}

std::string Duration(const google::protobuf::Timestamp& start,
                     const google::protobuf::Timestamp& end, const RenderContext& ctx) {
  if (!IsSet(start)) return "";
  absl::Time until = IsSet(end) ? ToAbslTime(end) : ctx.now;
  absl::Duration d = absl::Floor(until - ToAbslTime(start), absl::Milliseconds(1));
  return absl::FormatDuration(d);
}

// The run and its tasks as a human reads them.
std::string RenderRun(const pb::PipelineRun& run, const RenderContext& ctx) {
  Details details;
  details.Add("Run", run.id());
  details.Add("Name", run.display_name());
  details.Add("Pipeline", run.pipeline_name());
  details.Add("State", RunStateText(run.state()));
  if (!run.error_message().empty()) details.Add("Error", run.error_message());
  details.Add("Queue", run.queue());
  details.Add("Owner", run.owner());
  details.Add("Created", FormatTimeWithAge(run.create_time(), ctx));
  details.Add("Duration", Duration(run.start_time(), run.finish_time(), ctx));
  if (!run.recurring_run_id().empty()) details.Add("Recurring run", run.recurring_run_id());
  for (const auto& [name, value] :
       std::map<std::string, std::string>(run.parameters().begin(), run.parameters().end())) {
    details.Add(absl::StrCat("Param ", name), value);
  }
  for (const auto& [name, value] :
       std::map<std::string, std::string>(run.outputs().begin(), run.outputs().end())) {
    details.Add(absl::StrCat("Output ", name), value);
  }
  std::string text = details.Render();
  if (run.tasks_size() > 0) {
    Table table({"TASK", "STATE", "DURATION", "JOB", "DETAIL"});
    for (const pb::PipelineTask& task : run.tasks()) {
      std::string detail = task.error_message();
      if (task.state() == pb::PIPELINE_TASK_STATE_CACHED) {
        detail = absl::StrCat("from run ", task.cached_from_run_id());
      }
      if (task.attempts() > 1) detail = absl::StrCat("attempt ", task.attempts(), " ", detail);
      table.AddRow({task.path(), TaskStateText(task.state()),
                    Duration(task.start_time(), task.finish_time(), ctx),
                    task.job_ids().empty() ? "" : task.job_ids(task.job_ids_size() - 1), detail});
    }
    absl::StrAppend(&text, "\n", table.Render());
  }
  return text;
}

absl::StatusOr<pb::PipelineRun> FetchRun(Client& client, const std::string& run_id,
                                         bool with_tasks = true) {
  pb::GetRunRequest request;
  request.set_run_id(run_id);
  request.set_without_tasks(!with_tasks);
  pb::PipelineRun run;
  auto context = client.UnaryContext();
  RETURN_IF_ERROR(FromGrpcStatus(client.runs().GetRun(context.get(), request, &run)));
  return run;
}

absl::StatusOr<absl::Time> ParseTime(const std::string& text, absl::string_view flag) {
  absl::Time time;
  std::string error;
  if (!absl::ParseTime(absl::RFC3339_full, text, &time, &error)) {
    return UsageError(absl::StrCat(flag, ": \"", text, "\" is not an RFC 3339 time (", error, ")"));
  }
  return time;
}

google::protobuf::Timestamp ToTimestamp(absl::Time time) {
  return google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(time));
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ParseParams(
    const std::vector<std::string>& params) {
  std::map<std::string, std::string> out;
  for (const std::string& pair : params) {
    size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0) {
      return UsageError(absl::StrCat("--param \"", pair, "\": want NAME=VALUE"));
    }
    std::string value = pair.substr(eq + 1);
    absl::StatusOr<nlohmann::json> parsed = ParseJson(value);
    if (!parsed.ok() && IsParseLimitError(parsed.status())) {
      return UsageError(
          absl::StrCat("--param ", pair.substr(0, eq), ": ", parsed.status().message()));
    }
    // Not JSON: a string. Bytes that are not UTF-8 become U+FFFD rather than an exception.
    out[pair.substr(0, eq)] =
        parsed.ok()
            ? value
            : nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  }
  return out;
}

absl::StatusOr<int> RunCreate(const CommandEnv& env, const RunCreateOptions& options) {
  const int sources = !options.file.empty() + !options.pipeline.empty() + !options.version.empty();
  if (sources != 1) {
    return UsageError("give exactly one of FILE, --pipeline or --version");
  }
  pb::CreateRunRequest request;
  if (!options.file.empty()) {
    ASSIGN_OR_RETURN(std::string text, ReadInput(env, options.file));
    request.set_spec(std::move(text));
  }
  request.set_pipeline(options.pipeline);
  request.set_pipeline_version_id(options.version);
  ASSIGN_OR_RETURN(auto params, ParseParams(options.params));
  for (auto& [k, v] : params) (*request.mutable_parameters())[k] = v;
  request.set_display_name(options.name);
  request.set_experiment(options.experiment);
  request.set_queue(options.queue);
  request.set_pipeline_root(options.root);
  request.set_disable_cache(options.no_cache);
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  pb::PipelineRun run;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(AboutFile(FromGrpcStatus(client->runs().CreateRun(context.get(), request, &run)),
                            options.file));
  if (!options.watch) {
    PrintMessage(env, run, absl::StrCat("run ", run.id(), " created\n"));
    return 0;
  }
  if (env.output == OutputFormat::kTable) Out(env) << "run " << run.id() << " created\n";
  return RunWatch(env, run.id(), options.timeout, options.poll);
}

absl::StatusOr<int> RunWatch(const CommandEnv& env, const std::string& run_id,
                             std::optional<absl::Duration> timeout, absl::Duration poll) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  const absl::Time deadline = timeout ? absl::Now() + *timeout : absl::InfiniteFuture();
  std::map<std::string, pb::PipelineTaskState> seen;
  pb::PipelineRunState run_state = pb::PIPELINE_RUN_STATE_UNSPECIFIED;
  const bool table = env.output == OutputFormat::kTable;
  while (true) {
    // Machine-readable output needs only the outcome: poll without the tasks, more often.
    ASSIGN_OR_RETURN(pb::PipelineRun run, FetchRun(*client, run_id, /*with_tasks=*/table));
    if (table) {
      // One line per change, so the DAG's progress reads top to bottom.
      const std::string stamp = absl::FormatTime("%H:%M:%E3S", absl::Now(), env.render.zone);
      if (run.state() != run_state) {
        Out(env) << stamp << "  run " << RunStateText(run.state()) << "\n";
        run_state = run.state();
      }
      for (const pb::PipelineTask& task : run.tasks()) {
        auto [it, inserted] = seen.try_emplace(task.path(), task.state());
        if (!inserted && it->second == task.state()) continue;
        it->second = task.state();
        Out(env) << stamp << "  " << task.path() << " " << TaskStateText(task.state());
        if (!task.error_message().empty()) Out(env) << ": " << task.error_message();
        Out(env) << "\n";
      }
    }
    if (Ended(run.state())) {
      RenderContext ctx = env.render;
      ctx.now = absl::Now();
      run.clear_tasks();
      PrintMessage(env, run, absl::StrCat("\n", RenderRun(run, ctx)));
      return run.state() == pb::PIPELINE_RUN_STATE_SUCCEEDED ||
                     run.state() == pb::PIPELINE_RUN_STATE_SKIPPED
                 ? 0
                 : 1;
    }
    if (absl::Now() >= deadline) {
      if (table)
        Out(env) << "timed out; run " << run_id << " is " << RunStateText(run.state()) << "\n";
      return 2;
    }
    absl::SleepFor(table ? poll : std::min(poll, absl::Milliseconds(50)));
  }
}

absl::Status RunGet(const CommandEnv& env, const std::string& run_id) {
  if (run_id.empty()) return UsageError("a RUN id is required");
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  ASSIGN_OR_RETURN(pb::PipelineRun run, FetchRun(*client, run_id));
  PrintMessage(env, run, RenderRun(run, env.render));
  return absl::OkStatus();
}

absl::Status RunList(const CommandEnv& env, const RunListOptions& options) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  pb::ListRunsRequest request;
  request.set_experiment(options.experiment);
  request.set_pipeline(options.pipeline);
  request.set_recurring_run_id(options.recurring);
  for (const std::string& s : options.states) {
    pb::PipelineRunState state;
    if (!pb::PipelineRunState_Parse(absl::StrCat("PIPELINE_RUN_STATE_", absl::AsciiStrToUpper(s)),
                                    &state)) {
      return UsageError(absl::StrCat("--state \"", s, "\": not a run state"));
    }
    request.add_states(state);
  }
  request.set_include_archived(options.archived);
  request.set_page_size(options.limit);
  pb::ListRunsResponse response;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(FromGrpcStatus(client->runs().ListRuns(context.get(), request, &response)));
  if (env.output == OutputFormat::kTable && response.runs().empty()) {
    Out(env) << "No runs found.\n";
    return absl::OkStatus();
  }
  Table table({"RUN", "NAME", "PIPELINE", "STATE", "AGE", "DURATION"});
  for (const pb::PipelineRun& run : response.runs()) {
    table.AddRow({run.id(), run.display_name(), run.pipeline_name(), RunStateText(run.state()),
                  FormatAge(run.create_time(), env.render),
                  Duration(run.start_time(), run.finish_time(), env.render)});
  }
  PrintMessage(env, response, table.Render());
  return absl::OkStatus();
}

absl::Status RunChange(const CommandEnv& env, const std::string& verb, const std::string& run_id) {
  if (run_id.empty()) return UsageError("a RUN id is required");
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  pb::RunIdRequest request;
  request.set_run_id(run_id);
  pb::PipelineRun run;
  auto context = client->UnaryContext();
  grpc::Status status;
  if (verb == "terminate") {
    status = client->runs().TerminateRun(context.get(), request, &run);
  } else if (verb == "retry") {
    status = client->runs().RetryRun(context.get(), request, &run);
  } else if (verb == "archive") {
    status = client->runs().ArchiveRun(context.get(), request, &run);
  } else if (verb == "unarchive") {
    status = client->runs().UnarchiveRun(context.get(), request, &run);
  } else if (verb == "delete") {
    pb::DeleteRunResponse response;
    RETURN_IF_ERROR(FromGrpcStatus(client->runs().DeleteRun(context.get(), request, &response)));
    PrintMessage(env, response, absl::StrCat("run ", run_id, " deleted\n"));
    return absl::OkStatus();
  } else {
    return UsageError(absl::StrCat("unknown run verb \"", verb, "\""));
  }
  RETURN_IF_ERROR(FromGrpcStatus(status));
  PrintMessage(env, run,
               absl::StrCat("run ", run_id, " ", RunStateText(run.state()),
                            run.archived() ? " (archived)" : "", "\n"));
  return absl::OkStatus();
}

absl::Status RecurringCreate(const CommandEnv& env, const RecurringCreateOptions& options) {
  if (options.name.empty()) return UsageError("--name is required");
  if (options.cron.empty() == options.every.empty()) {
    return UsageError("give exactly one of --cron or --every");
  }
  pb::CreateRecurringRunRequest request;
  pb::RecurringRun& rr = *request.mutable_recurring_run();
  rr.set_display_name(options.name);
  request.set_pipeline(options.pipeline);
  rr.set_pipeline_version_id(options.version);
  request.set_experiment(options.experiment);
  rr.set_queue(options.queue);
  if (!options.cron.empty()) {
    rr.mutable_cron()->set_cron(options.cron);
  } else {
    absl::Duration every;
    if (!absl::ParseDuration(options.every, &every) || every <= absl::ZeroDuration()) {
      return UsageError(absl::StrCat("--every \"", options.every, "\": not a duration"));
    }
    rr.mutable_periodic()->mutable_interval()->set_seconds(absl::ToInt64Seconds(every));
  }
  if (!options.start.empty()) {
    ASSIGN_OR_RETURN(absl::Time start, ParseTime(options.start, "--start"));
    *rr.mutable_start_time() = ToTimestamp(start);
  }
  if (!options.end.empty()) {
    ASSIGN_OR_RETURN(absl::Time end, ParseTime(options.end, "--end"));
    *rr.mutable_end_time() = ToTimestamp(end);
  }
  rr.set_max_concurrency(options.max_concurrency);
  rr.set_no_catchup(options.no_catchup);
  ASSIGN_OR_RETURN(auto params, ParseParams(options.params));
  for (auto& [k, v] : params) (*rr.mutable_parameters())[k] = v;
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  pb::RecurringRun created;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(
      FromGrpcStatus(client->runs().CreateRecurringRun(context.get(), request, &created)));
  PrintMessage(env, created, absl::StrCat("recurring run ", created.id(), " created\n"));
  return absl::OkStatus();
}

absl::Status RecurringList(const CommandEnv& env) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  pb::ListRecurringRunsRequest request;
  pb::ListRecurringRunsResponse response;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(
      FromGrpcStatus(client->runs().ListRecurringRuns(context.get(), request, &response)));
  if (env.output == OutputFormat::kTable && response.recurring_runs().empty()) {
    Out(env) << "No recurring runs found.\n";
    return absl::OkStatus();
  }
  Table table({"ID", "NAME", "TRIGGER", "ENABLED", "MAX", "LAST SCHEDULED"});
  for (const pb::RecurringRun& rr : response.recurring_runs()) {
    std::string trigger =
        rr.has_cron()
            ? absl::StrCat("cron ", rr.cron().cron())
            : absl::StrCat("every ",
                           absl::FormatDuration(absl::Seconds(rr.periodic().interval().seconds())));
    table.AddRow({rr.id(), rr.display_name(), trigger, rr.enabled() ? "yes" : "no",
                  absl::StrCat(rr.max_concurrency()),
                  FormatTime(rr.last_scheduled_time(), env.render)});
  }
  PrintMessage(env, response, table.Render());
  return absl::OkStatus();
}

absl::Status RecurringChange(const CommandEnv& env, const std::string& verb,
                             const std::string& id) {
  if (id.empty()) return UsageError("a recurring run ID is required");
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  pb::RecurringRunIdRequest request;
  request.set_recurring_run_id(id);
  pb::RecurringRun rr;
  auto context = client->UnaryContext();
  if (verb == "delete") {
    pb::DeleteRecurringRunResponse response;
    RETURN_IF_ERROR(
        FromGrpcStatus(client->runs().DeleteRecurringRun(context.get(), request, &response)));
    PrintMessage(env, response, absl::StrCat("recurring run ", id, " deleted\n"));
    return absl::OkStatus();
  }
  grpc::Status status;
  if (verb == "get") {
    status = client->runs().GetRecurringRun(context.get(), request, &rr);
  } else if (verb == "enable") {
    status = client->runs().EnableRecurringRun(context.get(), request, &rr);
  } else if (verb == "disable") {
    status = client->runs().DisableRecurringRun(context.get(), request, &rr);
  } else {
    return UsageError(absl::StrCat("unknown recurring verb \"", verb, "\""));
  }
  RETURN_IF_ERROR(FromGrpcStatus(status));
  Details details;
  details.Add("Recurring run", rr.id());
  details.Add("Name", rr.display_name());
  details.Add("Trigger", rr.has_cron()
                             ? absl::StrCat("cron ", rr.cron().cron())
                             : absl::StrCat("every ", rr.periodic().interval().seconds(), "s"));
  details.Add("Enabled", rr.enabled() ? "yes" : "no");
  details.Add("Max concurrency", absl::StrCat(rr.max_concurrency()));
  details.Add("Catch-up", rr.no_catchup() ? "no" : "yes");
  details.Add("Last scheduled", FormatTime(rr.last_scheduled_time(), env.render));
  PrintMessage(env, rr, details.Render());
  return absl::OkStatus();
}

}  // namespace regatta::cli
