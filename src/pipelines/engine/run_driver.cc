#include "src/pipelines/engine/run_driver.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/util/time_util.h"
#include "src/common/bounded_parse.h"
#include "src/common/config.h"
#include "src/common/status_macros.h"
#include "src/pipelines/cache/fingerprint.h"
#include "src/pipelines/ir/parameters.h"
#include "src/pipelines/ir/parse.h"
#include "src/pipelines/ir/validate.h"

namespace regatta::pipelines::engine {

using json = nlohmann::json;
using regatta::v1::PipelineArtifact;
using regatta::v1::PipelineRunState;
using regatta::v1::PipelineTask;
using regatta::v1::PipelineTaskState;
namespace pb = regatta::v1;

namespace {

constexpr absl::string_view kKindContainer = "container";
constexpr absl::string_view kKindDag = "dag";
constexpr absl::string_view kKindImporter = "importer";
constexpr absl::string_view kKindIteration = "iteration";

google::protobuf::Timestamp ToTimestamp(absl::Time time) {
  return google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(time));
}

absl::Time FromTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixMicros(google::protobuf::util::TimeUtil::TimestampToMicroseconds(ts));
}

// Values we store are JSON texts; anything else (an older writer) is taken as a string.
json ParseValue(const std::string& text) {
  json value = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (value.is_discarded()) return json(text);
  return value;
}

// Resolves the placeholders in the string machine fields; an error names the field.
absl::Status ResolveResources(const placeholders::ExecutorValues& values, ir::ResourceSpec& r) {
  std::vector<std::pair<const char*, std::string*>> fields = {
      {"resourceCpuLimit", &r.resource_cpu_limit},
      {"resourceMemoryLimit", &r.resource_memory_limit},
      {"resourceCpuRequest", &r.resource_cpu_request},
      {"resourceMemoryRequest", &r.resource_memory_request}};
  if (r.accelerator) {
    fields.push_back({"accelerator.resourceType", &r.accelerator->resource_type});
    fields.push_back({"accelerator.resourceCount", &r.accelerator->resource_count});
  }
  for (auto& [name, field] : fields) {
    if (!absl::StrContains(*field, "{{")) continue;
    absl::StatusOr<std::string> resolved = placeholders::ResolveString(*field, values);
    if (!resolved.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("container.resources.", name, ": ", resolved.status().message()));
    }
    *field = *std::move(resolved);
  }
  return absl::OkStatus();
}

bool Succeeded(PipelineTaskState state) {
  return state == pb::PIPELINE_TASK_STATE_SUCCEEDED || state == pb::PIPELINE_TASK_STATE_CACHED;
}

bool FailedLike(PipelineTaskState state) {
  return state == pb::PIPELINE_TASK_STATE_FAILED || state == pb::PIPELINE_TASK_STATE_CANCELED ||
         state == pb::PIPELINE_TASK_STATE_SKIPPED;
}

std::string FormatRfc3339(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", time, absl::UTCTimeZone());
}

// kfp's parameterExpressionSelector on a loop item: `parseJson(string_value)["key"]` (keys and
// indices may chain), or a bare `string_value`.
absl::StatusOr<json> ApplySelector(const json& value, absl::string_view selector) {
  absl::string_view rest = absl::StripAsciiWhitespace(selector);
  json current = value;
  if (absl::ConsumePrefix(&rest, "parseJson(string_value)")) {
    if (current.is_string()) {
      absl::StatusOr<json> parsed = ParseJson(current.get<std::string>());
      if (!parsed.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("parseJson: ", ParseErrorText(parsed.status(), "the value is not JSON")));
      }
      current = *std::move(parsed);
    }
  } else if (!absl::ConsumePrefix(&rest, "string_value")) {
    return absl::InvalidArgumentError(absl::StrCat("unsupported selector '", selector, "'"));
  }
  while (!rest.empty()) {
    if (!absl::ConsumePrefix(&rest, "[")) {
      return absl::InvalidArgumentError(absl::StrCat("unsupported selector '", selector, "'"));
    }
    size_t close = rest.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("unbalanced '[' in selector '", selector, "'"));
    }
    absl::string_view key = rest.substr(0, close);
    rest.remove_prefix(close + 1);
    if (key.size() >= 2 && (key.front() == '"' || key.front() == '\'') &&
        key.back() == key.front()) {
      std::string name(key.substr(1, key.size() - 2));
      if (!current.is_object() || !current.contains(name)) {
        return absl::InvalidArgumentError(
            absl::StrCat("selector '", selector, "': no key '", name, "'"));
      }
      current = current[name];
    } else {
      int index = 0;
      if (!absl::SimpleAtoi(key, &index) || !current.is_array() || index < 0 ||
          index >= static_cast<int>(current.size())) {
        return absl::InvalidArgumentError(
            absl::StrCat("selector '", selector, "': no element ", key));
      }
      current = current[index];
    }
  }
  return current;
}

bool FileExists(const std::string& path) { return ::access(path.c_str(), F_OK) == 0; }

absl::Duration BackoffFor(const ir::RetryPolicy& policy, int failed_attempts) {
  double factor = std::pow(policy.backoff_factor, std::max(0, failed_attempts - 1));
  absl::Duration backoff = policy.backoff_duration * factor;
  return std::min(backoff, policy.backoff_max_duration);
}

}  // namespace

std::string TaskPath(absl::string_view scope_path, absl::string_view name) {
  if (scope_path.empty()) return std::string(name);
  return absl::StrCat(scope_path, ".", name);
}

std::string IterationPath(absl::string_view loop_path, int index) {
  return absl::StrCat(loop_path, "[", index, "]");
}

bool IsTerminal(PipelineTaskState state) {
  switch (state) {
    case pb::PIPELINE_TASK_STATE_SUCCEEDED:
    case pb::PIPELINE_TASK_STATE_SKIPPED:
    case pb::PIPELINE_TASK_STATE_FAILED:
    case pb::PIPELINE_TASK_STATE_CANCELED:
    case pb::PIPELINE_TASK_STATE_CACHED:
    case pb::PIPELINE_TASK_STATE_NOT_TRIGGERED:
      return true;
    default:
      return false;
  }
}

bool IsTerminal(PipelineRunState state) {
  return state == pb::PIPELINE_RUN_STATE_SUCCEEDED || state == pb::PIPELINE_RUN_STATE_SKIPPED ||
         state == pb::PIPELINE_RUN_STATE_FAILED || state == pb::PIPELINE_RUN_STATE_CANCELED;
}

absl::string_view TaskStateName(PipelineTaskState state) {
  absl::string_view name = pb::PipelineTaskState_Name(state);
  absl::ConsumePrefix(&name, "PIPELINE_TASK_STATE_");
  return name;
}

absl::string_view RunStateName(PipelineRunState state) {
  absl::string_view name = pb::PipelineRunState_Name(state);
  absl::ConsumePrefix(&name, "PIPELINE_RUN_STATE_");
  return name;
}

// One DAG instance: the root DAG, a sub-DAG task, or one iteration of a loop.
struct RunDriver::Scope {
  std::string path;  // "" for the root
  const ir::ComponentSpec* component = nullptr;
  std::map<std::string, json> params;
  std::map<std::string, std::vector<PipelineArtifact>> artifacts;
};

