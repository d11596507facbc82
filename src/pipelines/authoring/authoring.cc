#include "src/pipelines/authoring/authoring.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/time.h"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"
#include "src/pipelines/authoring/condition.h"
#include "src/pipelines/authoring/values.h"
#include "src/pipelines/ir/parse.h"
#include "src/pipelines/ir/validate.h"
#include "yaml-cpp/yaml.h"

namespace regatta::pipelines::authoring {
namespace {

using json = nlohmann::json;
using ir::ParameterType;

constexpr absl::string_view kDefaultImage = "alpine:3.20";
constexpr absl::string_view kChannelPrefix = "pipelinechannel--";
constexpr absl::string_view kStatusReference = "$status";

// ---- the authoring document

struct OutputDecl {
  bool artifact = false;
  ParameterType type = ParameterType::kString;
  std::string schema_title;
};

// Where an input's value comes from.
struct Ref {
  enum class Kind { kConstant, kParam, kTaskOutput, kItem, kStatus };
  Kind kind = Kind::kConstant;
  json constant;
  std::string name;        // the param, the producer task
  std::string key;         // the producer's output, the item's field
  bool collected = false;  // task.out[*]: the outputs of every iteration of a loop

  bool operator==(const Ref& other) const {
    return kind == other.kind && constant == other.constant && name == other.name &&
           key == other.key && collected == other.collected;
  }
};

// One level of sub-DAG around a task: the group task in the enclosing DAG and the group's
// component.
struct Level {
  ir::TaskSpec* task = nullptr;
  ir::ComponentSpec* component = nullptr;
  std::string name;  // e.g. for-loop-2
};

// A loop: a task's own (`for_each`) or one shared by several tasks (`loops:` + `loop: NAME`),
// whose tasks then sit in one for-loop sub-DAG and read each other's outputs per item.
struct LoopDecl {
  std::string path;  // "tasks.<task>.for_each" or "loops.<name>"
  std::string node;  // its name in dependency cycles: the task, or "loops.<name>"
  std::vector<std::string> members;
  std::optional<json> raw_items;
  std::optional<Ref> items;  // a list parameter or task output
  std::string items_text;    // the reference, read once every task is known
  std::string items_path;
  std::string as = "item";
  std::optional<ParameterType> item_type;
  int32_t parallelism = 0;

  // Set while emitting.
  std::optional<Level> level;
  int item_id = 0;
  std::string item_input;
  bool bound = false;
};

// `import:` an existing artifact (kfp's dsl.importer) instead of running a container.
struct ImportDecl {
  std::string schema_title;
  nlohmann::json metadata = nlohmann::json::object();
  bool reimport = false;
};

struct TaskDecl {
  std::string name;
  std::string path;  // "tasks.<name>" or "exit_handler.<name>"
  YAML::Node node;
  bool exit_task = false;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  std::vector<std::pair<std::string, Ref>> inputs;  // in declaration order
  std::map<std::string, OutputDecl> outputs;
  std::vector<std::string> after;
  std::string when;
  LoopDecl* loop = nullptr;          // in Compiler::loops_
  std::optional<ImportDecl> import;  // its uri is the input `uri`
  ir::CachingOptions caching;
  std::optional<ir::RetryPolicy> retry;
  ir::ResourceSpec resources;
  std::vector<ir::EnvVar> env;
};

const std::vector<absl::string_view> kTaskKeys = {
    "image", "command", "args",      "inputs", "outputs",   "after", "when",  "for_each",
    "loop",  "cache",   "cache_key", "retry",  "resources", "env",   "import"};

// A value as the enclosing DAGs pass it down: its name in each sub-DAG (pipelinechannel--...),
// its type, and its source in the scope it starts from (0 = the body DAG, i = inside level i).
struct Channel {
  std::string name;
  bool artifact = false;
  ir::ParameterSpec parameter;
  ir::ArtifactSpec artifact_spec;
  ir::TaskInputParameter parameter_source;
  ir::TaskInputArtifact artifact_source;
  int origin = 0;
};

// The source of a task input, resolved in some scope.
struct Source {
  bool artifact = false;
  ir::TaskInputParameter parameter;
  ir::TaskInputArtifact artifact_input;
};

ir::TaskInputParameter ComponentInputParameter(const std::string& name) {
  ir::TaskInputParameter source;
  source.kind = ir::TaskInputParameter::Kind::kComponentInputParameter;
  source.component_input_parameter = name;
  return source;
}

ir::TaskInputArtifact ComponentInputArtifact(const std::string& name) {
  ir::TaskInputArtifact source;
  source.kind = ir::TaskInputArtifact::Kind::kComponentInputArtifact;
  source.component_input_artifact = name;
  return source;
}

std::string ItemFieldSelector(const std::string& field) {
  return absl::StrCat("parseJson(string_value)[", json(field).dump(), "]");
}

class Compiler {
 public:
  absl::StatusOr<ir::PipelineSpec> Compile(absl::string_view text) {
    ASSIGN_OR_RETURN(YAML::Node doc, LoadYaml(text));
    if (!doc.IsMap()) return absl::InvalidArgumentError("expected a map with name and tasks");
    RETURN_IF_ERROR(CheckKeys(doc, "",
                              {"name", "description", "image", "cache", "params", "loops", "tasks",
                               "exit_handler", "outputs"}));
    RETURN_IF_ERROR(ReadHeader(doc));
    RETURN_IF_ERROR(ReadParams(Get(doc, "params")));
    RETURN_IF_ERROR(ReadTaskNames(doc));
    RETURN_IF_ERROR(ReadNamedLoops(Get(doc, "loops")));
    for (TaskDecl& task : tasks_) RETURN_IF_ERROR(ReadTask(task));
    for (auto& [path, loop] : loops_) RETURN_IF_ERROR(ReadLoopItems(loop));
    for (TaskDecl& task : tasks_) RETURN_IF_ERROR(ReadReferences(task));
    RETURN_IF_ERROR(CheckCycles());
    ASSIGN_OR_RETURN(pipeline_outputs_, Entries(Get(doc, "outputs"), "outputs"));

    Emit();
    for (TaskDecl& task : tasks_) RETURN_IF_ERROR(Bind(task));
    RETURN_IF_ERROR(BindPipelineOutputs());
    absl::Status valid = ir::ValidatePipelineSpec(spec_);
    if (!valid.ok()) {
      // The compiler should only emit valid IR; say so rather than blame the document.
      return absl::InternalError(absl::StrCat(
          "the compiled pipeline is not valid IR (a compiler bug): ", valid.message()));
    }
    return std::move(spec_);
  }

 private:
  // ---- reading

  absl::Status ReadHeader(const YAML::Node& doc) {
    const YAML::Node name = Get(doc, "name");
    if (!name) return Invalid("name", "missing (the pipeline's name)");
    ASSIGN_OR_RETURN(spec_.pipeline_info.name, StringOf(name, "name"));
    if (spec_.pipeline_info.name.empty()) return Invalid("name", "must not be empty");
    if (YAML::Node d = Get(doc, "description")) {
      ASSIGN_OR_RETURN(spec_.pipeline_info.description, StringOf(d, "description"));
    }
    default_image_ = std::string(kDefaultImage);
    if (YAML::Node image = Get(doc, "image")) {
      ASSIGN_OR_RETURN(default_image_, StringOf(image, "image"));
    }
    if (YAML::Node cache = Get(doc, "cache")) {
      ASSIGN_OR_RETURN(default_cache_, BoolOf(cache, "cache"));
    }
    return absl::OkStatus();
  }

