#ifndef REGATTA_SRC_SERVER_CONFIG_H_
#define REGATTA_SRC_SERVER_CONFIG_H_

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "src/api/auth/authenticator.h"
#include "src/api/auth/authorizer.h"
#include "src/api/validation.h"
#include "src/common/tls/tls.h"
#include "src/devices/controller/controller.h"
#include "src/executor/executor.h"
#include "src/executor/local_executor.h"
#include "src/executor/simulated_executor.h"
#include "src/scheduler/scheduler.h"
#include "src/server/up.h"

namespace regatta::server {

// The built-in defaults; docs/configuration.md explains every key.
extern const char kDefaultConfigYaml[];

// The simulated executor's settings (`executor.simulated:`).
struct SimulatedConfig {
  std::vector<executor::SimulatedNodeGroup> node_groups;
  executor::DurationDistribution duration;
  uint64_t seed = 1;
};

// The executors' settings (`executor:`).
struct ExecutorConfig {
  bool embedded = true;  // run inside `regatta up`
  std::string id;
  std::string pool = "default";
  std::string data_dir;  // empty: <dataDir>/executor
  std::vector<executor::NodeConfig> nodes;
  int max_runs = 0;
  absl::Duration termination_grace = absl::Seconds(30);
  absl::Duration heartbeat = absl::Seconds(2);
  std::string logs_listen = "127.0.0.1:0";
  bool cgroups = true;
  bool sync_run_state = false;
  executor::ContainerOptions containers;  // executor.containers
  // executor.discovery.dir: "" (the command's default), "off", or a directory.
  std::string discovery_dir;
  SimulatedConfig simulated;
  // The embedded executor of `regatta up` is the simulated one (--simulated-nodes).
  bool embedded_simulated = false;
};

// The `pipelines:` section.
struct PipelinesConfig {
  std::string default_queue = "pipelines";
  // Where artifacts go (a path or file:// URI); default: <dataDir>/artifacts.
  std::string root;
  absl::Duration cache_ttl = absl::ZeroDuration();
  std::string step_cpu = "100m";
  std::string step_memory = "128Mi";
  absl::Duration progress_hold = absl::Milliseconds(20);
  std::string step_runner = "host";  // host or container
  // Artifacts of bucket uris; empty: <dataDir>/buckets.
  std::string buckets_dir;
};

struct DevicesConfig {
  devices::DeviceControllerOptions controller;
};

// `auth.oidc:` (bearer JWTs from an OpenID Connect issuer; docs/auth.md). Off when issuer is "".
struct OidcConfig {
  std::string issuer;
  std::string audience;
  std::string jwks_file;  // exactly one of jwks_file and jwks_url
  std::string jwks_url;
  std::string jwks_ca_file;
  std::string username_claim;
  std::string groups_claim;
  std::string username_prefix;
  std::string groups_prefix;
  std::vector<std::string> algorithms;
  absl::Duration clock_skew;
  absl::Duration refresh_interval;
  absl::Duration min_refresh_interval;
  absl::Duration fetch_timeout;
  int64_t token_cache_size = 0;
};

// The `tls:` section; the files are read and checked when the platform starts.
struct TlsConfig {
  std::string cert_file;  // empty: plain text
  std::string key_file;
  std::string client_ca_file;
  tls::ClientAuth client_auth = tls::ClientAuth::kNone;
  bool on() const { return !cert_file.empty(); }
};

// logging.audit, metrics.*, health.* (docs/metrics.md).
struct ObservabilityConfig {
  bool audit = true;
  bool metrics_require_auth = false;
  absl::Duration max_view_lag = absl::Seconds(30);
};

struct ServerConfig {
  std::string data_dir;
  std::string grpc_listen;
  std::string http_listen;
  int64_t max_request_bytes = 0;
  int rest_threads = 2;
  // "auto": on for `regatta up` when every listener is on loopback; "true"; "false".
  std::string anonymous_mode;
  // Unset: the mode's default (see ResolveAnonymousAccess).
  std::optional<std::vector<std::string>> anonymous_groups;
  // auth.allowAnonymousOnNetwork: anonymous access may be on with a listener off loopback.
  bool allow_anonymous_on_network = false;
  std::string users_file;
  auth::PasswordCheckLimits password_limits;
  auth::AuthorizationConfig authorization;
  OidcConfig oidc;
  api::SubmitPolicy submit_policy;
  int64_t max_log_record_bytes = 0;
  absl::Duration view_wait_timeout;
  // scheduling.viewsLinger: see IngesterOptions::linger.
  absl::Duration views_linger;
  std::string log_level;
  std::string log_format;
  // Priority classes are filled from submit_policy by the platform.
  scheduler::SchedulerOptions scheduler;
  absl::Duration lease_wait = absl::Milliseconds(500);
  ExecutorConfig executor;
  PipelinesConfig pipelines;
  DevicesConfig devices;
  TlsConfig tls;
  // secrets.keyFile: the keys that seal secret values; "": <dataDir>/secrets.key, created.
  std::string secrets_key_file;
  ObservabilityConfig observability;
};

// Loads defaults < config file < REGATTA_* environment < --set flags < explicit flags, and
// checks every value; errors name the key.
absl::StatusOr<ServerConfig> LoadServerConfig(const UpFlags& flags,
                                              const std::map<std::string, std::string>& env);

// True if `listen` ("host:port") binds only a loopback address.
bool IsLoopbackListen(absl::string_view listen);

}  // namespace regatta::server

#endif  // REGATTA_SRC_SERVER_CONFIG_H_
