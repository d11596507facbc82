#include "src/cli/job_file.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "src/cli/yaml_json.h"
#include "src/common/pod/armada.h"
#include "src/common/status_macros.h"

namespace regatta::cli {
namespace {

using nlohmann::json;
using regatta::v1::JobSubmitRequestItem;
using regatta::v1::SubmitJobsRequest;
using regatta::v1::TaskSpec;

absl::Status Error(absl::string_view path, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(path, ": ", problem));
}

// A key as compared: lower case, without '_' ("jobSetId", "job_set_id" → "jobsetid").
std::string Normalized(absl::string_view name) {
  std::string out;
  for (char c : name) {
    if (c != '_') out.push_back(absl::ascii_tolower(c));
  }
  return out;
}

// Armada's ingress[].type is deprecated there and read by nothing: left out, so that files
// which still carry it parse. The other keys are converted as they are.
absl::StatusOr<YAML::Node> WithoutIngressType(const YAML::Node& value) {
  if (!value.IsSequence()) return value;
  YAML::Node copy = YAML::Clone(value);
  for (size_t i = 0; i < copy.size(); ++i) {
    YAML::Node entry = copy[i];
    if (!entry.IsMap()) continue;
    std::vector<std::string> types;
    for (const auto& kv : entry) {
      if (kv.first.IsScalar() && Normalized(kv.first.Scalar()) == "type") {
        types.push_back(kv.first.Scalar());
      }
    }
    for (const std::string& key : types) entry.remove(key);
  }
  return copy;
}

absl::StatusOr<std::string> RequiredString(const YAML::Node& node, absl::string_view path) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    return Error(path, absl::StrCat("expected a non-empty string, got ", DescribeNode(node)));
  }
  return node.Scalar();
}

absl::StatusOr<int64_t> ParseCount(const YAML::Node& node, absl::string_view path) {
  int64_t count = 0;
  if (!node.IsScalar() || !absl::SimpleAtoi(node.Scalar(), &count) || count < 1) {
    return Error(path, absl::StrCat("expected a positive integer, got ", DescribeNode(node)));
  }
  if (count > kMaxJobsPerFile) {
    return Error(path, absl::StrCat("at most ", kMaxJobsPerFile, " jobs per file"));
  }
  return count;
}

// One job entry: the item plus how many copies to submit.
struct ParsedJob {
  JobSubmitRequestItem item;
  int64_t count = 1;
};

absl::StatusOr<ParsedJob> ParseJob(const YAML::Node& node, const std::string& path) {
  const auto* item_type = JobSubmitRequestItem::descriptor();
  const auto* task_type = TaskSpec::descriptor();
  if (!node.IsMap())
    return Error(path, absl::StrCat("expected a mapping, got ", DescribeNode(node)));
  ASSIGN_OR_RETURN(auto entries, MappingEntries(node, path));

  ParsedJob parsed;
  json item = json::object();
  // Task fields written directly on the job, by JSON name, with the key as written (for errors).
  std::vector<std::pair<std::string, std::pair<std::string, json>>> task_fields;
  std::set<const google::protobuf::FieldDescriptor*> seen;
  // Armada's podSpecs (a list of one pod spec), as the path of its one element and the node.
  std::optional<std::pair<std::string, YAML::Node>> pod_specs;
  for (const auto& [key, value] : entries) {
    std::string child = JoinPath(path, key);
    if (key == "count") {
      ASSIGN_OR_RETURN(parsed.count, ParseCount(value, child));
      continue;
    }
    if (Normalized(key) == "podspecs") {
      if (pod_specs.has_value()) return Error(child, "field given twice");
      if (!value.IsDefined() || value.IsNull()) continue;
      if (!value.IsSequence()) {
        return Error(child,
                     absl::StrCat("expected a list of pod specs, got ", DescribeNode(value)));
      }
      if (value.size() != 1) {
        return Error(child, value.size() == 0
                                ? std::string("empty: give the job's pod spec")
                                : absl::StrCat(value.size(),
                                               " pod specs: a job runs one pod, in Armada as in "
                                               "Regatta (submit one job per pod spec)"));
      }
      pod_specs.emplace(IndexPath(child, 0), value[0]);
      continue;
    }
    const auto* field = FindField(item_type, key);
    const bool on_task = field == nullptr;
    if (on_task) field = FindField(task_type, key);
    if (field == nullptr) return UnknownFieldError(path, key, {item_type, task_type});
    if (!seen.insert(field).second) return Error(child, "field given twice");
    if (!value.IsDefined() || value.IsNull()) continue;
    YAML::Node input = value;
    if (!on_task && field->number() == JobSubmitRequestItem::kIngressFieldNumber) {
      ASSIGN_OR_RETURN(input, WithoutIngressType(value));
    }
    ASSIGN_OR_RETURN(json converted, FieldToJson(field, input, child));
    if (on_task) {
      task_fields.push_back({field->json_name(), {child, std::move(converted)}});
    } else {
      item[field->json_name()] = std::move(converted);
    }
  }
  if (pod_specs.has_value()) {
    const auto* field = task_type->FindFieldByNumber(TaskSpec::kPodSpecFieldNumber);
    if (seen.count(field) > 0) {
      return Error(JoinPath(path, "podSpecs"), "give podSpec or podSpecs, not both");
    }
    ASSIGN_OR_RETURN(json converted, FieldToJson(field, pod_specs->second, pod_specs->first));
    task_fields.push_back({field->json_name(), {pod_specs->first, std::move(converted)}});
  }
  if (!task_fields.empty()) {
    json& task = item["task"];
    if (task.is_null()) task = json::object();
    for (auto& [name, where] : task_fields) {
      if (task.contains(name)) return Error(where.first, "also given under task");
      task[name] = std::move(where.second);
    }
  }
  RETURN_IF_ERROR(JsonToMessage(item, path, &parsed.item));
  return parsed;
}