struct RunDriver::Task {
  PipelineTask proto;
  int64_t seq = 0;  // creation order
  // The task in its DAG (for an iteration: its loop's) and the component it runs.
  const ir::TaskSpec* spec = nullptr;
  const ir::ComponentSpec* component = nullptr;
  // DAG tasks and iterations: the DAG instance they run.
  std::unique_ptr<Scope> scope;
  // Loops: the items, and how many iterations exist.
  std::vector<json> items;
  std::vector<std::vector<PipelineArtifact>> artifact_items;
  int iterations_created = 0;
  // Container steps: the current attempt's job (empty while launching or backing off).
  std::string current_job;
  bool launching = false;
  bool dirty = false;
};

RunDriver::RunDriver(pb::PipelineRun run, ir::PipelineSpec spec, IdGenerator* ids,
                     DriverOptions options)
    : run_(std::move(run)), spec_(std::move(spec)), ids_(ids), options_(std::move(options)) {}

RunDriver::~RunDriver() = default;

absl::StatusOr<std::unique_ptr<RunDriver>> RunDriver::Create(pb::PipelineRun run, IdGenerator* ids,
                                                             DriverOptions options) {
  ASSIGN_OR_RETURN(ir::PipelineSpec spec, ir::LoadPipelineSpec(run.spec_json()));
  if (!spec.root.dag) return absl::InvalidArgumentError("root: the pipeline has no dag");
  std::map<std::string, ir::KubernetesExecutorConfig> platform;
  if (!run.platform_spec_json().empty()) {
    absl::StatusOr<json> doc = ParseJson(run.platform_spec_json());
    if (!doc.ok()) return absl::InvalidArgumentError("(platform spec): not valid JSON");
    ASSIGN_OR_RETURN(platform, ir::ParsePlatformSpec(*doc, spec));
  }
  std::unique_ptr<RunDriver> driver(
      new RunDriver(std::move(run), std::move(spec), ids, std::move(options)));
  driver->platform_ = std::move(platform);
  RETURN_IF_ERROR(driver->Restore());
  return driver;
}

absl::Status RunDriver::Restore() {
  std::vector<PipelineTask> tasks(run_.tasks().begin(), run_.tasks().end());
  run_.clear_tasks();
  for (PipelineTask& proto : tasks) {
    const ir::DagSpec* dag = &*spec_.root.dag;
    Task* parent = nullptr;
    if (!proto.parent_path().empty()) {
      parent = Find(proto.parent_path());
      if (parent == nullptr || parent->component == nullptr || !parent->component->dag) {
        return absl::DataLossError(absl::StrCat("run ", run_.id(), ": task ", proto.path(),
                                                ": its parent is unknown or not a DAG"));
      }
      dag = &*parent->component->dag;
    }
    std::string path = proto.path();
    const bool iteration = proto.kind() == kKindIteration;
    const ir::TaskSpec* spec = nullptr;
    if (iteration) {
      spec = parent != nullptr ? parent->spec : nullptr;
    } else {
      auto it = dag->tasks.find(proto.name());
      if (it != dag->tasks.end()) spec = &it->second;
    }
    if (spec == nullptr) {
      return absl::DataLossError(
          absl::StrCat("run ", run_.id(), ": task ", path, " is not in the pipeline spec"));
    }
    Task& task = Create(path, std::move(proto));
    task.dirty = false;
    dirty_.pop_back();
    task.spec = spec;
    task.component = &spec_.components.at(spec->component_ref);
    if (task.component->dag &&
        (iteration || (!spec->parameter_iterator && !spec->artifact_iterator))) {
      OpenScope(task);
    }
    if (iteration && parent != nullptr) {
      parent->iterations_created =
          std::max(parent->iterations_created, task.proto.iteration_index() + 1);
    }
    if (task.component->dag && !iteration && !IsTerminal(task.proto.state()) &&
        (spec->parameter_iterator || spec->artifact_iterator)) {
      // Items come from the loop's resolved inputs, as when it started.
      RETURN_IF_ERROR(LoadLoopItems(task));
    }
    if (task.proto.kind() == kKindContainer && !task.proto.job_ids().empty() &&
        !task.proto.has_next_attempt_time() &&
        (task.proto.state() == pb::PIPELINE_TASK_STATE_RUNNING ||
         task.proto.state() == pb::PIPELINE_TASK_STATE_CANCELING)) {
      task.current_job = task.proto.job_ids(task.proto.job_ids_size() - 1);
      running_jobs_[task.current_job] = task.proto.path();
    }
  }
  return absl::OkStatus();
}

RunDriver::Task* RunDriver::Find(absl::string_view path) {
  auto it = tasks_.find(path);
  return it == tasks_.end() ? nullptr : it->second.get();
}

const RunDriver::Task* RunDriver::Find(absl::string_view path) const {
  auto it = tasks_.find(path);
  return it == tasks_.end() ? nullptr : it->second.get();
}

RunDriver::Task& RunDriver::Create(std::string path, PipelineTask proto) {
  auto task = std::make_unique<Task>();
  task->proto = std::move(proto);
  task->proto.set_path(path);
  task->seq = static_cast<int64_t>(created_order_.size());
  Task& ref = *task;
  created_order_.push_back(task.get());
  tasks_[std::move(path)] = std::move(task);
  MarkDirty(ref);
  return ref;
}

void RunDriver::MarkDirty(Task& task) {
  if (task.dirty) return;
  task.dirty = true;
  dirty_.push_back(&task);
}

void RunDriver::SetState(Task& task, PipelineTaskState state, absl::Time now,
                         absl::string_view error) {
  task.proto.set_state(state);
  if (!error.empty()) task.proto.set_error_message(std::string(error));
  if (state == pb::PIPELINE_TASK_STATE_RUNNING && !task.proto.has_start_time()) {
    *task.proto.mutable_start_time() = ToTimestamp(now);
  }
  if (IsTerminal(state)) {
    *task.proto.mutable_finish_time() = ToTimestamp(now);
    task.proto.clear_next_attempt_time();
  }
  MarkDirty(task);
}

const std::vector<std::string>& RunDriver::OrderOf(const ir::DagSpec& dag) {
  auto it = orders_.find(&dag);
  if (it != orders_.end()) return it->second;
  // The spec was validated: the order exists.
  absl::StatusOr<std::vector<std::string>> order = ir::TopologicalOrder(dag);
  return orders_[&dag] = order.ok() ? *std::move(order) : std::vector<std::string>{};
}

const cel::CompiledCondition* RunDriver::ConditionOf(const ir::TaskSpec& spec, std::string* error) {
  auto it = conditions_.find(&spec);
  if (it == conditions_.end()) {
    absl::StatusOr<cel::CompiledCondition> parsed =
        cel::ParseCondition(spec.trigger_policy.condition);
    if (!parsed.ok()) {
      *error = std::string(parsed.status().message());
      return nullptr;
    }
    it = conditions_.emplace(&spec, *std::move(parsed)).first;
  }
  return it->second ? &*it->second : nullptr;
}

