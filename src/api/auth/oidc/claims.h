#ifndef REGATTA_SRC_API_AUTH_OIDC_CLAIMS_H_
#define REGATTA_SRC_API_AUTH_OIDC_CLAIMS_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "src/api/auth/principal.h"

namespace regatta::auth::oidc {

// What a verified token must say and how its claims become a Principal.
struct ClaimRules {
  std::string issuer;    // "iss" must equal this
  std::string audience;  // "aud" (a string or an array) must contain this
  // Claim holding the user name / the groups. A name is first looked up as a top-level claim
  // (issuers use names like "https://example.com/groups"), then as a dot-separated path into
  // nested objects ("realm_access.roles").
  std::string username_claim = "sub";
  std::string groups_claim = "groups";
  // Prepended to the user name / to each group ("oidc:"), so that issuer-controlled names cannot
  // collide with users-file names unless the operator wants them to.
  std::string username_prefix;
  std::string groups_prefix;
  // Tolerated difference between the issuer's clock and ours for exp, nbf and iat.
  absl::Duration clock_skew = absl::Seconds(60);
};

struct VerifiedClaims {
  Principal principal;
  absl::Time expires;
};

// Checks the claims of a token whose signature has been verified, at time `now`. Every refusal
// is UNAUTHENTICATED and says which claim was wrong.
absl::StatusOr<VerifiedClaims> CheckClaims(absl::string_view payload_json, const ClaimRules& rules,
                                           absl::Time now);

}  // namespace regatta::auth::oidc

#endif  // REGATTA_SRC_API_AUTH_OIDC_CLAIMS_H_
