#include "src/cli/dh.h"

#include <csignal>

#include "src/common/clock.h"
#include "src/common/logging.h"
#include "src/common/signals.h"
#include "src/devices/handlers/debug_echo/debug_echo.h"
#include "src/devices/handlers/udev/discovery.h"
#include "src/devices/handlers/udev/finder.h"
#include "src/devices/protocol/handler_server.h"
#include "src/devices/protocol/sockets.h"

namespace regatta::cli {
namespace {

// Serves `finder` as handler `kind` until a stop signal; `stop_signals` were blocked before any
// thread started. `details` are extra lines for the banner.
int Serve(const HandlerFlags& flags, bool shared, const char* kind, const std::string& details,
          const sigset_t& stop_signals, devices::DeviceFinder* finder, std::ostream& out,
          std::ostream& err) {
  devices::HandlerServerOptions options;
  options.dir = flags.dir.empty() ? devices::kDefaultDiscoveryDir : flags.dir;
  options.name = flags.name;
  options.shared = shared;
  options.socket_path = flags.socket;
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

}  // namespace regatta::cli
