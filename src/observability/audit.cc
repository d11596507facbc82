#include "src/observability/audit.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/reflection.h"

namespace regatta::observability {
namespace {

using google::protobuf::FieldDescriptor;

constexpr const char* kWritingVerbs[] = {
    "Submit",  "Cancel",    "Create",   "Update",  "Delete",    "Reprioritize",
    "Preempt", "Terminate", "Retry",    "Archive", "Unarchive", "Prune",
    "Apply",   "Cordon",    "Uncordon", "Enable",  "Disable"};

// Top-level string fields that name what a call acts on.
constexpr const char* kTargetFields[] = {
    "queue",      "job_set",      "job_id",   "run_id",     "recurring_run_id",
    "name",       "display_name", "pipeline", "version_id", "pipeline_version_id",
    "experiment", "executor_id",  "node_id"};
// Repeated string fields that list what a call acts on.
constexpr const char* kTargetLists[] = {"job_ids", "queues", "fingerprints"};
// Message fields whose own name (or display name) names what a call acts on.
constexpr const char* kTargetMessages[] = {"queue", "configuration", "secret", "config_map",
                                           "recurring_run"};

constexpr size_t kMaxValueBytes = 256;
constexpr int kMaxListed = 20;

bool In(absl::string_view name, const auto& list) {
  return std::any_of(std::begin(list), std::end(list),
                     [&](const char* candidate) { return name == candidate; });
}

std::string Capped(std::string value) {
  if (value.size() > kMaxValueBytes) {
    value.resize(kMaxValueBytes);
    value += "...";
  }
  return value;
}

// The message's string field `name`, or "" if it has none (or it is empty).
std::string StringField(const google::protobuf::Message& message, const char* name) {
  const FieldDescriptor* f = message.GetDescriptor()->FindFieldByName(name);
  if (f == nullptr || f->is_repeated() || f->type() != FieldDescriptor::TYPE_STRING) return "";
  return message.GetReflection()->GetString(message, f);
}

std::string NameOf(const google::protobuf::Message& message) {
  std::string name = StringField(message, "name");
  return name.empty() ? StringField(message, "display_name") : name;
}

}  // namespace

bool IsAudited(absl::string_view full_method) {
  if (!absl::StartsWith(full_method, "/regatta.v1.")) return false;
  if (absl::StartsWith(full_method, "/regatta.v1.ExecutorService/")) return false;
  const size_t slash = full_method.rfind('/');
  const absl::string_view method = full_method.substr(slash + 1);
  for (const char* verb : kWritingVerbs) {
    if (!absl::StartsWith(method, verb)) continue;
    // "Cancel" must not match a read named e.g. "Cancellations": the verb ends at a capital.
    const absl::string_view rest = method.substr(absl::string_view(verb).size());
    if (rest.empty() || (rest[0] >= 'A' && rest[0] <= 'Z')) return true;
  }
  return false;
}

AuditFields AuditTargets(const google::protobuf::Message& request) {
  AuditFields out;
  const google::protobuf::Descriptor* d = request.GetDescriptor();
  const google::protobuf::Reflection* r = request.GetReflection();
  for (int i = 0; i < d->field_count(); ++i) {
    const FieldDescriptor* f = d->field(i);
    const std::string& name = f->name();
    if (f->is_repeated()) {
      if (f->type() == FieldDescriptor::TYPE_STRING && In(name, kTargetLists)) {
        const int n = r->FieldSize(request, f);
        if (n == 0) continue;
        std::string joined;
        for (int j = 0; j < n && j < kMaxListed; ++j) {
          absl::StrAppend(&joined, j == 0 ? "" : ",", r->GetRepeatedString(request, f, j));
        }
        if (n > kMaxListed) absl::StrAppend(&joined, ",+", n - kMaxListed, " more");
        out.emplace_back(name, Capped(std::move(joined)));
      } else if (f->type() == FieldDescriptor::TYPE_MESSAGE && name == "items") {
        out.emplace_back("jobs", absl::StrCat(r->FieldSize(request, f)));
      }
      continue;
    }
    if (f->type() == FieldDescriptor::TYPE_STRING && In(name, kTargetFields)) {
      std::string value = r->GetString(request, f);
      if (!value.empty()) out.emplace_back(name, Capped(std::move(value)));
    } else if (f->type() == FieldDescriptor::TYPE_MESSAGE && In(name, kTargetMessages) &&
               r->HasField(request, f)) {
      std::string value = NameOf(r->GetMessage(request, f));
      if (!value.empty()) out.emplace_back(name, Capped(std::move(value)));
    }
  }
  return out;
}

AuditFields AuditResult(const google::protobuf::Message& response) {
  AuditFields out;
  if (std::string id = StringField(response, "id"); !id.empty()) {
    out.emplace_back("id", Capped(std::move(id)));
  }
  const google::protobuf::Descriptor* d = response.GetDescriptor();
  for (const char* name : {"pipeline", "version"}) {
    const FieldDescriptor* f = d->FindFieldByName(name);
    if (f == nullptr || f->is_repeated() || f->type() != FieldDescriptor::TYPE_MESSAGE ||
        !response.GetReflection()->HasField(response, f)) {
      continue;
    }
    std::string id = StringField(response.GetReflection()->GetMessage(response, f), "id");
    if (!id.empty()) out.emplace_back(absl::StrCat(name, "_id"), Capped(std::move(id)));
  }
  return out;
}

AuditFields AuditLine(absl::string_view full_method, absl::string_view principal,
                      const AuditFields& targets, const AuditFields& result, absl::string_view code,
                      absl::string_view peer) {
  if (!full_method.empty() && full_method.front() == '/') full_method.remove_prefix(1);
  const size_t slash = full_method.rfind('/');
  AuditFields line;
  line.reserve(targets.size() + result.size() + 5);
  line.emplace_back("principal", std::string(principal));
  line.emplace_back("service", std::string(full_method.substr(0, slash)));
  line.emplace_back("method", std::string(full_method.substr(slash + 1)));
  line.insert(line.end(), targets.begin(), targets.end());
  line.insert(line.end(), result.begin(), result.end());
  line.emplace_back("code", std::string(code));
  line.emplace_back("peer", std::string(peer));
  return line;
}

}  // namespace regatta::observability
