#include "src/cli/agent.h"

#include <csignal>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpcpp/create_channel.h"
#include "src/cli/client.h"
#include "src/cli/commands.h"
#include "src/common/logging.h"
#include "src/common/signals.h"
#include "src/common/status_macros.h"
#include "src/devices/protocol/sockets.h"
#include "src/devices/report/report.h"
#include "src/executor/device_discovery.h"

namespace regatta::cli {
namespace {

absl::Status CheckId(absl::string_view flag, const std::string& value, absl::string_view what) {
  if (value.empty()) return UsageError(absl::StrCat(flag, ": required (", what, ")"));
  if (value.size() > devices::kMaxDeviceIdBytes) {
    return UsageError(
        absl::StrCat(flag, ": at most ", devices::kMaxDeviceIdBytes, " bytes (", what, ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CheckAgentFlags(const AgentFlags& flags) {
  if (absl::Status s = CheckId("--executor-id", flags.executor_id,
                               "the executor whose node this is, as `regatta executor` prints it");
      !s.ok()) {
    return s;
  }
  if (absl::Status s = CheckId("--node", flags.node, "the node this agent discovers devices for");
      !s.ok()) {
    return s;
  }
  if (flags.dir.empty()) {
    return UsageError(
        "--dir: required (the discovery directory this node's handlers register in, as their "
        "`regatta dh NAME --dir DIR`)");
  }
  if (absl::Status s =
          devices::CheckSocketPath("--dir", devices::AgentRegistrationSocket(flags.dir));
      !s.ok()) {
    return UsageError(s.message());
  }
  return absl::OkStatus();
}

absl::StatusOr<int> RunAgent(const AgentFlags& flags, const std::string& server,
                             const tls::ClientTlsOptions& tls, const std::string& authorization,
                             std::ostream& out) {
  if (absl::Status s = CheckAgentFlags(flags); !s.ok()) return s;
  // Before any thread starts, so that only the wait below receives them.
  const sigset_t stop_signals = BlockStopSignals();
  InitLogging("info");
  ASSIGN_OR_RETURN(auto target, ServerTarget(server));
  ASSIGN_OR_RETURN(std::shared_ptr<grpc::Channel> channel,
                   ServerChannel(target.first, target.second, tls));
  executor::DeviceDiscoveryOptions options;
  options.dir = flags.dir;
  options.executor_id = flags.executor_id;
  options.node_id = flags.node;
  options.authorization = authorization;
  options.dir_field = "--dir";
  absl::StatusOr<std::unique_ptr<executor::DeviceDiscovery>> discovery =
      executor::DeviceDiscovery::Start(std::move(options), std::move(channel));
  if (!discovery.ok()) return discovery.status();
  out << "regatta agent is running (executor: " << flags.executor_id << ", node: " << flags.node
      << ", server: " << server << ")\n"
      << "  device discovery: " << flags.dir << " (regatta dh NAME --dir <that>)\n"
      << "  registration socket: " << (*discovery)->registration_socket() << "\n"
      << "Stop with Ctrl-C." << std::endl;
  LOG_INFO("device agent started", "executor", flags.executor_id, "node", flags.node, "socket",
           (*discovery)->registration_socket());
  const int signal = WaitForStopSignal(stop_signals);
  LOG_INFO("stopping the device agent; the node's Instances stay until its executor is lost",
           "signal", signal == SIGINT ? "SIGINT" : "SIGTERM", "node", flags.node);
  (*discovery)->Stop();
  return 0;
}

}  // namespace regatta::cli
