#include "src/cli/job_file.h"

#include <algorithm>
#include <set>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "src/cli/yaml_json.h"
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
  for (const auto& [key, value] : entries) {
    std::string child = JoinPath(path, key);
    if (key == "count") {
      ASSIGN_OR_RETURN(parsed.count, ParseCount(value, child));
      continue;
    }
    const auto* field = FindField(item_type, key);
    const bool on_task = field == nullptr;
    if (on_task) field = FindField(task_type, key);
    if (field == nullptr) return UnknownFieldError(path, key, {item_type, task_type});
    if (!seen.insert(field).second) return Error(child, "field given twice");
    if (!value.IsDefined() || value.IsNull()) continue;
    ASSIGN_OR_RETURN(json converted, FieldToJson(field, value, child));
    if (on_task) {
      task_fields.push_back({field->json_name(), {child, std::move(converted)}});
    } else {
      item[field->json_name()] = std::move(converted);
    }
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

absl::StatusOr<SubmitJobsRequest> ParseDocument(const YAML::Node& doc) {
  SubmitJobsRequest request;
  ASSIGN_OR_RETURN(auto entries, MappingEntries(doc, ""));
  YAML::Node jobs;
  for (const auto& [key, value] : entries) {
    if (key == "queue") {
      ASSIGN_OR_RETURN(*request.mutable_queue(), RequiredString(value, key));
    } else if (key == "jobSet" || key == "job_set" || key == "jobSetId") {
      ASSIGN_OR_RETURN(*request.mutable_job_set(), RequiredString(value, key));
    } else if (key == "jobs") {
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

}  // namespace

std::vector<SubmitJobsRequest> SplitIntoBatches(const SubmitJobsRequest& request, int batch_size) {
  std::vector<SubmitJobsRequest> batches;
  if (batch_size < 1) batch_size = 1;
  for (int start = 0; start < request.items_size(); start += batch_size) {
    SubmitJobsRequest& batch = batches.emplace_back();
    batch.set_queue(request.queue());
    batch.set_job_set(request.job_set());
    int end = std::min(request.items_size(), start + batch_size);
    batch.mutable_items()->Reserve(end - start);
    for (int i = start; i < end; ++i) *batch.add_items() = request.items(i);
  }
  return batches;
}

absl::StatusOr<std::vector<SubmitJobsRequest>> ParseJobFile(absl::string_view text,
                                                            int batch_size) {
  if (batch_size < 1) return absl::InvalidArgumentError("batch size must be at least 1");
  ASSIGN_OR_RETURN(std::vector<YAML::Node> docs, ParseYamlDocuments(text));
  std::vector<SubmitJobsRequest> out;
  int parsed_docs = 0;
  for (size_t d = 0; d < docs.size(); ++d) {
    if (docs[d].IsNull()) continue;  // e.g. a trailing "---"
    auto request = ParseDocument(docs[d]);
    if (!request.ok()) {
      if (d == 0) return request.status();
      return absl::InvalidArgumentError(
          absl::StrCat("document ", d + 1, ": ", request.status().message()));
    }
    ++parsed_docs;
    for (auto& batch : SplitIntoBatches(*request, batch_size)) out.push_back(std::move(batch));
  }
  if (parsed_docs == 0) return absl::InvalidArgumentError("the file has no jobs");
  return out;
}

}  // namespace regatta::cli
