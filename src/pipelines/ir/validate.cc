#include "src/pipelines/ir/validate.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"
#include "src/pipelines/ir/parameters.h"
#include "src/pipelines/ir/platform.h"

namespace regatta::pipelines::ir {
namespace {

using json = nlohmann::json;

absl::Status Invalid(absl::string_view path, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", message));
}

// kfp 2.x emits 2.1.0 (its early betas 2.0.0); both minors share the shape read here.
absl::Status ValidateSchemaVersion(const std::string& version) {
  if (version.empty()) return Invalid("schemaVersion", "missing");
  std::vector<std::string> parts = absl::StrSplit(version, '.');
  int patch = 0;
  if (parts.size() != 3 || parts[0] != "2" || (parts[1] != "0" && parts[1] != "1") ||
      !absl::SimpleAtoi(parts[2], &patch)) {
    return Invalid("schemaVersion",
                   absl::StrCat("unsupported version '", version, "' (expected 2.1.x or 2.0.x)"));
  }
  return absl::OkStatus();
}

class Validator {
 public:
  explicit Validator(const PipelineSpec& spec) : spec_(spec) {}

  absl::Status Run() {
    RETURN_IF_ERROR(ValidateSchemaVersion(spec_.schema_version));
    CollectPassedInputs();
    if (spec_.pipeline_info.name.empty()) return Invalid("pipelineInfo.name", "missing");
    if (!spec_.root.dag) return Invalid("root.dag", "the root component must be a DAG");
    for (const auto& [label, executor] : spec_.executors) {
      RETURN_IF_ERROR(ValidateExecutor(label, executor));
    }
    for (const auto& [name, component] : spec_.components) {
      RETURN_IF_ERROR(ValidateComponent(component, absl::StrCat("components.", name), name));
    }
    RETURN_IF_ERROR(ValidateComponent(spec_.root, "root", "root"));
    if (spec_.platform_spec)
      RETURN_IF_ERROR(ParsePlatformSpec(*spec_.platform_spec, spec_).status());
    return absl::OkStatus();
  }

 private:
  // The SDK passes a sub-DAG the pipeline channels its tasks use (`pipelinechannel--x`) and a
  // step the machine fields set from them, often without declaring them on the component.
  static bool MayBeUndeclared(const std::string& input) {
    static const std::set<std::string>* const kMachineFields = new std::set<std::string>{
        "accelerator_count", "accelerator_type", "cpu_limit",        "cpu_request",
        "memory_limit",      "memory_request",   "accelerator_limit"};
    return absl::StartsWith(input, "pipelinechannel--") || kMachineFields->contains(input);
  }

  // For each component, the input parameters every task that calls it passes (its iterator's
  // item included), declared or not: what a componentInputParameter inside it can read.
  void CollectPassedInputs() {
    auto keep_common = [](std::map<std::string, std::set<std::string>>& all,
                          const std::string& component, std::set<std::string> passed) {
      auto [it, first] = all.try_emplace(component, passed);
      if (first) return;
      std::set<std::string> common;
      std::set_intersection(it->second.begin(), it->second.end(), passed.begin(), passed.end(),
                            std::inserter(common, common.begin()));
      it->second = std::move(common);
    };
    auto collect = [&](const ComponentSpec& component) {
      if (!component.dag) return;
      for (const auto& [name, task] : component.dag->tasks) {
        std::set<std::string> parameters;
        for (const auto& [input, source] : task.input_parameters) parameters.insert(input);
        if (task.parameter_iterator) parameters.insert(task.parameter_iterator->item_input);
        keep_common(passed_, task.component_ref, std::move(parameters));
        std::set<std::string> artifacts;
        for (const auto& [input, source] : task.input_artifacts) artifacts.insert(input);
        if (task.artifact_iterator) artifacts.insert(task.artifact_iterator->item_input);
        keep_common(passed_artifacts_, task.component_ref, std::move(artifacts));
      }
    };
    collect(spec_.root);
    for (const auto& [name, component] : spec_.components) collect(component);
  }

