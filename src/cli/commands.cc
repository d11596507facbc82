#include "src/cli/commands.h"

#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "nlohmann/json.hpp"
#include "src/cli/input_file.h"
#include "src/cli/job_file.h"
#include "src/cli/render.h"
#include "src/cli/watch_tracker.h"
#include "src/cli/yaml_json.h"
#include "src/common/config.h"
#include "src/common/status_macros.h"

namespace regatta::cli {
namespace {

using json = OrderedJson;
namespace v1 = regatta::v1;

constexpr char kUsagePayload[] = "regatta.dev/cli-usage";

std::ostream& Out(const CommandEnv& env) { return *env.out; }

// Ids the server acted on, and those it left out (already terminal, or unknown).
void PrintPerJob(const CommandEnv& env, const std::vector<std::string>& requested,
                 const google::protobuf::RepeatedPtrField<std::string>& done,
                 absl::string_view done_text, absl::string_view skipped_text) {
  std::set<std::string> done_set(done.begin(), done.end());
  for (const auto& id : done) Out(env) << id << " " << done_text << "\n";
  for (const auto& id : requested) {
    if (done_set.count(id) == 0) Out(env) << id << " " << skipped_text << "\n";
  }
}

absl::Status RequireName(const std::string& name, absl::string_view what) {
  if (name.empty()) return UsageError(absl::StrCat(what, " is required"));
  return absl::OkStatus();
}

absl::StatusOr<v1::Queue> QueueFromOptions(const CommandEnv& env, const QueueOptions& options,
                                           bool* file_sets_cordoned) {
  v1::Queue queue;
  if (!options.file.empty()) {
    ASSIGN_OR_RETURN(std::string text, ReadInput(env, options.file));
    auto parsed = ParseQueueFile(text);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.file, ": ", parsed.status().message()));
    }
    queue = *std::move(parsed);
    if (file_sets_cordoned != nullptr) *file_sets_cordoned = QueueFileSetsCordoned(text);
    if (!options.name.empty() && !queue.name().empty() && queue.name() != options.name) {
      return UsageError(absl::StrCat("the name argument \"", options.name,
                                     "\" differs from the file's name \"", queue.name(), "\""));
    }
  }
  if (!options.name.empty()) queue.set_name(options.name);
  if (queue.name().empty()) return UsageError("a queue NAME (or -f with a name) is required");
  // Output-only fields from a `queue get -o yaml` round trip are not ours to send.
  queue.clear_create_time();
  queue.clear_update_time();
  auto status = ApplyQueueFlags(options.spec, &queue);
  if (!status.ok()) return UsageError(status.message());
  return queue;
}

}  // namespace

void PrintJson(const CommandEnv& env, const OrderedJson& j) {
  if (env.output == OutputFormat::kYaml) {
    Out(env) << JsonToYaml(j);
  } else {
    Out(env) << j.dump(2) << "\n";
  }
}

absl::StatusOr<OutputFormat> ParseOutputFormat(absl::string_view text) {
  if (text == "table" || text == "wide" || text.empty()) return OutputFormat::kTable;
  if (text == "json") return OutputFormat::kJson;
  if (text == "yaml") return OutputFormat::kYaml;
  return UsageError(absl::StrCat("-o: unknown output format \"", text, "\" (table, json, yaml)"));
}

absl::Status UsageError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayload, absl::Cord("1"));
  return status;
}

bool IsUsageError(const absl::Status& status) {
  return status.GetPayload(kUsagePayload).has_value();
}

absl::StatusOr<std::string> ReadInput(const CommandEnv& env, absl::string_view path) {
  std::string text;
  if (path == "-") {
    text.assign(std::istreambuf_iterator<char>(*env.in), std::istreambuf_iterator<char>());
  } else {
    ASSIGN_OR_RETURN(text, ReadInputFile(path));
  }
  RETURN_IF_ERROR(CheckUtf8(text, path == "-" ? "stdin" : path));
  return text;
}

absl::Status AboutFile(const absl::Status& status, absl::string_view file) {
  if (!absl::IsInvalidArgument(status) || file.empty()) return status;
  return absl::Status(status.code(),
                      absl::StrCat(file == "-" ? "stdin" : file, ": ", status.message()));
}

void PrintMessage(const CommandEnv& env, const google::protobuf::Message& message,
                  const std::string& table) {
  if (env.output == OutputFormat::kTable) {
    Out(env) << table;
  } else {
    PrintJson(env, MessageToJsonValue(message));
  }
}

