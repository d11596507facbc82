#ifndef REGATTA_SRC_API_AUTH_AUTHORIZER_H_
#define REGATTA_SRC_API_AUTH_AUTHORIZER_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "regatta/v1/types.pb.h"
#include "src/api/auth/permissions.h"
#include "src/api/auth/principal.h"

namespace regatta::auth {

// Who holds which global permission; the composition root fills this from the server's YAML.
// Keys are permission names ("submit_any_jobs", ...); unknown names are rejected by Create.
struct AuthorizationConfig {
  // YAML: permissionGroupMapping: {create_queue: [admins], ...}
  std::map<std::string, std::vector<std::string>> permission_group_mapping;
  // YAML: permissionUserMapping: {execute_jobs: [executor], ...}
  std::map<std::string, std::vector<std::string>> permission_user_mapping;
};

// Decides whether an authenticated principal may do something. Immutable and thread-safe;
// called on every request, so the config is flattened into per-user/per-group bit sets.
class Authorizer {
 public:
  // INVALID_ARGUMENT naming the key, e.g. "permissionGroupMapping.create_queues: unknown
  // permission ...", or an empty group/user name.
  static absl::StatusOr<Authorizer> Create(const AuthorizationConfig& config);

  bool HasGlobal(const Principal& principal, GlobalPermission permission) const;
  // True if the principal holds the verb's global permission or one of the queue's permission
  // entries grants the verb to the principal's name or one of its groups.
  bool HasQueueVerb(const Principal& principal, const regatta::v1::Queue& queue,
                    QueueVerb verb) const;

  // PERMISSION_DENIED: `user "bob" lacks permission "create_queue"`.
  absl::Status CheckGlobal(const Principal& principal, GlobalPermission permission) const;
  // PERMISSION_DENIED: `user "bob" may not submit to queue "q1" (needs verb "submit" on the
  // queue or permission "submit_any_jobs")`.
  absl::Status CheckQueueVerb(const Principal& principal, const regatta::v1::Queue& queue,
                              QueueVerb verb) const;

 private:
  using PermissionBits = uint32_t;
  static_assert(kAllGlobalPermissions.size() <= sizeof(PermissionBits) * 8);

  Authorizer() = default;
  PermissionBits BitsOf(const Principal& principal) const;

  absl::flat_hash_map<std::string, PermissionBits> user_bits_;
  absl::flat_hash_map<std::string, PermissionBits> group_bits_;
};

}  // namespace regatta::auth

#endif  // REGATTA_SRC_API_AUTH_AUTHORIZER_H_