// One document; `entries` gets each job entry's node and count, in order.
absl::StatusOr<SubmitJobsRequest> ParseDocument(
    const YAML::Node& doc, std::vector<std::pair<YAML::Node, int64_t>>* entries) {
  SubmitJobsRequest request;
  ASSIGN_OR_RETURN(auto fields, MappingEntries(doc, ""));
  YAML::Node jobs;
  bool job_set_seen = false;
  for (const auto& [key, value] : fields) {
    // Keys ignoring case, as armadactl reads them ("jobSetId", "JobSetId").
    const std::string name = Normalized(key);
    if (name == "queue") {
      ASSIGN_OR_RETURN(*request.mutable_queue(), RequiredString(value, key));
    } else if (name == "jobset" || name == "jobsetid") {
      if (job_set_seen) return Error(key, "the job set is given twice (jobSet and jobSetId)");
      job_set_seen = true;
      ASSIGN_OR_RETURN(*request.mutable_job_set(), RequiredString(value, key));
    } else if (name == "jobs") {
      jobs = value;
    } else {
      return Error(JoinPath("", key),
                   absl::StrCat("unknown field \"", key, "\" (expected queue, jobSet, jobs)"));
    }
  }
  if (request.queue().empty()) return Error("queue", "required");
  if (request.job_set().empty()) return Error("jobSet", "required");
  if (!jobs.IsDefined() || jobs.IsNull() || (jobs.IsSequence() && jobs.size() == 0)) {
    return Error("jobs", "at least one job is required");
  }
  if (!jobs.IsSequence()) {
    return Error("jobs", absl::StrCat("expected a list, got ", DescribeNode(jobs)));
  }
  int64_t total = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    std::string path = IndexPath("jobs", i);
    ASSIGN_OR_RETURN(ParsedJob job, ParseJob(jobs[i], path));
    entries->emplace_back(jobs[i], job.count);
    total += job.count;
    if (total > kMaxJobsPerFile) {
      return Error(path, absl::StrCat("more than ", kMaxJobsPerFile, " jobs in one file"));
    }
    for (int64_t c = 0; c < job.count; ++c) {
      JobSubmitRequestItem* copy = request.add_items();
      *copy = job.item;
      // Copies need distinct client ids, or the server would deduplicate them to one job.
      if (job.count > 1 && !job.item.client_id().empty()) {
        copy->set_client_id(absl::StrCat(job.item.client_id(), "-", c));
      }
    }
  }
  return request;
}

