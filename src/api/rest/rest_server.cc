#include "src/api/rest/rest_server.h"

#include <array>
#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <list>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "boost/asio.hpp"
#include "boost/beast/core.hpp"
#include "boost/beast/http.hpp"
#include "src/api/rest/errors.h"
#include "src/api/rest/gateway.h"
#include "src/api/rest/sse.h"
#include "src/api/rest/tls_stream.h"
#include "src/common/logging.h"

#ifndef REGATTA_VERSION
#define REGATTA_VERSION "unknown"
#endif

namespace regatta::rest {
namespace {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Executor = net::any_io_executor;

// Unsent bytes per stream (SSE frames, log data) before its reader thread waits (and gRPC flow
// control pushes back on the service).
constexpr size_t kMaxQueuedStreamBytes = 4 << 20;
// After an error response on a connection whose request body was not read, unread input is
// drained for a moment so the client sees the response instead of a reset.
constexpr size_t kMaxDrainBytes = 1 << 20;
constexpr auto kLingerTime = std::chrono::seconds(2);
constexpr absl::string_view kLogContentType = "text/plain; charset=utf-8";

std::chrono::nanoseconds ToChrono(absl::Duration d) { return absl::ToChronoNanoseconds(d); }

std::string ToStd(beast::string_view s) { return std::string(s.data(), s.size()); }

const PlainRoute* FindPlainRoute(const RestOptions& options, absl::string_view target) {
  const absl::string_view path = target.substr(0, target.find('?'));
  for (const PlainRoute& route : options.plain_routes) {
    if (route.path == path) return &route;
  }
  return nullptr;
}

HttpResponse AnswerPlain(const PlainRoute& route, const HttpRequest& request) {
  if (request.method == "GET") return route.handler(request);
  HttpResponse response = ErrorResponse(
      405, grpc::StatusCode::UNIMPLEMENTED,
      absl::StrCat("method ", request.method, " is not allowed on ", route.path, "; allowed: GET"));
  response.headers.emplace_back("Allow", "GET");
  return response;
}

// The gRPC side of one streamed response (events or a log), shared by the connection (which may
// cancel it) and the thread that reads it.
class StreamCall {
 public:
  grpc::ClientContext context;

  void Cancel() {
    {
      absl::MutexLock lock(&mu_);
      cancelled_ = true;
    }
    context.TryCancel();
  }

  // Blocks while too much is queued for the client. False once cancelled.
  bool WaitForRoom() {
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(this, &StreamCall::HasRoomOrCancelled));
    return !cancelled_;
  }

  void Queued(size_t n) {
    absl::MutexLock lock(&mu_);
    queued_ += n;
  }

  void Sent(size_t n) {
    absl::MutexLock lock(&mu_);
    queued_ -= std::min(queued_, n);
  }

 private:
  bool HasRoomOrCancelled() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return cancelled_ || queued_ < kMaxQueuedStreamBytes;
  }

  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
  size_t queued_ ABSL_GUARDED_BY(mu_) = 0;
};

class Session;

// What the server, its connections and its stream threads share; it lives as long as the last
// of them.
class ServerState {
 public:
  ServerState(const RestOptions& options, std::shared_ptr<grpc::Channel> channel)
      : options(options),
        gateway(std::move(channel), GatewayOptions{options.call_timeout, options.version}) {}

  const RestOptions options;
  Gateway gateway;

  // False once stopping: the caller must close the connection.
  bool AddSession(Session* session, std::weak_ptr<Session> weak) {
    absl::MutexLock lock(&mu_);
    if (stopping_) return false;
    sessions_[session] = std::move(weak);
    return true;
  }

  void RemoveSession(Session* session) {
    absl::MutexLock lock(&mu_);
    sessions_.erase(session);
  }

  // Marks the server stopping and returns the live connections.
  std::vector<std::shared_ptr<Session>> Stop() {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
    std::vector<std::shared_ptr<Session>> live;
    for (auto& [ptr, weak] : sessions_) {
      if (auto session = weak.lock()) live.push_back(std::move(session));
    }
    return live;
  }

