#include "tests/unit/rest/http_test_client.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace regatta::rest::testing {
namespace {

struct Head {
  int status = 0;
  std::map<std::string, std::string> headers;
  size_t length = 0;  // bytes of the head, including the blank line
};

std::optional<Head> ParseHead(const std::string& buffer) {
  const size_t end = buffer.find("\r\n\r\n");
  if (end == std::string::npos) return std::nullopt;
  Head head;
  head.length = end + 4;
  std::vector<std::string> lines = absl::StrSplit(buffer.substr(0, end), "\r\n");
  std::vector<std::string> status_line = absl::StrSplit(lines[0], absl::MaxSplits(' ', 2));
  if (status_line.size() < 2 || !absl::SimpleAtoi(status_line[1], &head.status)) return head;
  for (size_t i = 1; i < lines.size(); ++i) {
    const size_t colon = lines[i].find(':');
    if (colon == std::string::npos) continue;
    std::string name = absl::AsciiStrToLower(lines[i].substr(0, colon));
    std::string value(absl::StripAsciiWhitespace(lines[i].substr(colon + 1)));
    head.headers[name] = value;
  }
  return head;
}

// Decodes complete chunks from the front of `raw` into `out`; true once the last chunk is seen.
bool Dechunk(std::string& raw, std::string& out) {
  for (;;) {
    const size_t line_end = raw.find("\r\n");
    if (line_end == std::string::npos) return false;
    size_t size = std::strtoul(raw.substr(0, line_end).c_str(), nullptr, 16);
    if (size == 0) {
      if (raw.size() < line_end + 4) return false;
      raw.erase(0, line_end + 4);
      return true;
    }
    if (raw.size() < line_end + 2 + size + 2) return false;
    out.append(raw, line_end + 2, size);
    raw.erase(0, line_end + 2 + size + 2);
  }
}

}  // namespace

std::string BuildRequest(absl::string_view method, absl::string_view target, absl::string_view body,
                         const Headers& headers) {
  std::string out = absl::StrCat(method, " ", target, " HTTP/1.1\r\nHost: 127.0.0.1\r\n");
  for (const auto& [name, value] : headers) absl::StrAppend(&out, name, ": ", value, "\r\n");
  if (!body.empty() || method == "POST" || method == "PUT") {
    absl::StrAppend(&out, "Content-Length: ", body.size(), "\r\n");
  }
  absl::StrAppend(&out, "\r\n", body);
  return out;
}

std::unique_ptr<TestConnection> TestConnection::Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return nullptr;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return nullptr;
  }
  return std::unique_ptr<TestConnection>(new TestConnection(fd));
}

TestConnection::~TestConnection() { Close(); }

void TestConnection::Close() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

bool TestConnection::Send(absl::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n <= 0) return false;
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return true;
}

void TestConnection::ShutdownWrite() { ::shutdown(fd_, SHUT_WR); }

bool TestConnection::ReadSome(absl::Duration timeout) {
  if (eof_ || fd_ < 0) return false;
  pollfd p{fd_, POLLIN, 0};
  const int ready = ::poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(timeout)));
  if (ready <= 0) return false;
  char chunk[16384];
  const ssize_t n = ::recv(fd_, chunk, sizeof(chunk), 0);
  if (n <= 0) {
    eof_ = true;
    return false;
  }
  buffer_.append(chunk, static_cast<size_t>(n));
  return true;
}

bool TestConnection::WaitForEof(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!eof_) {
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    ReadSome(left);
  }
  return true;
}

std::optional<HttpReply> TestConnection::ReadResponse(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  auto more = [&]() { return ReadSome(std::max(deadline - absl::Now(), absl::ZeroDuration())); };
  std::optional<Head> head;
  while (!(head = ParseHead(buffer_))) {
    if (!more()) return std::nullopt;
  }
  HttpReply reply;
  reply.status = head->status;
  reply.headers = head->headers;
  const size_t start = head->length;
  // Interim (1xx), 204 and 304 responses have no body.
  if (reply.status < 200 || reply.status == 204 || reply.status == 304) {
    buffer_.erase(0, start);
    return reply;
  }
  if (absl::EqualsIgnoreCase(reply.header("transfer-encoding"), "chunked")) {
    for (;;) {
      std::string raw = buffer_.substr(start);
      std::string body;
      if (Dechunk(raw, body)) {
        reply.body = std::move(body);
        buffer_ = std::move(raw);
        return reply;
      }
      if (!more()) return std::nullopt;
    }
  }
  size_t length = 0;
  if (absl::SimpleAtoi(reply.header("content-length"), &length)) {
    while (buffer_.size() - start < length) {
      if (!more()) return std::nullopt;
    }
    reply.body = buffer_.substr(start, length);
    buffer_.erase(0, start + length);
    return reply;
  }
  // No length: the body ends with the connection.
  while (more()) {
  }
  reply.body = buffer_.substr(start);
  buffer_.clear();
  return reply;
}