// An Armada job file: a document with Armada's jobSetId (Regatta's own key is jobSet), or a
// job with Armada's podSpecs. armadactl reads only the first document of a file.
bool IsArmadaShaped(const YAML::Node& doc) {
  if (!doc.IsMap()) return false;
  for (const auto& kv : doc) {
    if (!kv.first.IsScalar()) continue;
    const std::string key = Normalized(kv.first.Scalar());
    if (key == "jobsetid") return true;
    if (key != "jobs" || !kv.second.IsSequence()) continue;
    for (const auto& job : kv.second) {
      if (!job.IsMap()) continue;
      for (const auto& field : job) {
        if (field.first.IsScalar() && Normalized(field.first.Scalar()) == "podspecs") return true;
      }
    }
  }
  return false;
}

// ---- file positions -----------------------------------------------------------------------

// One step of a field path: a name ("task"), or a bracketed key or index ("[cpu]", "[3]").
struct PathStep {
  std::string text;
  bool bracket = false;
};

bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '_' || c == '-'; }

// "jobs[3].task.requests[\"nvidia.com/gpu\"]" → jobs, [3], task, requests, [nvidia.com/gpu].
// Empty when `path` does not read as a path (a message without one).
std::vector<PathStep> SplitPath(absl::string_view path) {
  std::vector<PathStep> steps;
  size_t i = 0;
  while (i < path.size()) {
    if (path[i] == '[') {
      const bool quoted = i + 1 < path.size() && path[i + 1] == '"';
      const size_t close = path.find(quoted ? "\"]" : "]", i + 1);
      if (close == absl::string_view::npos) return {};
      const size_t from = i + (quoted ? 2 : 1);
      steps.push_back({std::string(path.substr(from, close - from)), true});
      i = close + (quoted ? 2 : 1);
      continue;
    }
    if (path[i] == '.') ++i;  // also a leading one: what follows "items[3]" in server errors
    size_t end = i;
    while (end < path.size() && IsNameChar(path[end])) ++end;
    if (end == i) return {};
    steps.push_back({std::string(path.substr(i, end - i)), false});
    i = end;
  }
  return steps;
}

// The entry of mapping `node` named `step` (merge keys followed): its key's mark and value.
bool FindKey(const YAML::Node& node, const PathStep& step, YAML::Mark* mark, YAML::Node* value,
             int depth = 0) {
  if (!node.IsMap() || depth > 8) return false;
  const std::string wanted = step.bracket ? step.text : Normalized(step.text);
  std::vector<YAML::Node> merged;
  for (const auto& entry : node) {
    const YAML::Node key_node = entry.first;
    const YAML::Node value_node = entry.second;
    if (!key_node.IsScalar()) continue;
    const std::string& key = key_node.Scalar();
    if (key == "<<") {
      if (value_node.IsSequence()) {
        for (const auto& m : value_node) merged.push_back(m);
      } else {
        merged.push_back(value_node);
      }
      continue;
    }
    if ((step.bracket ? key : Normalized(key)) == wanted) {
      *mark = key_node.Mark();
      value->reset(value_node);  // rebinds; operator= would write into the node it held
      return true;
    }
  }
  for (const YAML::Node& m : merged) {
    if (FindKey(m, step, mark, value, depth + 1)) return true;
  }
  return false;
}

// Splits "PATH: problem" into the path and the rest; the path is empty when the message does
// not start with one.
std::pair<std::string, std::string> SplitMessage(absl::string_view message) {
  const size_t colon = message.find(": ");
  if (colon == absl::string_view::npos || SplitPath(message.substr(0, colon)).empty()) {
    return {"", std::string(message)};
  }
  return {std::string(message.substr(0, colon)), std::string(message.substr(colon))};
}

}  // namespace

YAML::Mark LocatePath(const YAML::Node& node, absl::string_view path) {
  YAML::Mark mark = node.Mark();
  YAML::Node current = node;
  for (const PathStep& step : SplitPath(path)) {
    YAML::Mark found_mark;
    YAML::Node found;
    size_t index = 0;
    const YAML::Node& view = current;  // const: indexing must not add elements
    if (view.IsSequence() && step.bracket && absl::SimpleAtoi(step.text, &index) &&
        index < view.size()) {
      found.reset(view[index]);
      found_mark = found.Mark();
    } else if (!FindKey(current, step, &found_mark, &found)) {
      if (!step.bracket && step.text == "task") continue;  // task fields on the job
      // The server's podSpec is Armada's podSpecs[0] in the file.
      YAML::Node list;
      if (step.bracket || Normalized(step.text) != "podspec" ||
          !FindKey(current, {"podSpecs", false}, &found_mark, &list) || !list.IsSequence() ||
          list.size() == 0) {
        break;
      }
      const YAML::Node& first_list = list;
      found.reset(first_list[0]);
      found_mark = found.Mark();
    }
    mark = found_mark;
    current.reset(found);
  }
  return mark;
}

