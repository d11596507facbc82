#ifndef REGATTA_SRC_DEVICES_AGENT_AGENT_H_
#define REGATTA_SRC_DEVICES_AGENT_AGENT_H_

// The node side of device discovery (Akri's agent, discovery part).
//
// The agent serves Registration on <dir>/agent-registration.sock and keeps a registry of the
// handlers that registered (HandlerRegistry). Its caller gives it discovery requests (one per
// Configuration, as plain structs); for each it runs one Discover stream per endpoint of the
// requested handler, merges what the endpoints report, removes duplicates and reports the full
// device set of the configuration on this node whenever it changes.
//
// Streams:
// - a handler that registers later joins the requests already running for its name;
// - a stream that ends normally is asked again after `requeue_after` (600 s, as Akri), keeping
//   the devices it last reported until then;
// - a stream that fails drops its devices and is retried after a backoff from 500 ms doubling
//   up to 5 minutes (reset by a response); a new registration of its endpoint retries at once;
// - an endpoint that stops answering (its stream fails and a fresh connection cannot be made)
//   is dropped from the registry together with its devices; a handler that comes back
//   registers again.
// Duplicates: Akri names a device by its CDI name, `<configuration>-<digest of the id (and node
// for a local device)>`; on one node that is the configuration and the device id, so the first
// endpoint (in endpoint order) reporting an id wins.
//
// Callbacks run on one agent thread, in order, never under the agent's lock: they may call
// Apply and Remove. Retry times follow the injected clock, checked every `clock_check` of real
// time, so tests advance a FakeClock.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "akri/discovery/v0/discovery.pb.h"
#include "src/common/clock.h"
#include "src/devices/agent/registry.h"

namespace grpc {
class Server;
class ClientContext;
class Status;
}  // namespace grpc

namespace regatta::devices {

// What to discover for one Configuration (its discovery handler part, properties resolved).
struct DiscoveryRequest {
  std::string configuration;
  std::string handler;
  std::string discovery_details;
  // Property name → value; nullopt for an optional source that was missing.
  std::map<std::string, std::optional<std::string>> discovery_properties;
  bool operator==(const DiscoveryRequest&) const = default;
};

// A device found on this node.
struct DiscoveredDevice {
  v0::Device device;
  // The `shared` flag of the endpoint that reported it.
  bool shared = false;
  // The endpoint that reported it (the first, in endpoint order, when several did).
  std::string endpoint;
};

struct AgentCallbacks {
  // The full device set of `configuration` on this node (sorted by id), after every change;
  // first called once some endpoint has answered. Not called after Remove.
  std::function<void(const std::string& configuration,
                     const std::vector<DiscoveredDevice>& devices)>
      on_devices;
  // Why discovery for `configuration` does not work, in plain words, whenever that changes;
  // "" once it works again.
  std::function<void(const std::string& configuration, const std::string& error)> on_error;
};

struct AgentOptions {
  std::string dir;         // the discovery directory shared with the handlers
  std::string node_name;   // for messages; empty: the host name
  Clock* clock = nullptr;  // the real clock if null
  absl::Duration requeue_after = absl::Seconds(600);
  absl::Duration initial_backoff = absl::Milliseconds(500);
  absl::Duration max_backoff = absl::Minutes(5);
  // How often waiting streams look at the clock (real time).
  absl::Duration clock_check = absl::Milliseconds(10);
  // How long a failed endpoint gets to accept a fresh connection before it is dropped.
  absl::Duration liveness_timeout = absl::Milliseconds(500);
};

// One Discover stream of a configuration, for inspection.
struct StreamInfo {
  std::string endpoint;
  int64_t attempts = 0;     // Discover calls started so far
  bool in_call = false;     // a call is open now
  absl::Time next_attempt;  // when not in a call: when the next call starts
  absl::Duration backoff;   // the delay after the next failure
  std::string error;        // why the last call failed, "" if it did not
  size_t devices = 0;       // devices it reports now
};

class Agent {
 public:
  static absl::StatusOr<std::unique_ptr<Agent>> Start(AgentOptions options,
                                                      AgentCallbacks callbacks);
  ~Agent();  // Shutdown()
  Agent(const Agent&) = delete;
  Agent& operator=(const Agent&) = delete;

  // Starts discovery for a new configuration, or restarts it when the request changed (a no-op
  // when it did not). INVALID_ARGUMENT naming the field of a request missing its names.
  absl::Status Apply(DiscoveryRequest request);
  // Stops discovery for a configuration (cancels its streams).
  void Remove(const std::string& configuration);
  // Stops serving registrations, cancels every stream and removes the socket.
  void Shutdown();

  const std::string& registration_socket() const { return socket_; }
  const std::string& node_name() const { return options_.node_name; }
  std::vector<HandlerEndpoint> Endpoints(const std::string& handler) const;
  std::vector<StreamInfo> Streams(const std::string& configuration) const;

 private:
  class RegistrationService;
  struct Stream;
  struct Config;

  Agent(AgentOptions options, AgentCallbacks callbacks);

  absl::Status Register(const v0::RegisterDiscoveryHandlerRequest& request);

  std::shared_ptr<Stream> StartStreamLocked(Config& config, const HandlerEndpoint& endpoint)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void StopStreamLocked(const std::shared_ptr<Stream>& stream) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void RunStream(std::shared_ptr<Stream> stream);
  bool EndpointAnswers(const HandlerEndpoint& endpoint) const;
  void OnResponseLocked(Stream& stream, const v0::DiscoverResponse& response)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void OnCallEndedLocked(Stream& stream, const grpc::Status& status, bool endpoint_answers)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DropEndpointLocked(const std::string& handler, const std::string& endpoint)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Reports the configuration's device set and error if they changed.
  void UpdateLocked(Config& config) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Deliver();

  const AgentOptions options_;
  const AgentCallbacks callbacks_;
  Clock* const clock_;
  std::string socket_;
  std::unique_ptr<RegistrationService> service_;
  std::unique_ptr<grpc::Server> server_;

  mutable absl::Mutex mu_;
  HandlerRegistry registry_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::unique_ptr<Config>> configs_ ABSL_GUARDED_BY(mu_);
  // Callbacks waiting for the delivery thread, in order.
  std::deque<std::function<void()>> pending_ ABSL_GUARDED_BY(mu_);
  // Stopped streams whose threads the delivery thread joins.
  std::vector<std::shared_ptr<Stream>> stopped_ ABSL_GUARDED_BY(mu_);
  uint64_t next_config_epoch_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread delivery_thread_;
  bool shut_down_ = false;
};

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_AGENT_AGENT_H_