// ---- queue ------------------------------------------------------------------------------------

absl::Status QueueCreate(const CommandEnv& env, const QueueOptions& options) {
  ASSIGN_OR_RETURN(v1::Queue queue, QueueFromOptions(env, options, nullptr));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::CreateQueueRequest request;
  *request.mutable_queue() = queue;
  v1::Queue created;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(
      AboutFile(FromGrpcStatus(client->queues().CreateQueue(context.get(), request, &created)),
                options.file));
  PrintMessage(env, created, absl::StrCat("queue ", created.name(), " created\n"));
  return absl::OkStatus();
}

absl::Status QueueUpdate(const CommandEnv& env, const QueueOptions& options) {
  if (options.name.empty() && options.file.empty()) {
    return UsageError("a queue NAME (or -f) is required");
  }
  const QueueSpecFlags& spec = options.spec;
  if (options.file.empty() && !spec.priority_factor && spec.permissions.empty() &&
      spec.labels.empty() && spec.limits.empty()) {
    return UsageError("nothing to update: give -f or a flag such as --priority-factor");
  }
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  bool file_sets_cordoned = false;
  v1::Queue queue;
  if (!options.file.empty()) {
    // The file replaces the spec, as `kubectl replace` does; only `cordoned` is kept when the
    // file does not mention it, since cordoning has its own verbs.
    ASSIGN_OR_RETURN(queue, QueueFromOptions(env, options, &file_sets_cordoned));
  }
  std::string name = options.file.empty() ? options.name : queue.name();
  v1::GetQueueRequest get;
  get.set_name(name);
  v1::Queue current;
  {
    auto context = client->UnaryContext();
    RETURN_IF_ERROR(FromGrpcStatus(client->queues().GetQueue(context.get(), get, &current)));
  }
  if (options.file.empty()) {
    // Flags change only what they name; the rest of the current spec is kept.
    queue = current;
    queue.clear_create_time();
    queue.clear_update_time();
    auto status = ApplyQueueFlags(options.spec, &queue);
    if (!status.ok()) return UsageError(status.message());
  } else if (!file_sets_cordoned) {
    queue.set_cordoned(current.cordoned());
  }
  v1::UpdateQueueRequest request;
  *request.mutable_queue() = queue;
  v1::Queue updated;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(
      AboutFile(FromGrpcStatus(client->queues().UpdateQueue(context.get(), request, &updated)),
                options.file));
  PrintMessage(env, updated, absl::StrCat("queue ", updated.name(), " updated\n"));
  return absl::OkStatus();
}

