#include "src/server/oidc.h"

#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/api/auth/oidc/jwks_source.h"
#include "src/api/auth/oidc/verifier.h"
#include "src/common/logging.h"

namespace regatta::server {

absl::StatusOr<std::shared_ptr<const auth::TokenVerifier>> MakeOidcVerifier(
    const OidcConfig& config, const Clock* clock) {
  if (config.issuer.empty()) return nullptr;
  auth::oidc::VerifierOptions options;
  options.rules.issuer = config.issuer;
  options.rules.audience = config.audience;
  options.rules.username_claim = config.username_claim;
  options.rules.groups_claim = config.groups_claim;
  options.rules.username_prefix = config.username_prefix;
  options.rules.groups_prefix = config.groups_prefix;
  options.rules.clock_skew = config.clock_skew;
  options.algorithms.clear();
  for (const std::string& name : config.algorithms) {
    auth::oidc::Algorithm alg;
    if (!auth::oidc::ParseAlgorithm(name, &alg)) {
      return absl::InvalidArgumentError(absl::StrCat("auth.oidc.algorithms: \"", name, "\""));
    }
    options.algorithms.push_back(alg);
  }
  options.token_cache_capacity = static_cast<size_t>(config.token_cache_size);
  options.clock = clock;
  std::unique_ptr<auth::oidc::JwksSource> source;
  if (!config.jwks_file.empty()) {
    // A local file is cheap to stat: changes are picked up within a second.
    options.refresh_interval = options.min_refresh_interval = absl::Seconds(1);
    source = auth::oidc::NewFileJwksSource(config.jwks_file);
  } else {
    options.refresh_interval = config.refresh_interval;
    options.min_refresh_interval = config.min_refresh_interval;
    if (absl::StartsWith(config.jwks_url, "http://")) {
      LOG_WARN("auth.oidc.jwksUrl is plain http: the signing keys can be tampered with on the way",
               "url", config.jwks_url);
    }
    source =
        auth::oidc::NewUrlJwksSource(config.jwks_url, {config.fetch_timeout, config.jwks_ca_file});
  }
  auto verifier = auth::oidc::OidcVerifier::Create(std::move(options), std::move(source),
                                                   /*require_keys=*/!config.jwks_file.empty());
  if (!verifier.ok()) {
    return absl::Status(verifier.status().code(),
                        absl::StrCat("auth.oidc: ", verifier.status().message()));
  }
  LOG_INFO("OIDC bearer tokens enabled", "issuer", config.issuer, "audience", config.audience);
  return std::shared_ptr<const auth::TokenVerifier>(std::move(*verifier));
}

}  // namespace regatta::server