std::vector<SubmitJobsRequest> SplitIntoBatches(const SubmitJobsRequest& request, int batch_size) {
  std::vector<SubmitJobsRequest> batches;
  if (batch_size < 1) batch_size = 1;
  const int n = request.items_size();
  // A gang given as Armada's annotations is one too (the server reads them as the gang).
  auto gang_of = [&](int i) -> const std::string& {
    const JobSubmitRequestItem& item = request.items(i);
    return item.gang().id().empty() ? pod::ArmadaGangId(item.annotations()) : item.gang().id();
  };
  for (int start = 0; start < n;) {
    int end = std::min(n, start + batch_size);
    if (end < n && !gang_of(end).empty() && gang_of(end) == gang_of(end - 1)) {
      int run_start = end - 1;
      while (run_start > start && gang_of(run_start - 1) == gang_of(end)) --run_start;
      if (run_start > start) {
        end = run_start;  // the gang starts the next batch
      } else {
        while (end < n && gang_of(end) == gang_of(start)) ++end;  // longer than a batch
      }
    }
    SubmitJobsRequest& batch = batches.emplace_back();
    batch.set_queue(request.queue());
    batch.set_job_set(request.job_set());
    batch.mutable_items()->Reserve(end - start);
    for (int i = start; i < end; ++i) *batch.add_items() = request.items(i);
    start = end;
  }
  return batches;
}

std::string JobFile::Where(const YAML::Mark& mark) const {
  if (name_.empty()) return "";
  if (mark.is_null() || mark.line < 0) return absl::StrCat(name_, ": ");
  return absl::StrCat(name_, ":", mark.line + 1, ":", mark.column + 1, ": ");
}

std::string JobFile::DocumentPrefix(const Document& doc) {
  return doc.number > 1 ? absl::StrCat("document ", doc.number, ": ") : "";
}

absl::StatusOr<JobFile> JobFile::Parse(absl::string_view text, absl::string_view name,
                                       int batch_size) {
  if (batch_size < 1) return absl::InvalidArgumentError("batch size must be at least 1");
  JobFile file;
  file.name_ = std::string(name);
  absl::StatusOr<std::vector<YAML::Node>> docs = ParseYamlDocuments(text);
  if (!docs.ok()) {
    // "line L, column C: problem" from the YAML parser reads as "NAME:L:C: problem".
    absl::string_view message = docs.status().message();
    int line = 0, column = 0;
    std::vector<absl::string_view> parts = absl::StrSplit(message, absl::MaxSplits(": ", 1));
    std::vector<absl::string_view> place = absl::StrSplit(parts[0], ", column ");
    if (!file.name_.empty() && parts.size() == 2 && place.size() == 2 &&
        absl::ConsumePrefix(&place[0], "line ") && absl::SimpleAtoi(place[0], &line) &&
        absl::SimpleAtoi(place[1], &column)) {
      return absl::InvalidArgumentError(
          absl::StrCat(file.name_, ":", line, ":", column, ": ", parts[1]));
    }
    return absl::InvalidArgumentError(absl::StrCat(file.Where(YAML::Mark::null_mark()), message));
  }
  for (size_t d = 0; d < docs->size(); ++d) {
    const YAML::Node& node = (*docs)[d];
    if (node.IsNull()) continue;  // e.g. a trailing "---"
    if (!file.documents_.empty() && IsArmadaShaped(file.documents_.front().node)) {
      // As armadactl: the first document only. Said, not silently.
      size_t more = 0;
      for (size_t rest = d; rest < docs->size(); ++rest) more += (*docs)[rest].IsNull() ? 0 : 1;
      file.warnings_.push_back(absl::StrCat(
          file.Where(node.Mark()), "ignored ", more == 1 ? "this document" : "these documents",
          more == 1 ? "" : absl::StrCat(" (", more, ")"),
          ": an Armada job file (jobSetId) is read as armadactl reads it, first document only"));
      break;
    }
    Document doc{.number = static_cast<int>(d) + 1, .node = node};
    std::vector<std::pair<YAML::Node, int64_t>> entries;
    absl::StatusOr<SubmitJobsRequest> request = ParseDocument(node, &entries);
    if (!request.ok()) {
      auto [path, rest] = SplitMessage(request.status().message());
      return absl::InvalidArgumentError(
          absl::StrCat(file.Where(LocatePath(node, path)), DocumentPrefix(doc), path, rest));
    }
    int64_t first = 0;
    for (auto& [entry_node, count] : entries) {
      doc.entries.push_back({.first_item = first, .count = count, .node = entry_node});
      first += count;
    }
    if (file.job_count_ + first > kMaxJobsPerFile) {
      return absl::InvalidArgumentError(absl::StrCat(file.Where(node.Mark()), DocumentPrefix(doc),
                                                     "more than ", kMaxJobsPerFile,
                                                     " jobs in one file"));
    }
    file.documents_.push_back(std::move(doc));
    int64_t in_document = 0;
    for (auto& batch : SplitIntoBatches(*request, batch_size)) {
      file.batches_.push_back({.document = file.documents_.size() - 1,
                               .first_item = in_document,
                               .items_before = file.job_count_ + in_document});
      in_document += batch.items_size();
      file.requests_.push_back(std::move(batch));
    }
    file.job_count_ += first;
  }
  if (file.documents_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(file.Where(YAML::Mark::null_mark()), "the file has no jobs"));
  }
  return file;
}

