#include "src/server/up.h"

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "src/common/config.h"
#include "src/common/logging.h"
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

int Run(const UpFlags& flags, Mode mode) {
  sigset_t stop_signals = BlockStopSignals();

  absl::StatusOr<ServerConfig> config = LoadServerConfig(flags, ProcessEnvironment());
  if (!config.ok()) return Fail("config", config.status());
  InitLogging(config->log_level, config->log_format);
  absl::StatusOr<std::unique_ptr<Platform>> platform = Platform::Start(*config, mode);
  if (!platform.ok()) return Fail("start", platform.status());

  std::cout << "regatta is up (data: " << (*platform)->data_dir() << ")\n"
            << "  gRPC: " << (*platform)->grpc_address() << "\n"
            << "  HTTP: http://" << (*platform)->http_address() << "\n"
            << "  anonymous access: " << ((*platform)->anonymous_enabled() ? "on" : "off") << "\n";
  if (executor::Executor* e = (*platform)->local_executor();
      e != nullptr && !e->discovery_socket().empty()) {
    std::cout << "  device discovery: " << DirOf(e->discovery_socket())
              << " (regatta dh NAME --dir <that>)\n";
  }
  std::cout << "Stop with Ctrl-C." << std::endl;

  const int signal = WaitForStopSignal(stop_signals);
  LOG_INFO("stopping", "signal", signal == SIGINT ? "SIGINT" : "SIGTERM");
  (*platform)->Shutdown();
  return 0;
}

}  // namespace

int RunUp(const UpFlags& flags) { return Run(flags, Mode::kUp); }
int RunServer(const UpFlags& flags) { return Run(flags, Mode::kServer); }

int RunExecutor(const UpFlags& flags, const ExecutorFlags& kind, const std::string& server,
                const std::string& authorization) {
  sigset_t stop_signals = BlockStopSignals();
  absl::StatusOr<ServerConfig> config = LoadServerConfig(flags, ProcessEnvironment());
  if (!config.ok()) return Fail("config", config.status());
  InitLogging(config->log_level, config->log_format);
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  auto channel = grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args);
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
  const int signal = WaitForStopSignal(stop_signals);
  LOG_INFO("stopping the executor", "signal", signal == SIGINT ? "SIGINT" : "SIGTERM");
  (*executor)->Stop(config->executor.termination_grace);
  return 0;
}

}  // namespace regatta::server