  // Whether a task of `parent` may read `input`: the component declares it, or (not for the
  // root) every task that calls the component passes it.
  bool ParentHas(const ComponentSpec& parent, const std::string& parent_name,
                 const std::string& input, bool artifact) const {
    const IoDefinitions& defs = parent.input_definitions;
    if (artifact ? defs.artifacts.contains(input) : defs.parameters.contains(input)) return true;
    if (&parent == &spec_.root) return false;
    const auto& passed = artifact ? passed_artifacts_ : passed_;
    auto it = passed.find(parent_name);
    return it != passed.end() && it->second.contains(input);
  }

  absl::Status ValidateExecutor(const std::string& label, const ExecutorSpec& executor) {
    const std::string path = absl::StrCat("deploymentSpec.executors.", label);
    if (executor.kind == ExecutorSpec::Kind::kContainer && executor.container.image.empty()) {
      return Invalid(absl::StrCat(path, ".container.image"), "must not be empty");
    }
    return absl::OkStatus();
  }

  absl::Status ValidateDefinitions(const IoDefinitions& definitions, const std::string& path) {
    for (const auto& [name, parameter] : definitions.parameters) {
      if (parameter.default_value &&
          !ValueMatchesType(*parameter.default_value, parameter.parameter_type)) {
        return Invalid(absl::StrCat(path, ".parameters.", name, ".defaultValue"),
                       absl::StrCat(parameter.default_value->dump(), " is not a ",
                                    ParameterTypeName(parameter.parameter_type)));
      }
    }
    return absl::OkStatus();
  }

  absl::Status ValidateComponent(const ComponentSpec& component, const std::string& path,
                                 const std::string& name) {
    RETURN_IF_ERROR(
        ValidateDefinitions(component.input_definitions, absl::StrCat(path, ".inputDefinitions")));
    if (!component.dag) {
      auto executor = spec_.executors.find(component.executor_label);
      if (executor == spec_.executors.end()) {
        return Invalid(absl::StrCat(path, ".executorLabel"),
                       absl::StrCat("executor '", component.executor_label,
                                    "' does not exist in deploymentSpec.executors"));
      }
      const ImporterSpec& importer = executor->second.importer;
      if (executor->second.kind == ExecutorSpec::Kind::kImporter &&
          !importer.artifact_uri.constant &&
          !component.input_definitions.parameters.contains(
              importer.artifact_uri.runtime_parameter)) {
        return Invalid(absl::StrCat("deploymentSpec.executors.", component.executor_label,
                                    ".importer.artifactUri.runtimeParameter"),
                       absl::StrCat("'", importer.artifact_uri.runtime_parameter,
                                    "' is not an input parameter of component '", name, "'"));
      }
      return absl::OkStatus();
    }
    const DagSpec& dag = *component.dag;
    const std::string dag_path = absl::StrCat(path, ".dag");
    for (const auto& [task_name, task] : dag.tasks) {
      RETURN_IF_ERROR(
          ValidateTask(task, dag, component, name, absl::StrCat(dag_path, ".tasks.", task_name)));
    }
    absl::StatusOr<std::vector<std::string>> order = TopologicalOrder(dag);
    if (!order.ok()) return Invalid(absl::StrCat(dag_path, ".tasks"), order.status().message());
    return ValidateDagOutputs(dag, component, dag_path);
  }

  const ComponentSpec* ComponentOf(const DagSpec& dag, const std::string& task) const {
    auto t = dag.tasks.find(task);
    if (t == dag.tasks.end()) return nullptr;
    auto c = spec_.components.find(t->second.component_ref);
    return c == spec_.components.end() ? nullptr : &c->second;
  }

  absl::Status CheckProducer(const DagSpec& dag, const std::string& producer,
                             const std::string& path) {
    if (!dag.tasks.contains(producer)) {
      return Invalid(path, absl::StrCat("producer task '", producer, "' does not exist"));
    }
    return absl::OkStatus();
  }

  enum class OutputKind { kParameter, kArtifact };

  // `producer` is a task of `dag` whose component declares the output `key`. A producer whose
  // component is missing is reported on that task instead.
  absl::Status CheckProducerOutput(const DagSpec& dag, const std::string& producer,
                                   const std::string& key, OutputKind kind,
                                   const std::string& path) {
    RETURN_IF_ERROR(CheckProducer(dag, producer, path));
    const ComponentSpec* component = ComponentOf(dag, producer);
    if (component == nullptr) return absl::OkStatus();
    const IoDefinitions& outputs = component->output_definitions;
    const bool declared = kind == OutputKind::kParameter ? outputs.parameters.contains(key)
                                                         : outputs.artifacts.contains(key);
    if (!declared) {
      return Invalid(path, absl::StrCat("producer task '", producer, "' has no output ",
                                        kind == OutputKind::kParameter ? "parameter" : "artifact",
                                        " '", key, "'"));
    }
    return absl::OkStatus();
  }

