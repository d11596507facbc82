#ifndef REGATTA_SRC_CLI_AGENT_H_
#define REGATTA_SRC_CLI_AGENT_H_

// `regatta agent`: the device agent of one node as its own process (Akri's agent, run per node
// like its DaemonSet), for nodes whose executor runs no agent for them: the nodes of a
// simulated executor, or every node of a local executor but its first.

#include <ostream>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "src/common/tls/tls.h"

namespace regatta::cli {

struct AgentFlags {
  std::string executor_id;  // the executor whose node this is (as its lease requests say)
  std::string node;         // the node the agent discovers for
  std::string dir;          // discovery directory the node's handlers register in
};

// A usage error naming the flag for a missing or empty flag, or a directory too long for the
// registration socket's path.
absl::Status CheckAgentFlags(const AgentFlags& flags);

// Runs the agent for `flags.node` of `flags.executor_id` against the server at `server`
// (host:port) with the given "authorization" header (may be empty) until SIGINT or SIGTERM.
// Stopping reports nothing: the node's Instances stay until a handler says its devices are
// gone or the server declares the executor lost. Returns the exit code, or a usage error.
absl::StatusOr<int> RunAgent(const AgentFlags& flags, const std::string& server,
                             const tls::ClientTlsOptions& tls, const std::string& authorization,
                             std::ostream& out);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_AGENT_H_
