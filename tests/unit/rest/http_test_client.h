#ifndef REGATTA_TESTS_UNIT_REST_HTTP_TEST_CLIENT_H_
#define REGATTA_TESTS_UNIT_REST_HTTP_TEST_CLIENT_H_

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace regatta::rest::testing {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpReply {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? "" : it->second;
  }
};

// "METHOD target HTTP/1.1" with Host, the extra headers, and Content-Length when there is a
// body (or the method is POST/PUT).
std::string BuildRequest(absl::string_view method, absl::string_view target,
                         absl::string_view body = "", const Headers& headers = {});

// A plain blocking TCP connection to 127.0.0.1 with a tiny HTTP/1.1 response reader, so tests
// control every byte (keep-alive, truncated requests, raw garbage).
class TestConnection {
 public:
  // Null if the connection fails.
  static std::unique_ptr<TestConnection> Connect(int port);
  ~TestConnection();

  bool Send(absl::string_view bytes);
  void ShutdownWrite();
  void Close();

  // Reads one whole response (Content-Length, chunked, or until EOF). Nullopt on timeout or if
  // the connection ends before a status line.
  std::optional<HttpReply> ReadResponse(absl::Duration timeout = absl::Seconds(10));
  // Reads whatever arrives; false on EOF, error or timeout.
  bool ReadSome(absl::Duration timeout);
  // True once the server closed (a read returned 0 or failed).
  bool WaitForEof(absl::Duration timeout);
  bool eof() const { return eof_; }

  std::string& buffer() { return buffer_; }

 private:
  explicit TestConnection(int fd) : fd_(fd) {}
  int fd_;
  bool eof_ = false;
  std::string buffer_;
};

// One request on a fresh connection.
HttpReply Fetch(int port, absl::string_view method, absl::string_view target,
                absl::string_view body = "", const Headers& headers = {});

struct SseFrame {
  std::string id;
  std::string event;
  std::string data;
  std::string comment;  // for ": ..." lines
};

// An event-stream client: sends the GET, then decodes the (chunked) body into frames.
class SseClient {
 public:
  SseClient(int port, absl::string_view target, const Headers& headers = {});

  bool connected() const { return conn_ != nullptr; }
  // Waits for the status line and headers.
  bool WaitForHead(absl::Duration timeout = absl::Seconds(10));
  int status() const { return status_; }
  const std::map<std::string, std::string>& headers() const { return headers_; }
  // Waits until `n` frames carrying an event (not comments) arrived.
  bool WaitForEvents(size_t n, absl::Duration timeout = absl::Seconds(10));
  // Waits until a comment frame arrived.
  bool WaitForComment(absl::Duration timeout);
  // Waits for the end of the body (last chunk or EOF).
  bool WaitForEnd(absl::Duration timeout = absl::Seconds(10));
  // Waits until the decoded body contains `text` (for plain streamed bodies such as logs).
  bool WaitForText(absl::string_view text, absl::Duration timeout = absl::Seconds(10));
  // The chunked body ended with its last chunk (not just with the connection).
  bool complete() const { return complete_; }
  std::vector<SseFrame> Events() const;
  const std::vector<SseFrame>& frames() const { return frames_; }
  // The undecoded body after the head (for error responses).
  const std::string& body() const { return text_; }
  void Close() { conn_.reset(); }

 private:
  bool Pump(absl::Duration timeout);
  void Decode();

  std::unique_ptr<TestConnection> conn_;
  bool head_done_ = false;
  bool chunked_ = false;
  bool ended_ = false;
  bool complete_ = false;
  int status_ = 0;
  std::map<std::string, std::string> headers_;
  std::string raw_;   // undecoded body bytes
  std::string text_;  // decoded body text not yet split into frames (and all of it for errors)
  size_t text_consumed_ = 0;
  std::vector<SseFrame> frames_;
};

}  // namespace regatta::rest::testing

#endif  // REGATTA_TESTS_UNIT_REST_HTTP_TEST_CLIENT_H_
