#ifndef REGATTA_SRC_DEVICES_PROTOCOL_HANDLER_SERVER_H_
#define REGATTA_SRC_DEVICES_PROTOCOL_HANDLER_SERVER_H_

// The handler side of the discovery protocol: serves v0::DiscoveryHandler for a DeviceFinder on
// a Unix socket and keeps the handler registered with the node's agent.
//
// Each Discover call is validated once (a bad request ends at once with the finder's status),
// then gets the full device list at once and again whenever the finder's list changes (only
// then), until the agent cancels the call or the server shuts down.

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "src/devices/protocol/device_finder.h"
#include "src/devices/protocol/registrar.h"

namespace grpc {
class Server;
}

namespace regatta::devices {

struct HandlerServerOptions {
  // The discovery directory shared with the agent (AgentRegistrationSocket(dir)).
  std::string dir;
  // The handler name Configurations ask for, e.g. "debugEcho".
  std::string name;
  // Whether the devices found can be seen by several nodes.
  bool shared = false;
  // Where to serve; empty: HandlerSocket(dir, name). Two handlers of one name on one node need
  // different sockets.
  std::string socket_path;
  // Lists again this often even without a change notification (Akri's handlers poll every 10 s).
  absl::Duration relist_interval = absl::Seconds(10);
  // How soon a cancelled call or a shutdown ends a stream that waits for changes.
  absl::Duration cancel_check = absl::Milliseconds(50);
  // Passed to the registrar.
  absl::Duration registration_check = absl::Milliseconds(20);
};

class HandlerServer {
 public:
  // Starts serving (creating `dir` if needed) and registering; `finder` must outlive the server.
  static absl::StatusOr<std::unique_ptr<HandlerServer>> Start(HandlerServerOptions options,
                                                              DeviceFinder* finder);
  ~HandlerServer();  // Shutdown()
  HandlerServer(const HandlerServer&) = delete;
  HandlerServer& operator=(const HandlerServer&) = delete;

  // Ends every stream, stops registering and serving, and removes the socket.
  void Shutdown();

  const std::string& socket_path() const { return socket_path_; }
  const std::string& agent_socket() const { return agent_socket_; }
  Registrar& registrar() { return *registrar_; }
  // Discover calls being served now.
  int active_streams() const;

 private:
  class Service;
  HandlerServer() = default;

  std::string socket_path_;
  std::string agent_socket_;
  std::unique_ptr<Service> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<Registrar> registrar_;
  bool shut_down_ = false;
};

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_PROTOCOL_HANDLER_SERVER_H_
