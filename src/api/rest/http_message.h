#ifndef REGATTA_SRC_API_REST_HTTP_MESSAGE_H_
#define REGATTA_SRC_API_REST_HTTP_MESSAGE_H_

#include <string>
#include <utility>
#include <vector>

namespace regatta::rest {

// An HTTP request as the gateway sees it: transport details (Beast, sockets) stay in the server,
// so routing and mapping can be tested without a network.
struct HttpRequest {
  std::string method;  // "GET", "POST", ...
  // The request target as sent: path plus optional "?query"; not yet percent-decoded.
  std::string target;
  // The only headers the gateway looks at.
  std::string authorization;
  std::string accept;
  std::string last_event_id;
  std::string body;
  // The IP address of the HTTP client (empty if unknown), passed on for per-address limits.
  std::string client_address;
};

struct HttpResponse {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
  // Extra headers, e.g. Allow on a 405.
  std::vector<std::pair<std::string, std::string>> headers;
};

}  // namespace regatta::rest

#endif  // REGATTA_SRC_API_REST_HTTP_MESSAGE_H_
