#ifndef REGATTA_SRC_API_AUTH_OIDC_VERIFIER_H_
#define REGATTA_SRC_API_AUTH_OIDC_VERIFIER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/api/auth/crypto.h"
#include "src/api/auth/oidc/claims.h"
#include "src/api/auth/oidc/jwks_source.h"
#include "src/api/auth/oidc/keys.h"
#include "src/api/auth/token_verifier.h"
#include "src/common/clock.h"

namespace regatta::auth::oidc {

// Largest bearer JWT looked at; anything bigger is refused before decoding.
inline constexpr size_t kMaxTokenBytes = 16 * 1024;

struct VerifierOptions {
  ClaimRules rules;
  std::vector<Algorithm> algorithms = {Algorithm::kRS256, Algorithm::kES256};
  // The key set is fetched again when it is this old.
  absl::Duration refresh_interval = absl::Minutes(5);
  // At most one fetch per this long, whatever triggers it (age, a failed fetch, a token naming a
  // key id the set lacks), so that tokens with invented key ids cannot flood the issuer.
  absl::Duration min_refresh_interval = absl::Seconds(30);
  // Verified tokens remembered (until they expire) so that a busy client does not pay a
  // signature check per call; 0 disables the cache.
  size_t token_cache_capacity = 10'000;
  const Clock* clock = nullptr;  // null: the real clock
};

// Verifies bearer JWTs signed by an OpenID Connect issuer (RS256 or ES256, with the issuer's
// JSON Web Key Set) and maps their claims onto a Principal. Thread-safe. Refreshes the keys on
// the calling thread when due; meanwhile and after a failed fetch the last good keys stay in use.
class OidcVerifier final : public TokenVerifier {
 public:
  // Loads the keys once. When that fails, `require_keys` makes it an error (a key file must be
  // right at startup); otherwise (a URL: the issuer may be down) the failure is logged and
  // tokens are refused until a later fetch succeeds.
  static absl::StatusOr<std::unique_ptr<OidcVerifier>> Create(VerifierOptions options,
                                                              std::unique_ptr<JwksSource> source,
                                                              bool require_keys);

  absl::StatusOr<Principal> Verify(absl::string_view token) const override;

  struct Stats {
    uint64_t signature_checks = 0;  // tokens verified with a key (slow path)
    uint64_t cache_hits = 0;
    uint64_t key_fetches = 0;  // attempts, successful or not
    uint64_t key_fetch_failures = 0;
    size_t keys = 0;
  };
  Stats GetStats() const;

 private:
  struct CachedToken {
    Principal principal;
    absl::Time expires;
    uint64_t key_generation;
  };
  struct Keys {
    std::shared_ptr<const JsonWebKeySet> set;  // null until the first successful load
    uint64_t generation = 0;
    std::string last_error;
  };

  OidcVerifier(VerifierOptions options, std::unique_ptr<JwksSource> source);

  // Fetches the key set if due (or `unknown_kid`) and allowed by min_refresh_interval; returns
  // the status of the fetch it ran, OK if it ran none.
  absl::Status MaybeRefresh(absl::Time now, bool unknown_kid) const;
  Keys CurrentKeys() const;
  absl::StatusOr<VerifiedClaims> VerifyUncached(absl::string_view token, absl::Time now,
                                                uint64_t* key_generation) const;
  absl::StatusOr<std::vector<const JsonWebKey*>> SelectKeys(absl::string_view kid, Algorithm alg,
                                                            absl::Time now, Keys* keys) const;
  bool CacheLookup(const Sha256Digest& digest, absl::Time now, Principal* out) const;
  void CacheInsert(const Sha256Digest& digest, const VerifiedClaims& claims,
                   uint64_t key_generation, absl::Time now) const;

  const VerifierOptions options_;
  const Clock* const clock_;

  mutable absl::Mutex fetch_mu_;  // one fetch at a time; others use the current keys
  const std::unique_ptr<JwksSource> source_ ABSL_PT_GUARDED_BY(fetch_mu_);
  mutable std::string last_document_ ABSL_GUARDED_BY(fetch_mu_);

  mutable absl::Mutex mu_;
  mutable Keys keys_ ABSL_GUARDED_BY(mu_);
  mutable absl::Time last_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
  mutable absl::Time last_success_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();

  mutable absl::Mutex cache_mu_;
  mutable absl::flat_hash_map<Sha256Digest, CachedToken> cache_ ABSL_GUARDED_BY(cache_mu_);

  mutable std::atomic<uint64_t> signature_checks_{0};
  mutable std::atomic<uint64_t> cache_hits_{0};
  mutable std::atomic<uint64_t> key_fetches_{0};
  mutable std::atomic<uint64_t> key_fetch_failures_{0};
};

}  // namespace regatta::auth::oidc

#endif  // REGATTA_SRC_API_AUTH_OIDC_VERIFIER_H_
