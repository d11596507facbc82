#ifndef REGATTA_SRC_API_REST_TLS_STREAM_H_
#define REGATTA_SRC_API_REST_TLS_STREAM_H_

// One HTTP connection's byte stream: plain TCP, or TLS over it when the listener has a
// certificate. The connection code reads and writes through it the same way either way; the
// timeouts, shutdown and close act on the TCP stream below.

#include <memory>
#include <mutex>
#include <optional>
#include <utility>

#include "boost/asio/ssl.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/ssl.hpp"
#include "src/common/tls/tls.h"

namespace regatta::rest {

class MaybeTlsStream {
 public:
  using executor_type = boost::beast::tcp_stream::executor_type;

  // `context` null: plain TCP.
  MaybeTlsStream(boost::asio::ip::tcp::socket socket,
                 std::shared_ptr<boost::asio::ssl::context> context)
      : context_(std::move(context)) {
    if (context_ != nullptr) {
      tls_.emplace(std::move(socket), *context_);
    } else {
      plain_.emplace(std::move(socket));
    }
  }

  executor_type get_executor() { return tcp().get_executor(); }
  bool is_tls() const { return tls_.has_value(); }

  // Completes at once for plain TCP.
  template <class Handler>
  void async_handshake(Handler&& handler) {
    if (tls_) {
      tls_->async_handshake(boost::asio::ssl::stream_base::server, std::forward<Handler>(handler));
    } else {
      boost::asio::post(get_executor(), [h = std::forward<Handler>(handler)]() mutable {
        h(boost::beast::error_code());
      });
    }
  }

  template <class Buffers, class Handler>
  void async_read_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_read_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_read_some(buffers, std::forward<Handler>(handler));
    }
  }

  template <class Buffers, class Handler>
  void async_write_some(const Buffers& buffers, Handler&& handler) {
    if (tls_) {
      tls_->async_write_some(buffers, std::forward<Handler>(handler));
    } else {
      plain_->async_write_some(buffers, std::forward<Handler>(handler));
    }
  }

  template <class Duration>
  void expires_after(Duration d) {
    tcp().expires_after(d);
  }
  void expires_never() { tcp().expires_never(); }
  boost::asio::ip::tcp::socket& socket() { return tcp().socket(); }
  void close() { tcp().close(); }

 private:
  boost::beast::tcp_stream& tcp() { return tls_ ? tls_->next_layer() : *plain_; }

  std::shared_ptr<boost::asio::ssl::context> context_;  // outlives the TLS stream using it
  std::optional<boost::beast::ssl_stream<boost::beast::tcp_stream>> tls_;
  std::optional<boost::beast::tcp_stream> plain_;
};

// The TLS context for new connections: made from the listener's current material, and made
// again after a reload changed it. Thread-safe.
class TlsContextCache {
 public:
  explicit TlsContextCache(std::shared_ptr<tls::ServerTls> tls) : tls_(std::move(tls)) {}

  // Null when the listener has no TLS.
  std::shared_ptr<boost::asio::ssl::context> Get();

 private:
  const std::shared_ptr<tls::ServerTls> tls_;
  std::mutex mu_;
  std::shared_ptr<const tls::ServerMaterial> material_;
  std::shared_ptr<boost::asio::ssl::context> context_;
};

}  // namespace regatta::rest

#endif  // REGATTA_SRC_API_REST_TLS_STREAM_H_