std::map<std::string, std::string> RunDriver::PipelineValues(const Task& task) const {
  const absl::Time created = FromTimestamp(run_.create_time());
  const absl::Time scheduled =
      run_.has_scheduled_time() ? FromTimestamp(run_.scheduled_time()) : created;
  const std::string& name = run_.display_name().empty() ? run_.id() : run_.display_name();
  return {
      {"pipeline_job_name", name},
      {"pipeline_job_resource_name", run_.id()},
      {"pipeline_job_uuid", run_.id()},
      {"pipeline_task_name", task.proto.display_name()},
      {"pipeline_task_uuid", absl::StrCat(run_.id(), "/", task.proto.path())},
      {"pipeline_root", run_.pipeline_root()},
      {"pipeline_job_create_time_utc", FormatRfc3339(created)},
      {"pipeline_job_schedule_time_utc", FormatRfc3339(scheduled)},
  };
}

json RunDriver::FinalStatusOf(const Task& producer) const {
  json status = {
      {"state", std::string(TaskStateName(producer.proto.state()))},
      {"pipelineJobUuid", run_.id()},
      {"pipelineJobName", run_.display_name().empty() ? run_.id() : run_.display_name()},
      {"pipelineJobResourceName", run_.id()},
      {"pipelineTaskName", producer.proto.display_name()},
  };
  if (!Succeeded(producer.proto.state())) {
    // google.rpc codes, as kfp reports them: CANCELLED 1, UNKNOWN 2.
    status["error"] = {{"code", producer.proto.state() == pb::PIPELINE_TASK_STATE_CANCELED ? 1 : 2},
                       {"message", producer.proto.error_message()}};
  } else {
    status["error"] = json::object();
  }
  return status;
}

// ---- Advancing ------------------------------------------------------------------------------

DriverOutput RunDriver::Advance(absl::Time now) {
  DriverOutput out;
  if (run_.state() == pb::PIPELINE_RUN_STATE_PENDING) {
    run_.set_state(pb::PIPELINE_RUN_STATE_RUNNING);
    *run_.mutable_start_time() = ToTimestamp(now);
    run_dirty_ = true;
  }
  if (!IsTerminal(run_.state())) {
    if (root_ == nullptr) {
      root_ = std::make_unique<Scope>();
      root_->component = &spec_.root;
      for (const auto& [name, value] : run_.parameters()) root_->params[name] = ParseValue(value);
      // The API stores every parameter with defaults applied; a run written otherwise still
      // gets them.
      for (const auto& [name, def] : spec_.root.input_definitions.parameters) {
        if (def.default_value && !root_->params.contains(name)) {
          root_->params[name] = *def.default_value;
        }
      }
    }
    AdvanceScope(*root_, now, out);
    FinishRun(now, out);
  }
  for (std::string& job : pending_cancels_) out.cancel_job_ids.push_back(std::move(job));
  pending_cancels_.clear();
  for (auto& entry : pending_cache_entries_) out.cache_entries.push_back(std::move(entry));
  pending_cache_entries_.clear();
  std::sort(dirty_.begin(), dirty_.end(),
            [](const Task* a, const Task* b) { return a->seq < b->seq; });
  for (Task* task : dirty_) {
    task->dirty = false;
    out.task_updates.push_back(task->proto);
  }
  dirty_.clear();
  if (run_dirty_) {
    pb::PipelineRunUpdated update;
    update.set_run_id(run_.id());
    update.set_state(run_.state());
    update.set_error_message(run_.error_message());
    *update.mutable_outputs() = run_.outputs();
    if (run_.has_start_time()) *update.mutable_start_time() = run_.start_time();
    if (run_.has_finish_time()) *update.mutable_finish_time() = run_.finish_time();
    out.run_update = std::move(update);
    run_dirty_ = false;
  }
  return out;
}

void RunDriver::AdvanceScope(const Scope& scope, absl::Time now, DriverOutput& out) {
  const ir::DagSpec& dag = *scope.component->dag;
  const bool canceling = run_.state() == pb::PIPELINE_RUN_STATE_CANCELING;
  for (const std::string& name : OrderOf(dag)) {
    const ir::TaskSpec& spec = dag.tasks.at(name);
    std::string path = TaskPath(scope.path, name);
    Task* task = Find(path);
    if (task != nullptr && IsTerminal(task->proto.state())) continue;
    const bool idle = task == nullptr ||
                      (task->proto.state() == pb::PIPELINE_TASK_STATE_PENDING && !task->launching);
    if (idle) {
      if (canceling) {
        PipelineTask proto;
        if (task != nullptr) proto = task->proto;
        proto.set_name(name);
        proto.set_parent_path(scope.path);
        Task& t = task != nullptr ? *task : Create(path, std::move(proto));
        t.spec = &spec;
        t.component = &spec_.components.at(spec.component_ref);
        SetState(t, pb::PIPELINE_TASK_STATE_CANCELED, now, "the run was terminated");
        continue;
      }
      StartTask(scope, spec, now, out);
      continue;
    }
    if (task->proto.kind() == kKindDag) {
      if (task->spec->parameter_iterator || task->spec->artifact_iterator) {
        AdvanceLoop(*task, now, out);
      } else {
        AdvanceDag(*task, now, out);
      }
    } else if (task->proto.kind() == kKindContainer && !canceling && task->current_job.empty() &&
               !task->launching && task->proto.state() == pb::PIPELINE_TASK_STATE_RUNNING &&
               task->proto.has_next_attempt_time() &&
               FromTimestamp(task->proto.next_attempt_time()) <= now) {
      LaunchContainer(*task, now, out);
    }
  }
}

