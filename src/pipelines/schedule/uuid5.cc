#include "src/pipelines/schedule/uuid5.h"

#include <openssl/evp.h>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace regatta::pipelines::schedule {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool IsDashPosition(size_t i) { return i == 8 || i == 13 || i == 18 || i == 23; }

}  // namespace

absl::StatusOr<UuidBytes> ParseUuid(absl::string_view text) {
  UuidBytes out{};
  if (text.size() != 36) {
    return absl::InvalidArgumentError(absl::StrCat("uuid '", text, "': expected 36 characters"));
  }
  size_t byte = 0;
  for (size_t i = 0; i < text.size();) {
    if (IsDashPosition(i)) {
      if (text[i] != '-') {
        return absl::InvalidArgumentError(absl::StrCat("uuid '", text, "': expected '-' at ", i));
      }
      ++i;
      continue;
    }
    const int high = HexDigit(text[i]);
    const int low = HexDigit(text[i + 1]);
    if (high < 0 || low < 0) {
      return absl::InvalidArgumentError(absl::StrCat("uuid '", text, "': not hex at ", i));
    }
    out[byte++] = static_cast<uint8_t>(high << 4 | low);
    i += 2;
  }
  return out;
}

std::string FormatUuid(const UuidBytes& uuid) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (size_t i = 0; i < uuid.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[uuid[i] >> 4]);
    out.push_back(kHex[uuid[i] & 0xf]);
  }
  return out;
}

UuidBytes Uuid5(const UuidBytes& name_space, absl::string_view name) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int digest_size = 0;
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  // SHA-1 of in-memory bytes fails only on allocation failure, which we do not survive anyway.
  EVP_DigestInit_ex(ctx, EVP_sha1(), nullptr);
  EVP_DigestUpdate(ctx, name_space.data(), name_space.size());
  EVP_DigestUpdate(ctx, name.data(), name.size());
  EVP_DigestFinal_ex(ctx, digest, &digest_size);
  EVP_MD_CTX_free(ctx);

  UuidBytes out;
  for (size_t i = 0; i < out.size(); ++i) out[i] = digest[i];
  out[6] = static_cast<uint8_t>((out[6] & 0x0f) | 0x50);  // version 5
  out[8] = static_cast<uint8_t>((out[8] & 0x3f) | 0x80);  // RFC 4122 variant
  return out;
}

}  // namespace regatta::pipelines::schedule