HttpReply Fetch(int port, absl::string_view method, absl::string_view target,
                absl::string_view body, const Headers& headers) {
  std::unique_ptr<TestConnection> conn = TestConnection::Connect(port);
  if (conn == nullptr || !conn->Send(BuildRequest(method, target, body, headers))) return {};
  std::optional<HttpReply> reply = conn->ReadResponse();
  return reply ? *reply : HttpReply{};
}

SseClient::SseClient(int port, absl::string_view target, const Headers& headers) {
  conn_ = TestConnection::Connect(port);
  if (conn_ == nullptr) return;
  Headers all = headers;
  bool has_accept = false;
  for (const auto& [name, value] : headers) has_accept |= absl::EqualsIgnoreCase(name, "accept");
  if (!has_accept) all.emplace_back("Accept", "text/event-stream");
  if (!conn_->Send(BuildRequest("GET", target, "", all))) conn_.reset();
}

bool SseClient::Pump(absl::Duration timeout) {
  if (conn_ == nullptr || ended_) return false;
  const bool got = conn_->ReadSome(timeout);
  Decode();
  return got;
}

void SseClient::Decode() {
  std::string& buffer = conn_->buffer();
  if (!head_done_) {
    std::optional<Head> head = ParseHead(buffer);
    if (!head) return;
    head_done_ = true;
    status_ = head->status;
    headers_ = head->headers;
    auto it = headers_.find("transfer-encoding");
    chunked_ = it != headers_.end() && absl::EqualsIgnoreCase(it->second, "chunked");
    buffer.erase(0, head->length);
  }
  raw_ += buffer;
  buffer.clear();
  if (chunked_) {
    if (Dechunk(raw_, text_)) ended_ = complete_ = true;
  } else {
    text_ += raw_;
    raw_.clear();
  }
  for (;;) {
    const size_t end = text_.find("\n\n", text_consumed_);
    if (end == std::string::npos) break;
    SseFrame frame;
    for (absl::string_view line : absl::StrSplit(
             absl::string_view(text_).substr(text_consumed_, end - text_consumed_), '\n')) {
      auto value_of = [&](absl::string_view prefix) {
        return std::string(line.substr(prefix.size()));
      };
      if (absl::StartsWith(line, "id: ")) frame.id = value_of("id: ");
      if (absl::StartsWith(line, "event: ")) frame.event = value_of("event: ");
      if (absl::StartsWith(line, "data: ")) frame.data = value_of("data: ");
      if (absl::StartsWith(line, ": ")) frame.comment = value_of(": ");
    }
    frames_.push_back(std::move(frame));
    text_consumed_ = end + 2;
  }
}

bool SseClient::WaitForHead(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!head_done_ && absl::Now() < deadline) {
    if (!Pump(deadline - absl::Now()) && (conn_ == nullptr || conn_->eof())) break;
  }
  return head_done_;
}

std::vector<SseFrame> SseClient::Events() const {
  std::vector<SseFrame> events;
  for (const SseFrame& f : frames_) {
    if (!f.event.empty() || !f.data.empty()) events.push_back(f);
  }
  return events;
}

bool SseClient::WaitForEvents(size_t n, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (Events().size() < n && absl::Now() < deadline) {
    if (!Pump(deadline - absl::Now()) && (ended_ || conn_ == nullptr)) break;
  }
  return Events().size() >= n;
}

bool SseClient::WaitForComment(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  auto has_comment = [&] {
    for (const SseFrame& f : frames_) {
      if (!f.comment.empty()) return true;
    }
    return false;
  };
  while (!has_comment() && absl::Now() < deadline) {
    if (!Pump(deadline - absl::Now()) && (ended_ || conn_ == nullptr)) break;
  }
  return has_comment();
}

bool SseClient::WaitForText(absl::string_view text, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!absl::StrContains(text_, text) && absl::Now() < deadline) {
    if (!Pump(deadline - absl::Now()) && (ended_ || conn_ == nullptr || conn_->eof())) break;
  }
  return absl::StrContains(text_, text);
}

bool SseClient::WaitForEnd(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!ended_ && conn_ != nullptr && absl::Now() < deadline) {
    const bool got = conn_->ReadSome(deadline - absl::Now());
    Decode();
    if (!got && conn_->eof()) ended_ = true;
  }
  return ended_;
}

}  // namespace regatta::rest::testing