void RunDriver::StartTask(const Scope& scope, const ir::TaskSpec& spec, absl::Time now,
                          DriverOutput& out) {
  // Wait for every upstream task to end.
  bool upstream_failed = false;
  std::string failed_name;
  for (const std::string& up : ir::UpstreamTasks(spec)) {
    const Task* u = Find(TaskPath(scope.path, up));
    if (u == nullptr || !IsTerminal(u->proto.state())) return;
    if (FailedLike(u->proto.state()) && !upstream_failed) {
      upstream_failed = true;
      failed_name = up;
    }
  }
  const std::string path = TaskPath(scope.path, spec.name);
  Task* existing = Find(path);
  PipelineTask proto;
  if (existing != nullptr) {
    // Started again (a retried run, or a launch a restart interrupted): keep its history.
    proto.set_attempts(existing->proto.attempts());
    *proto.mutable_job_ids() = existing->proto.job_ids();
  }
  const ir::ComponentSpec& component = spec_.components.at(spec.component_ref);
  proto.set_path(path);
  proto.set_name(spec.name);
  proto.set_display_name(spec.display_name.empty() ? spec.name : spec.display_name);
  proto.set_parent_path(scope.path);
  proto.set_iteration_index(-1);
  if (component.dag) {
    proto.set_kind(std::string(kKindDag));
  } else if (spec_.executors.at(component.executor_label).kind ==
             ir::ExecutorSpec::Kind::kImporter) {
    proto.set_kind(std::string(kKindImporter));
  } else {
    proto.set_kind(std::string(kKindContainer));
  }
  *proto.mutable_create_time() = ToTimestamp(now);
  Task* created = existing;
  if (created == nullptr) {
    created = &Create(path, std::move(proto));
  } else {
    created->proto = std::move(proto);
    MarkDirty(*created);
  }
  Task& task = *created;
  task.spec = &spec;
  task.component = &component;

  if (upstream_failed &&
      spec.trigger_policy.strategy != ir::TriggerStrategy::kAllUpstreamTasksCompleted) {
    SetState(task, pb::PIPELINE_TASK_STATE_SKIPPED, now,
             absl::StrCat("upstream task '", failed_name, "' did not succeed"));
    return;
  }
  if (absl::Status resolved = ResolveInputs(scope, spec, component, task.proto); !resolved.ok()) {
    // An output that was never produced (its producer was not triggered) skips the consumer.
    SetState(task,
             absl::IsNotFound(resolved) ? pb::PIPELINE_TASK_STATE_SKIPPED
                                        : pb::PIPELINE_TASK_STATE_FAILED,
             now, resolved.message());
    return;
  }
  if (!spec.trigger_policy.condition.empty()) {
    std::string error;
    const cel::CompiledCondition* condition = ConditionOf(spec, &error);
    absl::StatusOr<bool> triggered = absl::InvalidArgumentError(error);
    if (condition != nullptr) {
      json values = json::object();
      for (const auto& [name, value] : task.proto.input_parameters()) {
        values[name] = ParseValue(value);
      }
      triggered = cel::Evaluate(*condition, values);
    }
    if (!triggered.ok()) {
      SetState(task, pb::PIPELINE_TASK_STATE_FAILED, now,
               absl::StrCat("trigger condition '", spec.trigger_policy.condition,
                            "': ", triggered.status().message()));
      return;
    }
    if (!*triggered) {
      SetState(task, pb::PIPELINE_TASK_STATE_NOT_TRIGGERED, now);
      return;
    }
  }

  if (task.proto.kind() == kKindDag) {
    SetState(task, pb::PIPELINE_TASK_STATE_RUNNING, now);
    if (spec.parameter_iterator || spec.artifact_iterator) {
      if (absl::Status loaded = LoadLoopItems(task); !loaded.ok()) {
        SetState(task, pb::PIPELINE_TASK_STATE_FAILED, now, loaded.message());
        return;
      }
      AdvanceLoop(task, now, out);
      return;
    }
    OpenScope(task);
    AdvanceDag(task, now, out);
    return;
  }
  const ir::ExecutorSpec& executor = spec_.executors.at(component.executor_label);
  if (executor.kind == ir::ExecutorSpec::Kind::kImporter) {
    RunImporter(task, executor.importer, now);
    return;
  }
  LaunchContainer(task, now, out);
}

absl::Status RunDriver::ResolveInputs(const Scope& scope, const ir::TaskSpec& spec,
                                      const ir::ComponentSpec& component, PipelineTask& task) {
  for (const auto& [name, input] : spec.input_parameters) {
    absl::StatusOr<json> value = ResolveParameter(scope, input, name);
    if (!value.ok()) {
      auto def = component.input_definitions.parameters.find(name);
      const bool optional = def != component.input_definitions.parameters.end() &&
                            (def->second.is_optional || def->second.default_value);
      if (absl::IsNotFound(value.status()) && optional) continue;
      return absl::Status(value.status().code(),
                          absl::StrCat("inputs.parameters.", name, ": ", value.status().message()));
    }
    (*task.mutable_input_parameters())[name] = value->dump();
  }
  // The SDK sets the machine fields from pipeline channels as constants that name the task's
  // other inputs: `cpu_limit: {{$.inputs.parameters['pipelinechannel--cpu']}}`.
  placeholders::ExecutorValues inputs;
  for (const auto& [name, input] : spec.input_parameters) {
    auto value = task.input_parameters().find(name);
    if (value == task.input_parameters().end()) continue;
    inputs.parameter_values[name] = ParseValue(value->second);
  }
  for (const auto& [name, input] : spec.input_parameters) {
    if (input.kind != ir::TaskInputParameter::Kind::kRuntimeValue || !input.constant.is_string() ||
        !absl::StrContains(input.constant.get<std::string>(), "{{$.inputs.parameters[")) {
      continue;
    }
    absl::StatusOr<std::string> resolved =
        placeholders::ResolveString(input.constant.get<std::string>(), inputs);
    if (!resolved.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("inputs.parameters.", name, ": ", resolved.status().message()));
    }
    (*task.mutable_input_parameters())[name] = json(*resolved).dump();
  }
  for (const auto& [name, def] : component.input_definitions.parameters) {
    if (task.input_parameters().contains(name) || !def.default_value) continue;
    (*task.mutable_input_parameters())[name] = def.default_value->dump();
  }
  for (const auto& [name, input] : spec.input_artifacts) {
    pb::PipelineArtifactList list;
    if (input.kind == ir::TaskInputArtifact::Kind::kComponentInputArtifact) {
      auto it = scope.artifacts.find(input.component_input_artifact);
      if (it == scope.artifacts.end()) {
        return absl::NotFoundError(absl::StrCat("inputs.artifacts.", name,
                                                ": the enclosing DAG has no input artifact '",
                                                input.component_input_artifact, "'"));
      }
      for (const PipelineArtifact& a : it->second) *list.add_artifacts() = a;
    } else {
      const Task* producer = Find(TaskPath(scope.path, input.producer_task));
      auto out = producer == nullptr ? nullptr : &producer->proto.output_artifacts();
      if (producer == nullptr || !Succeeded(producer->proto.state()) ||
          !out->contains(input.output_artifact_key)) {
        return absl::NotFoundError(absl::StrCat(
            "inputs.artifacts.", name, ": task '", input.producer_task, "' produced no artifact '",
            input.output_artifact_key, "'",
            producer == nullptr
                ? ""
                : absl::StrCat(" (it is ", TaskStateName(producer->proto.state()), ")")));
      }
      list = out->at(input.output_artifact_key);
    }
    (*task.mutable_input_artifacts())[name] = std::move(list);
  }
  return absl::OkStatus();
}

absl::StatusOr<json> RunDriver::ResolveParameter(const Scope& scope,
                                                 const ir::TaskInputParameter& input,
                                                 absl::string_view name) {
  json value;
  switch (input.kind) {
    case ir::TaskInputParameter::Kind::kComponentInputParameter: {
      auto it = scope.params.find(input.component_input_parameter);
      if (it == scope.params.end()) {
        return absl::NotFoundError(absl::StrCat("the enclosing DAG has no value for '",
                                                input.component_input_parameter, "'"));
      }
      value = it->second;
      break;
    }
    case ir::TaskInputParameter::Kind::kTaskOutputParameter: {
      const Task* producer = Find(TaskPath(scope.path, input.producer_task));
      if (producer == nullptr || !Succeeded(producer->proto.state())) {
        return absl::NotFoundError(absl::StrCat(
            "task '", input.producer_task, "' produced no output '", input.output_parameter_key,
            "'",
            producer == nullptr
                ? ""
                : absl::StrCat(" (it is ", TaskStateName(producer->proto.state()), ")")));
      }
      auto it = producer->proto.output_parameters().find(input.output_parameter_key);
      if (it == producer->proto.output_parameters().end()) {
        return absl::NotFoundError(absl::StrCat("task '", input.producer_task, "' has no output '",
                                                input.output_parameter_key, "'"));
      }
      value = ParseValue(it->second);
      break;
    }
    case ir::TaskInputParameter::Kind::kRuntimeValue: {
      value = input.constant;
      if (value.is_string() && absl::StrContains(value.get<std::string>(), "{{$.pipeline_")) {
        placeholders::ExecutorValues values;
        Task stand_in;
        stand_in.proto.set_display_name(std::string(name));
        values.pipeline_values = PipelineValues(stand_in);
        ASSIGN_OR_RETURN(std::string resolved,
                         placeholders::ResolveString(value.get<std::string>(), values));
        value = resolved;
      }
      break;
    }
    case ir::TaskInputParameter::Kind::kTaskFinalStatus: {
      const Task* producer = Find(TaskPath(scope.path, input.producer_task));
      if (producer == nullptr) {
        return absl::NotFoundError(absl::StrCat("task '", input.producer_task, "' did not run"));
      }
      value = FinalStatusOf(*producer);
      break;
    }
  }
  if (!input.parameter_expression_selector.empty()) {
    return ApplySelector(value, input.parameter_expression_selector);
  }
  return value;
}