absl::Status QueueGet(const CommandEnv& env, const std::string& name) {
  RETURN_IF_ERROR(RequireName(name, "a queue NAME"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetQueueRequest request;
  request.set_name(name);
  v1::Queue queue;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(FromGrpcStatus(client->queues().GetQueue(context.get(), request, &queue)));
  PrintMessage(env, queue, RenderQueueDetails(queue, env.render));
  return absl::OkStatus();
}

absl::Status QueueList(const CommandEnv& env) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::ListQueuesResponse all;
  v1::ListQueuesRequest request;
  do {
    v1::ListQueuesResponse page;
    auto context = client->UnaryContext();
    RETURN_IF_ERROR(FromGrpcStatus(client->queues().ListQueues(context.get(), request, &page)));
    for (auto& q : *page.mutable_queues()) *all.add_queues() = std::move(q);
    if (page.next_page_token() == request.page_token()) break;  // a server bug; do not spin
    request.set_page_token(page.next_page_token());
  } while (!request.page_token().empty());
  std::vector<v1::Queue> queues(all.queues().begin(), all.queues().end());
  if (env.output == OutputFormat::kTable && queues.empty()) {
    Out(env) << "No queues found.\n";
    return absl::OkStatus();
  }
  PrintMessage(env, all, RenderQueueTable(queues, env.render));
  return absl::OkStatus();
}

absl::Status QueueDelete(const CommandEnv& env, const std::string& name) {
  RETURN_IF_ERROR(RequireName(name, "a queue NAME"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::DeleteQueueRequest request;
  request.set_name(name);
  v1::DeleteQueueResponse response;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(FromGrpcStatus(client->queues().DeleteQueue(context.get(), request, &response)));
  PrintMessage(env, response, absl::StrCat("queue ", name, " deleted\n"));
  return absl::OkStatus();
}

absl::Status QueueCordon(const CommandEnv& env, const std::string& name, bool cordon) {
  RETURN_IF_ERROR(RequireName(name, "a queue NAME"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::CordonQueueRequest request;
  request.set_name(name);
  v1::Queue queue;
  auto context = client->UnaryContext();
  grpc::Status status = cordon ? client->queues().CordonQueue(context.get(), request, &queue)
                               : client->queues().UncordonQueue(context.get(), request, &queue);
  RETURN_IF_ERROR(FromGrpcStatus(status));
  PrintMessage(env, queue, absl::StrCat("queue ", name, cordon ? " cordoned\n" : " uncordoned\n"));
  return absl::OkStatus();
}

// ---- cancel / reprioritize / preempt ----------------------------------------------------------

namespace {

// One SubmitService call with the command's connection settings.
template <typename Request, typename Response>
absl::StatusOr<Response> CallSubmit(const CommandEnv& env,
                                    grpc::Status (v1::SubmitService::Stub::*method)(
                                        grpc::ClientContext*, const Request&, Response*),
                                    const Request& request) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  Response response;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(FromGrpcStatus((client->submit().*method)(context.get(), request, &response)));
  return response;
}

// Which bulk request a selection makes: none (job ids or a job set), a whole queue, or
// everything on an executor (or one of its nodes).
enum class BulkScope { kNone, kQueue, kExecutor };

absl::StatusOr<BulkScope> BulkScopeOf(const JobSelection& jobs) {
  if (!jobs.node.empty() && jobs.executor.empty()) return UsageError("--node needs --executor");
  if (!jobs.executor.empty()) {
    if (!jobs.job_ids.empty() || !jobs.job_set.empty()) {
      return UsageError("--executor selects jobs by where they run: give no JOB_IDs or --job-set");
    }
    return BulkScope::kExecutor;
  }
  if (jobs.job_ids.empty() && jobs.job_set.empty() && !jobs.queue.empty()) {
    return BulkScope::kQueue;
  }
  if (!jobs.priority_classes.empty()) {
    return UsageError(
        "--priority-class applies only to a whole queue (--queue alone) or "
        "executor (--executor)");
  }
  return BulkScope::kNone;
}

std::vector<std::string> SplitCommas(const std::vector<std::string>& texts) {
  std::vector<std::string> out;
  for (const std::string& text : texts) {
    for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
      out.emplace_back(absl::StripAsciiWhitespace(part));
    }
  }
  return out;
}

// "queue q (priority classes a,b)", "executor e", "node n of executor e (queue q)".
std::string BulkTarget(const JobSelection& jobs) {
  std::string text =
      jobs.executor.empty()
          ? absl::StrCat("queue ", jobs.queue)
          : absl::StrCat(jobs.node.empty() ? "" : absl::StrCat("node ", jobs.node, " of "),
                         "executor ", jobs.executor);
  std::vector<std::string> filters;
  if (!jobs.executor.empty() && !jobs.queue.empty()) {
    filters.push_back(absl::StrCat("queue ", jobs.queue));
  }
  std::vector<std::string> classes = SplitCommas(jobs.priority_classes);
  if (!classes.empty()) {
    filters.push_back(absl::StrCat("priority class", classes.size() > 1 ? "es " : " ",
                                   absl::StrJoin(classes, ",")));
  }
  if (!filters.empty()) absl::StrAppend(&text, " (", absl::StrJoin(filters, "; "), ")");
  return text;
}

// CancelOnExecutorRequest or PreemptOnExecutorRequest from the selection.
template <typename Request>
Request ExecutorRequest(const JobSelection& jobs, const std::string& reason) {
  Request request;
  request.set_executor_id(jobs.executor);
  request.set_node_id(jobs.node);
  if (!jobs.queue.empty()) request.add_queues(jobs.queue);
  for (std::string& pc : SplitCommas(jobs.priority_classes)) {
    request.add_priority_classes(std::move(pc));
  }
  request.set_reason(reason);
  return request;
}

std::string JobCount(int count) { return absl::StrCat(count, count == 1 ? " job" : " jobs"); }

}  // namespace

absl::Status Cancel(const CommandEnv& env, const JobSelection& jobs,
                    const std::vector<std::string>& state_texts, const std::string& reason) {
  ASSIGN_OR_RETURN(BulkScope scope, BulkScopeOf(jobs));
  if (scope == BulkScope::kExecutor) {
    if (!state_texts.empty()) return UsageError("--state applies to a queue or job set");
    ASSIGN_OR_RETURN(auto response,
                     CallSubmit(env, &v1::SubmitService::Stub::CancelOnExecutor,
                                ExecutorRequest<v1::CancelOnExecutorRequest>(jobs, reason)));
    PrintMessage(env, response,
                 absl::StrCat("cancel requested for ", JobCount(response.cancel_requested_count()),
                              " on ", BulkTarget(jobs), "\n"));
    return absl::OkStatus();
  }
  if (scope == BulkScope::kQueue) {
    auto states = ParseJobStates(state_texts);
    if (!states.ok()) return UsageError(absl::StrCat("--state ", states.status().message()));
    v1::CancelQueueRequest request;
    request.set_queue(jobs.queue);
    for (std::string& pc : SplitCommas(jobs.priority_classes)) {
      request.add_priority_classes(std::move(pc));
    }
    for (auto s : *states) request.add_states(s);
    request.set_reason(reason);
    ASSIGN_OR_RETURN(auto response,
                     CallSubmit(env, &v1::SubmitService::Stub::CancelQueue, request));
    std::string text =
        absl::StrCat("cancel requested for ", JobCount(response.cancel_requested_count()), " of ",
                     BulkTarget(jobs));
    if (!states->empty()) {
      std::vector<std::string> names;
      for (auto s : *states) names.push_back(JobStateName(s));
      absl::StrAppend(&text, " in ", absl::StrJoin(names, ","));
    }
    PrintMessage(env, response, absl::StrCat(text, "\n"));
    return absl::OkStatus();
  }
  if (jobs.job_ids.empty()) {
    if (jobs.queue.empty() || jobs.job_set.empty()) {
      return UsageError(
          "give JOB_IDs, --queue and --job-set (a job set), --queue alone (the whole queue) or "
          "--executor");
    }
    auto states = ParseJobStates(state_texts);
    if (!states.ok()) return UsageError(absl::StrCat("--state ", states.status().message()));
    v1::CancelJobSetRequest request;
    request.set_queue(jobs.queue);
    request.set_job_set(jobs.job_set);
    for (auto s : *states) request.add_states(s);
    request.set_reason(reason);
    ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
    v1::CancelJobSetResponse response;
    auto context = client->UnaryContext();
    RETURN_IF_ERROR(
        FromGrpcStatus(client->submit().CancelJobSet(context.get(), request, &response)));
    std::string text = absl::StrCat("cancel requested for job set ", jobs.queue, "/", jobs.job_set);
    if (!states->empty()) {
      std::vector<std::string> names;
      for (auto s : *states) names.push_back(JobStateName(s));
      absl::StrAppend(&text, " (jobs in ", absl::StrJoin(names, ","), ")");
    }
    PrintMessage(env, response, absl::StrCat(text, "\n"));
    return absl::OkStatus();
  }
  if (!state_texts.empty()) return UsageError("--state applies only to cancelling a job set");
  v1::CancelJobsRequest request;
  request.set_queue(jobs.queue);
  request.set_job_set(jobs.job_set);
  for (const auto& id : jobs.job_ids) request.add_job_ids(id);
  request.set_reason(reason);
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::CancelJobsResponse response;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(FromGrpcStatus(client->submit().CancelJobs(context.get(), request, &response)));
  if (env.output == OutputFormat::kTable) {
    PrintPerJob(env, jobs.job_ids, response.cancel_requested_ids(), "cancel requested",
                "not cancelled (already finished)");
  } else {
    PrintMessage(env, response, "");
  }
  return absl::OkStatus();
}

absl::Status Reprioritize(const CommandEnv& env, const JobSelection& jobs, int64_t priority) {
  if (priority < 0 || priority > std::numeric_limits<uint32_t>::max()) {
    return UsageError("--priority must be between 0 and 4294967295");
  }
  if (jobs.job_ids.empty() && (jobs.queue.empty() || jobs.job_set.empty())) {
    return UsageError("give JOB_IDs, or --queue and --job-set to reprioritize a job set");
  }
  v1::ReprioritizeJobsRequest request;
  request.set_queue(jobs.queue);
  request.set_job_set(jobs.job_set);
  for (const auto& id : jobs.job_ids) request.add_job_ids(id);
  request.set_new_priority(static_cast<uint32_t>(priority));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::ReprioritizeJobsResponse response;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(
      FromGrpcStatus(client->submit().ReprioritizeJobs(context.get(), request, &response)));
  if (env.output != OutputFormat::kTable) {
    PrintMessage(env, response, "");
  } else if (jobs.job_ids.empty()) {
    Out(env) << response.reprioritized_ids_size() << " jobs of job set " << jobs.queue << "/"
             << jobs.job_set << " reprioritized to " << priority << "\n";
  } else {
    PrintPerJob(env, jobs.job_ids, response.reprioritized_ids(),
                absl::StrCat("reprioritized to ", priority),
                "not reprioritized (already finished)");
  }
  return absl::OkStatus();
}

absl::Status Preempt(const CommandEnv& env, const JobSelection& jobs, const std::string& reason) {
  ASSIGN_OR_RETURN(BulkScope scope, BulkScopeOf(jobs));
  if (scope == BulkScope::kExecutor) {
    ASSIGN_OR_RETURN(auto response,
                     CallSubmit(env, &v1::SubmitService::Stub::PreemptOnExecutor,
                                ExecutorRequest<v1::PreemptOnExecutorRequest>(jobs, reason)));
    PrintMessage(
        env, response,
        absl::StrCat("preemption requested for ", JobCount(response.preempt_requested_count()),
                     " on ", BulkTarget(jobs), "\n"));
    return absl::OkStatus();
  }
  if (scope == BulkScope::kQueue) {
    v1::PreemptQueueRequest request;
    request.set_queue(jobs.queue);
    for (std::string& pc : SplitCommas(jobs.priority_classes)) {
      request.add_priority_classes(std::move(pc));
    }
    request.set_reason(reason);
    ASSIGN_OR_RETURN(auto response,
                     CallSubmit(env, &v1::SubmitService::Stub::PreemptQueue, request));
    PrintMessage(
        env, response,
        absl::StrCat("preemption requested for ", JobCount(response.preempt_requested_count()),
                     " of ", BulkTarget(jobs), " (jobs with a run)\n"));
    return absl::OkStatus();
  }
  if (jobs.job_ids.empty()) {
    return UsageError("give JOB_IDs, --queue alone (the whole queue) or --executor");
  }
  v1::PreemptJobsRequest request;
  request.set_queue(jobs.queue);
  request.set_job_set(jobs.job_set);
  for (const auto& id : jobs.job_ids) request.add_job_ids(id);
  request.set_reason(reason);
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::PreemptJobsResponse response;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(FromGrpcStatus(client->submit().PreemptJobs(context.get(), request, &response)));
  if (env.output == OutputFormat::kTable) {
    PrintPerJob(env, jobs.job_ids, response.preempt_requested_ids(), "preemption requested",
                "not preempted (not running)");
  } else {
    PrintMessage(env, response, "");
  }
  return absl::OkStatus();
}

// ---- jobs -------------------------------------------------------------------------------------

absl::Status JobsList(const CommandEnv& env, const JobsListOptions& options) {
  if (!options.all && options.limit < 1) return UsageError("--limit must be at least 1");
  v1::ListJobsRequest request;
  request.set_queue(options.queue);
  request.set_job_set(options.job_set);
  request.set_owner(options.owner);
  request.set_namespace_(options.namespace_);
  auto states = ParseJobStates(options.states);
  if (!states.ok()) return UsageError(absl::StrCat("--state ", states.status().message()));
  for (auto s : *states) request.add_states(s);
  auto labels = ParseKeyValues(options.labels);
  if (!labels.ok()) return UsageError(absl::StrCat("--label ", labels.status().message()));
  for (const auto& [k, v] : *labels) (*request.mutable_labels())[k] = v;
  if (options.newest_first) request.set_order_by("-submit_time");

  constexpr int kMaxPageSize = 1000;
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::ListJobsResponse all;
  bool more = false;
  while (true) {
    int remaining = options.all ? kMaxPageSize : options.limit - all.jobs_size();
    request.set_page_size(std::min(remaining, kMaxPageSize));
    v1::ListJobsResponse page;
    auto context = client->UnaryContext();
    RETURN_IF_ERROR(FromGrpcStatus(client->jobs().ListJobs(context.get(), request, &page)));
    for (auto& j : *page.mutable_jobs()) {
      if (!options.all && all.jobs_size() >= options.limit) break;
      *all.add_jobs() = std::move(j);
    }
    if (page.next_page_token().empty() || page.next_page_token() == request.page_token()) break;
    if (!options.all && all.jobs_size() >= options.limit) {
      more = true;
      break;
    }
    request.set_page_token(page.next_page_token());
  }
  if (env.output != OutputFormat::kTable) {
    PrintMessage(env, all, "");
    return absl::OkStatus();
  }
  if (all.jobs().empty()) {
    Out(env) << "No jobs found.\n";
    return absl::OkStatus();
  }
  std::vector<v1::JobSummary> jobs(all.jobs().begin(), all.jobs().end());
  Out(env) << RenderJobTable(jobs, env.render);
  if (more) {
    *env.err << "(showing the first " << all.jobs_size()
             << " jobs; use --limit N or --all for more)\n";
  }
  return absl::OkStatus();
}

absl::Status JobsGet(const CommandEnv& env, const std::string& job_id, bool spec) {
  RETURN_IF_ERROR(RequireName(job_id, "a JOB_ID"));
  v1::GetJobDetailsRequest request;
  request.add_job_ids(job_id);
  request.set_expand_spec(spec);
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetJobDetailsResponse response;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(FromGrpcStatus(client->jobs().GetJobDetails(context.get(), request, &response)));
  auto it = response.jobs().find(job_id);
  if (it == response.jobs().end()) {
    return absl::NotFoundError(absl::StrCat("job ", job_id, " not found"));
  }
  PrintMessage(env, it->second, RenderJobDetails(it->second, env.render));
  return absl::OkStatus();
}

// ---- scheduling reports ------------------------------------------------------------------------

absl::Status Why(const CommandEnv& env, const std::string& job_id) {
  RETURN_IF_ERROR(RequireName(job_id, "a JOB_ID"));
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetJobReportRequest request;
  request.set_job_id(job_id);
  v1::JobReport report;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(FromGrpcStatus(client->reports().GetJobReport(context.get(), request, &report)));
  PrintMessage(env, report, RenderJobReport(report, env.render));
  return absl::OkStatus();
}

absl::Status QueueReport(const CommandEnv& env, const std::string& queue) {
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  v1::GetQueueReportRequest request;
  request.set_queue(queue);
  v1::QueueReportResponse response;
  auto context = client->UnaryContext();
  RETURN_IF_ERROR(
      FromGrpcStatus(client->reports().GetQueueReport(context.get(), request, &response)));
  if (env.output == OutputFormat::kTable && response.queues().empty()) {
    Out(env) << (response.scheduler_ready() ? "No queue has been scheduled in any pool yet.\n"
                                            : "The scheduler has not completed a cycle yet.\n");
    return absl::OkStatus();
  }
  PrintMessage(env, response, RenderQueueReport(response, env.render));
  return absl::OkStatus();
}

// ---- logs -------------------------------------------------------------------------------------

absl::Status Logs(const CommandEnv& env, const LogsOptions& options) {
  RETURN_IF_ERROR(RequireName(options.job_id, "a JOB_ID"));
  if (options.tail_lines < 0) return UsageError("--tail must be >= 0");
  v1::GetJobLogsRequest request;
  request.set_job_id(options.job_id);
  request.set_run_id(options.run_id);
  request.set_follow(options.follow);
  request.set_tail_lines(options.tail_lines);
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  // Following has no deadline; a one-shot read has the usual one.
  auto context = client->NewContext(options.follow ? absl::InfiniteDuration() : env.client.timeout);
  auto reader = client->jobs().GetJobLogs(context.get(), request);
  v1::LogChunk chunk;
  while (reader->Read(&chunk)) {
    env.out->write(chunk.data().data(), static_cast<std::streamsize>(chunk.data().size()));
    env.out->flush();
  }
  return FromGrpcStatus(reader->Finish());
}

// ---- watch ------------------------------------------------------------------------------------

absl::StatusOr<int> Watch(const CommandEnv& env, const WatchOptions& options) {
  if (options.queue.empty() || options.job_set.empty()) {
    return UsageError("QUEUE and JOBSET are required");
  }
  ASSIGN_OR_RETURN(auto client, Client::Create(env.client));
  const bool follow = !options.no_follow;
  const absl::Time deadline =
      options.timeout.has_value() ? absl::Now() + *options.timeout : absl::InfiniteFuture();

  v1::JobSetEventsRequest request;
  request.set_queue(options.queue);
  request.set_job_set(options.job_set);
  request.set_from_id(options.from_id);
  request.set_watch(follow);

  WatchTracker tracker;
  auto timed_out = [&]() {
    *env.err << "regatta: watch: DEADLINE_EXCEEDED: not finished after "
             << absl::FormatDuration(*options.timeout) << "; " << tracker.Summary() << "\n";
    return WatchTracker::kTimedOut;
  };
  auto print_summary = [&]() {
    if (env.output == OutputFormat::kTable) Out(env) << "watch: " << tracker.Summary() << "\n";
    Out(env).flush();
  };
  while (true) {
    auto context = client->NewContext(deadline == absl::InfiniteFuture() ? absl::InfiniteDuration()
                                                                         : deadline - absl::Now());
    auto reader = client->events().GetJobSetEvents(context.get(), request);
    v1::JobSetEvent event;
    bool finished = false;
    while (reader->Read(&event)) {
      request.set_from_id(event.id());
      switch (env.output) {
        case OutputFormat::kTable:
          Out(env) << RenderEventLine(event, env.render) << "\n";
          break;
        case OutputFormat::kJson:
          Out(env) << MessageToJsonValue(event).dump() << "\n";
          break;
        case OutputFormat::kYaml:
          Out(env) << "---\n" << JsonToYaml(MessageToJsonValue(event));
          break;
      }
      Out(env).flush();
      tracker.Observe(event);
      if (follow && tracker.Finished()) {
        finished = true;
        context->TryCancel();
        break;
      }
    }
    grpc::Status status = reader->Finish();
    if (finished) {
      print_summary();
      return tracker.ExitCode();
    }
    if (status.error_code() == grpc::StatusCode::DEADLINE_EXCEEDED && options.timeout) {
      return timed_out();
    }
    if (!status.ok()) {
      std::string message = status.error_message();
      if (!request.from_id().empty() && request.from_id() != options.from_id) {
        absl::StrAppend(&message, " (resume with --from ", request.from_id(), ")");
      }
      return absl::Status(static_cast<absl::StatusCode>(status.error_code()), message);
    }
    if (!follow) {
      print_summary();
      return tracker.ExitCode();
    }
    // The server ended a followed stream (e.g. it is shutting down): resume after the last event.
    absl::Time resume = absl::Now() + options.reconnect_delay;
    if (resume >= deadline) {
      absl::SleepFor(std::max(absl::ZeroDuration(), deadline - absl::Now()));
      return timed_out();
    }
    absl::SleepFor(options.reconnect_delay);
  }
}

// ---- misc -------------------------------------------------------------------------------------

absl::StatusOr<std::string> ReadSecret(const CommandEnv& env, absl::string_view prompt,
                                       bool confirm) {
  auto read_line = [&](absl::string_view label) -> absl::StatusOr<std::string> {
    std::string line;
    if (env.interactive_stdin) {
      *env.err << label << std::flush;
      termios old_attrs{};
      bool restore = tcgetattr(STDIN_FILENO, &old_attrs) == 0;
      if (restore) {
        termios no_echo = old_attrs;
        no_echo.c_lflag &= ~static_cast<tcflag_t>(ECHO);
        tcsetattr(STDIN_FILENO, TCSAFLUSH, &no_echo);
      }
      bool got = static_cast<bool>(std::getline(*env.in, line));
      if (restore) tcsetattr(STDIN_FILENO, TCSAFLUSH, &old_attrs);
      *env.err << "\n";
      if (!got) return absl::InvalidArgumentError("no input");
    } else if (!std::getline(*env.in, line)) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected the ", absl::AsciiStrToLower(absl::StripSuffix(label, ": ")),
                       " on standard input"));
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return line;
  };
  ASSIGN_OR_RETURN(std::string secret, read_line(prompt));
  if (secret.empty()) return absl::InvalidArgumentError("the input is empty");
  if (confirm && env.interactive_stdin) {
    ASSIGN_OR_RETURN(std::string again, read_line("Repeat: "));
    if (again != secret) return absl::InvalidArgumentError("the two entries differ");
  }
  return secret;
}

absl::Status Version(const CommandEnv& env) {
#ifndef REGATTA_VERSION
#define REGATTA_VERSION "unknown"
#endif
  if (env.output == OutputFormat::kTable) {
    Out(env) << "regatta " << REGATTA_VERSION << "\n";
  } else {
    PrintJson(env, json{{"version", REGATTA_VERSION}});
  }
  return absl::OkStatus();
}

}  // namespace regatta::cli
