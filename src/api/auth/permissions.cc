#include "src/api/auth/permissions.h"

#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace regatta::auth {
namespace {

template <typename Enum, size_t N>
std::string NameList(const std::array<Enum, N>& values, absl::string_view (*name)(Enum)) {
  return absl::StrJoin(values, ", ",
                       [name](std::string* out, Enum value) { absl::StrAppend(out, name(value)); });
}

}  // namespace

absl::string_view GlobalPermissionName(GlobalPermission permission) {
  switch (permission) {
    case GlobalPermission::kSubmitAnyJobs:
      return "submit_any_jobs";
    case GlobalPermission::kCancelAnyJobs:
      return "cancel_any_jobs";
    case GlobalPermission::kReprioritizeAnyJobs:
      return "reprioritize_any_jobs";
    case GlobalPermission::kPreemptAnyJobs:
      return "preempt_any_jobs";
    case GlobalPermission::kWatchAllEvents:
      return "watch_all_events";
    case GlobalPermission::kCreateQueue:
      return "create_queue";
    case GlobalPermission::kDeleteQueue:
      return "delete_queue";
    case GlobalPermission::kCordonQueue:
      return "cordon_queue";
    case GlobalPermission::kExecuteJobs:
      return "execute_jobs";
  }
  return "unknown_permission";
}

absl::StatusOr<GlobalPermission> ParseGlobalPermission(absl::string_view name) {
  for (GlobalPermission permission : kAllGlobalPermissions) {
    if (GlobalPermissionName(permission) == name) return permission;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown permission \"", name,
      "\" (want one of: ", NameList(kAllGlobalPermissions, &GlobalPermissionName), ")"));
}

absl::string_view QueueVerbName(QueueVerb verb) {
  switch (verb) {
    case QueueVerb::kSubmit:
      return "submit";
    case QueueVerb::kCancel:
      return "cancel";
    case QueueVerb::kReprioritize:
      return "reprioritize";
    case QueueVerb::kPreempt:
      return "preempt";
    case QueueVerb::kWatch:
      return "watch";
  }
  return "unknown_verb";
}

absl::StatusOr<QueueVerb> ParseQueueVerb(absl::string_view name) {
  for (QueueVerb verb : kAllQueueVerbs) {
    if (QueueVerbName(verb) == name) return verb;
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "unknown verb \"", name, "\" (want one of: ", NameList(kAllQueueVerbs, &QueueVerbName), ")"));
}

GlobalPermission GlobalPermissionForVerb(QueueVerb verb) {
  switch (verb) {
    case QueueVerb::kSubmit:
      return GlobalPermission::kSubmitAnyJobs;
    case QueueVerb::kCancel:
      return GlobalPermission::kCancelAnyJobs;
    case QueueVerb::kReprioritize:
      return GlobalPermission::kReprioritizeAnyJobs;
    case QueueVerb::kPreempt:
      return GlobalPermission::kPreemptAnyJobs;
    case QueueVerb::kWatch:
      return GlobalPermission::kWatchAllEvents;
  }
  return GlobalPermission::kSubmitAnyJobs;  // unreachable: the switch is exhaustive
}

absl::Status ValidateQueuePermissions(const regatta::v1::Queue& queue) {
  for (int i = 0; i < queue.permissions_size(); ++i) {
    const regatta::v1::QueuePermission& entry = queue.permissions(i);
    const std::string path = absl::StrCat("permissions[", i, "]");
    if (entry.subjects_size() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".subjects: must not be empty"));
    }
    if (entry.verbs_size() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(path, ".verbs: must not be empty"));
    }
    for (int j = 0; j < entry.subjects_size(); ++j) {
      const regatta::v1::PermissionSubject& subject = entry.subjects(j);
      const std::string subject_path = absl::StrCat(path, ".subjects[", j, "]");
      if (!absl::EqualsIgnoreCase(subject.kind(), kSubjectKindUser) &&
          !absl::EqualsIgnoreCase(subject.kind(), kSubjectKindGroup)) {
        return absl::InvalidArgumentError(absl::StrCat(subject_path,
                                                       ".kind: unknown subject kind \"",
                                                       subject.kind(), "\" (want user or group)"));
      }
      if (subject.name().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(subject_path, ".name: must not be empty"));
      }
    }
    for (int j = 0; j < entry.verbs_size(); ++j) {
      if (absl::Status s = ParseQueueVerb(entry.verbs(j)).status(); !s.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(path, ".verbs[", j, "]: ", s.message()));
      }
    }
  }
  return absl::OkStatus();
}

regatta::v1::QueuePermission CreatorQueuePermission(const Principal& creator) {
  regatta::v1::QueuePermission entry;
  regatta::v1::PermissionSubject* subject = entry.add_subjects();
  subject->set_kind(kSubjectKindUser);
  subject->set_name(creator.name);
  for (QueueVerb verb : kAllQueueVerbs) entry.add_verbs(std::string(QueueVerbName(verb)));
  return entry;
}

}  // namespace regatta::auth