  enum class StartResult { kStarted, kStopping, kTooMany };

  // Runs `body` on a thread of its own (an event stream can last for hours).
  StartResult StartStreamThread(std::function<void()> body) {
    std::vector<std::thread> finished;
    StartResult result = StartResult::kStarted;
    {
      absl::MutexLock lock(&mu_);
      for (auto it = streams_.begin(); it != streams_.end();) {
        if (it->done->load()) {
          finished.push_back(std::move(it->thread));
          it = streams_.erase(it);
        } else {
          ++it;
        }
      }
      if (stopping_) {
        result = StartResult::kStopping;
      } else if (static_cast<int>(streams_.size()) >= options.max_streams) {
        result = StartResult::kTooMany;
      } else {
        auto done = std::make_shared<std::atomic<bool>>(false);
        streams_.push_back(StreamThread{std::thread([body = std::move(body), done] {
                                          body();
                                          done->store(true);
                                        }),
                                        done});
      }
    }
    // Finished threads have returned from their body; joining them does not wait.
    for (std::thread& t : finished) t.join();
    return result;
  }

  // After Stop(): waits for every stream thread (their calls must have been cancelled).
  void JoinStreamThreads() {
    std::list<StreamThread> streams;
    {
      absl::MutexLock lock(&mu_);
      streams.swap(streams_);
    }
    for (StreamThread& s : streams) s.thread.join();
  }