void RunDriver::OpenScope(Task& task) {
  task.scope = std::make_unique<Scope>();
  task.scope->path = task.proto.path();
  task.scope->component = task.component;
  for (const auto& [name, value] : task.proto.input_parameters()) {
    task.scope->params[name] = ParseValue(value);
  }
  for (const auto& [name, list] : task.proto.input_artifacts()) {
    task.scope->artifacts[name].assign(list.artifacts().begin(), list.artifacts().end());
  }
}

absl::Status RunDriver::LoadLoopItems(Task& task) {
  const ir::TaskSpec& spec = *task.spec;
  if (spec.parameter_iterator) {
    json items;
    if (spec.parameter_iterator->items_raw) {
      // Validated when the spec was loaded; a bounded parse all the same.
      items = ParseJson(*spec.parameter_iterator->items_raw).value_or(json());
    } else {
      auto it = task.proto.input_parameters().find(*spec.parameter_iterator->items_input_parameter);
      if (it != task.proto.input_parameters().end()) items = ParseValue(it->second);
    }
    if (!items.is_array()) {
      return absl::InvalidArgumentError("parameterIterator: the items are not a JSON list");
    }
    task.items.assign(items.begin(), items.end());
    return absl::OkStatus();
  }
  auto it = task.proto.input_artifacts().find(spec.artifact_iterator->items_input_artifact);
  if (it != task.proto.input_artifacts().end()) {
    for (const PipelineArtifact& a : it->second.artifacts()) task.artifact_items.push_back({a});
  }
  return absl::OkStatus();
}

void RunDriver::AdvanceDag(Task& task, absl::Time now, DriverOutput& out) {
  AdvanceScope(*task.scope, now, out);
  const ir::DagSpec& dag = *task.component->dag;
  PipelineTaskState outcome = pb::PIPELINE_TASK_STATE_SUCCEEDED;
  std::string error;
  for (const auto& [name, child_spec] : dag.tasks) {
    const Task* child = Find(TaskPath(task.scope->path, name));
    if (child == nullptr || !IsTerminal(child->proto.state())) return;
    if (child->proto.state() == pb::PIPELINE_TASK_STATE_FAILED) {
      outcome = pb::PIPELINE_TASK_STATE_FAILED;
      if (error.empty()) error = absl::StrCat("task '", name, "' failed");
    } else if (child->proto.state() == pb::PIPELINE_TASK_STATE_CANCELED &&
               outcome != pb::PIPELINE_TASK_STATE_FAILED) {
      outcome = pb::PIPELINE_TASK_STATE_CANCELED;
      if (error.empty()) error = absl::StrCat("task '", name, "' was canceled");
    }
  }
  if (outcome == pb::PIPELINE_TASK_STATE_SUCCEEDED) CollectDagOutputs(*task.scope, dag, task.proto);
  SetState(task, outcome, now, error);
}

void RunDriver::AdvanceLoop(Task& task, absl::Time now, DriverOutput& out) {
  const ir::TaskSpec& spec = *task.spec;
  const bool over_artifacts = spec.artifact_iterator.has_value();
  const int count =
      static_cast<int>(over_artifacts ? task.artifact_items.size() : task.items.size());
  const bool canceling = run_.state() == pb::PIPELINE_RUN_STATE_CANCELING;
  int active = 0;
  bool all_ended = true;
  for (int i = 0; i < task.iterations_created; ++i) {
    Task* iteration = Find(IterationPath(task.proto.path(), i));
    if (iteration == nullptr) continue;
    if (!IsTerminal(iteration->proto.state())) AdvanceDag(*iteration, now, out);
    if (!IsTerminal(iteration->proto.state())) {
      ++active;
      all_ended = false;
    }
  }
  // Start iterations within the parallelism limit.
  while (task.iterations_created < count &&
         (spec.parallelism_limit <= 0 || active < spec.parallelism_limit)) {
    const int index = task.iterations_created++;
    PipelineTask proto;
    proto.set_name(task.proto.name());
    proto.set_display_name(absl::StrCat(task.proto.display_name(), "[", index, "]"));
    proto.set_parent_path(task.proto.path());
    proto.set_kind(std::string(kKindIteration));
    proto.set_iteration_index(index);
    *proto.mutable_input_parameters() = task.proto.input_parameters();
    *proto.mutable_input_artifacts() = task.proto.input_artifacts();
    if (over_artifacts) {
      pb::PipelineArtifactList list;
      for (const PipelineArtifact& a : task.artifact_items[index]) *list.add_artifacts() = a;
      (*proto.mutable_input_artifacts())[spec.artifact_iterator->item_input] = std::move(list);
    } else {
      (*proto.mutable_input_parameters())[spec.parameter_iterator->item_input] =
          task.items[index].dump();
    }
    *proto.mutable_create_time() = ToTimestamp(now);
    Task& iteration = Create(IterationPath(task.proto.path(), index), std::move(proto));
    iteration.spec = &spec;
    iteration.component = task.component;
    OpenScope(iteration);
    if (canceling) {
      SetState(iteration, pb::PIPELINE_TASK_STATE_CANCELED, now, "the run was terminated");
      continue;
    }
    SetState(iteration, pb::PIPELINE_TASK_STATE_RUNNING, now);
    AdvanceDag(iteration, now, out);
    if (!IsTerminal(iteration.proto.state())) {
      ++active;
      all_ended = false;
    }
  }
  if (!all_ended || task.iterations_created < count) return;

  // Every iteration ended: the loop's outputs are the lists of its iterations' outputs (fan-in).
  PipelineTaskState outcome = pb::PIPELINE_TASK_STATE_SUCCEEDED;
  std::string error;
  std::map<std::string, json> collected;
  const ir::DagSpec& dag = *task.component->dag;
  for (const auto& [name, unused] : dag.output_parameters) collected[name] = json::array();
  for (int i = 0; i < count; ++i) {
    const Task* iteration = Find(IterationPath(task.proto.path(), i));
    if (iteration == nullptr) continue;
    if (iteration->proto.state() == pb::PIPELINE_TASK_STATE_FAILED) {
      outcome = pb::PIPELINE_TASK_STATE_FAILED;
      if (error.empty()) error = absl::StrCat("iteration ", i, " failed");
    } else if (iteration->proto.state() == pb::PIPELINE_TASK_STATE_CANCELED &&
               outcome != pb::PIPELINE_TASK_STATE_FAILED) {
      outcome = pb::PIPELINE_TASK_STATE_CANCELED;
    }
    for (const auto& [name, value] : iteration->proto.output_parameters()) {
      collected[name].push_back(ParseValue(value));
    }
    for (const auto& [name, list] : iteration->proto.output_artifacts()) {
      auto& target = (*task.proto.mutable_output_artifacts())[name];
      for (const PipelineArtifact& a : list.artifacts()) *target.add_artifacts() = a;
    }
  }
  for (auto& [name, values] : collected) {
    (*task.proto.mutable_output_parameters())[name] = values.dump();
  }
  SetState(task, outcome, now, error);
}

