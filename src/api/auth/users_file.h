#ifndef REGATTA_SRC_API_AUTH_USERS_FILE_H_
#define REGATTA_SRC_API_AUTH_USERS_FILE_H_

// The users file: who may log in with a password (basic auth) or a static bearer token.
//
//   users:
//     - name: alice
//       passwordHash: "$argon2id$v=19$m=65536,t=2,p=1$..."   # regatta users hash-password
//       groups: [team-a]
//   tokens:
//     - name: ci-bot
//       tokenSha256: "<64 hex chars>"                        # regatta users hash-token
//       groups: [admins]
//
// Secrets are stored only hashed; plain-text `password` / `token` fields are refused.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace regatta::auth {

struct UserEntry {
  std::string name;
  // Encoded argon2id hash, as produced by HashPassword().
  std::string password_hash;
  std::vector<std::string> groups;
};

struct TokenEntry {
  // The principal the token authenticates as; may equal a user's name (one identity, two ways).
  std::string name;
  // Hex SHA-256 of the token, as produced by HashToken(); stored lower-case.
  std::string token_sha256;
  std::vector<std::string> groups;
};

struct UsersFile {
  std::vector<UserEntry> users;
  std::vector<TokenEntry> tokens;
};

// Parses users-file YAML. `source` (usually the path) prefixes every error, and each error names
// the entry and field, e.g. "users.yaml: users[2].passwordHash: not an argon2id hash".
absl::StatusOr<UsersFile> ParseUsersFile(absl::string_view yaml_text, absl::string_view source);

// Reads and parses the users file at `path`.
absl::StatusOr<UsersFile> LoadUsersFile(absl::string_view path);

// Checks entries however they were built (file or code): names present, unique and not reserved,
// hashes well formed, no token listed twice. INVALID_ARGUMENT naming "users[i].field".
absl::Status ValidateUsersFile(const UsersFile& file);

}  // namespace regatta::auth

#endif  // REGATTA_SRC_API_AUTH_USERS_FILE_H_