 private:
  struct StreamThread {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<Session*, std::weak_ptr<Session>> sessions_ ABSL_GUARDED_BY(mu_);
  std::list<StreamThread> streams_ ABSL_GUARDED_BY(mu_);
};

// What a stream thread runs: reads the gRPC stream and posts its data to the session.
using StreamBody = std::function<void(std::shared_ptr<ServerState>, std::shared_ptr<StreamCall>,
                                      std::weak_ptr<Session>, Executor)>;

void RunEventStream(std::shared_ptr<ServerState> state, std::shared_ptr<StreamCall> call,
                    const EventStreamPlan& plan, std::weak_ptr<Session> session, Executor strand);
void RunLogStream(std::shared_ptr<ServerState> state, std::shared_ptr<StreamCall> call,
                  const LogStreamPlan& plan, std::weak_ptr<Session> session, Executor strand);

// One HTTP connection. Every handler runs on the connection's strand; unary calls run inline
// (blocking one pool thread), streamed responses (event streams, logs) are read by a thread of
// their own that posts data back here.
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, std::shared_ptr<net::ssl::context> tls,
          std::shared_ptr<ServerState> state)
      : stream_(std::move(socket), std::move(tls)),
        state_(std::move(state)),
        keepalive_timer_(stream_.get_executor()),
        header_timer_(stream_.get_executor()) {
    beast::error_code ec;
    const net::ip::address address = stream_.socket().remote_endpoint(ec).address();
    if (!ec) {
      client_address_ =
          address.is_v6() && address.to_v6().is_v4_mapped()
              ? net::ip::make_address_v4(net::ip::v4_mapped, address.to_v6()).to_string()
              : address.to_string();
    }
  }

  ~Session() {
    if (call_) call_->Cancel();
    state_->RemoveSession(this);
  }

  void Start() {
    auto self = shared_from_this();
    if (!state_->AddSession(this, self)) {
      net::post(stream_.get_executor(), [self] { self->Close(); });
      return;
    }
    net::dispatch(stream_.get_executor(), [self] { self->Handshake(); });
  }

  void PostClose() {
    net::post(stream_.get_executor(), [self = shared_from_this()] { self->Close(); });
  }

  // Given to stream threads; only ever called on the strand.
  void OnStreamData(std::string frame);
  void OnStreamEnd(grpc::Status status);

 private:
  // TLS only; a plain connection goes on to its request at once.
  void Handshake() {
    if (closed_) return;
    stream_.expires_after(ToChrono(state_->options.idle_timeout));
    stream_.async_handshake([self = shared_from_this()](beast::error_code ec) {
      if (ec) return self->Close();
      self->ReadHeader();
    });
  }

  void ReadHeader() {
    if (closed_) return;
    parser_.emplace();
    parser_->header_limit(
        static_cast<std::uint32_t>(std::min<size_t>(state_->options.max_header_bytes, UINT32_MAX)));
    parser_->body_limit(state_->options.max_body_bytes);
    stream_.expires_after(ToChrono(state_->options.idle_timeout));
    http::async_read_header(stream_, buffer_, *parser_,
                            beast::bind_front_handler(&Session::OnHeader, shared_from_this()));
  }

  void OnHeader(beast::error_code ec, size_t) {
    if (ec) return OnReadError(ec);
    const auto& request = parser_->get();
    version_ = request.version();
    if (parser_->is_done()) return HandleRequest();
    // curl and others wait for this before sending a large body.
    if (version_ >= 11 && beast::iequals(request[http::field::expect], "100-continue")) {
      static const std::string kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
      net::async_write(stream_, net::buffer(kContinue),
                       [self = shared_from_this()](beast::error_code ec, size_t) {
                         if (ec) return self->Close();
                         self->ReadBody();
                       });
      return;
    }
    ReadBody();
  }

  void ReadBody() {
    http::async_read(stream_, buffer_, *parser_,
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (ec) return self->OnReadError(ec);
                       self->HandleRequest();
                     });
  }

  void OnReadError(beast::error_code ec) {
    if (closed_) return;
    if (ec == http::error::body_limit) {
      std::string message = absl::StrCat("request body exceeds the limit of ",
                                         state_->options.max_body_bytes, " bytes");
      if (auto length = parser_->content_length()) {
        message = absl::StrCat("request body of ", *length, " bytes exceeds the limit of ",
                               state_->options.max_body_bytes, " bytes");
      }
      return WriteResponse(ErrorResponse(413, grpc::StatusCode::RESOURCE_EXHAUSTED, message),
                           /*keep_alive=*/false);
    }
    if (ec == http::error::header_limit) {
      return WriteResponse(ErrorResponse(431, grpc::StatusCode::RESOURCE_EXHAUSTED,
                                         absl::StrCat("request headers exceed the limit of ",
                                                      state_->options.max_header_bytes, " bytes")),
                           false);
    }
    // A client that went away (or idled out) needs no answer; a malformed request gets one.
    const bool client_gone = ec == http::error::end_of_stream ||
                             ec == http::error::partial_message || ec == net::error::eof ||
                             ec == beast::error::timeout || ec == net::error::operation_aborted;
    if (!client_gone &&
        ec.category() == http::make_error_code(http::error::bad_target).category()) {
      return WriteResponse(ErrorResponse(400, grpc::StatusCode::INVALID_ARGUMENT,
                                         absl::StrCat("malformed HTTP request: ", ec.message())),
                           false);
    }
    Close();
  }

  void HandleRequest() {
    http::request<http::string_body> request = parser_->release();
    parser_.reset();
    HttpRequest in;
    in.method = ToStd(request.method_string());
    in.target = ToStd(request.target());
    in.authorization = ToStd(request[http::field::authorization]);
    in.accept = ToStd(request[http::field::accept]);
    in.last_event_id = ToStd(request["Last-Event-ID"]);
    in.body = std::move(request.body());
    in.client_address = client_address_;
    keep_alive_ = request.keep_alive();
    // A unary call's own deadline bounds how long this takes.
    stream_.expires_never();

    GatewayResult result;
    try {
      const PlainRoute* plain = FindPlainRoute(state_->options, in.target);
      result = plain != nullptr ? AnswerPlain(*plain, in) : state_->gateway.Handle(in);
    } catch (const std::exception& e) {
      // Never let one request take the server down.
      LOG_ERROR("rest request failed", "method", in.method, "error", e.what());
      result = ErrorResponse(grpc::StatusCode::INTERNAL, "internal error");
    }
    if (auto* response = std::get_if<HttpResponse>(&result)) {
      return WriteResponse(std::move(*response), keep_alive_);
    }
    if (auto* logs = std::get_if<LogStreamPlan>(&result)) return StartLogStream(std::move(*logs));
    StartEventStream(std::move(std::get<EventStreamPlan>(result)));
  }

  void WriteResponse(HttpResponse response, bool keep_alive) {
    if (closed_) return;
    auto message = std::make_shared<http::response<http::string_body>>(
        static_cast<http::status>(response.status), version_ == 10 ? 10 : 11);
    message->set(http::field::server, "regatta");
    message->set(http::field::content_type, response.content_type);
    for (const auto& [name, value] : response.headers) message->set(name, value);
    message->keep_alive(keep_alive);
    message->body() = std::move(response.body);
    message->prepare_payload();
    stream_.expires_after(ToChrono(state_->options.idle_timeout));
    http::async_write(stream_, *message,
                      [self = shared_from_this(), message](beast::error_code ec, size_t) {
                        if (ec) return self->Close();
                        if (message->need_eof()) return self->Linger();
                        self->ReadHeader();
                      });
  }

  // ---- Streamed responses: server-sent events and logs --------------------------------------

  enum class StreamKind { kEvents, kLogs };

  void StartEventStream(EventStreamPlan plan) {
    StartStream(StreamKind::kEvents,
                [plan = std::move(plan)](std::shared_ptr<ServerState> state,
                                         std::shared_ptr<StreamCall> call,
                                         std::weak_ptr<Session> session, Executor strand) {
                  RunEventStream(std::move(state), std::move(call), plan, std::move(session),
                                 std::move(strand));
                });
  }

  void StartLogStream(LogStreamPlan plan) {
    // Without follow the log is read to its current end and answered as one response with a
    // Content-Length, unless it outgrows the buffer; following streams it as it arrives.
    buffering_ = !plan.request.follow();
    StartStream(StreamKind::kLogs, [plan = std::move(plan)](std::shared_ptr<ServerState> state,
                                                            std::shared_ptr<StreamCall> call,
                                                            std::weak_ptr<Session> session,
                                                            Executor strand) {
      RunLogStream(std::move(state), std::move(call), plan, std::move(session), std::move(strand));
    });
  }

  void StartStream(StreamKind kind, StreamBody body) {
    stream_kind_ = kind;
    auto call = std::make_shared<StreamCall>();
    std::weak_ptr<Session> weak = shared_from_this();
    ServerState::StartResult started = state_->StartStreamThread(
        [state = state_, call, body = std::move(body), weak, strand = stream_.get_executor()] {
          body(state, call, weak, strand);
        });
    if (started != ServerState::StartResult::kStarted) {
      return WriteResponse(ErrorResponse(grpc::StatusCode::UNAVAILABLE,
                                         started == ServerState::StartResult::kStopping
                                             ? "the server is shutting down"
                                             : "too many streams; retry later"),
                           false);
    }
    call_ = std::move(call);
    last_progress_ = std::chrono::steady_clock::now();
    // An EventSource or curl client sends nothing more; a read ending is how a disconnect shows.
    ReadUntilClosed();
    if (!buffering_) {
      header_timer_.expires_after(ToChrono(state_->options.sse_header_delay));
      header_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
        if (ec || self->closed_ || self->headers_sent_ || self->stream_ended_ || self->buffering_) {
          return;
        }
        self->SendStreamHeaders();
      });
    }
    ScheduleKeepalive();
  }

  void SendStreamHeaders() {
    headers_sent_ = true;
    // HTTP/1.0 has no chunked encoding: the body then ends when the connection closes.
    chunked_ = version_ >= 11;
    std::string head = absl::StrCat(
        "HTTP/1.1 200 OK\r\n"
        "Server: regatta\r\n"
        "Content-Type: ",
        stream_kind_ == StreamKind::kEvents ? "text/event-stream" : kLogContentType, "\r\n",
        stream_kind_ == StreamKind::kLogs ? "X-Content-Type-Options: nosniff\r\n" : "",
        "Cache-Control: no-cache\r\n"
        "X-Accel-Buffering: no\r\n"
        "Connection: close\r\n");
    if (chunked_) head += "Transfer-Encoding: chunked\r\n";
    head += "\r\n";
    QueueWrite(std::move(head), 0);
  }

  void QueueBody(const std::string& data, size_t counted) {
    QueueWrite(chunked_ ? HttpChunk(data) : data, counted);
  }

  // `counted` bytes are released to the stream's flow control once written.
  void QueueWrite(std::string data, size_t counted) {
    out_.emplace_back(std::move(data), counted);
    if (!writing_) {
      last_progress_ = std::chrono::steady_clock::now();
      WriteNext();
    }
  }

  void WriteNext() {
    if (closed_) return;
    if (out_.empty()) {
      writing_ = false;
      if (close_when_written_) Linger();
      return;
    }
    writing_ = true;
    net::async_write(stream_, net::buffer(out_.front().first),
                     [self = shared_from_this()](beast::error_code ec, size_t) {
                       if (self->closed_) return;
                       self->last_progress_ = std::chrono::steady_clock::now();
                       if (self->call_) self->call_->Sent(self->out_.front().second);
                       self->out_.pop_front();
                       if (ec) return self->Close();
                       self->WriteNext();
                     });
  }

  void ScheduleKeepalive() {
    keepalive_timer_.expires_after(ToChrono(state_->options.sse_keepalive));
    keepalive_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (ec || self->closed_ || self->stream_ended_) return;
      if (self->writing_ && std::chrono::steady_clock::now() - self->last_progress_ >
                                ToChrono(self->state_->options.sse_stall_timeout)) {
        // The client stopped reading; holding its events forever helps nobody.
        return self->Close();
      }
      if (!self->headers_sent_ && !self->buffering_) self->SendStreamHeaders();
      // A log is raw bytes: it has no comments to keep a connection busy with.
      if (self->stream_kind_ == StreamKind::kEvents && self->out_.size() < 4) {
        self->QueueBody(FormatSseComment("keepalive"), 0);
      }
      self->ScheduleKeepalive();
    });
  }

  // Reads and discards input until the client closes (or, while lingering, for a bounded time
  // and amount), then closes.
  void ReadUntilClosed() {
    if (reading_ || closed_) return;
    reading_ = true;
    stream_.async_read_some(net::buffer(scratch_),
                            [self = shared_from_this()](beast::error_code ec, size_t n) {
                              self->reading_ = false;
                              self->drained_ += n;
                              if (ec || (self->lingering_ && self->drained_ > kMaxDrainBytes)) {
                                return self->Close();
                              }
                              self->ReadUntilClosed();
                            });
  }

  // Ends the response: stop sending, let the client's pending input drain briefly, close.
  void Linger() {
    if (closed_ || lingering_) return;
    lingering_ = true;
    keepalive_timer_.cancel();
    header_timer_.cancel();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    drained_ = 0;
    stream_.expires_after(kLingerTime);
    ReadUntilClosed();
  }

  void Close() {
    if (closed_) return;
    closed_ = true;
    if (call_) call_->Cancel();
    keepalive_timer_.cancel();
    header_timer_.cancel();
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_both, ignored);
    stream_.close();
  }

  MaybeTlsStream stream_;
  std::shared_ptr<ServerState> state_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  unsigned version_ = 11;
  bool keep_alive_ = false;
  bool closed_ = false;
  std::string client_address_;
  bool lingering_ = false;
  bool reading_ = false;
  size_t drained_ = 0;
  std::array<char, 4096> scratch_;

  // Streamed response state.
  StreamKind stream_kind_ = StreamKind::kEvents;
  std::shared_ptr<StreamCall> call_;
  // A log read without follow collects its data here to answer with a Content-Length.
  bool buffering_ = false;
  std::string buffered_;
  bool headers_sent_ = false;
  bool chunked_ = false;
  bool stream_ended_ = false;
  bool writing_ = false;
  bool close_when_written_ = false;
  std::deque<std::pair<std::string, size_t>> out_;
  std::chrono::steady_clock::time_point last_progress_;
  net::steady_timer keepalive_timer_;
  net::steady_timer header_timer_;
};

