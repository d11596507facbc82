#ifndef REGATTA_SRC_API_REST_REST_SERVER_H_
#define REGATTA_SRC_API_REST_REST_SERVER_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "grpcpp/channel.h"
#include "src/api/rest/http_message.h"
#include "src/common/tls/tls.h"

namespace regatta::rest {

// A GET route served by the process itself rather than by the API (e.g. /metrics, /readyz):
// matched on the exact path (any query is ignored) before the REST mapping; other methods get
// 405.
struct PlainRoute {
  std::string path;
  std::function<HttpResponse(const HttpRequest& request)> handler;
};

struct RestOptions {
  // Address to listen on; a literal IP or a resolvable name.
  std::string host = "127.0.0.1";
  // 0 picks an ephemeral port; port() tells which.
  int port = 0;
  // Threads running the HTTP connections. Unary calls block one while they run; event streams
  // read on threads of their own.
  int threads = 3;
  // Larger request bodies get 413 without being read.
  size_t max_body_bytes = 16 << 20;
  // Request line plus headers; larger gets 431.
  size_t max_header_bytes = 64 << 10;
  // Deadline of each unary gRPC call.
  absl::Duration call_timeout = absl::Seconds(60);
  // How long a connection may take to send a request, or sit idle between keep-alive requests.
  absl::Duration idle_timeout = absl::Seconds(60);
  // Interval of ": keepalive" comments on an event stream.
  absl::Duration sse_keepalive = absl::Seconds(15);
  // An event stream (or a followed log) answers with its headers at the first data, or after
  // this long without any, so a failing call can still get a proper HTTP error status.
  absl::Duration sse_header_delay = absl::Seconds(1);
  // A stream whose client accepts no data for this long is closed.
  absl::Duration sse_stall_timeout = absl::Seconds(60);
  // Concurrent streamed responses (event streams and log reads); more get 503.
  int max_streams = 1024;
  // A log read without follow is answered in one response with a Content-Length up to this
  // size; a larger log is streamed (chunked) instead of being held in memory.
  size_t log_buffer_bytes = 8 << 20;
  // Reported by GET /v1/version; empty means the build's version.
  std::string version;
  // HTTPS with this material (new connections see a reload); null: plain HTTP.
  std::shared_ptr<tls::ServerTls> tls;
  // Answered before the REST mapping; see PlainRoute.
  std::vector<PlainRoute> plain_routes;
};

// The REST/JSON mapping of the gRPC API (grpc-gateway style) over HTTP/1.1, with server-sent
// events for job-set event streams and plain-text job logs. Every route becomes a call on the given
// channel, so REST and gRPC share the same services, validation and auth; the Authorization header
// is forwarded as the "authorization" metadata. The routes are listed in docs/rest.md.
class RestServer {
 public:
  // Binds and starts serving. Errors: INVALID_ARGUMENT for bad options, UNAVAILABLE if the
  // address cannot be bound.
  static absl::StatusOr<std::unique_ptr<RestServer>> Start(const RestOptions& options,
                                                           std::shared_ptr<grpc::Channel> channel);

  ~RestServer();
  RestServer(const RestServer&) = delete;
  RestServer& operator=(const RestServer&) = delete;

  // The bound port.
  int port() const;

  // Stops accepting, closes every connection (event streams too, cancelling their calls) and
  // joins all threads. Idempotent; the destructor calls it.
  void Shutdown();

 private:
  class Impl;
  explicit RestServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace regatta::rest

#endif  // REGATTA_SRC_API_REST_REST_SERVER_H_