void RunDriver::CollectDagOutputs(const Scope& scope, const ir::DagSpec& dag, PipelineTask& task) {
  for (const auto& [name, output] : dag.output_parameters) {
    for (const ir::ParameterSelector& selector : output.selectors) {
      const Task* producer = Find(TaskPath(scope.path, selector.producer_subtask));
      if (producer == nullptr || !Succeeded(producer->proto.state())) continue;
      auto it = producer->proto.output_parameters().find(selector.output_parameter_key);
      if (it == producer->proto.output_parameters().end()) continue;
      (*task.mutable_output_parameters())[name] = it->second;
      break;
    }
  }
  for (const auto& [name, output] : dag.output_artifacts) {
    for (const ir::ArtifactSelector& selector : output.selectors) {
      const Task* producer = Find(TaskPath(scope.path, selector.producer_subtask));
      if (producer == nullptr || !Succeeded(producer->proto.state())) continue;
      auto it = producer->proto.output_artifacts().find(selector.output_artifact_key);
      if (it == producer->proto.output_artifacts().end()) continue;
      (*task.mutable_output_artifacts())[name] = it->second;
      break;
    }
  }
}

void RunDriver::RunImporter(Task& task, const ir::ImporterSpec& importer, absl::Time now) {
  json uri;
  if (importer.artifact_uri.constant) {
    uri = *importer.artifact_uri.constant;
  } else {
    auto it = task.proto.input_parameters().find(importer.artifact_uri.runtime_parameter);
    if (it != task.proto.input_parameters().end()) uri = ParseValue(it->second);
  }
  if (!uri.is_string() || uri.get<std::string>().empty()) {
    SetState(task, pb::PIPELINE_TASK_STATE_FAILED, now, "importer: no artifact uri");
    return;
  }
  const auto& outputs = task.component->output_definitions.artifacts;
  const std::string key = outputs.empty() ? "artifact" : outputs.begin()->first;
  PipelineArtifact artifact;
  artifact.set_id(ids_->NewId());
  artifact.set_name(key);
  artifact.set_schema_title(importer.type_schema.schema_title.empty()
                                ? "system.Artifact"
                                : importer.type_schema.schema_title);
  artifact.set_schema_version(importer.type_schema.schema_version);
  artifact.set_uri(uri.get<std::string>());
  artifact.set_metadata_json(importer.metadata.dump());
  artifact.set_run_id(run_.id());
  artifact.set_task_path(task.proto.path());
  *artifact.mutable_create_time() = ToTimestamp(now);
  *(*task.proto.mutable_output_artifacts())[key].add_artifacts() = std::move(artifact);
  SetState(task, pb::PIPELINE_TASK_STATE_SUCCEEDED, now);
}

void RunDriver::LaunchContainer(Task& task, absl::Time now, DriverOutput& out) {
  const ir::ExecutorSpec& executor = spec_.executors.at(task.component->executor_label);
  const ir::ContainerSpec& container = executor.container;
  // Attempts count within one start of the task (a retried run starts failed tasks afresh);
  // jobs count over the task's life, so work directories and client ids never repeat.
  const int attempt = task.proto.attempts() + 1;
  const int job_number = task.proto.job_ids_size() + 1;
  StepLaunch launch;
  launch.task_path = task.proto.path();
  launch.attempt = attempt;
  launch.container = &container;
  launch.work_dir = WorkDir(task.proto, job_number);
  launch.client_id = absl::StrCat(run_.id(), "/", task.proto.path(), "/", job_number);
  placeholders::ExecutorValues& values = launch.values;
  for (const auto& [name, value] : task.proto.input_parameters()) {
    values.parameter_values[name] = ParseValue(value);
  }
  cache::FingerprintInputs fingerprint;
  for (const auto& [name, list] : task.proto.input_artifacts()) {
    auto& runtime = values.input_artifacts[name];
    auto& identities = fingerprint.input_artifacts[name];
    for (const PipelineArtifact& a : list.artifacts()) {
      placeholders::RuntimeArtifact r;
      r.name = a.id();
      r.uri = a.uri();
      if (auto paths = ArtifactPaths(a.uri()); paths.has_value()) {
        r.local_path = paths->second;
        launch.input_paths.push_back(*std::move(paths));
      }
      r.schema_title = a.schema_title();
      if (!a.schema_version().empty()) r.schema_version = a.schema_version();
      json metadata = json::parse(a.metadata_json(), nullptr, false);
      if (metadata.is_object()) r.metadata = std::move(metadata);
      runtime.push_back(std::move(r));
      identities.push_back({a.uri(), "", a.id()});
    }
  }
  task.proto.clear_output_artifacts();
  for (const auto& [name, def] : task.component->output_definitions.parameters) {
    values.output_parameter_files[name] = absl::StrCat(launch.work_dir, "/outputs/", name);
    fingerprint.output_parameters[name] = std::string(ir::ParameterTypeName(def.parameter_type));
  }
  for (const auto& [name, def] : task.component->output_definitions.artifacts) {
    PipelineArtifact artifact;
    artifact.set_id(ids_->NewId());
    artifact.set_name(name);
    artifact.set_schema_title(def.artifact_type.schema_title.empty()
                                  ? "system.Artifact"
                                  : def.artifact_type.schema_title);
    artifact.set_schema_version(def.artifact_type.schema_version);
    artifact.set_uri(absl::StrCat(run_.pipeline_root(), "/", run_.pipeline_name(), "/", run_.id(),
                                  "/", task.proto.path(), "/", artifact.id(), "/", name));
    artifact.set_metadata_json("{}");
    artifact.set_run_id(run_.id());
    artifact.set_task_path(task.proto.path());
    *artifact.mutable_create_time() = ToTimestamp(now);
    placeholders::RuntimeArtifact r;
    r.name = artifact.id();
    r.uri = artifact.uri();
    if (auto paths = ArtifactPaths(artifact.uri()); paths.has_value()) {
      r.local_path = paths->second;
      launch.output_paths.push_back(*std::move(paths));
    }
    r.schema_title = artifact.schema_title();
    if (!artifact.schema_version().empty()) r.schema_version = artifact.schema_version();
    values.output_artifacts[name].push_back(std::move(r));
    fingerprint.output_artifacts[name] =
        absl::StrCat(artifact.schema_title(), "@", artifact.schema_version());
    *(*task.proto.mutable_output_artifacts())[name].add_artifacts() = std::move(artifact);
  }
  values.output_file = absl::StrCat(launch.work_dir, "/output_metadata.json");
  values.pipeline_values = PipelineValues(task);

  absl::StatusOr<std::vector<std::string>> command =
      placeholders::ResolveArgs(container.command, values, "command");
  absl::StatusOr<std::vector<std::string>> args =
      command.ok() ? placeholders::ResolveArgs(container.args, values, "args") : command;
  if (!args.ok()) {
    SetState(task, pb::PIPELINE_TASK_STATE_FAILED, now, args.status().message());
    return;
  }
  launch.command = *std::move(command);
  launch.args = *std::move(args);
  // Machine fields set from pipeline parameters are placeholders of the task's inputs.
  launch.resources = container.resources;
  if (absl::Status resolved = ResolveResources(values, launch.resources); !resolved.ok()) {
    SetState(task, pb::PIPELINE_TASK_STATE_FAILED, now, resolved.message());
    return;
  }
  auto platform = platform_.find(task.component->executor_label);
  if (platform != platform_.end()) launch.platform = &platform->second;

  const bool cache_on = task.spec->caching_options.enable_cache && !run_.disable_cache();
  if (cache_on) {
    fingerprint.parameter_values = values.parameter_values;
    fingerprint.image = container.image;
    fingerprint.command = container.command;
    fingerprint.args = container.args;
    fingerprint.custom_cache_key = task.spec->caching_options.cache_key;
    absl::StatusOr<std::string> digest = cache::Fingerprint(fingerprint);
    if (digest.ok()) {
      launch.fingerprint = *digest;
      launch.read_cache = attempt == 1;
      launch.write_cache = true;
      task.proto.set_fingerprint(*digest);
    }
  }
  task.launching = true;
  if (task.proto.state() != pb::PIPELINE_TASK_STATE_RUNNING) {
    task.proto.set_state(pb::PIPELINE_TASK_STATE_PENDING);
  }
  MarkDirty(task);
  out.launches.push_back(std::move(launch));
}

