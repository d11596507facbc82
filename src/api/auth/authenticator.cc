#include "src/api/auth/authenticator.h"

#include <sodium.h>

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/api/auth/password.h"
#include "src/common/status_macros.h"

namespace regatta::auth {
namespace {

constexpr char kInvalidUserOrPassword[] = "invalid username or password";

// Length-prefixed so ("ab", "c") and ("a", "bc") hash differently.
void AppendField(std::string& out, absl::string_view field) {
  uint64_t size = field.size();
  out.append(reinterpret_cast<const char*>(&size), sizeof(size));
  out.append(field.data(), field.size());
}

}  // namespace

absl::StatusOr<std::unique_ptr<Authenticator>> Authenticator::Create(AuthConfig config) {
  RETURN_IF_ERROR(EnsureSodiumInitialized());
  RETURN_IF_ERROR(ValidateUsersFile(config.credentials));
  for (size_t i = 0; i < config.anonymous_groups.size(); ++i) {
    if (config.anonymous_groups[i].empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("anonymous.groups[", i, "]: must not be empty"));
    }
  }
  return std::unique_ptr<Authenticator>(new Authenticator(std::move(config)));
}

Authenticator::Authenticator(AuthConfig config)
    : anonymous_enabled_(config.anonymous_enabled),
      anonymous_{kAnonymousPrincipalName, std::move(config.anonymous_groups), true},
      jwt_verifier_(std::move(config.jwt_verifier)),
      // Both generations together hold at most the configured number of keys.
      generation_capacity_(config.password_cache_capacity == 0
                               ? 0
                               : std::max<size_t>(1, config.password_cache_capacity / 2)) {
  for (TokenEntry& token : config.credentials.tokens) {
    TokenPrincipal entry;
    DecodeSha256Hex(token.token_sha256, &entry.digest);  // validated in Create
    entry.principal = {std::move(token.name), std::move(token.groups), false};
    tokens_.push_back(std::move(entry));
  }
  for (UserEntry& user : config.credentials.users) {
    if (decoy_hash_.empty()) decoy_hash_ = user.password_hash;
    std::string name = user.name;
    users_.emplace(std::move(name),
                   UserRecord{std::move(user.password_hash),
                              Principal{std::move(user.name), std::move(user.groups), false}});
  }
  cache_pepper_.resize(32);
  randombytes_buf(cache_pepper_.data(), cache_pepper_.size());
}

absl::StatusOr<Principal> Authenticator::Authenticate(
    absl::string_view authorization_header) const {
  absl::string_view header = absl::StripAsciiWhitespace(authorization_header);
  if (header.empty()) {
    if (!anonymous_enabled_) {
      return absl::UnauthenticatedError("no credentials and anonymous access is disabled");
    }
    return anonymous_;
  }
  size_t space = header.find_first_of(" \t");
  absl::string_view scheme = header.substr(0, space);
  absl::string_view credentials =
      space == absl::string_view::npos ? "" : absl::StripAsciiWhitespace(header.substr(space));
  // Auth schemes are case-insensitive (RFC 9110 section 11.1).
  if (absl::EqualsIgnoreCase(scheme, "Bearer")) return AuthenticateBearer(credentials);
  if (absl::EqualsIgnoreCase(scheme, "Basic")) return AuthenticateBasic(credentials);
  // The header is not echoed: if a client sent a bare secret, it must not end up in logs.
  return absl::UnauthenticatedError("unsupported authorization scheme (want Basic or Bearer)");
}

absl::StatusOr<Principal> Authenticator::AuthenticateBearer(absl::string_view credentials) const {
  if (credentials.empty() || credentials.find_first_of(" \t") != absl::string_view::npos) {
    return absl::UnauthenticatedError("malformed bearer credentials (want \"Bearer <token>\")");
  }
  const Sha256Digest digest = Sha256(credentials);
  // Scan every entry without stopping early so timing says nothing about which entry matched.
  const TokenPrincipal* match = nullptr;
  for (const TokenPrincipal& token : tokens_) {
    if (ConstantTimeEquals(token.digest, digest)) match = &token;
  }
  if (match != nullptr) return match->principal;
  if (jwt_verifier_ != nullptr && LooksLikeJwt(credentials)) {
    return jwt_verifier_->Verify(credentials);
  }
  return absl::UnauthenticatedError("invalid bearer token");
}

absl::StatusOr<Principal> Authenticator::AuthenticateBasic(absl::string_view credentials) const {
  absl::StatusOr<std::string> decoded = Base64Decode(credentials);
  if (!decoded.ok()) {
    return absl::UnauthenticatedError("malformed basic credentials: not valid base64");
  }
  size_t colon = decoded->find(':');
  if (colon == std::string::npos) {
    return absl::UnauthenticatedError(
        "malformed basic credentials: want base64 of \"user:password\"");
  }
  absl::string_view user = absl::string_view(*decoded).substr(0, colon);
  absl::string_view password = absl::string_view(*decoded).substr(colon + 1);
  auto it = users_.find(user);
  if (it == users_.end()) {
    if (!decoy_hash_.empty()) {
      ++password_verifications_;
      (void)VerifyPassword(password, decoy_hash_);
    }
    return absl::UnauthenticatedError(kInvalidUserOrPassword);
  }
  const UserRecord& record = it->second;
  const Sha256Digest key = CacheKey(user, password, record.password_hash);
  if (CacheLookup(key)) {
    ++password_cache_hits_;
    return record.principal;
  }
  ++password_verifications_;
  if (!VerifyPassword(password, record.password_hash)) {
    return absl::UnauthenticatedError(kInvalidUserOrPassword);
  }
  CacheInsert(key);
  return record.principal;
}

Sha256Digest Authenticator::CacheKey(absl::string_view user, absl::string_view password,
                                     absl::string_view stored_hash) const {
  std::string material;
  material.reserve(cache_pepper_.size() + user.size() + password.size() + stored_hash.size() + 32);
  AppendField(material, cache_pepper_);
  AppendField(material, user);
  AppendField(material, password);
  AppendField(material, stored_hash);
  Sha256Digest key = Sha256(material);
  sodium_memzero(material.data(), material.size());
  return key;
}

bool Authenticator::CacheLookup(const Sha256Digest& key) const {
  if (generation_capacity_ == 0) return false;
  absl::MutexLock lock(&cache_mu_);
  if (cache_current_.contains(key)) return true;
  if (!cache_previous_.contains(key)) return false;
  CacheInsertLocked(key);
  return true;
}

void Authenticator::CacheInsert(const Sha256Digest& key) const {
  if (generation_capacity_ == 0) return;
  absl::MutexLock lock(&cache_mu_);
  CacheInsertLocked(key);
}

void Authenticator::CacheInsertLocked(const Sha256Digest& key) const {
  if (cache_current_.size() >= generation_capacity_) {
    cache_previous_ = std::move(cache_current_);
    cache_current_ = {};
  }
  cache_current_.insert(key);
}

Authenticator::Stats Authenticator::GetStats() const {
  Stats stats;
  stats.password_verifications = password_verifications_.load();
  stats.password_cache_hits = password_cache_hits_.load();
  absl::MutexLock lock(&cache_mu_);
  // An entry promoted from `previous` is counted once.
  stats.password_cache_size = cache_current_.size();
  for (const Sha256Digest& key : cache_previous_) {
    if (!cache_current_.contains(key)) ++stats.password_cache_size;
  }
  return stats;
}

}  // namespace regatta::auth