  absl::Status ValidateTask(const TaskSpec& task, const DagSpec& dag, const ComponentSpec& parent,
                            const std::string& parent_name, const std::string& path) {
    auto callee_it = spec_.components.find(task.component_ref);
    if (callee_it == spec_.components.end()) {
      return Invalid(absl::StrCat(path, ".componentRef.name"),
                     absl::StrCat("component '", task.component_ref, "' does not exist"));
    }
    const ComponentSpec& callee = callee_it->second;
    const std::string& callee_name = task.component_ref;
    for (const std::string& upstream : task.dependent_tasks) {
      if (!dag.tasks.contains(upstream)) {
        return Invalid(absl::StrCat(path, ".dependentTasks"),
                       absl::StrCat("task '", upstream, "' does not exist"));
      }
    }

    for (const auto& [input, source] : task.input_parameters) {
      const std::string p = absl::StrCat(path, ".inputs.parameters.", input);
      auto declared = callee.input_definitions.parameters.find(input);
      if (declared == callee.input_definitions.parameters.end()) {
        if (!MayBeUndeclared(input)) {
          return Invalid(p, absl::StrCat("'", input, "' is not an input parameter of component '",
                                         callee_name, "'"));
        }
      } else {
        const bool final_status_input =
            declared->second.parameter_type == ParameterType::kTaskFinalStatus;
        // A sub-DAG that received a final status passes it on to its tasks.
        auto from_parent =
            source.kind == TaskInputParameter::Kind::kComponentInputParameter
                ? parent.input_definitions.parameters.find(source.component_input_parameter)
                : parent.input_definitions.parameters.end();
        const bool parent_final_status =
            from_parent != parent.input_definitions.parameters.end() &&
            from_parent->second.parameter_type == ParameterType::kTaskFinalStatus;
        const bool final_status_source =
            source.kind == TaskInputParameter::Kind::kTaskFinalStatus || parent_final_status;
        // Such a status may also be read as the dict it is (the SDK's `status: dict`).
        const bool as_struct =
            parent_final_status && declared->second.parameter_type == ParameterType::kStruct;
        if (final_status_input != final_status_source && !as_struct) {
          return Invalid(p,
                         "a TASK_FINAL_STATUS input takes exactly a taskFinalStatus source (or "
                         "the enclosing component's TASK_FINAL_STATUS input)");
        }
      }
      switch (source.kind) {
        case TaskInputParameter::Kind::kComponentInputParameter:
          if (!ParentHas(parent, parent_name, source.component_input_parameter,
                         /*artifact=*/false)) {
            return Invalid(
                p,
                absl::StrCat("component input parameter '", source.component_input_parameter,
                             "' is not an input of the enclosing component '", parent_name, "'"));
          }
          break;
        case TaskInputParameter::Kind::kTaskOutputParameter:
          RETURN_IF_ERROR(CheckProducerOutput(
              dag, source.producer_task, source.output_parameter_key, OutputKind::kParameter, p));
          break;
        case TaskInputParameter::Kind::kTaskFinalStatus:
          RETURN_IF_ERROR(CheckProducer(dag, source.producer_task, p));
          // Only an exit task (one that runs after the producer, whatever its outcome) can see
          // the producer's final status.
          if (std::find(task.dependent_tasks.begin(), task.dependent_tasks.end(),
                        source.producer_task) == task.dependent_tasks.end()) {
            return Invalid(p, absl::StrCat("taskFinalStatus producer '", source.producer_task,
                                           "' must be listed in dependentTasks"));
          }
          break;
        case TaskInputParameter::Kind::kRuntimeValue:
          break;
      }
    }

    for (const auto& [input, source] : task.input_artifacts) {
      const std::string p = absl::StrCat(path, ".inputs.artifacts.", input);
      if (!callee.input_definitions.artifacts.contains(input) &&
          !absl::StartsWith(input, "pipelinechannel--")) {
        return Invalid(p, absl::StrCat("'", input, "' is not an input artifact of component '",
                                       callee_name, "'"));
      }
      if (source.kind == TaskInputArtifact::Kind::kComponentInputArtifact) {
        if (!ParentHas(parent, parent_name, source.component_input_artifact, /*artifact=*/true)) {
          return Invalid(
              p, absl::StrCat("component input artifact '", source.component_input_artifact,
                              "' is not an input of the enclosing component '", parent_name, "'"));
        }
        continue;
      }
      RETURN_IF_ERROR(CheckProducerOutput(dag, source.producer_task, source.output_artifact_key,
                                          OutputKind::kArtifact, p));
    }

    if (task.parameter_iterator) {
      const ParameterIterator& it = *task.parameter_iterator;
      const std::string p = absl::StrCat(path, ".parameterIterator");
      if (!callee.input_definitions.parameters.contains(it.item_input)) {
        return Invalid(
            absl::StrCat(p, ".itemInput"),
            absl::StrCat("'", it.item_input, "' is not an input parameter of component '",
                         callee_name, "'"));
      }
      if (it.items_input_parameter && !task.input_parameters.contains(*it.items_input_parameter)) {
        return Invalid(absl::StrCat(p, ".items.inputParameter"),
                       absl::StrCat("'", *it.items_input_parameter,
                                    "' is not an input parameter of this task"));
      }
      if (it.items_raw) {
        absl::StatusOr<json> items = ParseJson(*it.items_raw);
        if (!items.ok() && IsParseLimitError(items.status())) {
          return Invalid(absl::StrCat(p, ".items.raw"), items.status().message());
        }
        if (!items.ok() || !items->is_array()) {
          return Invalid(absl::StrCat(p, ".items.raw"), "must be a JSON array");
        }
      }
    }
    if (task.artifact_iterator) {
      const ArtifactIterator& it = *task.artifact_iterator;
      const std::string p = absl::StrCat(path, ".artifactIterator");
      if (!callee.input_definitions.artifacts.contains(it.item_input)) {
        return Invalid(absl::StrCat(p, ".itemInput"),
                       absl::StrCat("'", it.item_input, "' is not an input artifact of component '",
                                    callee_name, "'"));
      }
      if (!task.input_artifacts.contains(it.items_input_artifact)) {
        return Invalid(
            absl::StrCat(p, ".items.inputArtifact"),
            absl::StrCat("'", it.items_input_artifact, "' is not an input artifact of this task"));
      }
    }

    for (const auto& [input, definition] : callee.input_definitions.parameters) {
      const bool from_iterator =
          task.parameter_iterator && task.parameter_iterator->item_input == input;
      if (!definition.is_optional && !definition.default_value && !from_iterator &&
          !task.input_parameters.contains(input)) {
        return Invalid(absl::StrCat(path, ".inputs.parameters"),
                       absl::StrCat("required input '", input, "' of component '", callee_name,
                                    "' is not supplied"));
      }
    }
    for (const auto& [input, definition] : callee.input_definitions.artifacts) {
      const bool from_iterator =
          task.artifact_iterator && task.artifact_iterator->item_input == input;
      if (!definition.is_optional && !from_iterator && !task.input_artifacts.contains(input)) {
        return Invalid(absl::StrCat(path, ".inputs.artifacts"),
                       absl::StrCat("required input artifact '", input, "' of component '",
                                    callee_name, "' is not supplied"));
      }
    }

    if (task.parallelism_limit < 0) {
      return Invalid(absl::StrCat(path, ".iteratorPolicy.parallelismLimit"),
                     absl::StrCat("must be >= 0, got ", task.parallelism_limit));
    }
    if (task.retry_policy) {
      const RetryPolicy& retry = *task.retry_policy;
      const std::string p = absl::StrCat(path, ".retryPolicy");
      if (retry.max_retry_count < 0) {
        return Invalid(absl::StrCat(p, ".maxRetryCount"),
                       absl::StrCat("must be >= 0, got ", retry.max_retry_count));
      }
      if (retry.backoff_duration < absl::ZeroDuration()) {
        return Invalid(absl::StrCat(p, ".backoffDuration"), "must be >= 0");
      }
      if (retry.backoff_factor < 0) {
        return Invalid(absl::StrCat(p, ".backoffFactor"),
                       absl::StrCat("must be >= 0, got ", retry.backoff_factor));
      }
      if (retry.backoff_max_duration < absl::ZeroDuration()) {
        return Invalid(absl::StrCat(p, ".backoffMaxDuration"), "must be >= 0");
      }
    }
    return absl::OkStatus();
  }