  absl::Status ReadParams(const YAML::Node& node) {
    ASSIGN_OR_RETURN(auto entries, Entries(node, "params"));
    for (const auto& [name, value] : entries) {
      const std::string path = Child("params", name);
      if (!IsIdentifier(name)) {
        return Invalid(path,
                       "a parameter name is letters, digits and _ (not starting with a digit)");
      }
      ir::ParameterSpec spec;
      std::optional<std::string> type_name;
      if (value.IsScalar()) {
        type_name = value.Scalar();
      } else if (value.IsMap()) {
        RETURN_IF_ERROR(CheckKeys(value, path, {"type", "default", "description", "optional"}));
        if (YAML::Node t = Get(value, "type")) {
          ASSIGN_OR_RETURN(type_name, StringOf(t, Child(path, "type")));
        }
        if (YAML::Node d = Get(value, "default")) {
          ASSIGN_OR_RETURN(spec.default_value, ValueOf(d, Child(path, "default")));
          spec.is_optional = true;  // as the SDK writes a parameter with a default
        }
        if (YAML::Node d = Get(value, "description")) {
          ASSIGN_OR_RETURN(spec.description, StringOf(d, Child(path, "description")));
        }
        if (YAML::Node o = Get(value, "optional")) {
          ASSIGN_OR_RETURN(bool optional, BoolOf(o, Child(path, "optional")));
          spec.is_optional = spec.is_optional || optional;
        }
      } else {
        return Invalid(path, "expected a type (int, float, ...) or {type, default, description}");
      }
      if (type_name) {
        std::optional<ParameterType> type = ParameterTypeNamed(*type_name);
        if (!type) {
          return Invalid(value.IsMap() ? Child(path, "type") : path,
                         absl::StrCat("unknown type '", *type_name, "' (expected one of ",
                                      kParameterTypeNames, ")"));
        }
        spec.parameter_type = *type;
      } else if (spec.default_value) {
        spec.parameter_type = TypeOfValue(*spec.default_value);
      } else {
        return Invalid(path, "needs a type or a default");
      }
      if (spec.default_value &&
          !(spec.parameter_type == ParameterType::kNumberDouble &&
            spec.default_value->is_number()) &&
          TypeOfValue(*spec.default_value) != spec.parameter_type) {
        return Invalid(Child(path, "default"),
                       absl::StrCat(spec.default_value->dump(), " is not of type ", *type_name));
      }
      params_[name] = std::move(spec);
    }
    return absl::OkStatus();
  }

  absl::Status AddTaskName(const std::string& name, const YAML::Node& node, const std::string& path,
                           bool exit_task) {
    if (!IsTaskName(name)) {
      return Invalid(path,
                     "a task name is lowercase letters, digits and dashes, starting with a letter");
    }
    if (IsGroupName(name) || name == "params") {
      return Invalid(path, absl::StrCat("'", name, "' is reserved"));
    }
    if (task_index_.contains(name)) return Invalid(path, "a task of that name exists already");
    if (!node.IsMap()) return Invalid(path, "expected a map (image, command, inputs, ...)");
    TaskDecl task;
    task.name = name;
    task.path = path;
    task.node = node;
    task.exit_task = exit_task;
    task_index_[name] = tasks_.size();
    tasks_.push_back(std::move(task));
    return absl::OkStatus();
  }

  absl::Status ReadTaskNames(const YAML::Node& doc) {
    ASSIGN_OR_RETURN(auto entries, Entries(Get(doc, "tasks"), "tasks"));
    if (entries.empty()) return Invalid("tasks", "missing (at least one task)");
    for (const auto& [name, node] : entries) {
      RETURN_IF_ERROR(AddTaskName(name, node, Child("tasks", name), /*exit_task=*/false));
    }
    ASSIGN_OR_RETURN(auto exit, Entries(Get(doc, "exit_handler"), "exit_handler"));
    if (exit.size() > 1) {
      return Invalid("exit_handler", "expected one task: exit_handler: {NAME: {command: ...}}");
    }
    for (const auto& [name, node] : exit) {
      RETURN_IF_ERROR(AddTaskName(name, node, Child("exit_handler", name), /*exit_task=*/true));
    }
    return absl::OkStatus();
  }

  absl::Status ReadTask(TaskDecl& task) {
    const YAML::Node& node = task.node;
    const std::string& path = task.path;
    RETURN_IF_ERROR(CheckKeys(node, path, kTaskKeys));
    task.image = default_image_;
    if (YAML::Node image = Get(node, "image")) {
      ASSIGN_OR_RETURN(task.image, StringOf(image, Child(path, "image")));
      if (task.image.empty()) return Invalid(Child(path, "image"), "must not be empty");
    }
    if (YAML::Node import = Get(node, "import")) {
      RETURN_IF_ERROR(ReadImport(task, import, Child(path, "import")));
    }
    const YAML::Node command = Get(node, "command");
    if (task.import) {
      // No container: only the keys that place and cache the task apply.
      for (absl::string_view key :
           {"image", "command", "args", "inputs", "outputs", "retry", "resources", "env"}) {
        if (Get(node, key)) {
          return Invalid(Child(path, key), "an import task runs no container (import only)");
        }
      }
    } else if (!command) {
      return Invalid(Child(path, "command"), "missing");
    } else {
      ASSIGN_OR_RETURN(task.command, StringsOf(command, Child(path, "command")));
      if (task.command.empty()) return Invalid(Child(path, "command"), "must not be empty");
    }
    if (YAML::Node args = Get(node, "args")) {
      ASSIGN_OR_RETURN(task.args, StringsOf(args, Child(path, "args")));
    }

    ASSIGN_OR_RETURN(auto outputs, Entries(Get(node, "outputs"), Child(path, "outputs")));
    for (const auto& [name, type_node] : outputs) {
      const std::string p = Child(Child(path, "outputs"), name);
      if (!IsIdentifier(name)) {
        return Invalid(p, "an output name is letters, digits and _ (not starting with a digit)");
      }
      ASSIGN_OR_RETURN(std::string type_name, StringOf(type_node, p));
      OutputDecl output;
      if (std::optional<ParameterType> type = ParameterTypeNamed(type_name)) {
        output.type = *type;
      } else if (std::optional<std::string> schema = ArtifactSchemaNamed(type_name)) {
        output.artifact = true;
        output.schema_title = *schema;
      } else {
        return Invalid(
            p, absl::StrCat("unknown type '", type_name, "' (parameters: ", kParameterTypeNames,
                            "; artifacts: ", kArtifactTypeNames, ")"));
      }
      task.outputs[name] = output;
    }

    if (YAML::Node after = Get(node, "after")) {
      if (after.IsScalar()) {
        task.after.push_back(after.Scalar());
      } else {
        ASSIGN_OR_RETURN(task.after, StringsOf(after, Child(path, "after")));
      }
    }
    if (YAML::Node when = Get(node, "when")) {
      ASSIGN_OR_RETURN(task.when, StringOf(when, Child(path, "when")));
    }
    if (YAML::Node loop = Get(node, "for_each")) {
      if (Get(node, "loop")) return Invalid(Child(path, "loop"), "either for_each or loop");
      const std::string loop_path = Child(path, "for_each");
      ASSIGN_OR_RETURN(task.loop, ReadLoop(loop, loop_path, task.name));
    }
    if (YAML::Node loop = Get(node, "loop")) {
      ASSIGN_OR_RETURN(std::string name, StringOf(loop, Child(path, "loop")));
      auto it = loops_.find(Child("loops", name));
      if (it == loops_.end()) {
        return Invalid(Child(path, "loop"), absl::StrCat("no loop '", name, "' in loops"));
      }
      task.loop = &it->second;
    }
    if (task.loop != nullptr) task.loop->members.push_back(task.name);
    if (task.exit_task) {
      for (absl::string_view key : {"after", "when", "for_each", "loop"}) {
        if (Get(node, key)) {
          return Invalid(Child(path, key), "not allowed on the exit handler task");
        }
      }
    }

    task.caching.enable_cache = default_cache_;
    if (YAML::Node cache = Get(node, "cache")) {
      ASSIGN_OR_RETURN(task.caching.enable_cache, BoolOf(cache, Child(path, "cache")));
    }
    if (YAML::Node key = Get(node, "cache_key")) {
      ASSIGN_OR_RETURN(task.caching.cache_key, StringOf(key, Child(path, "cache_key")));
    }
    if (YAML::Node retry = Get(node, "retry")) {
      ASSIGN_OR_RETURN(task.retry, ReadRetry(retry, Child(path, "retry")));
    }
    if (YAML::Node resources = Get(node, "resources")) {
      ASSIGN_OR_RETURN(task.resources, ReadResources(resources, Child(path, "resources")));
    }
    ASSIGN_OR_RETURN(auto env, Entries(Get(node, "env"), Child(path, "env")));
    for (const auto& [name, value] : env) {
      if (!value.IsScalar()) return Invalid(Child(Child(path, "env"), name), "expected a string");
      task.env.push_back({name, value.Scalar()});
    }
    return absl::OkStatus();
  }

