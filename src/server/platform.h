#ifndef REGATTA_SRC_SERVER_PLATFORM_H_
#define REGATTA_SRC_SERVER_PLATFORM_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "src/common/clock.h"
#include "src/common/ids.h"
#include "src/executor/local_executor.h"
#include "src/server/config.h"

namespace grpc {
class Server;
}

namespace regatta::secrets {
class Sealer;
}

namespace regatta::eventlog {
class EventLog;
}
namespace regatta::store {
class Store;
}

namespace regatta::pipelines::engine {
class PipelineEngine;
}
namespace regatta::api {
class ExecutorService;
class RunService;
class SubmitService;
}  // namespace regatta::api

namespace regatta::server {

// The principal the embedded executor of `regatta up` authenticates as.
inline constexpr char kEmbeddedExecutorUser[] = "regatta-embedded-executor";

// The local executor's options from the `executor:` config; runs live under
// <data_dir>/executor unless the config says otherwise.
executor::LocalExecutorOptions LocalExecutorOptionsFrom(const ExecutorConfig& config,
                                                        const std::string& data_dir);
// The device agent's directory from executor.discovery.dir: "off" → none, "" →
// `default_dir` (empty: none), else the key's value.
std::string DiscoveryDirFrom(const ExecutorConfig& config, const std::string& default_dir);
// The simulated executor's options from the `executor:` config (its id, pool, maxRuns and
// heartbeat, and `executor.simulated`).
executor::SimulatedExecutorOptions SimulatedExecutorOptionsFrom(const ExecutorConfig& config);

// Which command is starting the platform; anonymous access "auto" depends on it.
enum class Mode { kUp, kServer };

// The composition root: builds the log, store, ingester, auth, API services, gRPC and HTTP
// servers from a ServerConfig and wires them together. Integration tests start it in-process
// with port 0 listeners.
class Platform {
 public:
  struct Deps {
    const Clock* clock = nullptr;  // default: the real clock
    IdGenerator* ids = nullptr;    // default: ULIDs on `clock`
  };

  static absl::StatusOr<std::unique_ptr<Platform>> Start(const ServerConfig& config, Mode mode,
                                                         Deps deps);
  static absl::StatusOr<std::unique_ptr<Platform>> Start(const ServerConfig& config, Mode mode) {
    return Start(config, mode, Deps());
  }
  ~Platform();

  // "host:port" with the port actually bound.
  const std::string& grpc_address() const;
  const std::string& http_address() const;
  const std::string& data_dir() const;
  bool anonymous_enabled() const;
  // Non-empty when anonymous access is on for a listener reachable from the network (forced).
  const std::string& anonymous_warning() const;

  eventlog::EventLog* log();
  // The embedded executor (`regatta up`; simulated with --simulated-nodes), or null.
  executor::Executor* local_executor();
  store::Store* store();
  pipelines::engine::PipelineEngine* pipeline_engine();
  api::RunService* run_service();
  devices::DeviceController* device_controller();
  api::ExecutorService* executor_service();
  api::SubmitService* submit_service();
  // Reads the TLS files again (SIGHUP); new connections get them, and on error the old ones
  // stay in use. FAILED_PRECONDITION when TLS is off.
  absl::Status ReloadTls();
  // Reads secrets.keyFile again (SIGHUP); on error the keys in use stay.
  absl::Status ReloadSecretKeys();
  const secrets::Sealer& sealer() const;
  // Blocks until the views include the log up to `offset`.
  absl::Status WaitForViews(int64_t offset, absl::Time deadline);

  // Stops accepting calls, ends open event streams, stops the ingester and closes storage.
  // Idempotent.
  void Shutdown();

  struct Impl;

 private:
  explicit Platform(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace regatta::server

#endif  // REGATTA_SRC_SERVER_PLATFORM_H_