void Session::OnStreamData(std::string frame) {
  const size_t n = frame.size();
  if (closed_ || stream_ended_) {
    if (call_) call_->Sent(n);
    return;
  }
  if (buffering_) {
    // Buffered data is bounded by log_buffer_bytes, not by the stream's send queue.
    buffered_ += frame;
    if (call_) call_->Sent(n);
    if (buffered_.size() < state_->options.log_buffer_bytes) return;
    // Too much for one buffered response: send it as a stream instead.
    buffering_ = false;
    SendStreamHeaders();
    QueueBody(std::exchange(buffered_, std::string()), 0);
    return;
  }
  if (!headers_sent_) SendStreamHeaders();
  QueueBody(frame, n);
}

void Session::OnStreamEnd(grpc::Status status) {
  if (closed_ || stream_ended_) return;
  stream_ended_ = true;
  keepalive_timer_.cancel();
  header_timer_.cancel();
  if (!headers_sent_ && !status.ok()) {
    // Nothing sent yet: the failure can still be a proper HTTP error.
    return WriteResponse(ErrorResponse(status), false);
  }
  if (buffering_) {
    // The whole log, with a Content-Length.
    HttpResponse response;
    response.content_type = std::string(kLogContentType);
    response.body = std::exchange(buffered_, std::string());
    response.headers = {{"X-Content-Type-Options", "nosniff"}, {"Cache-Control", "no-cache"}};
    return WriteResponse(std::move(response), false);
  }
  if (!headers_sent_) SendStreamHeaders();
  close_when_written_ = true;
  if (!status.ok()) {
    if (stream_kind_ == StreamKind::kLogs) {
      // A log body is the raw bytes, with no room for an error. Closing without the last chunk
      // tells the client that the body is incomplete (curl: "transfer closed with outstanding
      // read data remaining").
      LOG_WARN("rest log stream failed after its headers", "code",
               std::string(GrpcCodeName(status.error_code())), "error", status.error_message());
      if (!writing_) Linger();
      return;
    }
    QueueBody(FormatSseError(status), 0);
  }
  if (chunked_) QueueWrite(std::string(kLastHttpChunk), 0);
  if (!writing_) Linger();
}

