#ifndef REGATTA_TESTS_TESTING_OIDC_TEST_ISSUER_H_
#define REGATTA_TESTS_TESTING_OIDC_TEST_ISSUER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

typedef struct evp_pkey_st EVP_PKEY;

namespace regatta::testing {

// A signing key of a fake OpenID Connect issuer: generated with the `openssl` command line tool,
// published as a JWK and used to sign JWTs with OpenSSL's libcrypto (independent of the libcjose
// code under test).
class TestSigningKey {
 public:
  enum class Kind { kRsa2048, kEcP256 };

  // Runs `openssl genpkey` into `dir` and loads the key.
  static absl::StatusOr<std::unique_ptr<TestSigningKey>> Generate(Kind kind, std::string kid,
                                                                  const std::string& dir);
  ~TestSigningKey();

  const std::string& kid() const { return kid_; }
  // "RS256" or "ES256".
  const char* alg() const;
  // The public JWK (kty, kid, use sig, alg and n/e or crv/x/y).
  nlohmann::json Jwk() const;

  // header.payload.signature with header {"alg": alg(), "typ": "JWT", "kid": kid()} plus
  // `extra_header` members (which override those; null removes one).
  std::string Sign(const nlohmann::json& claims,
                   const nlohmann::json& extra_header = nlohmann::json::object()) const;

 private:
  TestSigningKey() = default;
  Kind kind_ = Kind::kRsa2048;
  std::string kid_;
  EVP_PKEY* pkey_ = nullptr;
};

// {"keys": [...]} of the given keys' JWKs.
std::string JwksJson(const std::vector<const TestSigningKey*>& keys);

// base64url without padding.
std::string Base64Url(const std::string& bytes);

// An unsigned token (alg none) with these claims, as an attacker would send it.
std::string UnsignedJwt(const nlohmann::json& claims);

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_TESTING_OIDC_TEST_ISSUER_H_