  absl::Status ReadImport(TaskDecl& task, const YAML::Node& node, const std::string& path) {
    RETURN_IF_ERROR(CheckKeys(node, path, {"uri", "type", "metadata", "reimport"}));
    if (!Get(node, "uri")) return Invalid(Child(path, "uri"), "missing (the artifact's URI)");
    ImportDecl import;
    import.schema_title = "system.Artifact";
    if (YAML::Node type = Get(node, "type")) {
      ASSIGN_OR_RETURN(std::string name, StringOf(type, Child(path, "type")));
      std::optional<std::string> schema = ArtifactSchemaNamed(name);
      if (!schema) {
        return Invalid(Child(path, "type"),
                       absl::StrCat("unknown artifact type '", name, "' (expected one of ",
                                    kArtifactTypeNames, ")"));
      }
      import.schema_title = *schema;
    }
    if (YAML::Node metadata = Get(node, "metadata")) {
      ASSIGN_OR_RETURN(import.metadata, ValueOf(metadata, Child(path, "metadata")));
      if (!import.metadata.is_object()) return Invalid(Child(path, "metadata"), "expected a map");
    }
    if (YAML::Node reimport = Get(node, "reimport")) {
      ASSIGN_OR_RETURN(import.reimport, BoolOf(reimport, Child(path, "reimport")));
    }
    OutputDecl output;
    output.artifact = true;
    output.schema_title = import.schema_title;
    task.outputs["artifact"] = output;  // the name the SDK gives an importer's output
    task.import = std::move(import);
    return absl::OkStatus();
  }

  absl::StatusOr<LoopDecl*> ReadLoop(const YAML::Node& node, const std::string& path,
                                     const std::string& cycle_node) {
    LoopDecl loop;
    loop.path = path;
    loop.node = cycle_node;
    // Not assigned later: assigning a YAML::Node writes through to the node it refers to.
    const YAML::Node items = node.IsMap() ? Get(node, "items") : node;
    if (node.IsMap()) {
      RETURN_IF_ERROR(CheckKeys(node, path, {"items", "parallelism", "as", "type"}));
      if (!items) return Invalid(Child(path, "items"), "missing");
      if (YAML::Node p = Get(node, "parallelism")) {
        ASSIGN_OR_RETURN(int64_t parallelism, IntOf(p, Child(path, "parallelism")));
        if (parallelism < 1 || parallelism > INT32_MAX) {
          return Invalid(Child(path, "parallelism"), "must be at least 1");
        }
        loop.parallelism = static_cast<int32_t>(parallelism);
      }
      if (YAML::Node as = Get(node, "as")) {
        ASSIGN_OR_RETURN(loop.as, StringOf(as, Child(path, "as")));
        if (!IsIdentifier(loop.as) || loop.as == "params") {
          return Invalid(Child(path, "as"), "expected a name (letters, digits, _), not params");
        }
      }
      if (YAML::Node t = Get(node, "type")) {
        ASSIGN_OR_RETURN(std::string type_name, StringOf(t, Child(path, "type")));
        loop.item_type = ParameterTypeNamed(type_name);
        if (!loop.item_type) {
          return Invalid(Child(path, "type"), absl::StrCat("unknown type '", type_name, "'"));
        }
      }
    }
    const std::string items_path = node.IsMap() ? Child(path, "items") : path;
    loop.items_path = items_path;
    if (items.IsScalar()) loop.items_text = items.Scalar();
    if (items.IsSequence()) {
      ASSIGN_OR_RETURN(loop.raw_items, ValueOf(items, items_path));
      if (loop.raw_items->empty()) return Invalid(items_path, "must not be empty");
    } else if (!items.IsScalar()) {
      return Invalid(items_path, "expected a list of items, params.NAME or TASK.OUTPUT");
    }
    if (task_index_.contains(loop.as)) {
      return Invalid(Child(path, "as"),
                     absl::StrCat("'", loop.as, "' is a task name; pick another"));
    }
    LoopDecl& stored = loops_[path];
    stored = std::move(loop);
    return &stored;
  }

  absl::Status ReadNamedLoops(const YAML::Node& node) {
    ASSIGN_OR_RETURN(auto entries, Entries(node, "loops"));
    for (const auto& [name, value] : entries) {
      const std::string path = Child("loops", name);
      if (!IsTaskName(name)) {
        return Invalid(
            path, "a loop name is lowercase letters, digits and dashes, starting with a letter");
      }
      RETURN_IF_ERROR(ReadLoop(value, path, path).status());
    }
    return absl::OkStatus();
  }

  // The items of a loop that come from a parameter or a task output.
  absl::Status ReadLoopItems(LoopDecl& loop) {
    if (loop.members.empty()) return Invalid(loop.path, "no task has this loop");
    if (loop.raw_items) return absl::OkStatus();
    const std::string& text = loop.items_text;
    const TaskDecl* producer = FindTask(text.substr(0, text.find('.')));
    if (producer != nullptr && producer->loop == &loop) {
      return Invalid(loop.items_path, "a loop cannot iterate over an output of its own tasks");
    }
    TaskDecl outside;  // items are read outside the loop
    ASSIGN_OR_RETURN(Ref items, ParseReference(outside, text, loop.items_path));
    const bool is_list = (items.kind == Ref::Kind::kParam &&
                          params_[items.name].parameter_type == ParameterType::kList) ||
                         (items.kind == Ref::Kind::kTaskOutput && !items.collected &&
                          !FindTask(items.name)->outputs.at(items.key).artifact &&
                          FindTask(items.name)->outputs.at(items.key).type == ParameterType::kList);
    if (!is_list) {
      return Invalid(
          loop.items_path,
          absl::StrCat("'", text, "' is not a list parameter or a list output of a task"));
    }
    loop.items = items;
    return absl::OkStatus();
  }

