#include "src/api/auth/authorizer.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/common/status_macros.h"

namespace regatta::auth {
namespace {

uint32_t Bit(GlobalPermission permission) { return 1u << static_cast<unsigned>(permission); }

absl::Status AddMapping(const std::map<std::string, std::vector<std::string>>& mapping,
                        absl::string_view config_key,
                        absl::flat_hash_map<std::string, uint32_t>& bits) {
  for (const auto& [name, subjects] : mapping) {
    const std::string path = absl::StrCat(config_key, ".", name);
    absl::StatusOr<GlobalPermission> permission = ParseGlobalPermission(name);
    if (!permission.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": ", permission.status().message()));
    }
    for (size_t i = 0; i < subjects.size(); ++i) {
      if (subjects[i].empty()) {
        return absl::InvalidArgumentError(absl::StrCat(path, "[", i, "]: must not be empty"));
      }
      bits[subjects[i]] |= Bit(*permission);
    }
  }
  return absl::OkStatus();
}

// Phrases a denied verb as a sentence fragment: "submit to queue", "cancel jobs in queue", ...
absl::string_view VerbPhrase(QueueVerb verb) {
  switch (verb) {
    case QueueVerb::kSubmit:
      return "submit to";
    case QueueVerb::kCancel:
      return "cancel jobs in";
    case QueueVerb::kReprioritize:
      return "reprioritize jobs in";
    case QueueVerb::kPreempt:
      return "preempt jobs in";
    case QueueVerb::kWatch:
      return "watch events in";
  }
  return "use";
}

}  // namespace

absl::StatusOr<Authorizer> Authorizer::Create(const AuthorizationConfig& config) {
  Authorizer authorizer;
  RETURN_IF_ERROR(AddMapping(config.permission_group_mapping, "permissionGroupMapping",
                             authorizer.group_bits_));
  RETURN_IF_ERROR(
      AddMapping(config.permission_user_mapping, "permissionUserMapping", authorizer.user_bits_));
  return authorizer;
}

Authorizer::PermissionBits Authorizer::BitsOf(const Principal& principal) const {
  PermissionBits bits = 0;
  if (auto it = user_bits_.find(principal.name); it != user_bits_.end()) bits |= it->second;
  for (const std::string& group : principal.groups) {
    if (auto it = group_bits_.find(group); it != group_bits_.end()) bits |= it->second;
  }
  return bits;
}

bool Authorizer::HasGlobal(const Principal& principal, GlobalPermission permission) const {
  return (BitsOf(principal) & Bit(permission)) != 0;
}

bool Authorizer::HasQueueVerb(const Principal& principal, const regatta::v1::Queue& queue,
                              QueueVerb verb) const {
  if (HasGlobal(principal, GlobalPermissionForVerb(verb))) return true;
  const absl::string_view verb_name = QueueVerbName(verb);
  for (const regatta::v1::QueuePermission& entry : queue.permissions()) {
    bool grants_verb = false;
    for (const std::string& v : entry.verbs()) {
      if (v == verb_name) {
        grants_verb = true;
        break;
      }
    }
    if (!grants_verb) continue;
    for (const regatta::v1::PermissionSubject& subject : entry.subjects()) {
      if (absl::EqualsIgnoreCase(subject.kind(), kSubjectKindUser)) {
        if (subject.name() == principal.name) return true;
      } else if (absl::EqualsIgnoreCase(subject.kind(), kSubjectKindGroup)) {
        for (const std::string& group : principal.groups) {
          if (subject.name() == group) return true;
        }
      }
    }
  }
  return false;
}

absl::Status Authorizer::CheckGlobal(const Principal& principal,
                                     GlobalPermission permission) const {
  if (HasGlobal(principal, permission)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "user \"", principal.name, "\" lacks permission \"", GlobalPermissionName(permission), "\""));
}

absl::Status Authorizer::CheckQueueVerb(const Principal& principal, const regatta::v1::Queue& queue,
                                        QueueVerb verb) const {
  if (HasQueueVerb(principal, queue, verb)) return absl::OkStatus();
  return absl::PermissionDeniedError(absl::StrCat(
      "user \"", principal.name, "\" may not ", VerbPhrase(verb), " queue \"", queue.name(),
      "\" (needs verb \"", QueueVerbName(verb), "\" on the queue or permission \"",
      GlobalPermissionName(GlobalPermissionForVerb(verb)), "\")"));
}

}  // namespace regatta::auth
