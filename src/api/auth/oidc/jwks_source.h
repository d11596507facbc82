#ifndef REGATTA_SRC_API_AUTH_OIDC_JWKS_SOURCE_H_
#define REGATTA_SRC_API_AUTH_OIDC_JWKS_SOURCE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace regatta::auth::oidc {

// Where the issuer's JSON Web Key Set comes from. Called by one thread at a time.
class JwksSource {
 public:
  virtual ~JwksSource() = default;
  // For messages: the file name or URL.
  virtual const std::string& Describe() const = 0;
  // The document, or nullopt when it is known to be unchanged since the last successful Fetch.
  virtual absl::StatusOr<std::optional<std::string>> Fetch() = 0;
};

// Largest JWKS document read or downloaded.
inline constexpr size_t kMaxJwksBytes = 1 << 20;

// A local file (e.g. a Kubernetes-mounted secret); re-read when its size or modification time
// changes.
std::unique_ptr<JwksSource> NewFileJwksSource(std::string path);

struct UrlSourceOptions {
  absl::Duration timeout = absl::Seconds(10);
  // PEM bundle to trust for https instead of the system's CAs; "" for the system's.
  std::string ca_file;
};

// An http(s) URL (the issuer's jwks_uri), downloaded with libcurl. Redirects are not followed
// and only http and https are allowed, so a URL cannot be turned into a local file read.
std::unique_ptr<JwksSource> NewUrlJwksSource(std::string url, UrlSourceOptions options);

}  // namespace regatta::auth::oidc

#endif  // REGATTA_SRC_API_AUTH_OIDC_JWKS_SOURCE_H_
