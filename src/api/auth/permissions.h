#ifndef REGATTA_SRC_API_AUTH_PERMISSIONS_H_
#define REGATTA_SRC_API_AUTH_PERMISSIONS_H_

// The vocabulary of authorization, Armada-style: global permissions granted by server config,
// and per-queue verbs granted by a queue's `permissions` entries.

#include <array>
#include <cstdint>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "regatta/v1/types.pb.h"
#include "src/api/auth/principal.h"

namespace regatta::auth {

enum class GlobalPermission : uint8_t {
  kSubmitAnyJobs,
  kCancelAnyJobs,
  kReprioritizeAnyJobs,
  kPreemptAnyJobs,
  kWatchAllEvents,
  kCreateQueue,
  kDeleteQueue,
  kCordonQueue,
  kExecuteJobs,
};
inline constexpr std::array<GlobalPermission, 9> kAllGlobalPermissions = {
    GlobalPermission::kSubmitAnyJobs,       GlobalPermission::kCancelAnyJobs,
    GlobalPermission::kReprioritizeAnyJobs, GlobalPermission::kPreemptAnyJobs,
    GlobalPermission::kWatchAllEvents,      GlobalPermission::kCreateQueue,
    GlobalPermission::kDeleteQueue,         GlobalPermission::kCordonQueue,
    GlobalPermission::kExecuteJobs,
};

// "submit_any_jobs", "cancel_any_jobs", ..., "execute_jobs".
absl::string_view GlobalPermissionName(GlobalPermission permission);
// INVALID_ARGUMENT listing the known names if `name` is not one (exact, lower-case match).
absl::StatusOr<GlobalPermission> ParseGlobalPermission(absl::string_view name);

enum class QueueVerb : uint8_t { kSubmit, kCancel, kReprioritize, kPreempt, kWatch };
inline constexpr std::array<QueueVerb, 5> kAllQueueVerbs = {QueueVerb::kSubmit, QueueVerb::kCancel,
                                                            QueueVerb::kReprioritize,
                                                            QueueVerb::kPreempt, QueueVerb::kWatch};

// "submit", "cancel", "reprioritize", "preempt", "watch".
absl::string_view QueueVerbName(QueueVerb verb);
// INVALID_ARGUMENT listing the known verbs if `name` is not one (exact, lower-case match).
absl::StatusOr<QueueVerb> ParseQueueVerb(absl::string_view name);
// The global permission that grants `verb` on every queue (submit -> submit_any_jobs, ...).
GlobalPermission GlobalPermissionForVerb(QueueVerb verb);

// Subject kinds of a queue permission entry. Matched case-insensitively, so Armada's "User" and
// "Group" spellings work too.
inline constexpr char kSubjectKindUser[] = "user";
inline constexpr char kSubjectKindGroup[] = "group";

// Checks the queue's permission entries: at least one subject and one verb each, subject kinds
// "user"/"group" with non-empty names, known verbs. INVALID_ARGUMENT naming the field, e.g.
// "permissions[1].subjects[0].kind: unknown subject kind \"role\" (want user or group)".
absl::Status ValidateQueuePermissions(const regatta::v1::Queue& queue);

// The entry a queue created without permissions gets: every verb for its creator.
regatta::v1::QueuePermission CreatorQueuePermission(const Principal& creator);

}  // namespace regatta::auth

#endif  // REGATTA_SRC_API_AUTH_PERMISSIONS_H_
