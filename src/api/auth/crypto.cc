#include "src/api/auth/crypto.h"

#include <sodium.h>

#include "absl/strings/ascii.h"

namespace regatta::auth {

absl::Status EnsureSodiumInitialized() {
  // A function-local static is initialised once even under concurrent first calls.
  static const int rc = sodium_init();
  if (rc < 0) return absl::InternalError("libsodium initialisation failed");
  return absl::OkStatus();
}

Sha256Digest Sha256(absl::string_view data) {
  Sha256Digest out;
  crypto_hash_sha256(out.data(), reinterpret_cast<const unsigned char*>(data.data()), data.size());
  return out;
}

std::string HexEncode(const uint8_t* data, size_t size) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(size * 2);
  for (size_t i = 0; i < size; ++i) {
    out.push_back(kDigits[data[i] >> 4]);
    out.push_back(kDigits[data[i] & 0xf]);
  }
  return out;
}

std::string Sha256Hex(absl::string_view data) {
  Sha256Digest digest = Sha256(data);
  return HexEncode(digest.data(), digest.size());
}

bool IsSha256Hex(absl::string_view text) {
  if (text.size() != 64) return false;
  for (char c : text) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

bool DecodeSha256Hex(absl::string_view text, Sha256Digest* out) {
  if (!IsSha256Hex(text)) return false;
  auto nibble = [](char c) -> uint8_t {
    if (c >= '0' && c <= '9') return c - '0';
    return absl::ascii_tolower(static_cast<unsigned char>(c)) - 'a' + 10;
  };
  for (size_t i = 0; i < 32; ++i) {
    (*out)[i] = static_cast<uint8_t>(nibble(text[2 * i]) << 4 | nibble(text[2 * i + 1]));
  }
  return true;
}

bool ConstantTimeEquals(const Sha256Digest& a, const Sha256Digest& b) {
  return sodium_memcmp(a.data(), b.data(), a.size()) == 0;
}

absl::StatusOr<std::string> Base64Decode(absl::string_view text) {
  std::string out(text.size() / 4 * 3 + 3, '\0');
  size_t len = 0;
  const char* end = nullptr;
  // ORIGINAL requires correct padding; retry without for clients that strip it.
  for (int variant : {sodium_base64_VARIANT_ORIGINAL, sodium_base64_VARIANT_ORIGINAL_NO_PADDING}) {
    if (sodium_base642bin(reinterpret_cast<unsigned char*>(out.data()), out.size(), text.data(),
                          text.size(), /*ignore=*/nullptr, &len, &end, variant) == 0 &&
        end == text.data() + text.size()) {
      out.resize(len);
      return out;
    }
  }
  return absl::InvalidArgumentError("not valid base64");
}

}  // namespace regatta::auth
