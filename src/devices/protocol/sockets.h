#ifndef REGATTA_SRC_DEVICES_PROTOCOL_SOCKETS_H_
#define REGATTA_SRC_DEVICES_PROTOCOL_SOCKETS_H_

// Where the agent and the discovery handlers of one node meet: Unix domain sockets under one
// directory (Akri's convention, with Regatta's default directory).

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace grpc {
class Server;
class Service;
}  // namespace grpc

namespace regatta::devices {

inline constexpr char kDefaultDiscoveryDir[] = "/var/lib/regatta/discovery";

// <dir>/agent-registration.sock: the agent's Registration service.
std::string AgentRegistrationSocket(absl::string_view dir);

// <dir>/<name>.sock: a handler's DiscoveryHandler service.
std::string HandlerSocket(absl::string_view dir, absl::string_view name);

// The gRPC target (client) or listen address (server) of a socket path: "unix:<path>".
std::string UdsAddress(absl::string_view socket_path);

// INVALID_ARGUMENT (naming `field`) unless `path` fits in a sockaddr_un (107 bytes).
absl::Status CheckSocketPath(absl::string_view field, absl::string_view path);

// Creates `dir` (and its parents) if missing.
absl::Status EnsureDirectory(absl::string_view dir);

// Binding fails while a file is at the path: removes a stale socket left by a process that
// died. Anything else at the path (a regular file, a directory) is an error.
absl::Status RemoveStaleSocket(absl::string_view path);

// A handler or device-class name usable as a socket file name: letters, digits, '-', '_', '.'.
absl::Status CheckHandlerName(absl::string_view field, absl::string_view name);

// Serves `service` on a Unix socket: checks the path (named `what` in errors), creates `dir`,
// replaces a stale socket, then starts a gRPC server on "unix:<socket_path>".
absl::StatusOr<std::unique_ptr<grpc::Server>> ServeOnSocket(absl::string_view what,
                                                            absl::string_view dir,
                                                            const std::string& socket_path,
                                                            grpc::Service* service);

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_PROTOCOL_SOCKETS_H_
