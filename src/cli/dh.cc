#include "src/cli/dh.h"

#include <csignal>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "src/cli/flags.h"
#include "src/common/clock.h"
#include "src/common/logging.h"
#include "src/common/signals.h"
#include "src/devices/handlers/debug_echo/debug_echo.h"
#include "src/devices/handlers/onvif/finder.h"
#include "src/devices/handlers/opcua/client.h"
#include "src/devices/handlers/opcua/discovery.h"
#include "src/devices/handlers/opcua/finder.h"
#include "src/devices/handlers/udev/discovery.h"
#include "src/devices/handlers/udev/finder.h"
#include "src/devices/protocol/handler_server.h"
#include "src/devices/protocol/sockets.h"

namespace regatta::cli {
namespace {

// Serves `finder` as handler `kind` until a stop signal; `stop_signals` were blocked before any
// thread started. `details` are extra lines for the banner. Each stream lists again every
// `relist_interval` even without a change notification.
int Serve(const HandlerFlags& flags, bool shared, const char* kind, const std::string& details,
          const sigset_t& stop_signals, devices::DeviceFinder* finder, std::ostream& out,
          std::ostream& err,
          absl::Duration relist_interval = devices::HandlerServerOptions().relist_interval) {
  devices::HandlerServerOptions options;
  options.relist_interval = relist_interval;
  options.dir = flags.dir;
  if (options.dir.empty()) {
    // Akri's discovery handlers take the directory from this variable.
    const char* akri_dir = std::getenv("DISCOVERY_HANDLERS_DIRECTORY");
    options.dir =
        akri_dir != nullptr && *akri_dir != '\0' ? akri_dir : devices::kDefaultDiscoveryDir;
  }
  options.name = flags.name;
  options.shared = shared;
  options.socket_path = flags.socket;
  options.relist_interval = relist_interval;
  auto server = devices::HandlerServer::Start(options, finder);
  if (!server.ok()) {
    err << "regatta: dh " << kind << ": " << server.status().message() << "\n";
    return 1;
  }
  out << "discovery handler " << flags.name << " (" << kind << ") serving on "
      << (*server)->socket_path() << "\n"
      << "  agent: " << (*server)->agent_socket() << "\n"
      << "  devices: " << (shared ? "shared" : "local") << "\n"
      << details << "Stop with Ctrl-C." << std::endl;
  const int signal = WaitForStopSignal(stop_signals);
  LOG_INFO("stopping the discovery handler", "signal", signal == SIGINT ? "SIGINT" : "SIGTERM");
  (*server)->Shutdown();
  return 0;
}

}  // namespace

int RunDebugEcho(const DebugEchoFlags& flags, std::ostream& out, std::ostream& err) {
  // Before any thread starts, so that only the wait in Serve receives them.
  const sigset_t stop_signals = BlockStopSignals();
  InitLogging("info");
  const std::string availability = flags.availability_file.empty()
                                       ? devices::debug_echo::DefaultAvailabilityFile()
                                       : flags.availability_file;
  devices::debug_echo::DebugEchoFinder finder(availability);
  return Serve(flags.handler, flags.shared, "debug-echo",
               "  availability file: " + availability + " (write OFFLINE to hide the devices)\n",
               stop_signals, &finder, out, err);
}

int RunUdevHandler(const HandlerFlags& flags, std::ostream& out, std::ostream& err) {
  const sigset_t stop_signals = BlockStopSignals();
  InitLogging("info");
  devices::udev::UdevFinder finder(RealClock::Get());
  return Serve(flags, devices::udev::kSharedDevices, "udev", "", stop_signals, &finder, out, err);
}

int RunOnvifHandler(const OnvifFlags& flags, std::ostream& out, std::ostream& err) {
  devices::onvif::NetworkOptions network;
  if (absl::Status status =
          devices::onvif::ParseProbeAddress("--probe-address", flags.probe_address, network.probe);
      !status.ok()) {
    err << "regatta: dh onvif: " << status.message() << "\n";
    return 2;
  }
  network.probe.interface = flags.interface;
  absl::StatusOr<absl::Duration> interval = ParseDurationFlag(flags.rediscover_interval);
  absl::StatusOr<absl::Duration> http_timeout = ParseDurationFlag(flags.http_timeout);
  if (!interval.ok() || *interval <= absl::ZeroDuration()) {
    err << "regatta: dh onvif: --rediscover-interval: expected a positive duration such as 10s\n";
    return 2;
  }
  if (!http_timeout.ok() || *http_timeout <= absl::ZeroDuration()) {
    err << "regatta: dh onvif: --http-timeout: expected a positive duration such as 1s\n";
    return 2;
  }
  network.http_timeout = *http_timeout;
  const sigset_t stop_signals = BlockStopSignals();
  InitLogging("info");
  devices::onvif::OnvifFinder finder(network, RealClock::Get());
  const std::string details =
      absl::StrCat("  probe: ", flags.probe_address,
                   flags.interface.empty() ? "" : absl::StrCat(" via ", flags.interface),
                   ", every ", absl::FormatDuration(*interval), "\n");
  return Serve(flags.handler, devices::onvif::kSharedDevices, "onvif", details, stop_signals,
               &finder, out, err, *interval);
}

int RunOpcuaHandler(const OpcuaFlags& flags, std::ostream& out, std::ostream& err) {
  absl::StatusOr<absl::Duration> interval = ParseDurationFlag(flags.discovery_interval);
  if (!interval.ok() || *interval <= absl::ZeroDuration()) {
    err << "regatta: dh opcua: --discovery-interval: "
        << (interval.ok() ? "must be positive" : interval.status().message()) << "\n";
    return 1;
  }
  const sigset_t stop_signals = BlockStopSignals();
  InitLogging("info");
  devices::opcua::TcpDiscoveryClient client;
  devices::opcua::OpcuaFinder finder(&client);
  return Serve(flags.handler, devices::opcua::kSharedDevices, "opcua",
               absl::StrCat("  discovery interval: ", absl::FormatDuration(*interval), "\n"),
               stop_signals, &finder, out, err, *interval);
}

}  // namespace regatta::cli