absl::Status JobFile::Attribute(const absl::Status& error, size_t r) const {
  if (error.ok() || r >= batches_.size()) return error;
  switch (error.code()) {
    case absl::StatusCode::kUnauthenticated:
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kCancelled:
    case absl::StatusCode::kInternal:
    case absl::StatusCode::kUnknown:
    case absl::StatusCode::kUnimplemented:
      return error;  // about the call or the server, not a place in the file
    default:
      break;
  }
  const Batch& batch = batches_[r];
  const Document& doc = documents_[batch.document];
  absl::string_view message = error.message();
  if (absl::IsResourceExhausted(error) && absl::StrContains(message, "larger than max")) {
    // gRPC's own size limit on the request: fewer jobs per request fit.
    return absl::Status(error.code(),
                        absl::StrCat(Where(LocatePath(doc.node, "jobs")), DocumentPrefix(doc),
                                     message, " (lower --batch-size)"));
  }
  std::string text;
  size_t index = 0;
  if (absl::ConsumePrefix(&message, "items[")) {
    const size_t close = message.find(']');
    if (close != absl::string_view::npos && absl::SimpleAtoi(message.substr(0, close), &index) &&
        static_cast<int64_t>(index) < requests_[r].items_size()) {
      message.remove_prefix(close + 1);
      const int64_t item = batch.first_item + static_cast<int64_t>(index);
      auto entry = std::upper_bound(doc.entries.begin(), doc.entries.end(), item,
                                    [](int64_t i, const Entry& e) { return i < e.first_item; });
      --entry;  // entries start at item 0, so one is at or before `item`
      const int64_t copy = item - entry->first_item;
      auto [path, rest] = SplitMessage(message);
      text = absl::StrCat(
          Where(path.empty() ? entry->node.Mark() : LocatePath(entry->node, path)),
          DocumentPrefix(doc), IndexPath("jobs", entry - doc.entries.begin()),
          entry->count > 1 ? absl::StrCat(" (copy ", copy, " of ", entry->count, ")") : "",
          message);
    } else {
      message = error.message();
    }
  }
  if (text.empty()) {
    if (absl::ConsumePrefix(&message, "job_set:")) {
      text = absl::StrCat(Where(LocatePath(doc.node, "jobSet")), DocumentPrefix(doc),
                          "jobSet:", message);
    } else if (absl::StartsWith(message, "items:")) {
      // The request is over the server's size limits: smaller requests fit.
      text = absl::StrCat(Where(LocatePath(doc.node, "jobs")), DocumentPrefix(doc), message,
                          " (lower --batch-size)");
    } else {
      text = absl::StrCat(Where(LocatePath(doc.node, "queue")), DocumentPrefix(doc), message);
    }
  }
  return absl::Status(error.code(), text);
}

absl::StatusOr<std::vector<SubmitJobsRequest>> ParseJobFile(absl::string_view text,
                                                            int batch_size) {
  ASSIGN_OR_RETURN(JobFile file, JobFile::Parse(text, "", batch_size));
  return file.requests();
}

}  // namespace regatta::cli
