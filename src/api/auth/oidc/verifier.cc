#include "src/api/auth/oidc/verifier.h"

#include <algorithm>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "src/common/logging.h"
#include "src/common/status_macros.h"

namespace regatta::auth::oidc {
namespace {

using nlohmann::json;

// A JOSE header is a few dozen bytes; this leaves room for x5c-less real-world headers.
constexpr size_t kMaxHeaderBytes = 2048;

absl::Status Refuse(absl::string_view why) { return absl::UnauthenticatedError(why); }

std::string QuoteField(absl::string_view text) {
  std::string quoted = json(std::string(text.substr(0, 64))).dump();
  return text.size() > 64 ? quoted + "..." : quoted;
}

struct Header {
  Algorithm alg;
  std::string kid;
};

absl::StatusOr<Header> ParseHeader(absl::string_view token, const std::vector<Algorithm>& allowed) {
  if (!LooksLikeJwt(token)) return Refuse("malformed JWT: want three base64url parts");
  absl::string_view encoded = token.substr(0, token.find('.'));
  if (encoded.size() > kMaxHeaderBytes) return Refuse("malformed JWT: the header is too large");
  std::string decoded;
  if (!absl::WebSafeBase64Unescape(encoded, &decoded)) {
    return Refuse("malformed JWT: the header is not base64url");
  }
  json header = json::parse(decoded, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded() || !header.is_object()) {
    return Refuse("malformed JWT: the header is not a JSON object");
  }
  auto alg = header.find("alg");
  if (alg == header.end() || !alg->is_string()) return Refuse("malformed JWT: no \"alg\"");
  std::vector<std::string> allowed_names;
  for (Algorithm a : allowed) allowed_names.push_back(AlgorithmName(a));
  Header out;
  if (!ParseAlgorithm(alg->get<std::string>(), &out.alg) ||
      std::find(allowed.begin(), allowed.end(), out.alg) == allowed.end()) {
    return Refuse(absl::StrCat("token algorithm ", QuoteField(alg->get<std::string>()),
                               " is not allowed (want ", absl::StrJoin(allowed_names, " or "),
                               ")"));
  }
  // RFC 7515 section 4.1.11: extensions we do not understand must make the token invalid.
  if (header.contains("crit")) return Refuse("token header has \"crit\" extensions (unsupported)");
  auto kid = header.find("kid");
  if (kid != header.end()) {
    if (!kid->is_string()) return Refuse("malformed JWT: \"kid\" is not a string");
    out.kid = kid->get<std::string>();
  }
  return out;
}

}  // namespace

absl::StatusOr<std::unique_ptr<OidcVerifier>> OidcVerifier::Create(
    VerifierOptions options, std::unique_ptr<JwksSource> source, bool require_keys) {
  if (options.rules.issuer.empty()) return absl::InvalidArgumentError("issuer: must be set");
  if (options.rules.audience.empty()) return absl::InvalidArgumentError("audience: must be set");
  if (options.algorithms.empty()) return absl::InvalidArgumentError("algorithms: must be set");
  if (options.rules.username_claim.empty()) {
    return absl::InvalidArgumentError("usernameClaim: must not be empty");
  }
  if (options.rules.groups_claim.empty()) {
    return absl::InvalidArgumentError("groupsClaim: must not be empty");
  }
  auto verifier =
      std::unique_ptr<OidcVerifier>(new OidcVerifier(std::move(options), std::move(source)));
  absl::Status loaded = verifier->MaybeRefresh(verifier->clock_->Now(), /*unknown_kid=*/false);
  if (!loaded.ok()) {
    if (require_keys) return loaded;
    LOG_WARN("OIDC: no signing keys yet; bearer JWTs are refused until a fetch works", "error",
             loaded.message());
  }
  return verifier;
}

OidcVerifier::OidcVerifier(VerifierOptions options, std::unique_ptr<JwksSource> source)
    : options_(std::move(options)),
      clock_(options_.clock != nullptr ? options_.clock : RealClock::Get()),
      source_(std::move(source)) {}

absl::Status OidcVerifier::MaybeRefresh(absl::Time now, bool unknown_kid) const {
  {
    absl::MutexLock lock(&mu_);
    const bool due =
        keys_.set == nullptr || unknown_kid || now - last_success_ >= options_.refresh_interval;
    if (!due || now - last_attempt_ < options_.min_refresh_interval) return absl::OkStatus();
  }
  // Another thread fetching: carry on with the keys we have.
  if (!fetch_mu_.TryLock()) return absl::OkStatus();
  {
    absl::MutexLock lock(&mu_);
    // Re-checked: the fetch that held fetch_mu_ may just have finished.
    if (now - last_attempt_ < options_.min_refresh_interval) {
      fetch_mu_.Unlock();
      return absl::OkStatus();
    }
    last_attempt_ = now;
  }
  ++key_fetches_;
  absl::StatusOr<std::optional<std::string>> document = source_->Fetch();
  absl::StatusOr<std::shared_ptr<const JsonWebKeySet>> set = nullptr;
  if (!document.ok()) {
    set = document.status();
  } else if (document->has_value() && **document != last_document_) {
    set = JsonWebKeySet::Parse(**document);
    if (!set.ok()) {
      set = absl::Status(set.status().code(),
                         absl::StrCat(source_->Describe(), ": ", set.status().message()));
    } else {
      last_document_ = std::move(**document);
    }
  }
  fetch_mu_.Unlock();
  if (!set.ok()) {
    ++key_fetch_failures_;
    LOG_WARN("OIDC: cannot load the signing keys; keeping the last good ones", "source",
             source_->Describe(), "error", set.status().message());
    absl::MutexLock lock(&mu_);
    keys_.last_error = std::string(set.status().message());
    return set.status();
  }
  absl::MutexLock lock(&mu_);
  last_success_ = now;
  keys_.last_error.clear();
  if (*set != nullptr) {
    LOG_INFO("OIDC: signing keys loaded", "source", source_->Describe(), "keys", (*set)->size(),
             "skipped", absl::StrJoin((*set)->skipped(), "; "));
    keys_.set = std::move(*set);
    // Tokens cached under the old keys are checked again (a key may have been revoked).
    ++keys_.generation;
  }
  return absl::OkStatus();
}

OidcVerifier::Keys OidcVerifier::CurrentKeys() const {
  absl::MutexLock lock(&mu_);
  return keys_;
}

absl::StatusOr<Principal> OidcVerifier::Verify(absl::string_view token) const {
  if (token.size() > kMaxTokenBytes) {
    return Refuse(absl::StrCat("token is larger than ", kMaxTokenBytes, " bytes"));
  }
  const absl::Time now = clock_->Now();
  // Before the cache, so that a changed key set also re-checks remembered tokens. Failures are
  // logged and the old keys stay.
  (void)MaybeRefresh(now, /*unknown_kid=*/false);
  const Sha256Digest digest = Sha256(token);
  Principal principal;
  if (CacheLookup(digest, now, &principal)) {
    ++cache_hits_;
    return principal;
  }
  uint64_t generation = 0;
  ASSIGN_OR_RETURN(VerifiedClaims claims, VerifyUncached(token, now, &generation));
  CacheInsert(digest, claims, generation, now);
  return std::move(claims.principal);
}

absl::StatusOr<std::vector<const JsonWebKey*>> OidcVerifier::SelectKeys(absl::string_view kid,
                                                                        Algorithm alg,
                                                                        absl::Time now,
                                                                        Keys* keys) const {
  if (kid.empty()) {
    std::vector<const JsonWebKey*> usable = keys->set->UsableWith(alg);
    if (usable.empty()) {
      return Refuse(absl::StrCat("no key for ", AlgorithmName(alg), " in the issuer's key set"));
    }
    return usable;
  }
  std::vector<const JsonWebKey*> named = keys->set->FindByKid(kid);
  if (named.empty()) {
    // The issuer may have rotated its keys since the last fetch.
    (void)MaybeRefresh(now, /*unknown_kid=*/true);
    *keys = CurrentKeys();
    named = keys->set->FindByKid(kid);
    if (named.empty()) return Refuse(absl::StrCat("unknown key id ", QuoteField(kid)));
  }
  std::vector<const JsonWebKey*> usable;
  for (const JsonWebKey* key : named) {
    if (key->UsableWith(alg)) usable.push_back(key);
  }
  if (usable.empty()) {
    return Refuse(absl::StrCat("key ", QuoteField(kid), " is ", named[0]->description(),
                               ", not usable with ", AlgorithmName(alg)));
  }
  return usable;
}

absl::StatusOr<VerifiedClaims> OidcVerifier::VerifyUncached(absl::string_view token, absl::Time now,
                                                            uint64_t* key_generation) const {
  ASSIGN_OR_RETURN(Header header, ParseHeader(token, options_.algorithms));
  Keys keys = CurrentKeys();
  if (keys.set == nullptr) {
    return absl::UnauthenticatedError(
        absl::StrCat("no signing keys loaded from ", source_->Describe(), ": ", keys.last_error));
  }
  ASSIGN_OR_RETURN(std::vector<const JsonWebKey*> candidates,
                   SelectKeys(header.kid, header.alg, now, &keys));
  absl::StatusOr<std::string> payload = Refuse("signature does not verify");
  for (const JsonWebKey* key : candidates) {
    ++signature_checks_;
    payload = key->VerifyCompact(token);
    if (payload.ok()) break;
  }
  if (!payload.ok()) return payload.status();
  *key_generation = keys.generation;
  return CheckClaims(*payload, options_.rules, now);
}

bool OidcVerifier::CacheLookup(const Sha256Digest& digest, absl::Time now, Principal* out) const {
  if (options_.token_cache_capacity == 0) return false;
  uint64_t generation;
  {
    absl::MutexLock lock(&mu_);
    generation = keys_.generation;
  }
  absl::MutexLock lock(&cache_mu_);
  auto it = cache_.find(digest);
  if (it == cache_.end()) return false;
  if (it->second.key_generation != generation ||
      now > it->second.expires + options_.rules.clock_skew) {
    cache_.erase(it);
    return false;  // checked again, so the refusal says why
  }
  *out = it->second.principal;
  return true;
}

void OidcVerifier::CacheInsert(const Sha256Digest& digest, const VerifiedClaims& claims,
                               uint64_t key_generation, absl::Time now) const {
  if (options_.token_cache_capacity == 0) return;
  absl::MutexLock lock(&cache_mu_);
  if (cache_.size() >= options_.token_cache_capacity) {
    absl::erase_if(cache_, [&](const auto& entry) {
      return now > entry.second.expires + options_.rules.clock_skew;
    });
    // Still full of live tokens: start over rather than track recency on every hit.
    if (cache_.size() >= options_.token_cache_capacity) cache_.clear();
  }
  cache_[digest] = CachedToken{claims.principal, claims.expires, key_generation};
}

OidcVerifier::Stats OidcVerifier::GetStats() const {
  Stats stats;
  stats.signature_checks = signature_checks_.load();
  stats.cache_hits = cache_hits_.load();
  stats.key_fetches = key_fetches_.load();
  stats.key_fetch_failures = key_fetch_failures_.load();
  Keys keys = CurrentKeys();
  stats.keys = keys.set == nullptr ? 0 : keys.set->size();
  return stats;
}

}  // namespace regatta::auth::oidc