  absl::StatusOr<ir::RetryPolicy> ReadRetry(const YAML::Node& node, const std::string& path) {
    ir::RetryPolicy retry;
    retry.backoff_max_duration = absl::Hours(1);
    if (node.IsScalar()) {
      ASSIGN_OR_RETURN(int64_t max, IntOf(node, path));
      if (max < 0 || max > INT32_MAX) return Invalid(path, "must be >= 0");
      retry.max_retry_count = static_cast<int32_t>(max);
      return retry;
    }
    RETURN_IF_ERROR(CheckKeys(node, path, {"max", "backoff", "factor", "max_backoff"}));
    const YAML::Node max = Get(node, "max");
    if (!max) return Invalid(Child(path, "max"), "missing (the number of retries)");
    ASSIGN_OR_RETURN(int64_t count, IntOf(max, Child(path, "max")));
    if (count < 0 || count > INT32_MAX) return Invalid(Child(path, "max"), "must be >= 0");
    retry.max_retry_count = static_cast<int32_t>(count);
    if (YAML::Node b = Get(node, "backoff")) {
      ASSIGN_OR_RETURN(retry.backoff_duration, DurationOf(b, Child(path, "backoff")));
      if (retry.backoff_duration < absl::ZeroDuration()) {
        return Invalid(Child(path, "backoff"), "must be >= 0");
      }
    }
    if (YAML::Node f = Get(node, "factor")) {
      json factor = f.IsScalar() ? ScalarValue(f) : json(nullptr);
      if (!factor.is_number() || factor.get<double>() < 0) {
        return Invalid(Child(path, "factor"), "expected a number >= 0");
      }
      retry.backoff_factor = factor.get<double>();
    }
    if (YAML::Node m = Get(node, "max_backoff")) {
      ASSIGN_OR_RETURN(retry.backoff_max_duration, DurationOf(m, Child(path, "max_backoff")));
      if (retry.backoff_max_duration < absl::ZeroDuration() ||
          retry.backoff_max_duration > absl::Hours(1)) {
        return Invalid(Child(path, "max_backoff"), "must be between 0 and 1h (the IR's cap)");
      }
    }
    return retry;
  }

  absl::StatusOr<ir::ResourceSpec> ReadResources(const YAML::Node& node, const std::string& path) {
    RETURN_IF_ERROR(CheckKeys(node, path, {"cpu", "memory", "accelerator"}));
    ir::ResourceSpec resources;
    // Regatta's jobs request what they are limited to, so both are set, as the SDK writes
    // them for set_cpu_request + set_cpu_limit (numbers: cores and GB; strings as given).
    if (YAML::Node cpu = Get(node, "cpu")) {
      ASSIGN_OR_RETURN(std::string text, StringOf(cpu, Child(path, "cpu")));
      std::optional<double> cores = ParseQuantity(text);
      if (!cores) return Invalid(Child(path, "cpu"), "expected cores such as 2, 0.5 or 500m");
      resources.cpu_limit = resources.cpu_request = *cores;
      resources.resource_cpu_limit = resources.resource_cpu_request = text;
    }
    if (YAML::Node memory = Get(node, "memory")) {
      ASSIGN_OR_RETURN(std::string text, StringOf(memory, Child(path, "memory")));
      std::optional<double> bytes = ParseQuantity(text);
      if (!bytes || absl::EndsWith(text, "m")) {
        return Invalid(Child(path, "memory"), "expected bytes such as 64Mi, 2Gi or 1G");
      }
      resources.memory_limit = resources.memory_request = *bytes / 1e9;
      resources.resource_memory_limit = resources.resource_memory_request = text;
    }
    if (YAML::Node accelerator = Get(node, "accelerator")) {
      const std::string p = Child(path, "accelerator");
      RETURN_IF_ERROR(CheckKeys(accelerator, p, {"type", "count"}));
      ir::AcceleratorConfig config;
      const YAML::Node type = Get(accelerator, "type");
      if (!type) return Invalid(Child(p, "type"), "missing (e.g. nvidia.com/gpu)");
      ASSIGN_OR_RETURN(config.type, StringOf(type, Child(p, "type")));
      config.count = 1;
      if (YAML::Node count = Get(accelerator, "count")) {
        ASSIGN_OR_RETURN(config.count, IntOf(count, Child(p, "count")));
        if (config.count < 1) return Invalid(Child(p, "count"), "must be at least 1");
      }
      config.resource_type = config.type;
      config.resource_count = absl::StrCat(config.count);
      resources.accelerator = config;
    }
    return resources;
  }

  TaskDecl* FindTask(const std::string& name) {
    auto it = task_index_.find(name);
    return it == task_index_.end() ? nullptr : &tasks_[it->second];
  }

  // Reads a reference or constant. Strings of the form `a.b` (or `a.b[*]`) are references and
  // must resolve; `{value: X}` is the constant X whatever it looks like.
  absl::StatusOr<Ref> ReadRef(const TaskDecl& task, const YAML::Node& node,
                              const std::string& path) {
    Ref ref;
    if (node.IsMap() && node.size() == 1 && Get(node, "value")) {
      ASSIGN_OR_RETURN(ref.constant, ValueOf(Get(node, "value"), Child(path, "value")));
      return ref;
    }
    ASSIGN_OR_RETURN(ref.constant, ValueOf(node, path));
    if (ref.constant.is_null()) return Invalid(path, "expected a value or a reference, got null");
    if (!ref.constant.is_string()) return ref;
    return ParseReference(task, ref.constant.get<std::string>(), path);
  }

  static std::string LoopItemName(const TaskDecl& task) {
    return task.loop ? task.loop->as : std::string();
  }

  static bool LooksLikeReference(absl::string_view text) {
    absl::ConsumeSuffix(&text, "[*]");
    size_t dot = text.find('.');
    if (dot == absl::string_view::npos) return false;
    absl::string_view head = text.substr(0, dot), tail = text.substr(dot + 1);
    auto name_like = [](absl::string_view s) {
      return !s.empty() && (absl::ascii_isalpha(s[0]) || s[0] == '_') &&
             std::all_of(s.begin(), s.end(),
                         [](char c) { return absl::ascii_isalnum(c) || c == '_' || c == '-'; });
    };
    return name_like(head) && name_like(tail);
  }

  // `text` as a reference: params.P, TASK.OUT, TASK.OUT[*], ITEM, ITEM.FIELD, $status; any
  // other string is a constant.
  absl::StatusOr<Ref> ParseReference(const TaskDecl& task, const std::string& text,
                                     const std::string& path) {
    Ref ref;
    if (text == kStatusReference) {
      if (!task.exit_task) {
        return Invalid(path, "$status (the pipeline's final status) is only for the exit_handler");
      }
      ref.kind = Ref::Kind::kStatus;
      return ref;
    }
    const std::string as = LoopItemName(task);
    if (!as.empty() && (text == as || absl::StartsWith(text, absl::StrCat(as, ".")))) {
      ref.kind = Ref::Kind::kItem;
      if (text != as) ref.key = text.substr(as.size() + 1);
      if (text != as && !IsIdentifier(ref.key)) {
        return Invalid(path, absl::StrCat("'", ref.key, "' is not a field name"));
      }
      return ref;
    }
    if (!LooksLikeReference(text)) {
      ref.constant = text;
      return ref;
    }
    absl::string_view rest = text;
    ref.collected = absl::ConsumeSuffix(&rest, "[*]");
    const size_t dot = rest.find('.');
    const std::string head(rest.substr(0, dot));
    const std::string key(rest.substr(dot + 1));
    if (head == "params") {
      if (ref.collected) return Invalid(path, "[*] collects a task's outputs, not a parameter");
      if (!params_.contains(key)) {
        return Invalid(path, absl::StrCat("no parameter '", key, "' in params"));
      }
      ref.kind = Ref::Kind::kParam;
      ref.name = key;
      return ref;
    }
    const TaskDecl* producer = FindTask(head);
    if (producer == nullptr || producer->exit_task) {
      return Invalid(path, absl::StrCat("no task '", head, "' (write {value: '", text,
                                        "'} for a string constant)"));
    }
    if (task.exit_task) {
      return Invalid(path,
                     "the exit handler reads params, constants and $status, not outputs "
                     "of tasks");
    }
    if (producer->name == task.name) return Invalid(path, "a task cannot read its own output");
    if (!producer->outputs.contains(key)) {
      return Invalid(path, absl::StrCat("task '", head, "' has no output '", key, "'"));
    }
    if (!producer->when.empty()) {
      return Invalid(path, absl::StrCat("task '", head,
                                        "' runs only when its condition holds; its outputs "
                                        "cannot be read by other tasks"));
    }
    const bool same_loop = producer->loop != nullptr && producer->loop == task.loop;
    if (same_loop && ref.collected) {
      return Invalid(path, absl::StrCat("task '", head, "' runs in the same loop; read ", rest,
                                        " (this item's) without [*]"));
    }
    if (producer->loop && !same_loop && !ref.collected) {
      return Invalid(path, absl::StrCat("task '", head, "' runs once per item (for_each); write ",
                                        text, "[*] for the list of its outputs"));
    }
    if (!producer->loop && ref.collected) {
      return Invalid(path, absl::StrCat("[*] collects the outputs of a for_each task; '", head,
                                        "' has no for_each"));
    }
    ref.kind = Ref::Kind::kTaskOutput;
    ref.name = head;
    ref.key = key;
    return ref;
  }

