#ifndef REGATTA_SRC_SERVER_UP_H_
#define REGATTA_SRC_SERVER_UP_H_

#include <string>
#include <vector>

#include "src/common/tls/tls.h"

namespace regatta::server {

// Flags of `regatta up` / `regatta server` (the CLI parses them; the composition root uses them).
struct UpFlags {
  std::string config_file;             // --config, or $REGATTA_CONFIG
  std::vector<std::string> overrides;  // --set key.path=value (repeatable)
  std::string data_dir;                // --data-dir; empty: the config's (default ./regatta-data)
  std::string grpc_listen;             // --grpc-listen host:port; empty: the config's
  std::string http_listen;             // --http-listen host:port; empty: the config's
  // `regatta up --simulated-nodes N`: the embedded executor is a simulated one with N nodes.
  int simulated_nodes = 0;
};

// Runs the embedded platform (API server, log, store, ingester) in this process until SIGINT or
// SIGTERM, printing its endpoints first; SIGHUP reloads the TLS files. Returns the process exit
// code; errors are printed as one line to stderr.
int RunUp(const UpFlags& flags);

// `regatta server`: the same components, but anonymous access "auto" means off.
int RunServer(const UpFlags& flags);

// Flags of `regatta executor`.
struct ExecutorFlags {
  bool simulated = false;  // --simulated; else --local
  // --nodes N: one group of N simulated nodes (32 cpu, 128Gi) instead of
  // executor.simulated.nodes; --node-cpu and --node-memory: of every simulated node.
  int nodes = 0;
  std::string node_cpu;
  std::string node_memory;
  // --discovery-dir DIR: run the device agent there (overrides executor.discovery.dir).
  std::string discovery_dir;
  // --tls-ca, --tls-cert, --tls-key, --tls-server-name: TLS to the server; the certificate
  // is also the log service's, whose callers (the server) must present one --tls-ca verifies.
  tls::ClientTlsOptions tls;
};

// `regatta executor --local|--simulated`: an executor alone, taking leases from the server at
// `server` (host:port) with the given "authorization" header value (may be empty). Uses the
// config's `executor:` section; local runs live under <dataDir>/executor unless it says
// otherwise.
int RunExecutor(const UpFlags& flags, const ExecutorFlags& kind, const std::string& server,
                const std::string& authorization);

}  // namespace regatta::server

#endif  // REGATTA_SRC_SERVER_UP_H_
