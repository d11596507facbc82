#include "src/api/validation.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/api/job_services.h"
#include "src/api/validation_internal.h"
#include "src/common/error_text.h"
#include "src/common/resources.h"
#include "src/common/status_macros.h"

namespace regatta::api {
namespace internal {

absl::Status Invalid(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

absl::Status CheckDuration(const google::protobuf::Duration& d, absl::string_view field,
                           int64_t max_seconds) {
  if (d.seconds() < 0 || d.nanos() < 0) return Invalid(field, "must not be negative");
  if (d.nanos() >= 1'000'000'000) return Invalid(field, "nanos must be below 1000000000");
  if (d.seconds() > max_seconds || (d.seconds() == max_seconds && d.nanos() > 0)) {
    return Invalid(field, absl::StrCat("must be at most ", max_seconds, "s"));
  }
  return absl::OkStatus();
}

// `field[key]` with the key cut short, for messages about one map entry.
std::string Entry(absl::string_view field, absl::string_view key) {
  return absl::StrCat(field, "[", Abbreviate(key, 64), "]");
}

absl::Status CheckLength(absl::string_view text, absl::string_view field, size_t max_bytes) {
  if (text.size() <= max_bytes) return absl::OkStatus();
  return Invalid(field, absl::StrCat("is ", text.size(), " bytes, over the limit of ", max_bytes));
}

absl::Status CheckNoControlChars(absl::string_view text, absl::string_view field) {
  if (!HasControlChar(text)) return absl::OkStatus();
  return Invalid(field, "must not contain control characters (NUL, newline, escape, ...)");
}

// A NUL ends a C string: what the executor runs would differ from what the job shows.
absl::Status CheckNoNul(absl::string_view text, absl::string_view field) {
  const size_t nul = text.find('\0');
  if (nul == absl::string_view::npos) return absl::OkStatus();
  return Invalid(field, absl::StrCat("contains a NUL byte at offset ", nul,
                                     " (a program would see the text cut short there)"));
}

absl::Status CheckName(absl::string_view text, absl::string_view field, size_t max_bytes) {
  RETURN_IF_ERROR(CheckLength(text, field, max_bytes));
  return CheckNoControlChars(text, field);
}

absl::Status CheckStringMap(const google::protobuf::Map<std::string, std::string>& map,
                            absl::string_view field, MapRules rules) {
  for (const auto& [key, value] : map) {
    if (key.empty()) return Invalid(field, "empty key");
    const std::string entry = Entry(field, key);
    if (key.size() > kMaxLabelKeyBytes) {
      return Invalid(entry, absl::StrCat("key is ", key.size(), " bytes, over the limit of ",
                                         kMaxLabelKeyBytes));
    }
    if (HasControlChar(key)) return Invalid(entry, "the key must not contain control characters");
    if (value.size() > rules.max_value_bytes) {
      return Invalid(entry, absl::StrCat("value is ", value.size(), " bytes, over the limit of ",
                                         rules.max_value_bytes));
    }
    if (HasControlChar(value, /*allow_tab_newline=*/rules.multi_line_values)) {
      return Invalid(entry, "the value must not contain control characters");
    }
  }
  return absl::OkStatus();
}

// Parses one side of the resource requirements, naming the entry on error.
absl::StatusOr<std::map<std::string, Quantity>> ParseResourceMap(
    const google::protobuf::Map<std::string, std::string>& map, absl::string_view field) {
  std::map<std::string, Quantity> out;
  for (const auto& [name, text] : map) {
    std::string entry = Entry(field, name);
    if (!IsValidResourceName(name)) {
      return Invalid(entry, absl::StrCat("invalid resource name \"", Abbreviate(name), "\""));
    }
    RETURN_IF_ERROR(CheckLength(text, entry, 64));
    absl::StatusOr<Quantity> q = Quantity::Parse(text);
    if (!q.ok()) return Invalid(entry, q.status().message());
    if (q->milli() > kMaxJobQuantityMilli) {
      return Invalid(entry, absl::StrCat(q->ToString(), " is over the limit of 100T (10^14 units) ",
                                         "per resource of one job"));
    }
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

absl::Status CheckTolerations(
    const google::protobuf::RepeatedPtrField<regatta::v1::Toleration>& tolerations,
    absl::string_view field) {
  static const std::set<std::string> kEffects = {"", "NoSchedule", "PreferNoSchedule", "NoExecute"};
  for (int t = 0; t < tolerations.size(); ++t) {
    const auto& tol = tolerations[t];
    std::string path = absl::StrCat(field, ".tolerations[", t, "]");
    if (tol.operator_() != "" && tol.operator_() != "Equal" && tol.operator_() != "Exists") {
      return Invalid(
          absl::StrCat(path, ".operator"),
          absl::StrCat("unknown operator \"", Abbreviate(tol.operator_()), "\" (Equal or Exists)"));
    }
    if (tol.operator_() == "Exists" && !tol.value().empty()) {
      return Invalid(absl::StrCat(path, ".value"), "must be empty when operator is Exists");
    }
    if (tol.key().empty() && tol.operator_() != "Exists") {
      return Invalid(absl::StrCat(path, ".key"), "an empty key needs operator Exists");
    }
    if (!kEffects.count(tol.effect())) {
      return Invalid(absl::StrCat(path, ".effect"),
                     absl::StrCat("unknown effect \"", Abbreviate(tol.effect()),
                                  "\" (NoSchedule, PreferNoSchedule or NoExecute)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckNodeSelectorTerms(
    const google::protobuf::RepeatedPtrField<regatta::v1::NodeSelectorTerm>& terms,
    absl::string_view terms_field, absl::string_view expressions_name) {
  static const std::set<std::string> kOps = {"In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"};
  for (int t = 0; t < terms.size(); ++t) {
    for (int e = 0; e < terms[t].match_expressions_size(); ++e) {
      const auto& req = terms[t].match_expressions(e);
      std::string path = absl::StrCat(terms_field, "[", t, "].", expressions_name, "[", e, "]");
      if (req.key().empty()) return Invalid(absl::StrCat(path, ".key"), "required");
      if (!kOps.count(req.operator_())) {
        return Invalid(absl::StrCat(path, ".operator"),
                       absl::StrCat("unknown operator \"", Abbreviate(req.operator_()), "\""));
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
  return Invalid(field, absl::StrCat("unknown priority class \"", Abbreviate(name),
                                     "\" (known: ", absl::StrJoin(known, ", "), ")"));
}

absl::Status CheckArgv(const google::protobuf::RepeatedPtrField<std::string>& command,
                       const google::protobuf::RepeatedPtrField<std::string>& args,
                       absl::string_view path) {
  for (int i = 0; i < command.size(); ++i) {
    const std::string field = absl::StrCat(path, ".command[", i, "]");
    if (i == 0) RETURN_IF_ERROR(CheckName(command[0], field, kMaxPathBytes));
    RETURN_IF_ERROR(CheckNoNul(command[i], field));
  }
  for (int i = 0; i < args.size(); ++i) {
    RETURN_IF_ERROR(CheckNoNul(args[i], absl::StrCat(path, ".args[", i, "]")));
  }
  return absl::OkStatus();
}

}  // namespace internal
namespace {

using internal::CheckDuration;
using internal::CheckLength;
using internal::CheckName;
using internal::CheckNoControlChars;
using internal::CheckNoNul;
using internal::CheckStringMap;
using internal::Entry;
using internal::Invalid;
using regatta::v1::JobSubmitRequestItem;
using regatta::v1::SubmitJobsRequest;

// What the executor hands to exec(): no NUL anywhere, no control characters in the program,
// the image, the working directory or variable names.
absl::Status CheckProcess(const regatta::v1::TaskSpec& spec, absl::string_view task) {
  RETURN_IF_ERROR(CheckName(spec.image(), absl::StrCat(task, ".image"), kMaxPathBytes));
  RETURN_IF_ERROR(CheckName(spec.working_dir(), absl::StrCat(task, ".working_dir"), kMaxPathBytes));
  RETURN_IF_ERROR(internal::CheckArgv(spec.command(), spec.args(), task));
  for (const auto& [key, value] : spec.env()) {
    const std::string entry = Entry(absl::StrCat(task, ".env"), key);
    if (key.empty() || key.find('=') != std::string::npos || HasControlChar(key)) {
      return Invalid(entry, "invalid variable name (empty, or with '=' or a control character)");
    }
    RETURN_IF_ERROR(CheckNoNul(value, entry));
  }
  for (const auto& [key, value] : spec.secret_env()) {
    const std::string entry = Entry(absl::StrCat(task, ".secret_env"), key);
    if (key.empty() || key.find('=') != std::string::npos || HasControlChar(key)) {
      return Invalid(entry, "invalid variable name (empty, or with '=' or a control character)");
    }
    if (spec.env().contains(key)) return Invalid(entry, "also given in env");
    RETURN_IF_ERROR(CheckNoNul(value, entry));
  }
  return absl::OkStatus();
}

absl::Status CheckRetryPolicy(const regatta::v1::RetryPolicy& policy, absl::string_view field) {
  if (policy.max_retries() > kMaxRetries) {
    return Invalid(absl::StrCat(field, ".max_retries"),
                   absl::StrCat(policy.max_retries(), " is over the limit of ", kMaxRetries));
  }
  if (policy.retry_on_exit_codes_size() > kMaxRetryExitCodes) {
    return Invalid(absl::StrCat(field, ".retry_on_exit_codes"),
                   absl::StrCat(policy.retry_on_exit_codes_size(), " codes, over the limit of ",
                                kMaxRetryExitCodes));
  }
  return absl::OkStatus();
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
  RETURN_IF_ERROR(CheckNoControlChars(item.client_id(), absl::StrCat(prefix, ".client_id")));
  if (!item.priority_class().empty()) {
    RETURN_IF_ERROR(internal::CheckPriorityClass(item.priority_class(),
                                                 absl::StrCat(prefix, ".priority_class"), policy));
  }
  RETURN_IF_ERROR(CheckStringMap(item.labels(), absl::StrCat(prefix, ".labels")));
  // Annotation values are bounded by the job spec size only.
  RETURN_IF_ERROR(CheckStringMap(item.annotations(), absl::StrCat(prefix, ".annotations"),
                                 {.max_value_bytes = static_cast<size_t>(policy.max_job_spec_bytes),
                                  .multi_line_values = true}));

  const std::string task = absl::StrCat(prefix, ".task");
  const auto& spec = item.task();
  if (spec.has_pod_spec()) {
    RETURN_IF_ERROR(internal::CheckPodTask(item, task, policy));
  } else {
    // With an image, no command means the image's ENTRYPOINT (and CMD), as in Kubernetes.
    if (spec.command().empty() && spec.image().empty()) {
      return Invalid(absl::StrCat(task, ".command"),
                     "required: the program to run and its args (or an image to run)");
    }
    if (!spec.command().empty() && spec.command(0).empty()) {
      return Invalid(absl::StrCat(task, ".command[0]"), "the program name is empty");
    }
  }
  RETURN_IF_ERROR(CheckProcess(spec, task));
  RETURN_IF_ERROR(internal::CheckResources(spec.resources(), absl::StrCat(task, ".resources")));
  RETURN_IF_ERROR(CheckStringMap(spec.node_selector(), absl::StrCat(task, ".node_selector")));
  RETURN_IF_ERROR(internal::CheckTolerations(spec.tolerations(), task));
  RETURN_IF_ERROR(internal::CheckNodeSelectorTerms(
      spec.node_affinity().required_terms(), absl::StrCat(task, ".node_affinity.required_terms"),
      "match_expressions"));
  RETURN_IF_ERROR(CheckDuration(spec.active_deadline(), absl::StrCat(task, ".active_deadline"),
                                kMaxActiveDeadlineSeconds));
  RETURN_IF_ERROR(CheckDuration(spec.termination_grace_period(),
                                absl::StrCat(task, ".termination_grace_period"),
                                kMaxTerminationGraceSeconds));
  RETURN_IF_ERROR(CheckRetryPolicy(item.retry_policy(), absl::StrCat(prefix, ".retry_policy")));
  RETURN_IF_ERROR(internal::CheckArmadaFields(item, prefix));
  if (const regatta::v1::Gang gang = internal::GangOf(item);
      item.has_gang() || !gang.id().empty()) {
    RETURN_IF_ERROR(CheckName(gang.id(), absl::StrCat(prefix, ".gang.id"), kMaxIdBytes));
    RETURN_IF_ERROR(CheckName(gang.node_uniformity_label(),
                              absl::StrCat(prefix, ".gang.node_uniformity_label"),
                              kMaxLabelKeyBytes));
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
  // Each item's gang: its own, or the one its Armada annotations declare.
  std::vector<regatta::v1::Gang> gang_of(request.items_size());
  for (int i = 0; i < request.items_size(); ++i) {
    const auto& item = request.items(i);
    gang_of[i] = internal::GangOf(item);
    const regatta::v1::Gang& gang = gang_of[i];
    if (gang.id().empty()) continue;
    auto [it, inserted] = gangs.try_emplace(gang.id(), Seen{i});
    it->second.count++;
    const auto& first = request.items(it->second.first_index);
    const regatta::v1::Gang& first_gang = gang_of[it->second.first_index];
    if (inserted) continue;
    std::string prefix = absl::StrCat("items[", i, "]");
    if (first_gang.cardinality() != gang.cardinality()) {
      return Invalid(
          absl::StrCat(prefix, ".gang.cardinality"),
          absl::StrCat("gang \"", Abbreviate(gang.id()), "\" member says ", gang.cardinality(),
                       " but items[", it->second.first_index, "] says ", first_gang.cardinality()));
    }
    if (internal::PriorityClassOf(first) != internal::PriorityClassOf(item)) {
      return Invalid(absl::StrCat(prefix, ".priority_class"),
                     absl::StrCat("gang \"", Abbreviate(gang.id()),
                                  "\" members must share one priority class"));
    }
    if (first_gang.node_uniformity_label() != gang.node_uniformity_label()) {
      return Invalid(
          absl::StrCat(prefix, ".gang.node_uniformity_label"),
          absl::StrCat("gang \"", gang.id(), "\" members must share one node uniformity label"));
    }
  }
  for (const auto& [id, seen] : gangs) {
    const regatta::v1::Gang& first_gang = gang_of[seen.first_index];
    if (static_cast<uint32_t>(seen.count) != first_gang.cardinality()) {
      return Invalid(
          absl::StrCat("items[", seen.first_index, "].gang.cardinality"),
          absl::StrCat("gang cardinality mismatch: gang \"", Abbreviate(id), "\" declares ",
                       first_gang.cardinality(), " members but the request has ", seen.count,
                       " (submit a gang whole, in one request)"));
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
  if (!IsValidQueueName(request.queue())) {
    return Invalid("queue",
                   absl::StrCat("\"", Abbreviate(request.queue()), "\" is not a valid queue name"));
  }
  if (request.job_set().empty()) return Invalid("job_set", "required");
  if (static_cast<int>(request.job_set().size()) > policy.max_job_set_length) {
    return Invalid("job_set",
                   absl::StrCat("longer than ", policy.max_job_set_length, " characters"));
  }
  RETURN_IF_ERROR(CheckNoControlChars(request.job_set(), "job_set"));
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
  if (item.gang().id().empty()) {
    if (regatta::v1::Gang gang = internal::GangOf(item); !gang.id().empty()) {
      *item.mutable_gang() = std::move(gang);
    }
  }
  internal::DerivePodTask(*item.mutable_task(), *item.mutable_priority_class());
  if (item.priority_class().empty()) item.set_priority_class(policy.default_priority_class);
  NormalizeResources(*item.mutable_task(), policy);
  if (OffersPorts(item.task(), item.services())) {
    (*item.mutable_labels())[std::string(kServesPortsLabel)] = "true";
  }
}

void NormalizeJob(regatta::v1::Job& job, const SubmitPolicy& policy) {
  internal::ApplyArmadaGang(job);
  internal::DerivePodTask(*job.mutable_task(), *job.mutable_priority_class());
  if (job.priority_class().empty()) job.set_priority_class(policy.default_priority_class);
  NormalizeResources(*job.mutable_task(), policy);
  if (OffersPorts(job.task(), job.services())) {
    (*job.mutable_labels())[std::string(kServesPortsLabel)] = "true";
  }
}

absl::Status ValidatePriorityClassFilter(
    const google::protobuf::RepeatedPtrField<std::string>& priority_classes,
    const SubmitPolicy& policy) {
  for (int i = 0; i < priority_classes.size(); ++i) {
    RETURN_IF_ERROR(internal::CheckPriorityClass(
        priority_classes[i], absl::StrCat("priority_classes[", i, "]"), policy));
  }
  return absl::OkStatus();
}

absl::Status ValidateQueueSpec(const regatta::v1::Queue& queue, const SubmitPolicy& policy) {
  if (queue.name().empty()) return Invalid("queue.name", "required");
  if (!IsValidQueueName(queue.name())) {
    return Invalid("queue.name",
                   absl::StrCat("\"", Abbreviate(queue.name()),
                                "\" is not a valid queue name (1-63 characters of letters, "
                                "digits, '.', '_' and '-', starting with a letter or digit)"));
  }
  // 0 means the default 1. The weight is 1 / factor: a denormal or huge factor would make
  // it infinite or zero and every fair share NaN.
  const double factor = queue.priority_factor();
  if (factor != 0 && !(factor >= kMinPriorityFactor && factor <= kMaxPriorityFactor)) {
    return Invalid("queue.priority_factor",
                   absl::StrCat("must be between ", kMinPriorityFactor, " and ", kMaxPriorityFactor,
                                " (0 means the default 1), got ", factor));
  }
  for (const auto& [pc, limits] : queue.resource_limits_by_priority_class()) {
    std::string field = Entry("queue.resource_limits_by_priority_class", pc);
    if (!policy.priority_classes.count(pc)) {
      return Invalid(field, absl::StrCat("unknown priority class \"", Abbreviate(pc), "\""));
    }
    for (const auto& [resource, fraction] : limits.maximum_resource_fraction()) {
      std::string entry = Entry(absl::StrCat(field, ".maximum_resource_fraction"), resource);
      if (!IsValidResourceName(resource)) return Invalid(entry, "invalid resource name");
      if (!std::isfinite(fraction) || fraction < 0 || fraction > 1) {
        return Invalid(entry, "must be a fraction between 0 and 1");
      }
    }
  }
  return CheckStringMap(queue.labels(), "queue.labels");
}

absl::Status ValidateListJobsRequest(const regatta::v1::ListJobsRequest& request) {
  // Each filter is a term of one SQL statement: their number is bounded.
  if (request.labels_size() > kMaxLabelFilters) {
    return Invalid("labels", absl::StrCat(request.labels_size(),
                                          " label filters, over the limit of ", kMaxLabelFilters));
  }
  RETURN_IF_ERROR(CheckStringMap(request.labels(), "labels"));
  if (request.states_size() > kMaxStateFilters) {
    return Invalid("states", absl::StrCat(request.states_size(),
                                          " state filters, over the limit of ", kMaxStateFilters));
  }
  RETURN_IF_ERROR(CheckLength(request.queue(), "queue", kMaxFilterBytes));
  RETURN_IF_ERROR(CheckLength(request.job_set(), "job_set", kMaxFilterBytes));
  RETURN_IF_ERROR(CheckLength(request.owner(), "owner", kMaxFilterBytes));
  RETURN_IF_ERROR(CheckLength(request.namespace_(), "namespace", kMaxFilterBytes));
  return CheckLength(request.page_token(), "page_token", kMaxFilterBytes);
}

}  // namespace regatta::api
