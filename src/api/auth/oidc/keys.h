#ifndef REGATTA_SRC_API_AUTH_OIDC_KEYS_H_
#define REGATTA_SRC_API_AUTH_OIDC_KEYS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// cjose's key type, kept out of the header's users.
typedef struct _cjose_jwk_int cjose_jwk_t;

namespace regatta::auth::oidc {

// The signature algorithms the verifier can check; everything else (none, HS*, PS*, ES384, ...)
// is refused.
enum class Algorithm { kRS256, kES256 };

// "RS256" / "ES256"; false for anything else.
bool ParseAlgorithm(absl::string_view name, Algorithm* out);
const char* AlgorithmName(Algorithm alg);

// One public signing key of a JWKS, imported with libcjose.
class JsonWebKey {
 public:
  ~JsonWebKey();
  JsonWebKey(const JsonWebKey&) = delete;
  JsonWebKey& operator=(const JsonWebKey&) = delete;

  const std::string& kid() const { return kid_; }
  // "RSA 2048" or "EC P-256", for messages.
  const std::string& description() const { return description_; }
  bool UsableWith(Algorithm alg) const;

  // Checks the JWS signature of `compact` (header.payload.signature) with this key and returns
  // the payload; UNAUTHENTICATED "signature does not verify" otherwise. Safe to call from many
  // threads at once: verification only reads the key.
  absl::StatusOr<std::string> VerifyCompact(absl::string_view compact) const;

 private:
  friend class JsonWebKeySet;
  JsonWebKey() = default;

  cjose_jwk_t* jwk_ = nullptr;
  std::string kid_;
  std::string description_;
  Algorithm alg_ = Algorithm::kRS256;  // the one algorithm the key type supports
  std::string declared_alg_;           // the JWK's "alg" member, if any
};

// The signing keys of a JSON Web Key Set (RFC 7517 section 5). Immutable after Parse.
class JsonWebKeySet {
 public:
  // Imports every RSA (at least 2048 bits) and EC P-256 key with "use" absent or "sig". Keys of
  // other types or curves are skipped (issuers publish encryption keys in the same set) and
  // listed in skipped(); a set with no usable key, or a malformed document, is INVALID_ARGUMENT
  // naming the entry.
  static absl::StatusOr<std::shared_ptr<const JsonWebKeySet>> Parse(absl::string_view json);

  // Keys with this kid (a set may hold the same kid for several algorithms).
  std::vector<const JsonWebKey*> FindByKid(absl::string_view kid) const;
  // Every key usable with `alg`: the candidates when a token names no kid.
  std::vector<const JsonWebKey*> UsableWith(Algorithm alg) const;
  size_t size() const { return keys_.size(); }
  const std::vector<std::string>& skipped() const { return skipped_; }

 private:
  std::vector<std::unique_ptr<JsonWebKey>> keys_;
  std::vector<std::string> skipped_;
};

}  // namespace regatta::auth::oidc

#endif  // REGATTA_SRC_API_AUTH_OIDC_KEYS_H_
