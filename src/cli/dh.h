#ifndef REGATTA_SRC_CLI_DH_H_
#define REGATTA_SRC_CLI_DH_H_

// `regatta dh NAME`: a discovery handler as its own process, serving the Akri-compatible
// discovery protocol on <dir>/<name>.sock and registering with the agent on
// <dir>/agent-registration.sock, until SIGTERM or SIGINT.

#include <ostream>
#include <string>

namespace regatta::cli {

// What every handler process takes.
struct HandlerFlags {
  std::string dir;     // discovery directory shared with the agent
  std::string name;    // the handler name Configurations ask for
  std::string socket;  // empty: <dir>/<name>.sock
};

struct DebugEchoFlags {
  HandlerFlags handler{.name = "debugEcho"};
  bool shared = false;            // devices visible from several nodes
  std::string availability_file;  // empty: $DEBUG_ECHO_AVAILABILITY_CHECK_PATH or Akri's default
};

// `regatta dh debug-echo`: runs until a stop signal; returns the exit code.
int RunDebugEcho(const DebugEchoFlags& flags, std::ostream& out, std::ostream& err);

// `regatta dh udev`: devices of this node matched by udev rules (local to the node).
int RunUdevHandler(const HandlerFlags& flags, std::ostream& out, std::ostream& err);

struct OnvifFlags {
  HandlerFlags handler{.name = "onvif"};
  std::string probe_address = "239.255.255.250:3702";  // WS-Discovery group (or a unicast host)
  std::string interface;                               // IPv4 address multicast leaves by
  std::string rediscover_interval = "10s";             // a discovery pass this often
  std::string http_timeout = "1s";                     // each SOAP call to a camera
};

// `regatta dh onvif`: ONVIF cameras found by WS-Discovery (shared devices).
int RunOnvifHandler(const OnvifFlags& flags, std::ostream& out, std::ostream& err);
struct OpcuaFlags {
  HandlerFlags handler{.name = "opcua"};
  std::string discovery_interval = "10s";  // how often servers are asked again (Akri: 10 s)
};

// `regatta dh opcua`: OPC UA servers found by FindServers on the discovery URLs (shared).
int RunOpcuaHandler(const OpcuaFlags& flags, std::ostream& out, std::ostream& err);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_DH_H_