// ---- Outcomes -------------------------------------------------------------------------------

void RunDriver::OnCacheHit(absl::string_view task_path, const pb::CacheEntry& entry,
                           absl::Time now) {
  Task* task = Find(task_path);
  if (task == nullptr || !task->launching) return;
  task->launching = false;
  *task->proto.mutable_output_parameters() = entry.output_parameters();
  *task->proto.mutable_output_artifacts() = entry.output_artifacts();
  task->proto.set_cached_from_run_id(entry.run_id());
  task->proto.set_cached_from_task_path(entry.task_path());
  SetState(*task, pb::PIPELINE_TASK_STATE_CACHED, now);
}

void RunDriver::OnJobSubmitted(absl::string_view task_path, int attempt, absl::string_view job_id,
                               absl::Time now) {
  Task* task = Find(task_path);
  if (task == nullptr || !task->launching) return;
  task->launching = false;
  task->current_job = std::string(job_id);
  task->proto.set_attempts(attempt);
  task->proto.add_job_ids(std::string(job_id));
  task->proto.clear_next_attempt_time();
  running_jobs_[task->current_job] = task->proto.path();
  SetState(*task, pb::PIPELINE_TASK_STATE_RUNNING, now);
}

void RunDriver::OnLaunchFailed(absl::string_view task_path, absl::string_view message,
                               absl::Time now) {
  Task* task = Find(task_path);
  if (task == nullptr || !task->launching) return;
  task->launching = false;
  SetState(*task, pb::PIPELINE_TASK_STATE_FAILED, now, message);
}

void RunDriver::OnJobEnded(absl::string_view job_id, bool succeeded, absl::string_view error,
                           absl::Time now) {
  auto it = running_jobs_.find(job_id);
  if (it == running_jobs_.end()) return;
  Task* task = Find(it->second);
  running_jobs_.erase(it);
  if (task == nullptr || task->current_job != job_id) return;
  task->current_job.clear();
  if (task->proto.state() == pb::PIPELINE_TASK_STATE_CANCELING ||
      run_.state() == pb::PIPELINE_RUN_STATE_CANCELING) {
    SetState(*task, pb::PIPELINE_TASK_STATE_CANCELED, now, "the run was terminated");
    return;
  }
  if (succeeded) {
    ReadOutputs(*task, now);
    return;
  }
  const std::string message =
      absl::StrCat("attempt ", task->proto.attempts(), ": ", error.empty() ? "failed" : error);
  const std::optional<ir::RetryPolicy>& retry = task->spec->retry_policy;
  if (retry && task->proto.attempts() <= retry->max_retry_count) {
    task->proto.set_error_message(message);
    *task->proto.mutable_next_attempt_time() =
        ToTimestamp(now + BackoffFor(*retry, task->proto.attempts()));
    MarkDirty(*task);
    return;
  }
  SetState(*task, pb::PIPELINE_TASK_STATE_FAILED, now, message);
}

bool IsMetricsSchema(absl::string_view schema_title) {
  return schema_title == "system.Metrics" || schema_title == "system.ClassificationMetrics" ||
         schema_title == "system.SlicedClassificationMetrics";
}

std::optional<std::pair<std::string, std::string>> RunDriver::ArtifactPaths(
    const std::string& uri) const {
  // A uri without a local path (another scheme) fails only a step that asks for its path.
  absl::StatusOr<std::string> host = placeholders::HostPathForUri(uri, options_.buckets_dir);
  if (!host.ok()) return std::nullopt;
  if (options_.step_runner == StepRunner::kHost) return std::make_pair(*host, *host);
  absl::StatusOr<std::string> step = placeholders::LocalPathForUri(uri);
  if (!step.ok()) return std::nullopt;
  return std::make_pair(*std::move(host), *std::move(step));
}

std::string RunDriver::WorkDir(const PipelineTask& task, int job_number) const {
  // One level per job (not <task>/job-<n>): every directory is an inode to allocate before the
  // step can start.
  return absl::StrCat(options_.work_root, "/", run_.id(), "/", task.path(), ".job-", job_number);
}