  // The name of the input that carries `ref`: an input declared with it, else a derived one
  // declared now (`{{params.rows}}` declares input `rows`).
  absl::StatusOr<std::string> InputFor(TaskDecl& task, const Ref& ref, const std::string& text,
                                       const std::string& path) {
    for (const auto& [name, existing] : task.inputs) {
      if (existing == ref) return name;
    }
    std::string name;
    switch (ref.kind) {
      case Ref::Kind::kParam:
        name = ref.name;
        break;
      case Ref::Kind::kItem:
        name = ref.key.empty() ? task.loop->as : absl::StrCat(task.loop->as, "_", ref.key);
        break;
      case Ref::Kind::kTaskOutput:
        name = absl::StrCat(ref.name, "_", ref.key);
        std::replace(name.begin(), name.end(), '-', '_');
        break;
      case Ref::Kind::kStatus:
        name = "status";
        break;
      default:
        return Invalid(path, absl::StrCat("'{{", text,
                                          "}}' is not a placeholder (expected "
                                          "inputs.X, outputs.X, params.X, a task output or the "
                                          "loop item)"));
    }
    for (const auto& [existing, unused] : task.inputs) {
      if (existing == name) {
        return Invalid(path, absl::StrCat("'{{", text, "}}' needs an input named '", name,
                                          "' but inputs.", name, " is something else"));
      }
    }
    task.inputs.emplace_back(name, ref);
    return name;
  }

  const Ref* DeclaredInput(const TaskDecl& task, const std::string& name) {
    for (const auto& [existing, ref] : task.inputs) {
      if (existing == name) return &ref;
    }
    return nullptr;
  }

  bool InputIsArtifact(const Ref& ref) {
    if (ref.kind != Ref::Kind::kTaskOutput) return false;
    return FindTask(ref.name)->outputs.at(ref.key).artifact;
  }

  // Replaces the authoring placeholders in one command or args element with kfp's.
  absl::StatusOr<std::string> ResolvePlaceholders(TaskDecl& task, const std::string& text,
                                                  const std::string& path) {
    std::string out;
    size_t pos = 0;
    while (true) {
      const size_t open = text.find("{{", pos);
      if (open == std::string::npos) break;
      const size_t close = text.find("}}", open + 2);
      if (close == std::string::npos) return Invalid(path, "'{{' without '}}'");
      out.append(text, pos, open - pos);
      pos = close + 2;
      std::string inner(absl::StripAsciiWhitespace(text.substr(open + 2, close - open - 2)));
      if (inner == "$" || absl::StartsWith(inner, "$.")) {  // already a kfp placeholder
        out.append(text, open, close + 2 - open);
        continue;
      }
      absl::string_view body = inner;
      std::string part;  // path | uri of an artifact
      for (absl::string_view suffix : {".path", ".uri"}) {
        if ((absl::StartsWith(body, "inputs.") || absl::StartsWith(body, "outputs.")) &&
            std::count(body.begin(), body.end(), '.') == 2 && absl::ConsumeSuffix(&body, suffix)) {
          part = std::string(suffix.substr(1));
        }
      }
      if (absl::ConsumePrefix(&body, "outputs.")) {
        auto output = task.outputs.find(std::string(body));
        if (output == task.outputs.end()) {
          return Invalid(path, absl::StrCat("'{{", inner, "}}': task has no output '", body, "'"));
        }
        if (output->second.artifact) {
          absl::StrAppend(&out, "{{$.outputs.artifacts['", body, "'].",
                          part.empty() ? "path" : part, "}}");
        } else {
          if (!part.empty())
            return Invalid(path, absl::StrCat("'{{", inner,
                                              "}}': a parameter "
                                              "output has no ",
                                              part));
          absl::StrAppend(&out, "{{$.outputs.parameters['", body, "'].output_file}}");
        }
        continue;
      }
      std::string input;
      if (absl::ConsumePrefix(&body, "inputs.")) {
        input = std::string(body);
        if (DeclaredInput(task, input) == nullptr) {
          return Invalid(path, absl::StrCat("'{{", inner, "}}': no input '", input, "' in inputs"));
        }
      } else {
        ASSIGN_OR_RETURN(Ref ref, ParseReference(task, inner, path));
        if (ref.kind == Ref::Kind::kConstant) {
          return Invalid(path, absl::StrCat("'{{", inner,
                                            "}}' is not a placeholder (expected "
                                            "inputs.X, outputs.X, params.X, TASK.OUTPUT or the "
                                            "loop item)"));
        }
        ASSIGN_OR_RETURN(input, InputFor(task, ref, inner, path));
      }
      if (InputIsArtifact(*DeclaredInput(task, input))) {
        absl::StrAppend(&out, "{{$.inputs.artifacts['", input, "'].", part.empty() ? "path" : part,
                        "}}");
      } else {
        if (!part.empty()) {
          return Invalid(path, absl::StrCat("'{{", inner, "}}': a parameter has no ", part));
        }
        absl::StrAppend(&out, "{{$.inputs.parameters['", input, "']}}");
      }
    }
    out.append(text, pos);
    return out;
  }

  absl::Status ReadReferences(TaskDecl& task) {
    if (task.import) {
      const std::string path = Child(Child(task.path, "import"), "uri");
      ASSIGN_OR_RETURN(Ref uri, ReadRef(task, Get(Get(task.node, "import"), "uri"), path));
      bool is_string = true;  // a loop item is read as a string unless typed otherwise
      if (uri.kind == Ref::Kind::kConstant) is_string = uri.constant.is_string();
      if (uri.kind == Ref::Kind::kParam) {
        is_string = params_[uri.name].parameter_type == ParameterType::kString;
      }
      if (uri.kind == Ref::Kind::kTaskOutput) {
        const OutputDecl& output = FindTask(uri.name)->outputs.at(uri.key);
        is_string = !uri.collected && !output.artifact && output.type == ParameterType::kString;
      }
      if (uri.kind == Ref::Kind::kStatus) is_string = false;
      if (!is_string) return Invalid(path, "expected a URI string or a reference to one");
      task.inputs.emplace_back("uri", std::move(uri));
    }
    const std::string inputs_path = Child(task.path, "inputs");
    ASSIGN_OR_RETURN(auto inputs, Entries(Get(task.node, "inputs"), inputs_path));
    for (const auto& [name, value] : inputs) {
      const std::string p = Child(inputs_path, name);
      if (!IsIdentifier(name)) {
        return Invalid(p, "an input name is letters, digits and _ (not starting with a digit)");
      }
      ASSIGN_OR_RETURN(Ref ref, ReadRef(task, value, p));
      if (ref.kind == Ref::Kind::kConstant && ref.constant.is_null()) {
        return Invalid(p, "null is not a value");
      }
      task.inputs.emplace_back(name, std::move(ref));
    }
    for (const std::string& name : task.after) {
      const std::string p = Child(task.path, "after");
      const TaskDecl* upstream = FindTask(name);
      if (upstream == nullptr || upstream->exit_task) {
        return Invalid(p, absl::StrCat("no task '", name, "'"));
      }
      if (upstream->name == task.name) return Invalid(p, "a task cannot run after itself");
      // Waiting for a task in another loop waits for the loop, which ends whatever its
      // iterations' conditions say.
      if (!upstream->when.empty() && (!upstream->loop || upstream->loop == task.loop)) {
        return Invalid(p, absl::StrCat("task '", name,
                                       "' has a when condition; tasks cannot "
                                       "wait for a conditional task"));
      }
    }
    if (!task.when.empty()) {
      // Parse now so reference errors are reported before any IR is built.
      RETURN_IF_ERROR(TranslateWhen(task, nullptr).status());
    }
    for (size_t i = 0; i < task.command.size(); ++i) {
      ASSIGN_OR_RETURN(
          task.command[i],
          ResolvePlaceholders(task, task.command[i], absl::StrCat(task.path, ".command[", i, "]")));
    }
    for (size_t i = 0; i < task.args.size(); ++i) {
      ASSIGN_OR_RETURN(
          task.args[i],
          ResolvePlaceholders(task, task.args[i], absl::StrCat(task.path, ".args[", i, "]")));
    }
    return absl::OkStatus();
  }