  absl::Status ValidateDagOutputs(const DagSpec& dag, const ComponentSpec& component,
                                  const std::string& dag_path) {
    for (const auto& [output, value] : dag.output_parameters) {
      const std::string p = absl::StrCat(dag_path, ".outputs.parameters.", output);
      if (!component.output_definitions.parameters.contains(output)) {
        return Invalid(p, absl::StrCat("'", output, "' is not in outputDefinitions.parameters"));
      }
      for (const ParameterSelector& selector : value.selectors) {
        RETURN_IF_ERROR(CheckProducerOutput(dag, selector.producer_subtask,
                                            selector.output_parameter_key, OutputKind::kParameter,
                                            p));
      }
    }
    for (const auto& [output, value] : dag.output_artifacts) {
      const std::string p = absl::StrCat(dag_path, ".outputs.artifacts.", output);
      if (!component.output_definitions.artifacts.contains(output)) {
        return Invalid(p, absl::StrCat("'", output, "' is not in outputDefinitions.artifacts"));
      }
      for (const ArtifactSelector& selector : value.selectors) {
        RETURN_IF_ERROR(CheckProducerOutput(dag, selector.producer_subtask,
                                            selector.output_artifact_key, OutputKind::kArtifact,
                                            p));
      }
    }
    return absl::OkStatus();
  }

