#include "src/common/secrets/sealer.h"

#include <fcntl.h>
#include <sodium.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/common/status_macros.h"

namespace regatta::secrets {
namespace {

constexpr size_t kKeyBytes = crypto_aead_xchacha20poly1305_ietf_KEYBYTES;
constexpr size_t kNonceBytes = crypto_aead_xchacha20poly1305_ietf_NPUBBYTES;
constexpr size_t kTagBytes = crypto_aead_xchacha20poly1305_ietf_ABYTES;
constexpr size_t kMaxKeyFileBytes = 64 * 1024;
constexpr size_t kMaxKeyIdBytes = 64;
constexpr int kBase64 = sodium_base64_VARIANT_ORIGINAL;

bool InitSodium() {
  static const bool ok = sodium_init() >= 0;
  return ok;
}

bool ValidKeyId(absl::string_view id) {
  if (id.empty() || id.size() > kMaxKeyIdBytes) return false;
  for (char c : id) {
    if (!absl::ascii_isalnum(c) && c != '.' && c != '_' && c != '-') return false;
  }
  return true;
}

std::string ToBase64(absl::string_view bytes) {
  std::string out(sodium_base64_ENCODED_LEN(bytes.size(), kBase64), '\0');
  sodium_bin2base64(out.data(), out.size(), reinterpret_cast<const unsigned char*>(bytes.data()),
                    bytes.size(), kBase64);
  out.resize(std::strlen(out.c_str()));
  return out;
}

bool FromBase64(absl::string_view text, std::string* out) {
  out->assign(text.size() / 4 * 3 + 3, '\0');
  size_t length = 0;
  const char* end = nullptr;
  if (sodium_base642bin(reinterpret_cast<unsigned char*>(out->data()), out->size(), text.data(),
                        text.size(), nullptr, &length, &end, kBase64) != 0 ||
      end != text.data() + text.size()) {
    return false;
  }
  out->resize(length);
  return true;
}

// The associated data: the format, the key id and the context.
std::string AssociatedData(absl::string_view key_id, absl::string_view context) {
  return absl::StrCat(kSealedPrefix, key_id, "\n", context);
}

}  // namespace

bool IsSealed(absl::string_view value) { return absl::StartsWith(value, kSealedPrefix); }

std::string SealedKeyId(absl::string_view value) {
  if (!absl::ConsumePrefix(&value, kSealedPrefix)) return "";
  const size_t colon = value.find(':');
  return colon == absl::string_view::npos ? "" : std::string(value.substr(0, colon));
}

std::string NewKeyLine(absl::string_view id) {
  InitSodium();
  std::string key(kKeyBytes, '\0');
  randombytes_buf(key.data(), key.size());
  std::string line = absl::StrCat(id, " ", ToBase64(key));
  sodium_memzero(key.data(), key.size());
  return line;
}

absl::StatusOr<std::vector<Sealer::Key>> Sealer::ParseKeys(absl::string_view text,
                                                           absl::string_view source) {
  std::vector<Key> keys;
  absl::flat_hash_set<std::string> ids;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    if (line.empty() || line.front() == '#') continue;
    const std::string where = absl::StrCat(source, ":", line_number);
    std::vector<absl::string_view> fields =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (fields.size() != 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": expected \"<key id> <base64 key>\""));
    }
    if (!ValidKeyId(fields[0])) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": key id: 1 to ", kMaxKeyIdBytes,
                                                     " letters, digits, '.', '_' or '-'"));
    }
    Key key{std::string(fields[0]), ""};
    if (!FromBase64(fields[1], &key.bytes) || key.bytes.size() != kKeyBytes) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": key \"", key.id, "\": expected ",
                                                     kKeyBytes,
                                                     " bytes in base64 (openssl rand -base64 32)"));
    }
    if (!ids.insert(key.id).second) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": key id \"", key.id, "\" repeated"));
    }
    keys.push_back(std::move(key));
  }
  if (keys.empty()) return absl::InvalidArgumentError(absl::StrCat(source, ": no key"));
  return keys;
}

absl::StatusOr<std::vector<Sealer::Key>> Sealer::ReadKeyFile(const std::string& path,
                                                             bool create_if_missing) {
  struct stat st;
  if (stat(path.c_str(), &st) != 0) {
    if (errno != ENOENT || !create_if_missing) {
      return absl::FailedPreconditionError(
          absl::StrCat("key file ", path, ": ", std::strerror(errno)));
    }
    InitSodium();
    std::string suffix(4, '\0');
    randombytes_buf(suffix.data(), suffix.size());
    std::string hex;
    for (unsigned char c : suffix) absl::StrAppend(&hex, absl::Hex(c, absl::kZeroPad2));
    const std::string text =
        absl::StrCat("# Regatta's secret keys (docs/operations.md, Secrets at rest).\n",
                     "# The first key seals; every key opens. Keep a copy apart from the data.\n",
                     NewKeyLine(absl::StrCat("auto-", hex)), "\n");
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
      return absl::FailedPreconditionError(
          absl::StrCat("key file ", path, ": cannot create: ", std::strerror(errno)));
    }
    const bool written = write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const bool synced = fsync(fd) == 0;
    close(fd);
    if (!written || !synced) {
      unlink(path.c_str());
      return absl::FailedPreconditionError(absl::StrCat("key file ", path, ": cannot write"));
    }
    return ParseKeys(text, path);
  }
  if (!S_ISREG(st.st_mode)) {
    return absl::FailedPreconditionError(absl::StrCat("key file ", path, ": not a regular file"));
  }
  if ((st.st_mode & 077) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("key file ", path, ": readable or writable by others (mode ",
                     absl::Dec(st.st_mode & 0777), "); chmod 600 it"));
  }
  if (static_cast<size_t>(st.st_size) > kMaxKeyFileBytes) {
    return absl::FailedPreconditionError(
        absl::StrCat("key file ", path, ": over ", kMaxKeyFileBytes, " bytes"));
  }
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  if (!in.good() && !in.eof()) {
    return absl::FailedPreconditionError(absl::StrCat("key file ", path, ": cannot read"));
  }
  return ParseKeys(text.str(), path);
}