  // The tasks `task` waits for, by authoring task name (the items of its loop included).
  std::set<std::string> Upstream(const TaskDecl& task) {
    std::set<std::string> upstream(task.after.begin(), task.after.end());
    for (const auto& [name, ref] : task.inputs) {
      if (ref.kind == Ref::Kind::kTaskOutput) upstream.insert(ref.name);
    }
    if (task.loop && task.loop->items && task.loop->items->kind == Ref::Kind::kTaskOutput) {
      upstream.insert(task.loop->items->name);
    }
    for (const std::string& name : when_producers_[task.name]) upstream.insert(name);
    return upstream;
  }

  // Cycles are found on the authoring names (a group's number would not help the user): among
  // the tasks and loops of the body, and among the tasks of each shared loop.
  absl::Status CheckCycles() {
    std::map<std::string, ir::DagSpec> graphs;  // "" = the body, else a loop's path
    for (const TaskDecl& task : tasks_) {
      const std::string node = task.loop ? task.loop->node : task.name;
      graphs[""].tasks[node];
      if (task.loop) graphs[task.loop->path].tasks[task.name];
      for (const std::string& name : Upstream(task)) {
        const TaskDecl& upstream = *FindTask(name);
        if (task.loop && upstream.loop == task.loop) {
          graphs[task.loop->path].tasks[task.name].dependent_tasks.push_back(name);
        } else {
          graphs[""].tasks[node].dependent_tasks.push_back(upstream.loop ? upstream.loop->node
                                                                         : name);
        }
      }
    }
    for (const auto& [loop, graph] : graphs) {
      absl::StatusOr<std::vector<std::string>> order = ir::TopologicalOrder(graph);
      if (!order.ok()) return Invalid(loop.empty() ? "tasks" : loop, order.status().message());
    }
    return absl::OkStatus();
  }

  // ---- emitting

  int NextId() { return next_id_++; }

  ir::ComponentSpec& AddComponent(const std::string& name) {
    return spec_.components[absl::StrCat("comp-", name)];
  }

  ir::TaskSpec& AddTask(ir::DagSpec& dag, const std::string& name, const std::string& component) {
    ir::TaskSpec& task = dag.tasks[name];
    task.name = name;
    task.display_name = name;
    task.component_ref = absl::StrCat("comp-", component);
    return task;
  }

  // Builds the components, executors and group sub-DAGs; inputs are bound afterwards, once every
  // loop exists (a task may collect the outputs of a loop declared after it).
  void Emit() {
    spec_.schema_version = "2.1.0";
    spec_.sdk_version = "regatta-authoring";
    spec_.root.input_definitions.parameters = params_;
    spec_.root.dag.emplace();
    body_ = &spec_.root;
    const bool has_exit_task = std::any_of(tasks_.begin(), tasks_.end(),
                                           [](const TaskDecl& task) { return task.exit_task; });
    if (has_exit_task) {
      exit_group_ = absl::StrCat("exit-handler-", NextId());
      ir::ComponentSpec& group = AddComponent(exit_group_);
      group.dag.emplace();
      ir::TaskSpec& group_task = AddTask(*spec_.root.dag, exit_group_, exit_group_);
      group_task.display_name = spec_.pipeline_info.name;
      body_ = &group;
      body_task_ = &group_task;
    }
    for (TaskDecl& task : tasks_) {
      ir::ComponentSpec& component = AddComponent(task.name);
      component.executor_label = absl::StrCat("exec-", task.name);
      for (const auto& [name, output] : task.outputs) {
        if (output.artifact) {
          component.output_definitions.artifacts[name] = ArtifactSpecOf(output.schema_title, false);
        } else {
          component.output_definitions.parameters[name] = ParameterSpecOf(output.type);
        }
      }
      ir::ExecutorSpec& executor = spec_.executors[component.executor_label];
      if (task.import) {
        executor.kind = ir::ExecutorSpec::Kind::kImporter;
        ir::ImporterSpec& importer = executor.importer;
        const Ref& uri = task.inputs.front().second;
        if (uri.kind == Ref::Kind::kConstant) {
          importer.artifact_uri.constant = uri.constant;
        } else {
          importer.artifact_uri.runtime_parameter = "uri";
        }
        importer.type_schema = ArtifactSpecOf(task.import->schema_title, false).artifact_type;
        importer.metadata = task.import->metadata;
        importer.reimport = task.import->reimport;
      }
      executor.container.image = task.image;
      executor.container.command = task.command;
      executor.container.args = task.args;
      executor.container.env = task.env;
      executor.container.resources = task.resources;

      ir::DagSpec* dag = task.exit_task ? &*spec_.root.dag : &*body_->dag;
      std::vector<Level>& levels = levels_[task.name];
      if (task.loop) {
        LoopDecl& loop = *task.loop;
        if (!loop.level) {  // its first task: the loop is numbered where it first appears
          if (loop.raw_items) loop.item_id = NextId();
          Level level;
          level.name = absl::StrCat("for-loop-", NextId());
          level.component = &AddComponent(level.name);
          level.component->dag.emplace();
          level.task = &AddTask(*dag, level.name, level.name);
          level.task->parallelism_limit = loop.parallelism;
          loop.level = level;
        }
        dag = &*loop.level->component->dag;
        levels.push_back(*loop.level);
      }
      if (!task.when.empty()) {
        Level level;
        level.name = absl::StrCat("condition-", NextId());
        level.component = &AddComponent(level.name);
        level.component->dag.emplace();
        level.task = &AddTask(*dag, level.name, level.name);
        dag = &*level.component->dag;
        levels.push_back(level);
      }
      ir::TaskSpec& spec_task = AddTask(*dag, task.name, task.name);
      spec_task.caching_options = task.caching;
      spec_task.retry_policy = task.retry;
      tasks_by_name_[task.name] = &spec_task;
    }
  }

  // The body-level DAG task that stands for authoring task `name`: itself, or its outermost
  // group.
  std::string UnitOf(const std::string& name) {
    const std::vector<Level>& levels = levels_[name];
    return levels.empty() ? name : levels.front().name;
  }

