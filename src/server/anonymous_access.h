#ifndef REGATTA_SRC_SERVER_ANONYMOUS_ACCESS_H_
#define REGATTA_SRC_SERVER_ANONYMOUS_ACCESS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "src/server/config.h"

namespace regatta::server {

// Whether requests without credentials are let in, and as whom.
struct AnonymousAccess {
  bool enabled = false;
  std::vector<std::string> groups;
  // Set when anonymous access is on while a listener is reachable from the network (forced
  // with auth.allowAnonymousOnNetwork): to be logged and printed loudly at startup.
  std::string warning;
  // Set when auth.anonymous=auto turned it off because a listener is not on loopback.
  std::string note;
};

// Decides from auth.anonymous, auth.anonymousGroups and auth.allowAnonymousOnNetwork, and the
// listeners this process opens: api.grpcListen, api.httpListen and, when it embeds a local
// executor (`embedded_logs_listen`, "" if none), executor.logsListen.
//   auto:  on only for `regatta up` (`up`) with every listener on loopback; groups default to
//          [admins], so the quick start needs no credentials.
//   true:  on; groups default to none. With a listener off loopback it is refused
//          (INVALID_ARGUMENT naming the key and the listener) unless forced.
//   false: off.
absl::StatusOr<AnonymousAccess> ResolveAnonymousAccess(const ServerConfig& config, bool up,
                                                       const std::string& embedded_logs_listen);

}  // namespace regatta::server

#endif  // REGATTA_SRC_SERVER_ANONYMOUS_ACCESS_H_
