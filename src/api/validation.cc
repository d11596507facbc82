#include "src/api/validation.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/common/resources.h"
#include "src/common/status_macros.h"

namespace regatta::api {
namespace {

using regatta::v1::JobSubmitRequestItem;
using regatta::v1::SubmitJobsRequest;

absl::Status Invalid(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

absl::Status CheckDuration(const google::protobuf::Duration& d, absl::string_view field) {
  if (d.seconds() < 0 || d.nanos() < 0) return Invalid(field, "must not be negative");
  return absl::OkStatus();
}

absl::Status CheckStringMap(const google::protobuf::Map<std::string, std::string>& map,
                            absl::string_view field, size_t max_key) {
  for (const auto& [key, value] : map) {
    if (key.empty()) return Invalid(field, "empty key");
    if (key.size() > max_key) {
      return Invalid(absl::StrCat(field, "[", key.substr(0, 32), "...]"),
                     absl::StrCat("key longer than ", max_key, " characters"));
    }
  }
  return absl::OkStatus();
}

// Parses one side of the resource requirements, naming the entry on error.
absl::StatusOr<std::map<std::string, Quantity>> ParseResourceMap(
    const google::protobuf::Map<std::string, std::string>& map, absl::string_view field) {
  std::map<std::string, Quantity> out;
  for (const auto& [name, text] : map) {
    std::string entry = absl::StrCat(field, "[", name, "]");
    if (!IsValidResourceName(name)) {
      return Invalid(entry, absl::StrCat("invalid resource name \"", name, "\""));
    }
    absl::StatusOr<Quantity> q = Quantity::Parse(text);
    if (!q.ok()) return Invalid(entry, q.status().message());
    out.emplace(name, *q);
  }
  return out;
}

absl::Status CheckResources(const regatta::v1::ResourceRequirements& resources,
                            absl::string_view field) {
  ASSIGN_OR_RETURN(auto requests,
                   ParseResourceMap(resources.requests(), absl::StrCat(field, ".requests")));
  ASSIGN_OR_RETURN(auto limits,
                   ParseResourceMap(resources.limits(), absl::StrCat(field, ".limits")));
  if (requests.empty() || limits.empty()) return absl::OkStatus();  // one side stands for both
  std::set<std::string> names;
  for (const auto& [n, q] : requests) names.insert(n);
  for (const auto& [n, q] : limits) names.insert(n);
  for (const std::string& name : names) {
    Quantity r = requests.count(name) ? requests[name] : Quantity();
    Quantity l = limits.count(name) ? limits[name] : Quantity();
    if (r != l) {
      return Invalid(
          field, absl::StrCat("requests and limits differ for ", name, " (requests ", r.ToString(),
                              ", limits ", l.ToString(), "); Regatta requires requests = limits"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTolerations(const JobSubmitRequestItem& item, absl::string_view field) {
  static const std::set<std::string> kEffects = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};
  for (int t = 0; t < item.task().tolerations_size(); ++t) {
    const auto& tol = item.task().tolerations(t);
    std::string path = absl::StrCat(field, ".tolerations[", t, "]");
    if (tol.operator_() != "" && tol.operator_() != "Equal" && tol.operator_() != "Exists") {
      return Invalid(absl::StrCat(path, ".operator"),
                     absl::StrCat("unknown operator \"", tol.operator_(), "\" (Equal or Exists)"));
    }
    if (tol.operator_() == "Exists" && !tol.value().empty()) {
      return Invalid(absl::StrCat(path, ".value"), "must be empty when operator is Exists");
    }
    if (tol.key().empty() && tol.operator_() != "Exists") {
      return Invalid(absl::StrCat(path, ".key"), "an empty key needs operator Exists");
    }
    if (!kEffects.count(tol.effect())) {
      return Invalid(absl::StrCat(path, ".effect"),
                     absl::StrCat("unknown effect \"", tol.effect(),
                                  "\" (NoSchedule, PreferNoSchedule or NoExecute)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckAffinity(const JobSubmitRequestItem& item, absl::string_view field) {
  static const std::set<std::string> kOps = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  const auto& terms = item.task().node_affinity().required_terms();
  for (int t = 0; t < terms.size(); ++t) {
    for (int e = 0; e < terms[t].match_expressions_size(); ++e) {
      const auto& req = terms[t].match_expressions(e);
      std::string path =
          absl::StrCat(field, ".node_affinity.required_terms[", t, "].match_expressions[", e, "]");
      if (req.key().empty()) return Invalid(absl::StrCat(path, ".key"), "required");
      if (!kOps.count(req.operator_())) {
        return Invalid(absl::StrCat(path, ".operator"),
                       absl::StrCat("unknown operator \"", req.operator_(), "\""));
      }
      bool takes_values = req.operator_() != "Exists" && req.operator_() != "DoesNotExist";
      if (takes_values && req.values().empty()) {
        return Invalid(absl::StrCat(path, ".values"),
                       absl::StrCat("operator ", req.operator_(), " needs values"));
      }
      if (!takes_values && !req.values().empty()) {
        return Invalid(absl::StrCat(path, ".values"),
                       absl::StrCat("operator ", req.operator_(), " takes no values"));
      }
      if ((req.operator_() == "Gt" || req.operator_() == "Lt")) {
        if (req.values_size() != 1) {
          return Invalid(absl::StrCat(path, ".values"), "Gt and Lt take exactly one integer");
        }
        int64_t ignored;
        if (!absl::SimpleAtoi(req.values(0), &ignored)) {
          return Invalid(absl::StrCat(path, ".values[0]"), "not an integer");
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckPriorityClass(absl::string_view name, absl::string_view field,
                                const SubmitPolicy& policy) {
  if (policy.priority_classes.count(std::string(name))) return absl::OkStatus();
  std::vector<std::string> known;
  for (const auto& [known_name, pc] : policy.priority_classes) known.push_back(known_name);
  return Invalid(field, absl::StrCat("unknown priority class \"", name,
                                     "\" (known: ", absl::StrJoin(known, ", "), ")"));
}

absl::Status CheckItem(const JobSubmitRequestItem& item, int index, const SubmitPolicy& policy) {
  const std::string prefix = absl::StrCat("items[", index, "]");
  const size_t size = item.ByteSizeLong();
  if (static_cast<int64_t>(size) > policy.max_job_spec_bytes) {
    return Invalid(prefix, absl::StrCat("job spec is ", size, " bytes, over the limit of ",
                                        policy.max_job_spec_bytes, " bytes"));
  }
  if (static_cast<int>(item.client_id().size()) > policy.max_client_id_length) {
    return Invalid(absl::StrCat(prefix, ".client_id"),
                   absl::StrCat("longer than ", policy.max_client_id_length, " characters"));
  }
  if (!item.priority_class().empty()) {
    RETURN_IF_ERROR(
        CheckPriorityClass(item.priority_class(), absl::StrCat(prefix, ".priority_class"), policy));
  }
  RETURN_IF_ERROR(CheckStringMap(item.labels(), absl::StrCat(prefix, ".labels"), 317));
  RETURN_IF_ERROR(CheckStringMap(item.annotations(), absl::StrCat(prefix, ".annotations"), 317));

  const std::string task = absl::StrCat(prefix, ".task");
  const auto& spec = item.task();
  if (spec.pod_spec_json().empty()) {
    if (spec.command().empty()) {
      return Invalid(absl::StrCat(task, ".command"), "required: the program to run and its args");
    }
    if (spec.command(0).empty()) {
      return Invalid(absl::StrCat(task, ".command[0]"), "the program name is empty");
    }
  }
  for (const auto& [key, value] : spec.env()) {
    if (key.empty() || key.find('=') != std::string::npos || key.find('\0') != std::string::npos) {
      return Invalid(absl::StrCat(task, ".env"),
                     absl::StrCat("invalid variable name \"", key, "\""));
    }
  }
  RETURN_IF_ERROR(CheckResources(spec.resources(), absl::StrCat(task, ".resources")));
  RETURN_IF_ERROR(CheckStringMap(spec.node_selector(), absl::StrCat(task, ".node_selector"), 317));
  RETURN_IF_ERROR(CheckTolerations(item, task));
  RETURN_IF_ERROR(CheckAffinity(item, task));
  RETURN_IF_ERROR(CheckDuration(spec.active_deadline(), absl::StrCat(task, ".active_deadline")));
  RETURN_IF_ERROR(CheckDuration(spec.termination_grace_period(),
                                absl::StrCat(task, ".termination_grace_period")));
  if (item.has_gang()) {
    const auto& gang = item.gang();
    if (gang.id().empty() && gang.cardinality() > 0) {
      return Invalid(absl::StrCat(prefix, ".gang.id"), "required when cardinality is set");
    }
    if (!gang.id().empty() && gang.cardinality() == 0) {
      return Invalid(absl::StrCat(prefix, ".gang.cardinality"), "must be at least 1");
    }
    if (gang.id().empty() && !gang.node_uniformity_label().empty()) {
      return Invalid(absl::StrCat(prefix, ".gang.id"), "required with node_uniformity_label");
    }
  }
  return absl::OkStatus();
}

// A gang must arrive whole in one request: as many members as its cardinality, all agreeing on
// cardinality, priority class and uniformity label.
absl::Status CheckGangs(const SubmitJobsRequest& request) {
  struct Seen {
    int first_index;
    int count = 0;
  };
  absl::flat_hash_map<std::string, Seen> gangs;
  for (int i = 0; i < request.items_size(); ++i) {
    const auto& item = request.items(i);
    if (item.gang().id().empty()) continue;
    auto [it, inserted] = gangs.try_emplace(item.gang().id(), Seen{i});
    it->second.count++;
    const auto& first = request.items(it->second.first_index);
    if (inserted) continue;
    std::string prefix = absl::StrCat("items[", i, "]");
    if (first.gang().cardinality() != item.gang().cardinality()) {
      return Invalid(absl::StrCat(prefix, ".gang.cardinality"),
                     absl::StrCat("gang \"", item.gang().id(), "\" member says ",
                                  item.gang().cardinality(), " but items[", it->second.first_index,
                                  "] says ", first.gang().cardinality()));
    }
    if (first.priority_class() != item.priority_class()) {
      return Invalid(
          absl::StrCat(prefix, ".priority_class"),
          absl::StrCat("gang \"", item.gang().id(), "\" members must share one priority class"));
    }
    if (first.gang().node_uniformity_label() != item.gang().node_uniformity_label()) {
      return Invalid(absl::StrCat(prefix, ".gang.node_uniformity_label"),
                     absl::StrCat("gang \"", item.gang().id(),
                                  "\" members must share one node uniformity label"));
    }
  }
  for (const auto& [id, seen] : gangs) {
    const auto& first = request.items(seen.first_index);
    if (static_cast<uint32_t>(seen.count) != first.gang().cardinality()) {
      return Invalid(absl::StrCat("items[", seen.first_index, "].gang.cardinality"),
                     absl::StrCat("gang cardinality mismatch: gang \"", id, "\" declares ",
                                  first.gang().cardinality(), " members but the request has ",
                                  seen.count, " (submit a gang whole, in one request)"));
    }
  }
  return absl::OkStatus();
}

std::string CanonicalQuantity(const std::string& text) {
  absl::StatusOr<Quantity> q = Quantity::Parse(text);
  return q.ok() ? q->ToString() : text;
}

}  // namespace

bool IsValidQueueName(absl::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  if (!absl::ascii_isalnum(name.front())) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

absl::Status ValidateSubmitRequest(const SubmitJobsRequest& request, const SubmitPolicy& policy) {
  if (request.queue().empty()) return Invalid("queue", "required");
  if (request.job_set().empty()) return Invalid("job_set", "required");
  if (static_cast<int>(request.job_set().size()) > policy.max_job_set_length) {
    return Invalid("job_set",
                   absl::StrCat("longer than ", policy.max_job_set_length, " characters"));
  }
  if (request.items().empty()) return Invalid("items", "at least one job is required");
  if (request.items_size() > policy.max_jobs_per_request) {
    return Invalid("items", absl::StrCat(request.items_size(), " jobs, over the limit of ",
                                         policy.max_jobs_per_request, " per request"));
  }
  for (int i = 0; i < request.items_size(); ++i) {
    RETURN_IF_ERROR(CheckItem(request.items(i), i, policy));
  }
  return CheckGangs(request);
}

namespace {
void NormalizeResources(regatta::v1::TaskSpec& task, const SubmitPolicy& policy) {
  auto* resources = task.mutable_resources();
  if (resources->requests().empty() && resources->limits().empty()) {
    for (const auto& [name, value] : policy.default_resources) {
      (*resources->mutable_requests())[name] = value;
    }
  }
  // One canonical map on both sides: the scheduler and the views never see the two differ.
  if (resources->requests().empty())
    resources->mutable_requests()->swap(*resources->mutable_limits());
  for (auto& [name, text] : *resources->mutable_requests()) text = CanonicalQuantity(text);
  *resources->mutable_limits() = resources->requests();
}
}  // namespace

void NormalizeSubmitItem(regatta::v1::JobSubmitRequestItem& item, const SubmitPolicy& policy) {
  if (item.priority_class().empty()) item.set_priority_class(policy.default_priority_class);
  NormalizeResources(*item.mutable_task(), policy);
}

void NormalizeJob(regatta::v1::Job& job, const SubmitPolicy& policy) {
  if (job.priority_class().empty()) job.set_priority_class(policy.default_priority_class);
  NormalizeResources(*job.mutable_task(), policy);
}

absl::Status ValidatePriorityClassFilter(
    const google::protobuf::RepeatedPtrField<std::string>& priority_classes,
    const SubmitPolicy& policy) {
  for (int i = 0; i < priority_classes.size(); ++i) {
    RETURN_IF_ERROR(
        CheckPriorityClass(priority_classes[i], absl::StrCat("priority_classes[", i, "]"), policy));
  }
  return absl::OkStatus();
}

absl::Status ValidateQueueSpec(const regatta::v1::Queue& queue, const SubmitPolicy& policy) {
  if (queue.name().empty()) return Invalid("queue.name", "required");
  if (!IsValidQueueName(queue.name())) {
    return Invalid("queue.name",
                   absl::StrCat("\"", queue.name(),
                                "\" is not a valid queue name (1-63 characters of letters, "
                                "digits, '.', '_' and '-', starting with a letter or digit)"));
  }
  if (!std::isfinite(queue.priority_factor()) || queue.priority_factor() < 0) {
    return Invalid("queue.priority_factor", "must be a positive number (0 means the default 1)");
  }
  for (const auto& [pc, limits] : queue.resource_limits_by_priority_class()) {
    std::string field = absl::StrCat("queue.resource_limits_by_priority_class[", pc, "]");
    if (!policy.priority_classes.count(pc)) {
      return Invalid(field, absl::StrCat("unknown priority class \"", pc, "\""));
    }
    for (const auto& [resource, fraction] : limits.maximum_resource_fraction()) {
      std::string entry = absl::StrCat(field, ".maximum_resource_fraction[", resource, "]");
      if (!IsValidResourceName(resource)) return Invalid(entry, "invalid resource name");
      if (!std::isfinite(fraction) || fraction < 0 || fraction > 1) {
        return Invalid(entry, "must be a fraction between 0 and 1");
      }
    }
  }
  for (const auto& [key, value] : queue.labels()) {
    if (key.empty()) return Invalid("queue.labels", "empty key");
  }
  return absl::OkStatus();
}

}  // namespace regatta::api