  // The channel of a parameter or a task output, starting in the body DAG.
  absl::StatusOr<Channel> BodyChannel(const Ref& ref) {
    Channel channel;
    if (ref.kind == Ref::Kind::kParam) {
      channel.name = absl::StrCat(kChannelPrefix, ref.name);
      channel.parameter = ParameterSpecOf(params_.at(ref.name).parameter_type);
      if (body_ == &spec_.root) {
        channel.parameter_source = ComponentInputParameter(ref.name);
      } else {
        // Inside the exit handler's sub-DAG the parameters arrive as channels of its own.
        body_->input_definitions.parameters[channel.name] = channel.parameter;
        body_task_->input_parameters[channel.name] = ComponentInputParameter(ref.name);
        channel.parameter_source = ComponentInputParameter(channel.name);
      }
      return channel;
    }
    const TaskDecl& producer = *FindTask(ref.name);
    const OutputDecl& output = producer.outputs.at(ref.key);
    std::string producer_task = ref.name;
    std::string key = ref.key;
    if (ref.collected) {
      // The loop's sub-DAG exports the list of its iterations' outputs, as dsl.Collected does.
      const Level& loop = *producer.loop->level;
      producer_task = loop.name;
      key = absl::StrCat(kChannelPrefix, ref.name, "-", ref.key);
      if (output.artifact) {
        loop.component->output_definitions.artifacts[key] =
            ArtifactSpecOf(output.schema_title, true);
        loop.component->dag->output_artifacts[key].selectors = {{ref.name, ref.key}};
      } else {
        loop.component->output_definitions.parameters[key] = ParameterSpecOf(ParameterType::kList);
        loop.component->dag->output_parameters[key].selectors = {{ref.name, ref.key}};
      }
    }
    channel.name = absl::StrCat(kChannelPrefix, producer_task, "-", key);
    channel.artifact = output.artifact;
    if (output.artifact) {
      channel.artifact_spec = ArtifactSpecOf(output.schema_title, ref.collected);
      channel.artifact_source.kind = ir::TaskInputArtifact::Kind::kTaskOutputArtifact;
      channel.artifact_source.producer_task = producer_task;
      channel.artifact_source.output_artifact_key = key;
    } else {
      channel.parameter = ParameterSpecOf(ref.collected ? ParameterType::kList : output.type);
      channel.parameter_source.kind = ir::TaskInputParameter::Kind::kTaskOutputParameter;
      channel.parameter_source.producer_task = producer_task;
      channel.parameter_source.output_parameter_key = key;
    }
    return channel;
  }

  // The type of the loop item (or of one of its fields): given, else that of the first literal
  // item or of the first element of the list parameter's default, else STRING.
  ParameterType ItemType(const TaskDecl& task, const std::string& field) {
    const LoopDecl& loop = *task.loop;
    if (field.empty() && loop.item_type) return *loop.item_type;
    std::optional<json> first;
    if (loop.raw_items) {
      first = loop.raw_items->front();
    } else if (loop.items->kind == Ref::Kind::kParam) {
      const auto& default_value = params_.at(loop.items->name).default_value;
      if (default_value && default_value->is_array() && !default_value->empty()) {
        first = default_value->front();
      }
    }
    if (first && !field.empty()) {
      first = first->is_object() && first->contains(field) ? std::optional<json>(first->at(field))
                                                           : std::nullopt;
    }
    return first ? TypeOfValue(*first) : ParameterType::kString;
  }

  absl::StatusOr<Channel> ChannelOf(TaskDecl& task, const Ref& ref) {
    const TaskDecl* producer = ref.kind == Ref::Kind::kTaskOutput ? FindTask(ref.name) : nullptr;
    if (producer != nullptr && producer->loop != nullptr && producer->loop == task.loop) {
      // A task of the same loop: this iteration's output, from inside the loop's sub-DAG.
      ASSIGN_OR_RETURN(Channel channel, BodyChannel(ref));
      channel.origin = 1;
      return channel;
    }
    if (ref.kind != Ref::Kind::kItem) return BodyChannel(ref);
    Channel channel;
    channel.name = task.loop->item_input;
    channel.parameter = ParameterSpecOf(ItemType(task, ""));
    channel.parameter_source = ComponentInputParameter(channel.name);
    channel.origin = 1;  // the loop is always the outermost level
    return channel;
  }

  // Passes `channel` down the levels of `task` to scope `scope` and returns its source there.
  Source Thread(const TaskDecl& task, const Channel& channel, int scope) {
    Source source;
    source.artifact = channel.artifact;
    source.parameter = channel.parameter_source;
    source.artifact_input = channel.artifact_source;
    std::vector<Level>& levels = levels_[task.name];
    for (int i = channel.origin + 1; i <= scope; ++i) {
      Level& level = levels[i - 1];
      if (channel.artifact) {
        level.task->input_artifacts[channel.name] = source.artifact_input;
        level.component->input_definitions.artifacts[channel.name] = channel.artifact_spec;
        source.artifact_input = ComponentInputArtifact(channel.name);
      } else {
        level.task->input_parameters[channel.name] = source.parameter;
        level.component->input_definitions.parameters[channel.name] = channel.parameter;
        source.parameter = ComponentInputParameter(channel.name);
      }
    }
    return source;
  }

  // The CEL of `task`'s when. With `scope` null only checks the references; else binds them as
  // inputs of the condition task (level `*scope`).
  absl::StatusOr<std::string> TranslateWhen(TaskDecl& task, const int* scope) {
    const std::string path = Child(task.path, "when");
    std::set<std::string>& producers = when_producers_[task.name];
    auto resolve = [&](const std::string& word) -> absl::StatusOr<std::string> {
      ASSIGN_OR_RETURN(Ref ref, ParseReference(task, word, path));
      if (ref.kind == Ref::Kind::kConstant) {
        return Invalid(path, absl::StrCat("'", word,
                                          "' is not params.NAME, TASK.OUTPUT or the "
                                          "loop item"));
      }
      if (ref.kind == Ref::Kind::kTaskOutput) {
        if (FindTask(ref.name)->outputs.at(ref.key).artifact) {
          return Invalid(path, absl::StrCat("'", word,
                                            "' is an artifact; a condition compares "
                                            "parameters"));
        }
        producers.insert(ref.name);
      }
      if (scope == nullptr) return absl::StrCat("inputs.parameter_values['", word, "']");
      ASSIGN_OR_RETURN(Channel channel, ChannelOf(task, ref));
      ParameterType type = channel.parameter.parameter_type;
      if (ref.kind == Ref::Kind::kItem && !ref.key.empty()) {
        // A field of the loop item gets a channel of its own, selected from the item.
        Source item = Thread(task, channel, *scope - 1);
        const std::string name = absl::StrCat(channel.name, "-subvar-", ref.key);
        ir::TaskInputParameter source = item.parameter;
        source.parameter_expression_selector = ItemFieldSelector(ref.key);
        Level& level = levels_[task.name][*scope - 1];
        type = ItemType(task, ref.key);
        level.task->input_parameters[name] = source;
        level.component->input_definitions.parameters[name] = ParameterSpecOf(type);
        channel.name = name;
      } else {
        Thread(task, channel, *scope);
      }
      const std::string operand = absl::StrCat("inputs.parameter_values['", channel.name, "']");
      switch (type) {
        case ParameterType::kNumberInteger:
          return absl::StrCat("int(", operand, ")");
        case ParameterType::kNumberDouble:
          return absl::StrCat("double(", operand, ")");
        default:
          return operand;
      }
    };
    absl::StatusOr<std::string> cel = TranslateCondition(task.when, resolve);
    if (!cel.ok() && !absl::StartsWith(cel.status().message(), path)) {
      return Invalid(path, cel.status().message());
    }
    return cel;
  }