  const PipelineSpec& spec_;
  // Component name -> the input parameters every caller passes.
  std::map<std::string, std::set<std::string>> passed_;
  std::map<std::string, std::set<std::string>> passed_artifacts_;
};

}  // namespace

absl::Status ValidatePipelineSpec(const PipelineSpec& spec) { return Validator(spec).Run(); }

std::vector<std::string> UpstreamTasks(const TaskSpec& task) {
  std::set<std::string> upstream(task.dependent_tasks.begin(), task.dependent_tasks.end());
  for (const auto& [name, source] : task.input_parameters) {
    if (source.kind == TaskInputParameter::Kind::kTaskOutputParameter ||
        source.kind == TaskInputParameter::Kind::kTaskFinalStatus) {
      upstream.insert(source.producer_task);
    }
  }
  for (const auto& [name, source] : task.input_artifacts) {
    if (source.kind == TaskInputArtifact::Kind::kTaskOutputArtifact) {
      upstream.insert(source.producer_task);
    }
  }
  return {upstream.begin(), upstream.end()};
}

absl::StatusOr<std::vector<std::string>> TopologicalOrder(const DagSpec& dag) {
  std::map<std::string, std::vector<std::string>> upstream;
  for (const auto& [name, task] : dag.tasks) {
    upstream[name] = UpstreamTasks(task);
    for (const std::string& u : upstream[name]) {
      if (!dag.tasks.contains(u)) {
        return absl::InvalidArgumentError(
            absl::StrCat("task '", name, "' depends on '", u, "', which does not exist"));
      }
    }
  }
  // Depth-first in name order: emitting a task after its upstream tasks gives a deterministic
  // order, and a task met again while still on the stack closes a cycle.
  enum class Mark { kNone, kOnStack, kDone };
  std::map<std::string, Mark> marks;
  std::vector<std::string> stack;
  std::vector<std::string> order;
  std::string cycle;
  auto visit = [&](auto&& self, const std::string& name) -> bool {
    Mark& mark = marks[name];
    if (mark == Mark::kDone) return true;
    if (mark == Mark::kOnStack) {
      auto start = std::find(stack.begin(), stack.end(), name);
      std::vector<std::string> path(start, stack.end());
      path.push_back(name);
      cycle = absl::StrJoin(path, " -> ");
      return false;
    }
    mark = Mark::kOnStack;
    stack.push_back(name);
    for (const std::string& u : upstream[name]) {
      if (!self(self, u)) return false;
    }
    stack.pop_back();
    marks[name] = Mark::kDone;
    order.push_back(name);
    return true;
  };
  for (const auto& [name, task] : dag.tasks) {
    if (!visit(visit, name)) {
      return absl::InvalidArgumentError(absl::StrCat("dependency cycle ", cycle));
    }
  }
  return order;
}

}  // namespace regatta::pipelines::ir
