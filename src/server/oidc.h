#ifndef REGATTA_SRC_SERVER_OIDC_H_
#define REGATTA_SRC_SERVER_OIDC_H_

#include <memory>

#include "absl/status/statusor.h"
#include "src/api/auth/token_verifier.h"
#include "src/common/clock.h"
#include "src/server/config.h"

namespace regatta::server {

// The bearer-JWT verifier for `auth.oidc` (null when no issuer is configured). A jwksFile must
// load at startup; a jwksUrl that cannot be fetched yet only logs a warning.
absl::StatusOr<std::shared_ptr<const auth::TokenVerifier>> MakeOidcVerifier(
    const OidcConfig& config, const Clock* clock);

}  // namespace regatta::server

#endif  // REGATTA_SRC_SERVER_OIDC_H_
