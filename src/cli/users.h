#ifndef REGATTA_SRC_CLI_USERS_H_
#define REGATTA_SRC_CLI_USERS_H_

// `regatta users ...`: helpers for writing the server's users file.

#include <string>

#include "absl/status/status.h"
#include "src/cli/commands.h"

namespace regatta::cli {

// Reads a password (prompted twice on a terminal, else one line of stdin) and prints its
// argon2id hash.
absl::Status UsersHashPassword(const CommandEnv& env);
// Prints the SHA-256 hex of a bearer token, as the users file stores it. An empty `token` is read
// as one line of stdin (which keeps it out of the shell history).
absl::Status UsersHashToken(const CommandEnv& env, const std::string& token);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_USERS_H_