void RunDriver::ReadOutputs(Task& task, absl::Time now) {
  const std::string work_dir = WorkDir(task.proto, task.proto.job_ids_size());
  // The step may also report through output_metadata.json (kfp's ExecutorOutput).
  json executor_output = json::object();
  if (absl::StatusOr<std::string> text =
          ReadFileToString(absl::StrCat(work_dir, "/output_metadata.json"));
      text.ok()) {
    absl::StatusOr<json> parsed = ParseJson(*text);
    if (!parsed.ok() && IsParseLimitError(parsed.status())) {
      SetState(task, pb::PIPELINE_TASK_STATE_FAILED, now,
               absl::StrCat("output_metadata.json: ", parsed.status().message()));
      return;
    }
    if (!parsed.ok() || !parsed->is_object()) {
      SetState(task, pb::PIPELINE_TASK_STATE_FAILED, now,
               "output_metadata.json: not a JSON object");
      return;
    }
    executor_output = *std::move(parsed);
  }
  for (const auto& [name, def] : task.component->output_definitions.parameters) {
    absl::StatusOr<std::string> text = ReadFileToString(absl::StrCat(work_dir, "/outputs/", name));
    json value;
    if (text.ok()) {
      absl::StatusOr<json> parsed = ir::ParseParameterValue(*text, def.parameter_type);
      if (!parsed.ok()) {
        SetState(task, pb::PIPELINE_TASK_STATE_FAILED, now,
                 absl::StrCat("output parameter '", name, "': ", parsed.status().message()));
        return;
      }
      value = *std::move(parsed);
    } else if (executor_output.contains("parameterValues") &&
               executor_output["parameterValues"].contains(name)) {
      value = executor_output["parameterValues"][name];
    } else {
      if (def.is_optional) continue;
      SetState(task, pb::PIPELINE_TASK_STATE_FAILED, now,
               absl::StrCat("output parameter '", name, "': the step wrote no ", work_dir,
                            "/outputs/", name));
      return;
    }
    (*task.proto.mutable_output_parameters())[name] = value.dump();
  }
  for (auto& [name, list] : *task.proto.mutable_output_artifacts()) {
    for (int i = 0; i < list.artifacts_size(); ++i) {
      PipelineArtifact& artifact = *list.mutable_artifacts(i);
      absl::StatusOr<std::string> local =
          placeholders::HostPathForUri(artifact.uri(), options_.buckets_dir);
      // kfp's metrics artifacts are their metadata (the ExecutorOutput's); a file is optional.
      if ((!local.ok() || !FileExists(*local)) && !IsMetricsSchema(artifact.schema_title())) {
        SetState(task, pb::PIPELINE_TASK_STATE_FAILED, now,
                 absl::StrCat("output artifact '", name, "': nothing was written at ",
                              local.ok() ? *local : artifact.uri()));
        return;
      }
      const json& reported =
          executor_output.contains("artifacts") ? executor_output["artifacts"] : json::object();
      if (reported.is_object() && reported.contains(name) && reported[name].contains("artifacts") &&
          reported[name]["artifacts"].is_array() &&
          static_cast<int>(reported[name]["artifacts"].size()) > i) {
        const json& one = reported[name]["artifacts"][i];
        if (one.contains("metadata") && one["metadata"].is_object()) {
          artifact.set_metadata_json(one["metadata"].dump());
        }
      }
    }
  }
  SetState(task, pb::PIPELINE_TASK_STATE_SUCCEEDED, now);
  if (!task.proto.fingerprint().empty() && task.spec->caching_options.enable_cache &&
      !run_.disable_cache()) {
    pb::CacheEntry entry;
    entry.set_fingerprint(task.proto.fingerprint());
    entry.set_pipeline_name(run_.pipeline_name());
    entry.set_run_id(run_.id());
    entry.set_task_path(task.proto.path());
    *entry.mutable_output_parameters() = task.proto.output_parameters();
    *entry.mutable_output_artifacts() = task.proto.output_artifacts();
    *entry.mutable_create_time() = ToTimestamp(now);
    if (options_.cache_ttl > absl::ZeroDuration()) {
      *entry.mutable_expire_time() = ToTimestamp(now + options_.cache_ttl);
    }
    pending_cache_entries_.push_back(std::move(entry));
  }
}

void RunDriver::FinishRun(absl::Time now, DriverOutput& out) {
  const ir::DagSpec& dag = *spec_.root.dag;
  bool all_not_triggered = !dag.tasks.empty();
  bool failed = false;
  bool canceled = false;
  std::string error;
  for (const auto& [name, unused] : dag.tasks) {
    const Task* task = Find(name);
    if (task == nullptr || !IsTerminal(task->proto.state())) return;
    const PipelineTaskState state = task->proto.state();
    if (state != pb::PIPELINE_TASK_STATE_NOT_TRIGGERED) all_not_triggered = false;
    if (state == pb::PIPELINE_TASK_STATE_FAILED) {
      failed = true;
      if (error.empty()) {
        error = absl::StrCat("task '", name, "' failed: ", task->proto.error_message());
      }
    }
    if (state == pb::PIPELINE_TASK_STATE_CANCELED) canceled = true;
  }
  if (run_.state() == pb::PIPELINE_RUN_STATE_CANCELING || (canceled && !failed)) {
    run_.set_state(pb::PIPELINE_RUN_STATE_CANCELED);
  } else if (failed) {
    run_.set_state(pb::PIPELINE_RUN_STATE_FAILED);
    run_.set_error_message(error);
  } else if (all_not_triggered) {
    run_.set_state(pb::PIPELINE_RUN_STATE_SKIPPED);
  } else {
    run_.set_state(pb::PIPELINE_RUN_STATE_SUCCEEDED);
    Scope root;
    root.component = &spec_.root;
    PipelineTask outputs;
    CollectDagOutputs(root, dag, outputs);
    *run_.mutable_outputs() = outputs.output_parameters();
  }
  *run_.mutable_finish_time() = ToTimestamp(now);
  run_dirty_ = true;
}

// ---- Terminate and retry --------------------------------------------------------------------

void RunDriver::Terminate(absl::Time now) {
  if (IsTerminal(run_.state()) || run_.state() == pb::PIPELINE_RUN_STATE_CANCELING) return;
  run_.set_state(pb::PIPELINE_RUN_STATE_CANCELING);
  run_dirty_ = true;
  for (Task* task : created_order_) {
    if (IsTerminal(task->proto.state()) || task->proto.kind() != kKindContainer) continue;
    if (!task->current_job.empty()) {
      task->proto.set_state(pb::PIPELINE_TASK_STATE_CANCELING);
      MarkDirty(*task);
      pending_cancels_.push_back(task->current_job);
    } else {
      task->launching = false;
      SetState(*task, pb::PIPELINE_TASK_STATE_CANCELED, now, "the run was terminated");
    }
  }
}

absl::Status RunDriver::Retry(absl::Time now) {
  if (run_.state() != pb::PIPELINE_RUN_STATE_FAILED &&
      run_.state() != pb::PIPELINE_RUN_STATE_CANCELED) {
    return absl::FailedPreconditionError(
        absl::StrCat("run ", run_.id(), " is ", RunStateName(run_.state()),
                     "; only FAILED or CANCELED runs can be retried"));
  }
  for (Task* task : created_order_) {
    if (!FailedLike(task->proto.state())) continue;
    task->proto.clear_finish_time();
    task->proto.clear_error_message();
    task->proto.clear_next_attempt_time();
    task->proto.set_attempts(0);
    if (task->proto.kind() == kKindDag || task->proto.kind() == kKindIteration) {
      // Its children run again; it ends when they do.
      task->proto.set_state(pb::PIPELINE_TASK_STATE_RUNNING);
    } else {
      task->proto.set_state(pb::PIPELINE_TASK_STATE_PENDING);
      task->current_job.clear();
      task->launching = false;
    }
    MarkDirty(*task);
  }
  run_.set_state(pb::PIPELINE_RUN_STATE_RUNNING);
  run_.clear_error_message();
  run_.clear_finish_time();
  run_dirty_ = true;
  return absl::OkStatus();
}

std::optional<absl::Time> RunDriver::NextWakeTime() const {
  std::optional<absl::Time> next;
  for (const Task* task : created_order_) {
    if (task->proto.state() != pb::PIPELINE_TASK_STATE_RUNNING ||
        !task->proto.has_next_attempt_time() || !task->current_job.empty()) {
      continue;
    }
    const absl::Time at = FromTimestamp(task->proto.next_attempt_time());
    if (!next || at < *next) next = at;
  }
  return next;
}

bool RunDriver::Terminal() const { return IsTerminal(run_.state()); }

}  // namespace regatta::pipelines::engine
