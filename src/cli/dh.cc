#include "src/cli/dh.h"

#include <csignal>

#include "src/common/logging.h"
#include "src/common/signals.h"
#include "src/devices/handlers/debug_echo/debug_echo.h"
#include "src/devices/protocol/handler_server.h"
#include "src/devices/protocol/sockets.h"

namespace regatta::cli {

int RunDebugEcho(const DebugEchoFlags& flags, std::ostream& out, std::ostream& err) {
  // Before any thread starts, so that only the wait below receives them.
  const sigset_t stop_signals = BlockStopSignals();
  InitLogging("info");

  const std::string availability = flags.availability_file.empty()
                                       ? devices::debug_echo::DefaultAvailabilityFile()
                                       : flags.availability_file;
  devices::debug_echo::DebugEchoFinder finder(availability);
  devices::HandlerServerOptions options;
  options.dir = flags.dir.empty() ? devices::kDefaultDiscoveryDir : flags.dir;
  options.name = flags.name;
  options.shared = flags.shared;
  options.socket_path = flags.socket;
  auto server = devices::HandlerServer::Start(options, &finder);
  if (!server.ok()) {
    err << "regatta: dh debug-echo: " << server.status().message() << "\n";
    return 1;
  }
  out << "discovery handler " << flags.name << " (debug-echo) serving on "
      << (*server)->socket_path() << "\n"
      << "  agent: " << (*server)->agent_socket() << "\n"
      << "  devices: " << (flags.shared ? "shared" : "local") << "\n"
      << "  availability file: " << availability << " (write OFFLINE to hide the devices)\n"
      << "Stop with Ctrl-C." << std::endl;
  const int signal = WaitForStopSignal(stop_signals);
  LOG_INFO("stopping the discovery handler", "signal", signal == SIGINT ? "SIGINT" : "SIGTERM");
  (*server)->Shutdown();
  return 0;
}

}  // namespace regatta::cli
