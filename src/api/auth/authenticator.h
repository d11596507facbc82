#ifndef REGATTA_SRC_API_AUTH_AUTHENTICATOR_H_
#define REGATTA_SRC_API_AUTH_AUTHENTICATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "src/api/auth/crypto.h"
#include "src/api/auth/password_limits.h"
#include "src/api/auth/principal.h"
#include "src/api/auth/token_verifier.h"
#include "src/api/auth/users_file.h"
#include "src/common/clock.h"

namespace regatta::auth {

// Authentication settings; the composition root fills this from the server's YAML config and
// the users file (LoadUsersFile).
struct AuthConfig {
  // Requests without an Authorization header authenticate as "anonymous" with these groups when
  // enabled, and are rejected otherwise.
  bool anonymous_enabled = false;
  std::vector<std::string> anonymous_groups;
  // Basic-auth users and static bearer tokens.
  UsersFile credentials;
  // Bound on remembered successful password checks (0 disables the cache).
  size_t password_cache_capacity = 10'000;
  // Verifies bearer tokens shaped like JWTs that match no static token; null: OIDC is off.
  std::shared_ptr<const TokenVerifier> jwt_verifier;
  // Bounds on the argon2id checks that are not answered from the cache.
  PasswordCheckLimits password_limits;
  // For the failure limits' windows; null: the real clock.
  const Clock* clock = nullptr;
};

// Turns the value of an HTTP `Authorization` header (or gRPC `authorization` metadata) into a
// Principal. Transport-neutral and thread-safe. Supported: no header (anonymous), "Bearer
// <token>" (static tokens) and "Basic base64(user:password)" (argon2id password hashes).
class Authenticator {
 public:
  // Validates the config (ValidateUsersFile); INVALID_ARGUMENT naming the entry otherwise.
  static absl::StatusOr<std::unique_ptr<Authenticator>> Create(AuthConfig config);

  // `authorization_header` is empty when the request carried none; `client_address` is the
  // caller's IP address ("" if unknown or in-process: no per-address limit). Wrong credentials
  // are UNAUTHENTICATED; the message never says whether the user name or the password was wrong.
  // A password check that is not answered from the cache may instead be refused before it runs:
  // RESOURCE_EXHAUSTED when the address or the user name has had too many failed checks lately,
  // UNAVAILABLE when too many checks are running already. Bearer tokens are never limited.
  absl::StatusOr<Principal> Authenticate(absl::string_view authorization_header,
                                         absl::string_view client_address = "") const;

  struct Stats {
    uint64_t password_verifications = 0;  // argon2id runs (slow path)
    uint64_t password_cache_hits = 0;
    size_t password_cache_size = 0;
    uint64_t password_checks_rate_limited = 0;  // refused by a failure limit
    uint64_t password_checks_busy = 0;          // refused: no free slot in time
    int password_checks_in_progress = 0;
  };
  Stats GetStats() const;

  Authenticator(const Authenticator&) = delete;
  Authenticator& operator=(const Authenticator&) = delete;

 private:
  struct TokenPrincipal {
    Sha256Digest digest;
    Principal principal;
  };
  struct UserRecord {
    std::string password_hash;
    Principal principal;
  };

  explicit Authenticator(AuthConfig config);

  absl::StatusOr<Principal> AuthenticateBearer(absl::string_view credentials) const;
  absl::StatusOr<Principal> AuthenticateBasic(absl::string_view credentials,
                                              absl::string_view client_address) const;
  // Waits before a refusal by a failure limit (see PasswordCheckLimits::refusal_delay).
  void DelayRefusal(absl::Duration retry_after) const;
  // Runs VerifyPassword within the failure limits and the concurrency bound.
  absl::Status CheckPassword(absl::string_view user, absl::string_view password,
                             const std::string& hash, absl::string_view client_address) const;
  Sha256Digest CacheKey(absl::string_view user, absl::string_view password,
                        absl::string_view stored_hash) const;
  bool CacheLookup(const Sha256Digest& key) const;
  void CacheInsert(const Sha256Digest& key) const;
  void CacheInsertLocked(const Sha256Digest& key) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(cache_mu_);

  bool anonymous_enabled_;
  Principal anonymous_;
  std::vector<TokenPrincipal> tokens_;
  std::shared_ptr<const TokenVerifier> jwt_verifier_;
  absl::flat_hash_map<std::string, UserRecord> users_;
  // Hash an unknown user's password is checked against, so that "no such user" costs as much as
  // "wrong password" and response times do not reveal which user names exist.
  std::string decoy_hash_;
  // Random per process, mixed into cache keys so the keys (fast SHA-256 of passwords) are useless
  // for offline guessing if memory leaks.
  std::string cache_pepper_;

  // Two generations approximate LRU: hits in `previous` are promoted, and when `current` fills up
  // it becomes `previous`, dropping entries not used for a whole generation.
  size_t generation_capacity_;
  mutable absl::Mutex cache_mu_;
  mutable absl::flat_hash_set<Sha256Digest> cache_current_ ABSL_GUARDED_BY(cache_mu_);
  mutable absl::flat_hash_set<Sha256Digest> cache_previous_ ABSL_GUARDED_BY(cache_mu_);

  const PasswordCheckLimits limits_;
  mutable FailureLimiter source_failures_;
  mutable FailureLimiter user_failures_;
  mutable ConcurrencyLimit checks_in_progress_;
  mutable std::atomic<int> delayed_refusals_{0};

  mutable std::atomic<uint64_t> password_verifications_{0};
  mutable std::atomic<uint64_t> password_cache_hits_{0};
  mutable std::atomic<uint64_t> password_checks_rate_limited_{0};
  mutable std::atomic<uint64_t> password_checks_busy_{0};
};

}  // namespace regatta::auth

#endif  // REGATTA_SRC_API_AUTH_AUTHENTICATOR_H_