// Reads a server stream of Message on `call`, turning each message into body data with
// `to_data` (empty: nothing to send), and posts the data and then the status to the session.
template <typename Message, typename Open, typename ToData>
void RunStream(ServerState& state, StreamCall& call, const std::weak_ptr<Session>& session,
               const Executor& strand, Open open, ToData to_data) {
  grpc::Status status;
  CallTracker& tracker = state.gateway.tracker();
  if (!tracker.Register(&call.context)) {
    status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "the server is shutting down");
  } else {
    std::unique_ptr<grpc::ClientReader<Message>> reader = open(&call.context);
    Message message;
    while (reader->Read(&message)) {
      std::string data = to_data(message);
      // Nothing to send; and an empty HTTP chunk would end the body.
      if (data.empty()) continue;
      // Once cancelled, keep reading: Read returns false soon and Finish must follow it.
      if (!call.WaitForRoom()) continue;
      call.Queued(data.size());
      net::post(strand, [session, data = std::move(data)]() mutable {
        if (auto s = session.lock()) s->OnStreamData(std::move(data));
      });
    }
    status = reader->Finish();
    tracker.Unregister(&call.context);
  }
  net::post(strand, [session, status] {
    if (auto s = session.lock()) s->OnStreamEnd(status);
  });
}

void RunEventStream(std::shared_ptr<ServerState> state, std::shared_ptr<StreamCall> call,
                    const EventStreamPlan& plan, std::weak_ptr<Session> session, Executor strand) {
  RunStream<regatta::v1::JobSetEvent>(
      *state, *call, session, strand,
      [&](grpc::ClientContext* context) { return state->gateway.OpenEventStream(context, plan); },
      [](const regatta::v1::JobSetEvent& event) { return FormatSseEvent(event); });
}

