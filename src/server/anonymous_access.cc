#include "src/server/anonymous_access.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace regatta::server {

absl::StatusOr<AnonymousAccess> ResolveAnonymousAccess(const ServerConfig& config, bool up,
                                                       const std::string& embedded_logs_listen) {
  std::vector<std::pair<const char*, std::string>> listeners = {
      {"api.grpcListen", config.grpc_listen}, {"api.httpListen", config.http_listen}};
  if (!embedded_logs_listen.empty()) {
    listeners.emplace_back("executor.logsListen", embedded_logs_listen);
  }
  const std::pair<const char*, std::string>* exposed = nullptr;
  for (const auto& listener : listeners) {
    if (!IsLoopbackListen(listener.second)) {
      exposed = &listener;
      break;
    }
  }
  AnonymousAccess access;
  if (config.anonymous_mode == "false") return access;
  if (config.anonymous_mode == "auto") {
    if (!up) return access;
    if (exposed != nullptr) {
      access.note = absl::StrCat("anonymous access is off because ", exposed->first, " (",
                                 exposed->second, ") is not on loopback");
      return access;
    }
    access.enabled = true;
    access.groups = config.anonymous_groups.value_or(std::vector<std::string>{"admins"});
    return access;
  }
  // "true": the operator asked for it; only the groups they name.
  access.enabled = true;
  access.groups = config.anonymous_groups.value_or(std::vector<std::string>{});
  if (exposed == nullptr) return access;
  if (!config.allow_anonymous_on_network) {
    return absl::InvalidArgumentError(absl::StrCat(
        "auth.anonymous is true but ", exposed->first, " (", exposed->second,
        ") is not on loopback: anyone who can reach it would be let in without credentials. "
        "Use auth.usersFile (docs/auth.md), listen on 127.0.0.1, or set "
        "auth.allowAnonymousOnNetwork=true to accept this"));
  }
  access.warning =
      absl::StrCat("ANONYMOUS ACCESS FROM THE NETWORK: anyone who can reach ", exposed->first, " (",
                   exposed->second, ") acts as user \"anonymous\" with groups [",
                   absl::StrJoin(access.groups, ", "),
                   "] without credentials (auth.allowAnonymousOnNetwork=true)");
  return access;
}

}  // namespace regatta::server
