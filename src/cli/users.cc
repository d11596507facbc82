#include "src/cli/users.h"

#include <ostream>

#include "src/api/auth/password.h"
#include "src/common/status_macros.h"

namespace regatta::cli {

absl::Status UsersHashPassword(const CommandEnv& env) {
  ASSIGN_OR_RETURN(std::string password, ReadSecret(env, "Password: ", /*confirm=*/true));
  ASSIGN_OR_RETURN(std::string hash, regatta::auth::HashPassword(password));
  *env.out << hash << "\n";
  return absl::OkStatus();
}

absl::Status UsersHashToken(const CommandEnv& env, const std::string& token) {
  std::string secret = token;
  if (secret.empty()) {
    ASSIGN_OR_RETURN(secret, ReadSecret(env, "Token: ", /*confirm=*/false));
  }
  *env.out << regatta::auth::HashToken(secret) << "\n";
  return absl::OkStatus();
}

}  // namespace regatta::cli