void RunLogStream(std::shared_ptr<ServerState> state, std::shared_ptr<StreamCall> call,
                  const LogStreamPlan& plan, std::weak_ptr<Session> session, Executor strand) {
  RunStream<regatta::v1::LogChunk>(
      *state, *call, session, strand,
      [&](grpc::ClientContext* context) { return state->gateway.OpenLogStream(context, plan); },
      [](regatta::v1::LogChunk& chunk) { return std::move(*chunk.mutable_data()); });
}

// Accepts connections on its own strand.
class Listener : public std::enable_shared_from_this<Listener> {
 public:
  Listener(net::io_context& ioc, tcp::acceptor acceptor, std::shared_ptr<ServerState> state)
      : ioc_(ioc),
        acceptor_(std::move(acceptor)),
        retry_timer_(acceptor_.get_executor()),
        state_(std::move(state)),
        tls_(state_->options.tls) {}

  void Start() {
    net::dispatch(acceptor_.get_executor(), [self = shared_from_this()] { self->Accept(); });
  }

  void Close() {
    net::post(acceptor_.get_executor(), [self = shared_from_this()] {
      self->closed_ = true;
      beast::error_code ignored;
      self->acceptor_.close(ignored);
      self->retry_timer_.cancel();
    });
  }

 private:
  void Accept() {
    if (closed_) return;
    acceptor_.async_accept(net::make_strand(ioc_),
                           beast::bind_front_handler(&Listener::OnAccept, shared_from_this()));
  }

