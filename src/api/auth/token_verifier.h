#ifndef REGATTA_SRC_API_AUTH_TOKEN_VERIFIER_H_
#define REGATTA_SRC_API_AUTH_TOKEN_VERIFIER_H_

#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"
#include "src/api/auth/principal.h"

namespace regatta::auth {

// Verifies self-contained bearer tokens (JWTs from an OpenID Connect issuer, src/api/auth/oidc)
// for the Authenticator, which stays free of the JOSE library. Thread-safe.
class TokenVerifier {
 public:
  virtual ~TokenVerifier() = default;
  // UNAUTHENTICATED with the reason when the token is refused.
  virtual absl::StatusOr<Principal> Verify(absl::string_view token) const = 0;
};

// True if `token` has the shape of a JWS in compact form: three base64url parts separated by
// dots, the header and payload non-empty (the signature is empty with "alg": "none", which the
// verifier refuses by name).
inline bool LooksLikeJwt(absl::string_view token) {
  int dots = 0;
  char previous = '.';
  for (char c : token) {
    if (c == '.') {
      if (previous == '.' || ++dots > 2) return false;
    } else if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_') {
      return false;
    }
    previous = c;
  }
  return dots == 2;
}

}  // namespace regatta::auth

#endif  // REGATTA_SRC_API_AUTH_TOKEN_VERIFIER_H_
