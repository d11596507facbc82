#include "src/server/up.h"

#include <pthread.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "src/common/config.h"
#include "src/common/logging.h"
#include "src/common/secrets/sealer.h"
#include "src/common/signals.h"
#include "src/executor/local_executor.h"
#include "src/executor/simulated_executor.h"
#include "src/server/config.h"
#include "src/server/platform.h"

namespace regatta::server {
namespace {

// The directory of the agent's registration socket.
std::string DirOf(const std::string& socket) {
  return std::filesystem::path(socket).parent_path().string();
}

int Fail(absl::string_view what, const absl::Status& status) {
  std::cerr << "regatta: " << what << ": " << status.message() << std::endl;
  return 1;
}

// The stop signals plus SIGHUP, blocked in every thread (call before any thread starts).
sigset_t BlockStopAndReloadSignals() {
  sigset_t signals = BlockStopSignals();
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  return signals;
}

// Waits for SIGINT or SIGTERM (returned); each SIGHUP before it calls `reload`.
int WaitForStop(const sigset_t& signals, const std::function<absl::Status()>& reload) {
  for (;;) {
    const int signal = WaitForStopSignal(signals);
    if (signal != SIGHUP) return signal;
    absl::Status reloaded = reload();
    if (reloaded.ok()) {
      LOG_INFO("SIGHUP: reloaded the TLS certificate files");
    } else {
      LOG_WARN("SIGHUP: TLS files not reloaded; the previous ones stay in use", "error",
               reloaded.message());
    }
  }
}

int Run(const UpFlags& flags, Mode mode) {
  const sigset_t signals = BlockStopAndReloadSignals();

  absl::StatusOr<ServerConfig> config = LoadServerConfig(flags, ProcessEnvironment());
  if (!config.ok()) return Fail("config", config.status());
  InitLogging(config->log_level, config->log_format);
  absl::StatusOr<std::unique_ptr<Platform>> platform = Platform::Start(*config, mode);
  if (!platform.ok()) return Fail("start", platform.status());

  std::cout << "regatta is up (data: " << (*platform)->data_dir() << ")\n"
            << "  gRPC: " << (*platform)->grpc_address() << "\n"
            << "  HTTP: " << (config->tls.on() ? "https://" : "http://")
            << (*platform)->http_address() << "\n"
            << "  anonymous access: " << ((*platform)->anonymous_enabled() ? "on" : "off") << "\n";
  if (!(*platform)->anonymous_warning().empty()) {
    // Next to the addresses, where whoever starts the server looks (the log has it too).
    std::cout << "  WARNING: " << (*platform)->anonymous_warning() << "\n";
  }
  if (executor::Executor* e = (*platform)->local_executor();
      e != nullptr && !e->discovery_socket().empty()) {
    std::cout << "  device discovery: " << DirOf(e->discovery_socket())
              << " (regatta dh NAME --dir <that>)\n";
  }
  std::cout << "Stop with Ctrl-C." << std::endl;

  const int signal = WaitForStop(signals, [&] {
    if (absl::Status keys = (*platform)->ReloadSecretKeys(); keys.ok()) {
      LOG_INFO("SIGHUP: reloaded the secrets key file", "sealing_key",
               (*platform)->sealer().sealing_key_id());
    } else {
      LOG_WARN("SIGHUP: secrets key file not reloaded; the keys in use stay", "error",
               keys.message());
    }
    return (*platform)->ReloadTls();
  });
  LOG_INFO("stopping", "signal", signal == SIGINT ? "SIGINT" : "SIGTERM");
  (*platform)->Shutdown();
  return 0;
}

}  // namespace

int RunUp(const UpFlags& flags) { return Run(flags, Mode::kUp); }
int RunServer(const UpFlags& flags) { return Run(flags, Mode::kServer); }

int RunExecutor(const UpFlags& flags, const ExecutorFlags& kind, const std::string& server,
                const std::string& authorization) {
  const sigset_t signals = BlockStopAndReloadSignals();
  absl::StatusOr<ServerConfig> config = LoadServerConfig(flags, ProcessEnvironment());
  if (!config.ok()) return Fail("config", config.status());
  InitLogging(config->log_level, config->log_format);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> credentials =
      tls::ClientCredentials(kind.tls, &args);
  if (!credentials.ok()) return Fail("tls", credentials.status());
  // The log service serves the executor's certificate and takes only callers whose client
  // certificate the CA verifies (the server's).
  std::shared_ptr<tls::ServerTls> logs_tls;
  if (!kind.tls.cert_file.empty() && !kind.simulated) {
    if (kind.tls.ca_file.empty()) {
      return Fail("tls", absl::InvalidArgumentError(
                             "--tls-ca: required with --tls-cert (it verifies the server, and the "
                             "server's client certificate when it reads this executor's logs)"));
    }
    tls::ServerTlsOptions logs;
    logs.cert_file = kind.tls.cert_file;
    logs.key_file = kind.tls.key_file;
    logs.client_ca_file = kind.tls.ca_file;
    logs.client_auth = tls::ClientAuth::kRequire;
    logs.cert_field = kind.tls.cert_field;
    logs.key_field = kind.tls.key_field;
    logs.client_ca_field = kind.tls.ca_field;
    absl::StatusOr<std::shared_ptr<tls::ServerTls>> loaded = tls::ServerTls::Load(logs);
    if (!loaded.ok()) return Fail("tls", loaded.status());
    logs_tls = *std::move(loaded);
  } else if (kind.tls.on() && !kind.simulated) {
    LOG_WARN(
        "the log service has no certificate (--tls-cert): a server with TLS cannot read this "
        "executor's run logs");
  }
  auto channel = grpc::CreateCustomChannel(server, *credentials, args);
  absl::StatusOr<std::unique_ptr<executor::Executor>> executor;
  if (kind.simulated) {
    executor::SimulatedExecutorOptions options = SimulatedExecutorOptionsFrom(config->executor);
    options.executor.authorization = authorization;
    if (kind.nodes > 0) {
      executor::SimulatedNodeGroup group;
      group.count = kind.nodes;
      group.resources = {{"cpu", "32"}, {"memory", "128Gi"}};
      options.node_groups = {group};
    }
    for (executor::SimulatedNodeGroup& group : options.node_groups) {
      if (!kind.node_cpu.empty()) group.resources["cpu"] = kind.node_cpu;
      if (!kind.node_memory.empty()) group.resources["memory"] = kind.node_memory;
    }
    executor = executor::StartSimulatedExecutor(std::move(options), channel, RealClock::Get());
  } else {
    executor::LocalExecutorOptions options = LocalExecutorOptionsFrom(
        config->executor, flags.data_dir.empty() ? config->data_dir : flags.data_dir);
    options.executor.authorization = authorization;
    options.executor.logs_tls = logs_tls;
    options.executor.discovery_dir =
        kind.discovery_dir.empty() ? DiscoveryDirFrom(config->executor, "") : kind.discovery_dir;
    executor = executor::StartLocalExecutor(std::move(options), channel, RealClock::Get());
  }
  if (!executor.ok()) return Fail("executor", executor.status());
  std::cout << "regatta executor is running (id: " << (*executor)->executor_id()
            << ", server: " << server << ", nodes: " << (*executor)->node_count() << ")\n";
  if (!(*executor)->logs_address().empty()) {
    std::cout << "  logs: " << (*executor)->logs_address() << "\n";
  }
  if (!(*executor)->discovery_socket().empty()) {
    std::cout << "  device discovery: " << DirOf((*executor)->discovery_socket()) << " (node "
              << (*executor)->first_node_id() << ")\n";
  }
  std::cout << "Stop with Ctrl-C." << std::endl;
  const int signal = WaitForStop(signals, [&] {
    return logs_tls != nullptr ? logs_tls->Reload()
                               : absl::FailedPreconditionError("the log service has no TLS");
  });
  LOG_INFO("stopping the executor", "signal", signal == SIGINT ? "SIGINT" : "SIGTERM");
  (*executor)->Stop(config->executor.termination_grace);
  return 0;
}

}  // namespace regatta::server
