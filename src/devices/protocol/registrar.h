#ifndef REGATTA_SRC_DEVICES_PROTOCOL_REGISTRAR_H_
#define REGATTA_SRC_DEVICES_PROTOCOL_REGISTRAR_H_

// Keeps a discovery handler registered with its node's agent.
//
// Akri's handlers register once at start and again when a send on a Discover stream fails (the
// agent went away). That misses an agent that restarts while no stream is open, so the
// registrar also watches the agent's socket file: a new agent binds a new socket (a different
// inode or change time), and the handler registers within one check interval. A Nudge (a stream
// the agent dropped) registers again at once; the agent treats a repeated registration of a
// known endpoint as a no-op.

#include <cstdint>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "akri/discovery/v0/discovery.pb.h"

namespace regatta::devices {

struct RegistrarOptions {
  std::string agent_socket;
  v0::RegisterDiscoveryHandlerRequest request;
  // How often the agent socket is checked for a new agent.
  absl::Duration check_interval = absl::Milliseconds(20);
  // Deadline of one RegisterDiscoveryHandler call.
  absl::Duration call_timeout = absl::Seconds(2);
  // After a failed call: wait this long, doubling up to max_retry_delay (reset by a new socket).
  absl::Duration initial_retry_delay = absl::Milliseconds(20);
  absl::Duration max_retry_delay = absl::Seconds(1);
};

class Registrar {
 public:
  explicit Registrar(RegistrarOptions options);
  ~Registrar();  // Stop()
  Registrar(const Registrar&) = delete;
  Registrar& operator=(const Registrar&) = delete;

  void Start();
  void Stop();
  // Registers again now (the agent may have forgotten this handler).
  void Nudge();

  // Successful registrations so far.
  int64_t registrations() const;
  // Waits (real time) until at least `count` registrations succeeded.
  bool WaitForRegistrations(int64_t count, absl::Duration timeout) const;

 private:
  // What tells one bound socket from the next at the same path.
  struct SocketIdentity {
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t change_ns = 0;
    bool operator==(const SocketIdentity&) const = default;
  };
  static std::optional<SocketIdentity> Identify(const std::string& path);

  void Loop();
  bool Register();

  const RegistrarOptions options_;
  mutable absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool nudged_ ABSL_GUARDED_BY(mu_) = false;
  int64_t registrations_ ABSL_GUARDED_BY(mu_) = 0;
  std::thread thread_;
};

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_PROTOCOL_REGISTRAR_H_
