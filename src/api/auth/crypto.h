#ifndef REGATTA_SRC_API_AUTH_CRYPTO_H_
#define REGATTA_SRC_API_AUTH_CRYPTO_H_

// Small wrappers over libsodium used by the auth library. Internal to src/api/auth, but kept in a
// header so the tests and the CLI can share the exact same hashing.

#include <array>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace regatta::auth {

using Sha256Digest = std::array<uint8_t, 32>;

// Calls sodium_init() exactly once per process (thread-safe); INTERNAL if it failed.
absl::Status EnsureSodiumInitialized();

Sha256Digest Sha256(absl::string_view data);
std::string HexEncode(const uint8_t* data, size_t size);
std::string Sha256Hex(absl::string_view data);

// Exactly 64 characters, each [0-9a-fA-F].
bool IsSha256Hex(absl::string_view text);
// Decodes 64 hex characters; false if `text` is not IsSha256Hex.
bool DecodeSha256Hex(absl::string_view text, Sha256Digest* out);

// Compares in time independent of where the digests differ.
bool ConstantTimeEquals(const Sha256Digest& a, const Sha256Digest& b);

// Strict standard base64 (RFC 4648 section 4, padding optional); nullopt-like error status on
// anything else.
absl::StatusOr<std::string> Base64Decode(absl::string_view text);

}  // namespace regatta::auth

#endif  // REGATTA_SRC_API_AUTH_CRYPTO_H_
