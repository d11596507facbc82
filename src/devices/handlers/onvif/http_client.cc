#include "src/devices/handlers/onvif/http_client.h"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "src/devices/handlers/onvif/soap.h"

namespace regatta::devices::onvif {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

// One exchange, driven by the io_context for at most the timeout.
struct Exchange {
  asio::io_context io;
  tcp::resolver resolver{io};
  beast::tcp_stream stream{io};
  http::request<http::string_body> request;
  http::response<http::string_body> response;
  beast::flat_buffer buffer;
  beast::error_code error;
  std::string stage;
  bool done = false;

  void Fail(const beast::error_code& ec, const char* where) {
    error = ec;
    stage = where;
    done = true;
  }

  void Start(const HttpUrl& url) {
    resolver.async_resolve(
        url.host, url.port, [this](beast::error_code ec, tcp::resolver::results_type results) {
          if (ec) return Fail(ec, "resolve");
          stream.async_connect(results, [this](beast::error_code ec, const tcp::endpoint&) {
            if (ec) return Fail(ec, "connect");
            Write();
          });
        });
  }
  void Write() {
    http::async_write(stream, request, [this](beast::error_code ec, size_t) {
      if (ec) return Fail(ec, "send");
      http::async_read(stream, buffer, response, [this](beast::error_code ec, size_t) {
        if (ec) return Fail(ec, "read the reply");
        done = true;
        beast::error_code ignored;
        stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
      });
    });
  }
};

}  // namespace

absl::StatusOr<HttpUrl> ParseHttpUrl(absl::string_view url) {
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "http://")) {
    return absl::InvalidArgumentError(absl::StrCat("'", url, "': only http:// URLs are supported"));
  }
  HttpUrl parsed;
  size_t slash = rest.find('/');
  absl::string_view authority = rest.substr(0, slash);
  parsed.target = slash == absl::string_view::npos ? "/" : std::string(rest.substr(slash));
  if (size_t at = authority.rfind('@'); at != absl::string_view::npos) {
    authority.remove_prefix(at + 1);  // credentials in a URL are not used
  }
  if (absl::StartsWith(authority, "[")) {  // [IPv6]:port
    size_t close = authority.find(']');
    if (close == absl::string_view::npos) {
      return absl::InvalidArgumentError(absl::StrCat("'", url, "': unterminated IPv6 address"));
    }
    parsed.host = std::string(authority.substr(1, close - 1));
    absl::string_view after = authority.substr(close + 1);
    parsed.port = absl::ConsumePrefix(&after, ":") ? std::string(after) : "80";
  } else if (size_t colon = authority.rfind(':'); colon != absl::string_view::npos) {
    parsed.host = std::string(authority.substr(0, colon));
    parsed.port = std::string(authority.substr(colon + 1));
  } else {
    parsed.host = std::string(authority);
    parsed.port = "80";
  }
  if (parsed.host.empty()) return absl::InvalidArgumentError(absl::StrCat("'", url, "': no host"));
  if (parsed.port.empty()) parsed.port = "80";
  return parsed;
}

absl::StatusOr<std::string> PostSoap(absl::string_view url, absl::string_view soap_action,
                                     absl::string_view body, absl::Duration timeout) {
  absl::StatusOr<HttpUrl> parsed = ParseHttpUrl(url);
  if (!parsed.ok()) return parsed.status();
  Exchange exchange;
  exchange.request.method(http::verb::post);
  exchange.request.target(parsed->target);
  exchange.request.version(11);
  exchange.request.set(http::field::host, parsed->host + ":" + parsed->port);
  exchange.request.set(
      http::field::content_type,
      absl::StrCat("application/soap+xml; charset=utf-8; action=\"", soap_action, "\""));
  exchange.request.set(http::field::connection, "close");
  exchange.request.body() = std::string(body);
  exchange.request.prepare_payload();
  exchange.Start(*parsed);
  exchange.io.run_for(absl::ToChronoMilliseconds(timeout));
  if (!exchange.done) {
    // Cancel what is pending and let the handlers finish while everything they use is alive.
    exchange.resolver.cancel();
    beast::error_code ignored;
    exchange.stream.socket().close(ignored);
    exchange.io.restart();
    exchange.io.run();
    return absl::UnavailableError(
        absl::StrCat(url, ": no reply within ", absl::FormatDuration(timeout)));
  }
  if (exchange.error) {
    return absl::UnavailableError(
        absl::StrCat(url, ": could not ", exchange.stage, ": ", exchange.error.message()));
  }
  const unsigned status = exchange.response.result_int();
  if (status < 200 || status >= 300) {
    std::string reason;
    absl::Status fault = CheckSoapFault(exchange.response.body());
    if (!fault.ok() && fault.code() == absl::StatusCode::kFailedPrecondition) {
      reason = absl::StrCat(" (", fault.message(), ")");
    }
    return absl::FailedPreconditionError(absl::StrCat(url, ": HTTP ", status, reason));
  }
  return std::move(exchange.response.body());
}

}  // namespace regatta::devices::onvif
