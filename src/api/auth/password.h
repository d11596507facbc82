#ifndef REGATTA_SRC_API_AUTH_PASSWORD_H_
#define REGATTA_SRC_API_AUTH_PASSWORD_H_

// Hashing of passwords (argon2id) and bearer tokens (SHA-256), shared by the server and the
// `regatta users hash-password` / `hash-token` CLI commands.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace regatta::auth {

// argon2id cost. Interactive() is what operators should store; Minimum() exists so tests do not
// spend tens of milliseconds and 64 MiB per hash.
struct PasswordHashParams {
  uint64_t opslimit;
  size_t memlimit;  // bytes

  static PasswordHashParams Interactive();
  static PasswordHashParams Minimum();
};

// An encoded argon2id hash ("$argon2id$v=19$m=...,t=...,p=...$salt$hash") of `password`.
// INVALID_ARGUMENT for an empty password; RESOURCE_EXHAUSTED if the memory could not be had.
absl::StatusOr<std::string> HashPassword(
    absl::string_view password, PasswordHashParams params = PasswordHashParams::Interactive());

// Lower-case hex SHA-256 of `token`: the form in which the users file stores bearer tokens.
std::string HashToken(absl::string_view token);

// True if `encoded` looks like an encoded argon2id hash: the "$argon2id$" prefix, the
// "v=..", "m=..,t=..,p=.." fields, salt and hash, and short enough for libsodium.
bool IsArgon2idHash(absl::string_view encoded);

// True if `password` matches the encoded argon2id hash. Deliberately slow (the hash's cost).
bool VerifyPassword(absl::string_view password, const std::string& encoded_hash);

}  // namespace regatta::auth

#endif  // REGATTA_SRC_API_AUTH_PASSWORD_H_
