#ifndef REGATTA_SRC_DEVICES_HANDLERS_ONVIF_HTTP_CLIENT_H_
#define REGATTA_SRC_DEVICES_HANDLERS_ONVIF_HTTP_CLIENT_H_

// A small blocking HTTP/1.1 client for SOAP calls to cameras (Boost.Beast): one POST per
// connection, the whole exchange bounded by a timeout (Akri gives a camera 1 s).

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace regatta::devices::onvif {

struct HttpUrl {
  std::string host;
  std::string port;    // "80" when the URL names none
  std::string target;  // path and query, "/" when empty
};
// Only http:// URLs (ONVIF device services on a LAN; https is not supported yet).
absl::StatusOr<HttpUrl> ParseHttpUrl(absl::string_view url);

// POSTs a SOAP 1.2 body to `url` and returns the response body of a 2xx reply. UNAVAILABLE when
// the camera cannot be reached or the timeout passes; FAILED_PRECONDITION with the status for any
// other reply, and the body's SOAP fault reason when it has one.
absl::StatusOr<std::string> PostSoap(absl::string_view url, absl::string_view soap_action,
                                     absl::string_view body, absl::Duration timeout);

}  // namespace regatta::devices::onvif

#endif  // REGATTA_SRC_DEVICES_HANDLERS_ONVIF_HTTP_CLIENT_H_
