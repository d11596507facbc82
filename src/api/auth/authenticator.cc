#include "src/api/auth/authenticator.h"

#include <sodium.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/random/random.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "src/api/auth/password.h"
#include "src/common/status_macros.h"

namespace regatta::auth {
namespace {

constexpr char kInvalidUserOrPassword[] = "invalid username or password";

// User names are remembered by the failure limit; a long one is remembered by its hash so that
// the table's memory stays bounded.
std::string UserKey(absl::string_view user) {
  constexpr size_t kMaxKeyBytes = 128;
  if (user.size() <= kMaxKeyBytes) return std::string(user);
  return absl::StrCat("sha256:", Sha256Hex(user));
}

std::string RetryText(absl::Duration retry_after) {
  return absl::StrCat(
      std::max<int64_t>(1, absl::ToInt64Seconds(absl::Ceil(retry_after, absl::Seconds(1)))), "s");
}

// argon2id runs on a thread of its own at background priority, so that when the machine is busy
// the calls that need no password check (tokens, remembered passwords, the rest of the server)
// are scheduled first. A thread costs tens of microseconds next to the check's tens of
// milliseconds, and at most maxConcurrent exist at once.
bool VerifyInBackground(absl::string_view password, const std::string& hash) {
  constexpr int kCheckNice = 10;
  bool ok = false;
  try {
    std::thread worker([&] {
      (void)::setpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()), kCheckNice);
      ok = VerifyPassword(password, hash);
    });
    worker.join();
  } catch (const std::system_error&) {
    ok = VerifyPassword(password, hash);  // no thread to be had: check here
  }
  return ok;
}

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
  RETURN_IF_ERROR(ValidatePasswordCheckLimits(config.password_limits, "passwordChecks"));
  if (config.clock == nullptr) config.clock = RealClock::Get();
  return std::unique_ptr<Authenticator>(new Authenticator(std::move(config)));
}

Authenticator::Authenticator(AuthConfig config)
    : anonymous_enabled_(config.anonymous_enabled),
      anonymous_{kAnonymousPrincipalName, std::move(config.anonymous_groups), true},
      jwt_verifier_(std::move(config.jwt_verifier)),
      // Both generations together hold at most the configured number of keys.
      generation_capacity_(config.password_cache_capacity == 0
                               ? 0
                               : std::max<size_t>(1, config.password_cache_capacity / 2)),
      limits_(config.password_limits),
      source_failures_(limits_.per_source, limits_.tracked_keys, config.clock),
      user_failures_(limits_.per_user, limits_.tracked_keys, config.clock),
      checks_in_progress_(EffectiveMaxConcurrent(limits_.max_concurrent)) {
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

absl::StatusOr<Principal> Authenticator::Authenticate(absl::string_view authorization_header,
                                                      absl::string_view client_address) const {
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
  if (absl::EqualsIgnoreCase(scheme, "Basic")) {
    return AuthenticateBasic(credentials, client_address);
  }
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

absl::StatusOr<Principal> Authenticator::AuthenticateBasic(absl::string_view credentials,
                                                           absl::string_view client_address) const {
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
    if (decoy_hash_.empty()) return absl::UnauthenticatedError(kInvalidUserOrPassword);
    // The same limits and cost as for a wrong password, so neither reveals which users exist.
    RETURN_IF_ERROR(CheckPassword(user, password, decoy_hash_, client_address));
    return absl::UnauthenticatedError(kInvalidUserOrPassword);
  }
  const UserRecord& record = it->second;
  const Sha256Digest key = CacheKey(user, password, record.password_hash);
  // A remembered success is answered before any limit: clients that logged in keep working
  // while someone floods the server with wrong passwords.
  if (CacheLookup(key)) {
    ++password_cache_hits_;
    return record.principal;
  }
  RETURN_IF_ERROR(CheckPassword(user, password, record.password_hash, client_address));
  CacheInsert(key);
  return record.principal;
}

absl::Status Authenticator::CheckPassword(absl::string_view user, absl::string_view password,
                                          const std::string& hash,
                                          absl::string_view client_address) const {
  // A check takes a failure allowance up front (so concurrent guesses cannot overrun the limit)
  // and gives it back if the password is right.
  const std::string user_key = UserKey(user);
  absl::Duration retry_after;
  if (!client_address.empty() && !source_failures_.TryTake(client_address, &retry_after)) {
    ++password_checks_rate_limited_;
    DelayRefusal(retry_after);
    return absl::ResourceExhaustedError(absl::StrCat(
        "too many failed password checks from this address; retry in ", RetryText(retry_after)));
  }
  auto give_back = [&] {
    if (!client_address.empty()) source_failures_.GiveBack(client_address);
  };
  if (!user_failures_.TryTake(user_key, &retry_after)) {
    give_back();
    ++password_checks_rate_limited_;
    DelayRefusal(retry_after);
    return absl::ResourceExhaustedError(absl::StrCat(
        "too many failed password checks for this user; retry in ", RetryText(retry_after)));
  }
  if (!checks_in_progress_.Acquire(limits_.max_wait)) {
    give_back();
    user_failures_.GiveBack(user_key);
    ++password_checks_busy_;
    return absl::UnavailableError("too many password checks in progress, retry later");
  }
  ++password_verifications_;
  const bool ok = VerifyInBackground(password, hash);
  checks_in_progress_.Release();
  if (!ok) return absl::UnauthenticatedError(kInvalidUserOrPassword);
  give_back();
  user_failures_.GiveBack(user_key);
  return absl::OkStatus();
}

void Authenticator::DelayRefusal(absl::Duration retry_after) const {
  // Spread over the second half of the delay, so that callers refused together do not all come
  // back at the same moment.
  thread_local absl::BitGen random;
  const absl::Duration delay =
      std::min(retry_after, limits_.refusal_delay) * absl::Uniform(random, 0.5, 1.0);
  if (delay <= absl::ZeroDuration()) return;
  if (delayed_refusals_.fetch_add(1) < kMaxDelayedRefusals) absl::SleepFor(delay);
  delayed_refusals_.fetch_sub(1);
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
  stats.password_checks_rate_limited = password_checks_rate_limited_.load();
  stats.password_checks_busy = password_checks_busy_.load();
  stats.password_checks_in_progress = checks_in_progress_.in_use();
  absl::MutexLock lock(&cache_mu_);
  // An entry promoted from `previous` is counted once.
  stats.password_cache_size = cache_current_.size();
  for (const Sha256Digest& key : cache_previous_) {
    if (!cache_current_.contains(key)) ++stats.password_cache_size;
  }
  return stats;
}

}  // namespace regatta::auth