  void OnAccept(beast::error_code ec, tcp::socket socket) {
    if (closed_) return;
    if (!ec) {
      std::shared_ptr<net::ssl::context> context = tls_.Get();
      if (state_->options.tls != nullptr && context == nullptr) {
        beast::error_code ignored;
        socket.close(ignored);  // never plain text on an HTTPS listener
      } else {
        std::make_shared<Session>(std::move(socket), std::move(context), state_)->Start();
      }
      return Accept();
    }
    // E.g. out of file descriptors: keep serving, without spinning.
    LOG_WARN("rest accept failed", "error", ec.message());
    retry_timer_.expires_after(std::chrono::milliseconds(100));
    retry_timer_.async_wait([self = shared_from_this()](beast::error_code ec) {
      if (!ec) self->Accept();
    });
  }

  net::io_context& ioc_;
  tcp::acceptor acceptor_;
  net::steady_timer retry_timer_;
  std::shared_ptr<ServerState> state_;
  TlsContextCache tls_;
  bool closed_ = false;
};

}  // namespace

class RestServer::Impl {
 public:
  explicit Impl(int threads) : ioc_(threads) {}

  absl::Status Start(const RestOptions& options, std::shared_ptr<grpc::Channel> channel) {
    RestOptions effective = options;
    if (effective.version.empty()) effective.version = REGATTA_VERSION;
    state_ = std::make_shared<ServerState>(effective, std::move(channel));

    beast::error_code ec;
    tcp::endpoint endpoint;
    const net::ip::address address = net::ip::make_address(options.host, ec);
    if (!ec) {
      endpoint = tcp::endpoint(address, static_cast<unsigned short>(options.port));
    } else {
      tcp::resolver resolver(ioc_);
      auto results = resolver.resolve(options.host, std::to_string(options.port), ec);
      if (ec || results.empty()) {
        return absl::InvalidArgumentError(absl::StrCat("cannot resolve REST listen host \"",
                                                       options.host,
                                                       "\": ", ec ? ec.message() : "no addresses"));
      }
      endpoint = results.begin()->endpoint();
    }
    const std::string where = absl::StrCat(options.host, ":", options.port);
    tcp::acceptor acceptor(net::make_strand(ioc_));
    if (acceptor.open(endpoint.protocol(), ec); ec) {
      return absl::UnavailableError(absl::StrCat("REST listen on ", where, ": ", ec.message()));
    }
    acceptor.set_option(net::socket_base::reuse_address(true), ec);
    if (acceptor.bind(endpoint, ec); ec) {
      return absl::UnavailableError(absl::StrCat("REST bind ", where, ": ", ec.message()));
    }
    if (acceptor.listen(net::socket_base::max_listen_connections, ec); ec) {
      return absl::UnavailableError(absl::StrCat("REST listen on ", where, ": ", ec.message()));
    }
    port_ = acceptor.local_endpoint().port();
    listener_ = std::make_shared<Listener>(ioc_, std::move(acceptor), state_);
    listener_->Start();

    work_.emplace(net::make_work_guard(ioc_));
    running_ = options.threads;
    for (int i = 0; i < options.threads; ++i) {
      threads_.emplace_back([this] { RunLoop(); });
    }
    return absl::OkStatus();
  }