  absl::Status Bind(TaskDecl& task) {
    std::vector<Level>& levels = levels_[task.name];
    const int depth = static_cast<int>(levels.size());
    ir::TaskSpec& spec_task = *tasks_by_name_[task.name];
    ir::ComponentSpec& component = spec_.components[spec_task.component_ref];
    ir::TaskSpec& unit = levels.empty() ? spec_task : *levels.front().task;

    if (task.loop && !task.loop->bound) {
      task.loop->bound = true;
      ir::TaskSpec& loop_task = *levels.front().task;
      ir::ComponentSpec& loop_component = *levels.front().component;
      ir::ParameterIterator iterator;
      if (task.loop->raw_items) {
        iterator.items_raw = PythonJson(*task.loop->raw_items);
        iterator.item_input = absl::StrCat(kChannelPrefix, "loop-item-param-", task.loop->item_id);
      } else {
        ASSIGN_OR_RETURN(Channel items, BodyChannel(*task.loop->items));
        Thread(task, items, 1);
        iterator.items_input_parameter = items.name;
        iterator.item_input = absl::StrCat(items.name, "-loop-item");
      }
      task.loop->item_input = iterator.item_input;
      loop_component.input_definitions.parameters[iterator.item_input] =
          ParameterSpecOf(ItemType(task, ""));
      loop_task.parameter_iterator = iterator;
    }
    if (!task.when.empty()) {
      const int scope = depth;  // the condition is the innermost level
      ASSIGN_OR_RETURN(levels.back().task->trigger_policy.condition, TranslateWhen(task, &scope));
    }

    for (const auto& [name, ref] : task.inputs) {
      if (ref.kind == Ref::Kind::kConstant) {
        component.input_definitions.parameters[name] = ParameterSpecOf(TypeOfValue(ref.constant));
        ir::TaskInputParameter& input = spec_task.input_parameters[name];
        input.kind = ir::TaskInputParameter::Kind::kRuntimeValue;
        input.constant = ref.constant;
        continue;
      }
      if (ref.kind == Ref::Kind::kStatus) {
        ir::ParameterSpec status = ParameterSpecOf(ParameterType::kTaskFinalStatus);
        status.is_optional = true;
        component.input_definitions.parameters[name] = status;
        ir::TaskInputParameter& input = spec_task.input_parameters[name];
        input.kind = ir::TaskInputParameter::Kind::kTaskFinalStatus;
        input.producer_task = exit_group_;
        continue;
      }
      if (task.exit_task) {
        // The exit task sits in the root DAG, beside the exit handler's sub-DAG, and reads only
        // parameters (ParseReference refuses task outputs there).
        component.input_definitions.parameters[name] =
            ParameterSpecOf(params_.at(ref.name).parameter_type);
        spec_task.input_parameters[name] = ComponentInputParameter(ref.name);
        continue;
      }
      ASSIGN_OR_RETURN(Channel channel, ChannelOf(task, ref));
      Source source = Thread(task, channel, depth);
      if (source.artifact) {
        component.input_definitions.artifacts[name] = channel.artifact_spec;
        spec_task.input_artifacts[name] = source.artifact_input;
      } else {
        ParameterType type = channel.parameter.parameter_type;
        if (ref.kind == Ref::Kind::kItem && !ref.key.empty()) {
          source.parameter.parameter_expression_selector = ItemFieldSelector(ref.key);
          type = ItemType(task, ref.key);
        }
        component.input_definitions.parameters[name] = ParameterSpecOf(type);
        spec_task.input_parameters[name] = source.parameter;
      }
    }

    // A task of the same loop is waited for inside the loop's sub-DAG (by the task, or its
    // condition); any other by the task's unit in the body (its loop, its condition or itself),
    // which a shared loop gathers from all its tasks.
    ir::TaskSpec& in_loop = task.loop && levels.size() == 2 ? *levels[1].task : spec_task;
    for (const std::string& upstream : Upstream(task)) {
      if (task.loop && FindTask(upstream)->loop == task.loop) {
        AddDependency(in_loop, upstream);
      } else {
        AddDependency(unit, UnitOf(upstream));
      }
    }
    if (task.exit_task) {
      AddDependency(spec_task, exit_group_);
      spec_task.trigger_policy.strategy = ir::TriggerStrategy::kAllUpstreamTasksCompleted;
    }
    return absl::OkStatus();
  }

  static void AddDependency(ir::TaskSpec& task, const std::string& upstream) {
    auto at = std::lower_bound(task.dependent_tasks.begin(), task.dependent_tasks.end(), upstream);
    if (at == task.dependent_tasks.end() || *at != upstream)
      task.dependent_tasks.insert(at, upstream);
  }

  // `outputs: {NAME: TASK.OUTPUT}`: the pipeline's outputs (root outputDefinitions).
  absl::Status BindPipelineOutputs() {
    for (const auto& [name, node] : pipeline_outputs_) {
      const std::string path = Child("outputs", name);
      if (!IsIdentifier(name)) return Invalid(path, "expected a name (letters, digits, _)");
      if (!exit_group_.empty()) {
        return Invalid(path, "pipeline outputs cannot be combined with an exit_handler");
      }
      if (!node.IsScalar()) return Invalid(path, "expected TASK.OUTPUT");
      TaskDecl none;
      none.name = "";
      ASSIGN_OR_RETURN(Ref ref, ParseReference(none, node.Scalar(), path));
      if (ref.kind != Ref::Kind::kTaskOutput) return Invalid(path, "expected TASK.OUTPUT");
      ASSIGN_OR_RETURN(Channel channel, BodyChannel(ref));
      ir::DagSpec& dag = *spec_.root.dag;
      const std::string& producer = channel.artifact ? channel.artifact_source.producer_task
                                                     : channel.parameter_source.producer_task;
      if (channel.artifact) {
        spec_.root.output_definitions.artifacts[name] = channel.artifact_spec;
        dag.output_artifacts[name].selectors = {
            {producer, channel.artifact_source.output_artifact_key}};
      } else {
        spec_.root.output_definitions.parameters[name] = channel.parameter;
        dag.output_parameters[name].selectors = {
            {producer, channel.parameter_source.output_parameter_key}};
      }
    }
    return absl::OkStatus();
  }

  ir::PipelineSpec spec_;
  std::string default_image_;
  bool default_cache_ = true;
  std::map<std::string, ir::ParameterSpec> params_;
  std::vector<TaskDecl> tasks_;
  std::map<std::string, size_t> task_index_;
  std::vector<std::pair<std::string, YAML::Node>> pipeline_outputs_;
  std::map<std::string, std::set<std::string>> when_producers_;

  int next_id_ = 1;
  ir::ComponentSpec* body_ = nullptr;  // the DAG holding the tasks: root or the exit handler's
  ir::TaskSpec* body_task_ = nullptr;  // the exit handler's task in root, if any
  std::string exit_group_;
  std::map<std::string, std::vector<Level>> levels_;
  std::map<std::string, ir::TaskSpec*> tasks_by_name_;
  std::map<std::string, LoopDecl> loops_;  // by path; nodes stay put for TaskDecl::loop
};

absl::StatusOr<YAML::Node> FirstDocument(absl::string_view text) {
  ASSIGN_OR_RETURN(std::vector<YAML::Node> docs, LoadAllYaml(text));
  if (docs.empty()) return absl::InvalidArgumentError("empty document");
  return docs.front();
}

}  // namespace

absl::StatusOr<ir::PipelineSpec> CompileAuthoring(absl::string_view yaml_text) {
  return Compiler().Compile(yaml_text);
}

bool IsAuthoringDocument(absl::string_view text) {
  // Any key of the IR decides; else it is authoring, so a misspelt key (`task:`) is reported
  // by the authoring compiler rather than as a missing `root`.
  static constexpr const char* kIrKeys[] = {"root",         "schemaVersion",  "sdkVersion",
                                            "pipelineInfo", "deploymentSpec", "components"};
  if (std::optional<nlohmann::json> json = ir::ParseJsonObject(text)) {
    for (const char* ir_key : kIrKeys) {
      if (json->contains(ir_key)) return false;
    }
    return true;
  }
  absl::StatusOr<YAML::Node> doc = FirstDocument(text);
  if (!doc.ok() || !doc->IsMap()) return false;
  for (const char* ir_key : kIrKeys) {
    if ((*doc)[ir_key]) return false;
  }
  return true;
}

absl::StatusOr<ir::PipelineSpec> LoadAnyPipelineFile(absl::string_view text) {
  if (IsAuthoringDocument(text)) return CompileAuthoring(text);
  return ir::LoadPipelineSpec(text);
}

}  // namespace regatta::pipelines::authoring