absl::StatusOr<std::unique_ptr<Sealer>> Sealer::FromText(absl::string_view text,
                                                         absl::string_view source) {
  if (!InitSodium()) return absl::InternalError("libsodium did not initialize");
  ASSIGN_OR_RETURN(std::vector<Key> keys, ParseKeys(text, source));
  return std::unique_ptr<Sealer>(new Sealer("", std::move(keys)));
}

absl::StatusOr<std::unique_ptr<Sealer>> Sealer::FromFile(const std::string& path,
                                                         bool create_if_missing) {
  if (!InitSodium()) return absl::InternalError("libsodium did not initialize");
  ASSIGN_OR_RETURN(std::vector<Key> keys, ReadKeyFile(path, create_if_missing));
  return std::unique_ptr<Sealer>(new Sealer(path, std::move(keys)));
}

absl::Status Sealer::Reload() {
  if (path_.empty()) return absl::FailedPreconditionError("keys not read from a file");
  ASSIGN_OR_RETURN(std::vector<Key> keys, ReadKeyFile(path_, /*create_if_missing=*/false));
  absl::MutexLock lock(&mu_);
  keys_ = std::move(keys);
  return absl::OkStatus();
}

absl::StatusOr<std::string> Sealer::Seal(absl::string_view plaintext,
                                         absl::string_view context) const {
  Key key;
  {
    absl::MutexLock lock(&mu_);
    key = keys_.front();
  }
  const std::string ad = AssociatedData(key.id, context);
  std::string box(kNonceBytes + plaintext.size() + kTagBytes, '\0');
  auto* nonce = reinterpret_cast<unsigned char*>(box.data());
  randombytes_buf(nonce, kNonceBytes);
  unsigned long long length = 0;  // NOLINT(runtime/int): libsodium's type
  crypto_aead_xchacha20poly1305_ietf_encrypt(
      nonce + kNonceBytes, &length, reinterpret_cast<const unsigned char*>(plaintext.data()),
      plaintext.size(), reinterpret_cast<const unsigned char*>(ad.data()), ad.size(), nullptr,
      nonce, reinterpret_cast<const unsigned char*>(key.bytes.data()));
  sodium_memzero(key.bytes.data(), key.bytes.size());
  box.resize(kNonceBytes + length);
  return absl::StrCat(kSealedPrefix, key.id, ":", ToBase64(box));
}

absl::StatusOr<std::string> Sealer::Open(absl::string_view value, absl::string_view context) const {
  absl::string_view rest = value;
  if (!absl::ConsumePrefix(&rest, kSealedPrefix)) return std::string(value);
  const size_t colon = rest.find(':');
  if (colon == absl::string_view::npos) return absl::DataLossError("sealed value: no key id");
  const std::string key_id(rest.substr(0, colon));
  std::string box;
  if (!FromBase64(rest.substr(colon + 1), &box) || box.size() < kNonceBytes + kTagBytes) {
    return absl::DataLossError(absl::StrCat("sealed value (key \"", key_id, "\"): malformed"));
  }
  Key key;
  {
    absl::MutexLock lock(&mu_);
    for (const Key& k : keys_) {
      if (k.id == key_id) key = k;
    }
  }
  if (key.id.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("sealed with key \"", key_id, "\", which the key file does not hold"));
  }
  const std::string ad = AssociatedData(key_id, context);
  std::string plaintext(box.size() - kNonceBytes - kTagBytes, '\0');
  unsigned long long length = 0;  // NOLINT(runtime/int): libsodium's type
  const auto* nonce = reinterpret_cast<const unsigned char*>(box.data());
  const int failed = crypto_aead_xchacha20poly1305_ietf_decrypt(
      reinterpret_cast<unsigned char*>(plaintext.data()), &length, nullptr, nonce + kNonceBytes,
      box.size() - kNonceBytes, reinterpret_cast<const unsigned char*>(ad.data()), ad.size(), nonce,
      reinterpret_cast<const unsigned char*>(key.bytes.data()));
  sodium_memzero(key.bytes.data(), key.bytes.size());
  if (failed != 0) {
    return absl::DataLossError(
        absl::StrCat("sealed value (key \"", key_id, "\") does not open: altered or misplaced"));
  }
  plaintext.resize(length);
  return plaintext;
}

std::string Sealer::sealing_key_id() const {
  absl::MutexLock lock(&mu_);
  return keys_.front().id;
}

std::vector<std::string> Sealer::key_ids() const {
  absl::MutexLock lock(&mu_);
  std::vector<std::string> ids;
  for (const Key& k : keys_) ids.push_back(k.id);
  return ids;
}

}  // namespace regatta::secrets