  int port() const { return port_; }

  void Shutdown() {
    {
      absl::MutexLock lock(&mu_);
      if (shut_down_) return;
      shut_down_ = true;
    }
    if (!state_) return;
    if (listener_) listener_->Close();
    // Unblocks unary calls holding pool threads and ends every stream's Read.
    state_->gateway.tracker().CancelAll();
    for (const std::shared_ptr<Session>& session : state_->Stop()) session->PostClose();
    state_->JoinStreamThreads();
    work_.reset();
    // Closed sockets complete their operations at once; give that a moment, then stop anyway.
    {
      absl::MutexLock lock(&mu_);
      mu_.AwaitWithTimeout(absl::Condition(
                               +[](int* running) { return *running == 0; }, &running_),
                           absl::Seconds(2));
    }
    ioc_.stop();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
  }

 private:
  void RunLoop() {
    for (;;) {
      try {
        ioc_.run();
        break;
      } catch (const std::exception& e) {
        LOG_ERROR("rest handler threw", "error", e.what());
      }
    }
    absl::MutexLock lock(&mu_);
    --running_;
  }

  // Destroyed last, so handlers it still holds can release connections safely.
  net::io_context ioc_;
  std::shared_ptr<ServerState> state_;
  std::shared_ptr<Listener> listener_;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::vector<std::thread> threads_;
  int port_ = 0;
  absl::Mutex mu_;
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  int running_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::StatusOr<std::unique_ptr<RestServer>> RestServer::Start(
    const RestOptions& options, std::shared_ptr<grpc::Channel> channel) {
  if (channel == nullptr) return absl::InvalidArgumentError("REST server needs a gRPC channel");
  if (options.threads < 1 || options.threads > 256) {
    return absl::InvalidArgumentError(
        absl::StrCat("REST threads must be in [1, 256], got ", options.threads));
  }
  if (options.port < 0 || options.port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("REST port out of range: ", options.port));
  }
  if (options.max_body_bytes == 0 || options.max_header_bytes == 0) {
    return absl::InvalidArgumentError("REST body and header limits must be positive");
  }
  if (options.max_streams < 1) {
    return absl::InvalidArgumentError("REST max_streams must be positive");
  }
  if (options.log_buffer_bytes == 0) {
    return absl::InvalidArgumentError("REST log_buffer_bytes must be positive");
  }
  if (options.sse_keepalive <= absl::ZeroDuration() ||
      options.sse_header_delay < absl::ZeroDuration() ||
      options.call_timeout <= absl::ZeroDuration() ||
      options.idle_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("REST timeouts must be positive");
  }
  auto impl = std::make_unique<Impl>(options.threads);
  if (absl::Status status = impl->Start(options, std::move(channel)); !status.ok()) {
    impl->Shutdown();
    return status;
  }
  return std::unique_ptr<RestServer>(new RestServer(std::move(impl)));
}

RestServer::RestServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

RestServer::~RestServer() { Shutdown(); }

int RestServer::port() const { return impl_->port(); }

void RestServer::Shutdown() { impl_->Shutdown(); }

}  // namespace regatta::rest
