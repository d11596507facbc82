#include "src/api/auth/password.h"

#include <sodium.h>

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "src/api/auth/crypto.h"
#include "src/common/status_macros.h"

namespace regatta::auth {

PasswordHashParams PasswordHashParams::Interactive() {
  return {crypto_pwhash_argon2id_OPSLIMIT_INTERACTIVE, crypto_pwhash_argon2id_MEMLIMIT_INTERACTIVE};
}

PasswordHashParams PasswordHashParams::Minimum() {
  return {crypto_pwhash_argon2id_OPSLIMIT_MIN, crypto_pwhash_argon2id_MEMLIMIT_MIN};
}

absl::StatusOr<std::string> HashPassword(absl::string_view password, PasswordHashParams params) {
  RETURN_IF_ERROR(EnsureSodiumInitialized());
  if (password.empty()) return absl::InvalidArgumentError("password must not be empty");
  if (password.size() > crypto_pwhash_argon2id_PASSWD_MAX) {
    return absl::InvalidArgumentError("password is too long");
  }
  if (params.opslimit < crypto_pwhash_argon2id_OPSLIMIT_MIN ||
      params.memlimit < crypto_pwhash_argon2id_MEMLIMIT_MIN) {
    return absl::InvalidArgumentError("argon2id parameters below libsodium's minimum");
  }
  char out[crypto_pwhash_argon2id_STRBYTES];
  if (crypto_pwhash_str_alg(out, password.data(), password.size(), params.opslimit, params.memlimit,
                            crypto_pwhash_ALG_ARGON2ID13) != 0) {
    // libsodium fails only when it cannot allocate memlimit bytes.
    return absl::ResourceExhaustedError("argon2id hashing failed (out of memory?)");
  }
  return std::string(out);
}

std::string HashToken(absl::string_view token) {
  // SHA-256 needs no initialisation, but keep the contract that every entry point initialises.
  (void)EnsureSodiumInitialized();
  return Sha256Hex(token);
}

bool IsArgon2idHash(absl::string_view encoded) {
  if (!absl::StartsWith(encoded, crypto_pwhash_argon2id_STRPREFIX)) return false;
  if (encoded.size() >= crypto_pwhash_argon2id_STRBYTES) return false;
  // "", "argon2id", "v=19", "m=..,t=..,p=..", salt, hash.
  std::vector<absl::string_view> parts = absl::StrSplit(encoded, '$');
  if (parts.size() != 6) return false;
  if (!absl::StartsWith(parts[2], "v=")) return false;
  std::vector<absl::string_view> costs = absl::StrSplit(parts[3], ',');
  if (costs.size() != 3 || !absl::StartsWith(costs[0], "m=") || !absl::StartsWith(costs[1], "t=") ||
      !absl::StartsWith(costs[2], "p=")) {
    return false;
  }
  return !parts[4].empty() && !parts[5].empty();
}

bool VerifyPassword(absl::string_view password, const std::string& encoded_hash) {
  if (!EnsureSodiumInitialized().ok()) return false;
  if (encoded_hash.size() >= crypto_pwhash_argon2id_STRBYTES) return false;
  return crypto_pwhash_str_verify(encoded_hash.c_str(), password.data(), password.size()) == 0;
}

}  // namespace regatta::auth
