#include "src/devices/handlers/opcua/codec.h"

#include <cstring>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/common/status_macros.h"

namespace regatta::devices::opcua {
namespace {

// Ticks between 1601-01-01 and 1970-01-01.
constexpr int64_t kUnixEpochTicks = 116444736000000000LL;
// DiagnosticInfo nests; the spec leaves the depth open, a hostile peer must not.
constexpr int kMaxDiagnosticDepth = 16;
constexpr uint32_t kMaxEndpointUrlLength = 4096;

// Appends little-endian OPC UA Binary values.
class Writer {
 public:
  void U8(uint8_t v) { out_.push_back(static_cast<char>(v)); }
  void U16(uint16_t v) {
    for (int i = 0; i < 2; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void U32(uint32_t v) {
    for (int i = 0; i < 4; ++i) U8(static_cast<uint8_t>(v >> (8 * i)));
  }
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void I64(int64_t v) {
    const auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < 8; ++i) U8(static_cast<uint8_t>(u >> (8 * i)));
  }
  void Bytes(absl::string_view s) { out_.append(s.data(), s.size()); }
  void String(absl::string_view s) {
    I32(static_cast<int32_t>(s.size()));
    Bytes(s);
  }
  void NullString() { I32(-1); }
  void StringArray(const std::vector<std::string>& items) {
    I32(static_cast<int32_t>(items.size()));
    for (const std::string& item : items) String(item);
  }
  // The smallest of the numeric NodeId encodings that holds (namespace, id).
  void NumericNodeId(uint16_t ns, uint32_t id) {
    if (ns == 0 && id <= 0xFF) {
      U8(0x00);
      U8(static_cast<uint8_t>(id));
    } else if (ns <= 0xFF && id <= 0xFFFF) {
      U8(0x01);
      U8(static_cast<uint8_t>(ns));
      U16(static_cast<uint16_t>(id));
    } else {
      U8(0x02);
      U16(ns);
      U32(id);
    }
  }
  void NullNodeId() { NumericNodeId(0, 0); }
  void EmptyExtensionObject() {
    NullNodeId();
    U8(0x00);  // no body
  }
  void RequestHeader(const opcua::RequestHeader& h) {
    NullNodeId();  // authenticationToken: no session
    I64(h.timestamp);
    U32(h.request_handle);
    U32(0);        // returnDiagnostics
    NullString();  // auditEntryId
    U32(h.timeout_hint_ms);
    EmptyExtensionObject();  // additionalHeader
  }
  void ResponseHeader(const opcua::ResponseHeader& h) {
    I64(h.timestamp);
    U32(h.request_handle);
    U32(h.service_result);
    U8(0x00);  // serviceDiagnostics: empty DiagnosticInfo
    I32(0);    // stringTable
    EmptyExtensionObject();
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

// A chunk: 8-byte header whose size covers the whole chunk, then `payload`.
std::string Chunk(absl::string_view type, char chunk_type, absl::string_view payload) {
  Writer w;
  w.Bytes(type);
  w.U8(static_cast<uint8_t>(chunk_type));
  w.U32(static_cast<uint32_t>(kMessageHeaderSize + payload.size()));
  w.Bytes(payload);
  return w.Take();
}

// Reads OPC UA Binary values, checking every length against what is left.
class Reader {
 public:
  explicit Reader(absl::string_view data) : data_(data) {}

  size_t remaining() const { return data_.size() - pos_; }
  size_t position() const { return pos_; }

  absl::Status Need(size_t n, absl::string_view what) const {
    if (n <= remaining()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrCat(
        "truncated ", what, " at byte ", pos_, ": needs ", n, " bytes, ", remaining(), " left"));
  }
  absl::Status Skip(size_t n, absl::string_view what) {
    RETURN_IF_ERROR(Need(n, what));
    pos_ += n;
    return absl::OkStatus();
  }
  absl::Status U8(uint8_t* v, absl::string_view what) {
    RETURN_IF_ERROR(Need(1, what));
    *v = static_cast<uint8_t>(data_[pos_++]);
    return absl::OkStatus();
  }
  absl::Status U16(uint16_t* v, absl::string_view what) {
    uint64_t u = 0;
    RETURN_IF_ERROR(Little(2, &u, what));
    *v = static_cast<uint16_t>(u);
    return absl::OkStatus();
  }
  absl::Status U32(uint32_t* v, absl::string_view what) {
    uint64_t u = 0;
    RETURN_IF_ERROR(Little(4, &u, what));
    *v = static_cast<uint32_t>(u);
    return absl::OkStatus();
  }
  absl::Status I32(int32_t* v, absl::string_view what) {
    uint32_t u = 0;
    RETURN_IF_ERROR(U32(&u, what));
    *v = static_cast<int32_t>(u);
    return absl::OkStatus();
  }
  absl::Status I64(int64_t* v, absl::string_view what) {
    uint64_t u = 0;
    RETURN_IF_ERROR(Little(8, &u, what));
    *v = static_cast<int64_t>(u);
    return absl::OkStatus();
  }
  absl::Status Bytes(size_t n, std::string* out, absl::string_view what) {
    RETURN_IF_ERROR(Need(n, what));
    out->assign(data_.data() + pos_, n);
    pos_ += n;
    return absl::OkStatus();
  }
  // String and ByteString: int32 length, -1 for null (read as empty).
  absl::Status String(std::string* out, absl::string_view what) {
    int32_t length = 0;
    RETURN_IF_ERROR(I32(&length, what));
    if (length == -1) {
      out->clear();
      return absl::OkStatus();
    }
    if (length < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad ", what, " at byte ", pos_ - 4, ": negative length ", length));
    }
    return Bytes(static_cast<size_t>(length), out, what);
  }
  absl::Status SkipString(absl::string_view what) {
    std::string ignored;
    return String(&ignored, what);
  }
  // An array length: -1 (null) reads as 0; each element takes at least `min_element_size`
  // bytes, so a count the rest of the input cannot hold is refused before allocating.
  absl::Status ArrayLength(size_t min_element_size, size_t* count, absl::string_view what) {
    int32_t length = 0;
    RETURN_IF_ERROR(I32(&length, what));
    if (length == -1) {
      *count = 0;
      return absl::OkStatus();
    }
    if (length < -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad ", what, " at byte ", pos_ - 4, ": negative length ", length));
    }
    if (static_cast<uint64_t>(length) * min_element_size > remaining()) {
      return absl::InvalidArgumentError(absl::StrCat("bad ", what, " at byte ", pos_ - 4, ": ",
                                                     length, " elements cannot fit in the ",
                                                     remaining(), " bytes left"));
    }
    *count = static_cast<size_t>(length);
    return absl::OkStatus();
  }
  absl::Status StringArray(std::vector<std::string>* out, absl::string_view what) {
    size_t count = 0;
    RETURN_IF_ERROR(ArrayLength(4, &count, what));
    out->clear();
    out->reserve(count);
    for (size_t i = 0; i < count; ++i) {
      RETURN_IF_ERROR(String(&out->emplace_back(), absl::StrCat(what, "[", i, "]")));
    }
    return absl::OkStatus();
  }
  // A NodeId (or ExpandedNodeId: the namespace URI and server index flags are read and dropped).
  // Non-numeric identifiers are skipped and reported as `numeric` = false.
  absl::Status NodeId(uint16_t* ns, uint32_t* id, bool* numeric, absl::string_view what) {
    uint8_t encoding = 0;
    RETURN_IF_ERROR(U8(&encoding, what));
    *ns = 0;
    *id = 0;
    *numeric = true;
    switch (encoding & 0x3F) {
      case 0x00: {  // two-byte
        uint8_t small = 0;
        RETURN_IF_ERROR(U8(&small, what));
        *id = small;
        break;
      }
      case 0x01: {  // four-byte
        uint8_t small_ns = 0;
        uint16_t small_id = 0;
        RETURN_IF_ERROR(U8(&small_ns, what));
        RETURN_IF_ERROR(U16(&small_id, what));
        *ns = small_ns;
        *id = small_id;
        break;
      }
      case 0x02:  // numeric
        RETURN_IF_ERROR(U16(ns, what));
        RETURN_IF_ERROR(U32(id, what));
        break;
      case 0x03:  // string
      case 0x05:  // opaque (ByteString)
        RETURN_IF_ERROR(U16(ns, what));
        RETURN_IF_ERROR(SkipString(what));
        *numeric = false;
        break;
      case 0x04:  // guid
        RETURN_IF_ERROR(U16(ns, what));
        RETURN_IF_ERROR(Skip(16, what));
        *numeric = false;
        break;
      default:
        return absl::InvalidArgumentError(absl::StrFormat(
            "bad %s at byte %d: unknown NodeId encoding 0x%02x", what, pos_ - 1, encoding));
    }
    if (encoding & 0x80) RETURN_IF_ERROR(SkipString(what));  // namespace URI
    if (encoding & 0x40) RETURN_IF_ERROR(Skip(4, what));     // server index
    return absl::OkStatus();
  }
  absl::Status SkipNodeId(absl::string_view what) {
    uint16_t ns = 0;
    uint32_t id = 0;
    bool numeric = false;
    return NodeId(&ns, &id, &numeric, what);
  }
  absl::Status SkipExtensionObject(absl::string_view what) {
    RETURN_IF_ERROR(SkipNodeId(what));
    uint8_t encoding = 0;
    RETURN_IF_ERROR(U8(&encoding, what));
    if (encoding == 0x00) return absl::OkStatus();
    if (encoding == 0x01 || encoding == 0x02) return SkipString(what);
    return absl::InvalidArgumentError(absl::StrFormat(
        "bad %s at byte %d: unknown ExtensionObject encoding 0x%02x", what, pos_ - 1, encoding));
  }
  absl::Status SkipDiagnosticInfo(absl::string_view what, int depth = 0) {
    if (depth > kMaxDiagnosticDepth) {
      return absl::InvalidArgumentError(
          absl::StrCat("bad ", what, ": diagnostic info nested deeper than ", kMaxDiagnosticDepth));
    }
    uint8_t mask = 0;
    RETURN_IF_ERROR(U8(&mask, what));
    // symbolicId, namespaceUri, localizedText, locale: int32 indexes into the string table.
    for (uint8_t bit : {0x01, 0x02, 0x04, 0x08}) {
      if (mask & bit) RETURN_IF_ERROR(Skip(4, what));
    }
    if (mask & 0x10) RETURN_IF_ERROR(SkipString(what));  // additionalInfo
    if (mask & 0x20) RETURN_IF_ERROR(Skip(4, what));     // innerStatusCode
    if (mask & 0x40) return SkipDiagnosticInfo(what, depth + 1);
    return absl::OkStatus();
  }
  absl::Status LocalizedText(opcua::LocalizedText* out, absl::string_view what) {
    uint8_t mask = 0;
    RETURN_IF_ERROR(U8(&mask, what));
    if (mask & 0x01) RETURN_IF_ERROR(String(&out->locale, what));
    if (mask & 0x02) RETURN_IF_ERROR(String(&out->text, what));
    return absl::OkStatus();
  }
  absl::Status RequestHeader(opcua::RequestHeader* h) {
    RETURN_IF_ERROR(SkipNodeId("RequestHeader.authenticationToken"));
    RETURN_IF_ERROR(I64(&h->timestamp, "RequestHeader.timestamp"));
    RETURN_IF_ERROR(U32(&h->request_handle, "RequestHeader.requestHandle"));
    RETURN_IF_ERROR(Skip(4, "RequestHeader.returnDiagnostics"));
    RETURN_IF_ERROR(SkipString("RequestHeader.auditEntryId"));
    RETURN_IF_ERROR(U32(&h->timeout_hint_ms, "RequestHeader.timeoutHint"));
    return SkipExtensionObject("RequestHeader.additionalHeader");
  }
  absl::Status ResponseHeader(opcua::ResponseHeader* h) {
    RETURN_IF_ERROR(I64(&h->timestamp, "ResponseHeader.timestamp"));
    RETURN_IF_ERROR(U32(&h->request_handle, "ResponseHeader.requestHandle"));
    RETURN_IF_ERROR(U32(&h->service_result, "ResponseHeader.serviceResult"));
    RETURN_IF_ERROR(SkipDiagnosticInfo("ResponseHeader.serviceDiagnostics"));
    size_t count = 0;
    RETURN_IF_ERROR(ArrayLength(4, &count, "ResponseHeader.stringTable"));
    for (size_t i = 0; i < count; ++i) RETURN_IF_ERROR(SkipString("ResponseHeader.stringTable"));
    return SkipExtensionObject("ResponseHeader.additionalHeader");
  }

 private:
  absl::Status Little(int n, uint64_t* v, absl::string_view what) {
    RETURN_IF_ERROR(Need(static_cast<size_t>(n), what));
    uint64_t u = 0;
    for (int i = 0; i < n; ++i) {
      u |= static_cast<uint64_t>(static_cast<uint8_t>(data_[pos_ + i])) << (8 * i);
    }
    pos_ += n;
    *v = u;
    return absl::OkStatus();
  }

  absl::string_view data_;
  size_t pos_ = 0;
};

// Checks the chunk's header (type, and that its size is the chunk's length) and returns a
// reader positioned after it.
absl::StatusOr<Reader> OpenChunk(absl::string_view chunk, absl::string_view type,
                                 MessageHeader* header = nullptr) {
  ASSIGN_OR_RETURN(MessageHeader h, DecodeMessageHeader(chunk));
  if (h.type != type) {
    return absl::InvalidArgumentError(absl::StrCat("expected a ", type, " message, got ", h.type));
  }
  if (h.size != chunk.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(type, " header announces ", h.size, " bytes, the chunk has ", chunk.size()));
  }
  if (header != nullptr) *header = h;
  Reader reader(chunk);
  RETURN_IF_ERROR(reader.Skip(kMessageHeaderSize, "message header"));
  return reader;
}

// The type id that starts a message body: namespace 0, numeric.
absl::Status ReadTypeId(Reader& r, uint32_t* id) {
  uint16_t ns = 0;
  bool numeric = false;
  RETURN_IF_ERROR(r.NodeId(&ns, id, &numeric, "message type id"));
  if (ns != 0 || !numeric) {
    return absl::InvalidArgumentError("message type id: not a namespace-0 numeric NodeId");
  }
  return absl::OkStatus();
}

absl::Status ServiceError(absl::string_view what, uint32_t code) {
  return absl::UnavailableError(absl::StrCat(what, " failed: ", StatusCodeName(code)));
}

// A response body: the expected type id, or a ServiceFault, which becomes an error.
absl::Status ReadResponseStart(Reader& r, uint32_t expected, absl::string_view service,
                               opcua::ResponseHeader* header) {
  uint32_t type_id = 0;
  RETURN_IF_ERROR(ReadTypeId(r, &type_id));
  if (type_id == kServiceFaultEncoding) {
    RETURN_IF_ERROR(r.ResponseHeader(header));
    return ServiceError(service, header->service_result);
  }
  if (type_id != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat(service, ": unexpected response type i=", type_id, ", wanted i=", expected));
  }
  RETURN_IF_ERROR(r.ResponseHeader(header));
  if (header->service_result & 0x80000000u) {
    return ServiceError(service, header->service_result);
  }
  return absl::OkStatus();
}

// A request body: the expected type id, then the request header.
absl::Status ReadRequestStart(Reader& r, uint32_t expected, absl::string_view request,
                              opcua::RequestHeader* header) {
  uint32_t type_id = 0;
  RETURN_IF_ERROR(ReadTypeId(r, &type_id));
  if (type_id != expected) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a ", request, " (type id i=", type_id, ", wanted i=", expected, ")"));
  }
  return r.RequestHeader(header);
}

void WriteSequenceHeader(Writer& w, const ChunkFrame& frame) {
  w.U32(frame.sequence_number);
  w.U32(frame.request_id);
}

absl::Status ReadSequenceHeader(Reader& r, ChunkFrame* frame) {
  RETURN_IF_ERROR(r.U32(&frame->sequence_number, "sequence header"));
  return r.U32(&frame->request_id, "sequence header");
}

// OPN chunks: asymmetric security header with policy None and no certificates.
std::string OpnChunk(const ChunkFrame& frame, absl::string_view policy, absl::string_view body) {
  Writer w;
  w.U32(frame.secure_channel_id);
  w.String(policy);
  w.NullString();  // senderCertificate
  w.NullString();  // receiverCertificateThumbprint
  WriteSequenceHeader(w, frame);
  w.Bytes(body);
  return Chunk("OPN", frame.chunk_type, w.Take());
}

absl::Status ReadOpnFrame(absl::string_view chunk, Reader* reader, ChunkFrame* frame,
                          std::string* policy) {
  MessageHeader header;
  ASSIGN_OR_RETURN(*reader, OpenChunk(chunk, "OPN", &header));
  frame->chunk_type = header.chunk_type;
  RETURN_IF_ERROR(reader->U32(&frame->secure_channel_id, "OPN secureChannelId"));
  RETURN_IF_ERROR(reader->String(policy, "OPN securityPolicyUri"));
  RETURN_IF_ERROR(reader->SkipString("OPN senderCertificate"));
  RETURN_IF_ERROR(reader->SkipString("OPN receiverCertificateThumbprint"));
  if (*policy != kSecurityPolicyNone) {
    return absl::InvalidArgumentError(absl::StrCat(
        "OPN securityPolicyUri: only SecurityPolicy None is supported, got '", *policy, "'"));
  }
  return ReadSequenceHeader(*reader, frame);
}

// MSG and CLO chunks: symmetric security header (the token id).
std::string SymmetricChunk(absl::string_view type, const ChunkFrame& frame,
                           absl::string_view body) {
  Writer w;
  w.U32(frame.secure_channel_id);
  w.U32(frame.token_id);
  WriteSequenceHeader(w, frame);
  w.Bytes(body);
  return Chunk(type, frame.chunk_type, w.Take());
}

absl::Status ReadSymmetricFrame(absl::string_view chunk, absl::string_view type, Reader* reader,
                                ChunkFrame* frame) {
  MessageHeader header;
  ASSIGN_OR_RETURN(*reader, OpenChunk(chunk, type, &header));
  frame->chunk_type = header.chunk_type;
  RETURN_IF_ERROR(reader->U32(&frame->secure_channel_id, absl::StrCat(type, " secureChannelId")));
  RETURN_IF_ERROR(reader->U32(&frame->token_id, absl::StrCat(type, " tokenId")));
  return ReadSequenceHeader(*reader, frame);
}

// HEL and ACK start with the same five fields: version and buffer limits.
template <typename Message>
void WriteLimits(Writer& w, const Message& m) {
  w.U32(m.protocol_version);
  w.U32(m.receive_buffer_size);
  w.U32(m.send_buffer_size);
  w.U32(m.max_message_size);
  w.U32(m.max_chunk_count);
}

template <typename Message>
absl::Status ReadLimits(Reader& r, Message* m, absl::string_view type) {
  RETURN_IF_ERROR(r.U32(&m->protocol_version, absl::StrCat(type, " protocolVersion")));
  RETURN_IF_ERROR(r.U32(&m->receive_buffer_size, absl::StrCat(type, " receiveBufferSize")));
  RETURN_IF_ERROR(r.U32(&m->send_buffer_size, absl::StrCat(type, " sendBufferSize")));
  RETURN_IF_ERROR(r.U32(&m->max_message_size, absl::StrCat(type, " maxMessageSize")));
  return r.U32(&m->max_chunk_count, absl::StrCat(type, " maxChunkCount"));
}

}  // namespace

int64_t ToOpcUaDateTime(absl::Time time) { return absl::ToUnixNanos(time) / 100 + kUnixEpochTicks; }

absl::Time FromOpcUaDateTime(int64_t ticks) {
  return absl::FromUnixNanos((ticks - kUnixEpochTicks) * 100);
}

absl::StatusOr<MessageHeader> DecodeMessageHeader(absl::string_view data) {
  if (data.size() < kMessageHeaderSize) {
    return absl::InvalidArgumentError(absl::StrCat("truncated message header: ", data.size(),
                                                   " of ", kMessageHeaderSize, " bytes"));
  }
  MessageHeader header;
  header.type = std::string(data.substr(0, 3));
  header.chunk_type = data[3];
  Reader r(data.substr(4, 4));
  RETURN_IF_ERROR(r.U32(&header.size, "message size"));
  const bool transport = header.type == "HEL" || header.type == "ACK" || header.type == "ERR";
  const bool secure = header.type == "OPN" || header.type == "MSG" || header.type == "CLO";
  if (!transport && !secure) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown message type '", absl::CHexEscape(header.type), "'"));
  }
  const bool chunk_ok = header.chunk_type == 'F' ||
                        (secure && (header.chunk_type == 'C' || header.chunk_type == 'A'));
  if (!chunk_ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bad chunk type '", absl::CHexEscape(data.substr(3, 1)), "' for ", header.type));
  }
  if (header.size < kMessageHeaderSize || header.size > kMaxChunkSize) {
    return absl::InvalidArgumentError(absl::StrCat("bad message size ", header.size, " for ",
                                                   header.type, " (8 to ", kMaxChunkSize, ")"));
  }
  return header;
}

std::string EncodeHello(const HelloMessage& hello) {
  Writer w;
  WriteLimits(w, hello);
  w.String(hello.endpoint_url);
  return Chunk("HEL", 'F', w.Take());
}

absl::StatusOr<HelloMessage> DecodeHello(absl::string_view chunk) {
  ASSIGN_OR_RETURN(Reader r, OpenChunk(chunk, "HEL"));
  HelloMessage hello;
  RETURN_IF_ERROR(ReadLimits(r, &hello, "HEL"));
  RETURN_IF_ERROR(r.String(&hello.endpoint_url, "HEL endpointUrl"));
  if (hello.endpoint_url.size() > kMaxEndpointUrlLength) {
    return absl::InvalidArgumentError("HEL endpointUrl: longer than 4096 bytes");
  }
  return hello;
}

std::string EncodeAcknowledge(const AcknowledgeMessage& ack) {
  Writer w;
  WriteLimits(w, ack);
  return Chunk("ACK", 'F', w.Take());
}

absl::StatusOr<AcknowledgeMessage> DecodeAcknowledge(absl::string_view chunk) {
  ASSIGN_OR_RETURN(Reader r, OpenChunk(chunk, "ACK"));
  AcknowledgeMessage ack;
  RETURN_IF_ERROR(ReadLimits(r, &ack, "ACK"));
  return ack;
}

std::string EncodeError(const ErrorMessage& error) {
  Writer w;
  w.U32(error.error);
  w.String(error.reason);
  return Chunk("ERR", 'F', w.Take());
}

absl::StatusOr<ErrorMessage> DecodeError(absl::string_view chunk) {
  ASSIGN_OR_RETURN(Reader r, OpenChunk(chunk, "ERR"));
  ErrorMessage error;
  RETURN_IF_ERROR(r.U32(&error.error, "ERR error"));
  RETURN_IF_ERROR(r.String(&error.reason, "ERR reason"));
  return error;
}

std::string EncodeOpenSecureChannelRequest(const OpenSecureChannelRequest& request) {
  Writer w;
  w.NumericNodeId(0, kOpenSecureChannelRequestEncoding);
  w.RequestHeader(request.header);
  w.U32(request.client_protocol_version);
  w.U32(request.request_type);
  w.U32(request.security_mode);
  w.NullString();  // clientNonce
  w.U32(request.requested_lifetime_ms);
  return OpnChunk(request.frame, kSecurityPolicyNone, w.Take());
}

absl::StatusOr<OpenSecureChannelRequest> DecodeOpenSecureChannelRequest(absl::string_view chunk) {
  OpenSecureChannelRequest request;
  Reader r(chunk);
  std::string policy;
  RETURN_IF_ERROR(ReadOpnFrame(chunk, &r, &request.frame, &policy));
  RETURN_IF_ERROR(ReadRequestStart(r, kOpenSecureChannelRequestEncoding, "OpenSecureChannelRequest",
                                   &request.header));
  RETURN_IF_ERROR(r.U32(&request.client_protocol_version, "clientProtocolVersion"));
  RETURN_IF_ERROR(r.U32(&request.request_type, "requestType"));
  RETURN_IF_ERROR(r.U32(&request.security_mode, "securityMode"));
  RETURN_IF_ERROR(r.SkipString("clientNonce"));
  RETURN_IF_ERROR(r.U32(&request.requested_lifetime_ms, "requestedLifetime"));
  return request;
}

std::string EncodeOpenSecureChannelResponse(const OpenSecureChannelResponse& response) {
  Writer w;
  w.NumericNodeId(0, kOpenSecureChannelResponseEncoding);
  w.ResponseHeader(response.header);
  w.U32(response.server_protocol_version);
  w.U32(response.channel_id);
  w.U32(response.token_id);
  w.I64(response.created_at);
  w.U32(response.revised_lifetime_ms);
  w.NullString();  // serverNonce
  return OpnChunk(
      response.frame,
      response.security_policy_uri.empty() ? kSecurityPolicyNone : response.security_policy_uri,
      w.Take());
}

absl::StatusOr<OpenSecureChannelResponse> DecodeOpenSecureChannelResponse(absl::string_view chunk) {
  OpenSecureChannelResponse response;
  Reader r(chunk);
  RETURN_IF_ERROR(ReadOpnFrame(chunk, &r, &response.frame, &response.security_policy_uri));
  RETURN_IF_ERROR(ReadResponseStart(r, kOpenSecureChannelResponseEncoding, "OpenSecureChannel",
                                    &response.header));
  RETURN_IF_ERROR(r.U32(&response.server_protocol_version, "serverProtocolVersion"));
  RETURN_IF_ERROR(r.U32(&response.channel_id, "securityToken.channelId"));
  RETURN_IF_ERROR(r.U32(&response.token_id, "securityToken.tokenId"));
  RETURN_IF_ERROR(r.I64(&response.created_at, "securityToken.createdAt"));
  RETURN_IF_ERROR(r.U32(&response.revised_lifetime_ms, "securityToken.revisedLifetime"));
  RETURN_IF_ERROR(r.SkipString("serverNonce"));
  return response;
}

std::string EncodeCloseSecureChannelRequest(const CloseSecureChannelRequest& request) {
  Writer w;
  w.NumericNodeId(0, kCloseSecureChannelRequestEncoding);
  w.RequestHeader(request.header);
  return SymmetricChunk("CLO", request.frame, w.Take());
}

absl::StatusOr<CloseSecureChannelRequest> DecodeCloseSecureChannelRequest(absl::string_view chunk) {
  CloseSecureChannelRequest request;
  Reader r(chunk);
  RETURN_IF_ERROR(ReadSymmetricFrame(chunk, "CLO", &r, &request.frame));
  RETURN_IF_ERROR(ReadRequestStart(r, kCloseSecureChannelRequestEncoding,
                                   "CloseSecureChannelRequest", &request.header));
  return request;
}

std::string EncodeMessageChunk(const MessageChunk& chunk) {
  return SymmetricChunk("MSG", chunk.frame, chunk.body);
}

absl::StatusOr<MessageChunk> DecodeMessageChunk(absl::string_view chunk) {
  MessageChunk out;
  Reader r(chunk);
  RETURN_IF_ERROR(ReadSymmetricFrame(chunk, "MSG", &r, &out.frame));
  RETURN_IF_ERROR(r.Bytes(r.remaining(), &out.body, "MSG body"));
  return out;
}

std::string EncodeFindServersRequest(const FindServersRequest& request) {
  Writer w;
  w.NumericNodeId(0, kFindServersRequestEncoding);
  w.RequestHeader(request.header);
  w.String(request.endpoint_url);
  w.StringArray(request.locale_ids);
  w.StringArray(request.server_uris);
  return w.Take();
}

absl::StatusOr<FindServersRequest> DecodeFindServersRequest(absl::string_view body) {
  Reader r(body);
  FindServersRequest request;
  RETURN_IF_ERROR(
      ReadRequestStart(r, kFindServersRequestEncoding, "FindServersRequest", &request.header));
  RETURN_IF_ERROR(r.String(&request.endpoint_url, "FindServersRequest.endpointUrl"));
  RETURN_IF_ERROR(r.StringArray(&request.locale_ids, "FindServersRequest.localeIds"));
  RETURN_IF_ERROR(r.StringArray(&request.server_uris, "FindServersRequest.serverUris"));
  return request;
}

std::string EncodeFindServersResponse(const FindServersResponse& response) {
  Writer w;
  w.NumericNodeId(0, kFindServersResponseEncoding);
  w.ResponseHeader(response.header);
  w.I32(static_cast<int32_t>(response.servers.size()));
  for (const ApplicationDescription& server : response.servers) {
    w.String(server.application_uri);
    w.String(server.product_uri);
    uint8_t mask = (server.application_name.locale.empty() ? 0 : 0x01) |
                   (server.application_name.text.empty() ? 0 : 0x02);
    w.U8(mask);
    if (mask & 0x01) w.String(server.application_name.locale);
    if (mask & 0x02) w.String(server.application_name.text);
    w.U32(server.application_type);
    w.String(server.gateway_server_uri);
    w.String(server.discovery_profile_uri);
    w.StringArray(server.discovery_urls);
  }
  return w.Take();
}

absl::StatusOr<FindServersResponse> DecodeFindServersResponse(absl::string_view body) {
  Reader r(body);
  FindServersResponse response;
  RETURN_IF_ERROR(
      ReadResponseStart(r, kFindServersResponseEncoding, "FindServers", &response.header));
  size_t count = 0;
  // The smallest ApplicationDescription: five null strings, an empty text and the type.
  RETURN_IF_ERROR(r.ArrayLength(4 * 6 + 1, &count, "FindServersResponse.servers"));
  for (size_t i = 0; i < count; ++i) {
    ApplicationDescription& server = response.servers.emplace_back();
    const std::string at = absl::StrCat("servers[", i, "].");
    RETURN_IF_ERROR(r.String(&server.application_uri, at + "applicationUri"));
    RETURN_IF_ERROR(r.String(&server.product_uri, at + "productUri"));
    RETURN_IF_ERROR(r.LocalizedText(&server.application_name, at + "applicationName"));
    RETURN_IF_ERROR(r.U32(&server.application_type, at + "applicationType"));
    RETURN_IF_ERROR(r.String(&server.gateway_server_uri, at + "gatewayServerUri"));
    RETURN_IF_ERROR(r.String(&server.discovery_profile_uri, at + "discoveryProfileUri"));
    RETURN_IF_ERROR(r.StringArray(&server.discovery_urls, at + "discoveryUrls"));
  }
  return response;
}

std::string EncodeServiceFault(const ResponseHeader& header) {
  Writer w;
  w.NumericNodeId(0, kServiceFaultEncoding);
  w.ResponseHeader(header);
  return w.Take();
}

std::string StatusCodeName(uint32_t code) {
  static constexpr std::pair<uint32_t, const char*> kNames[] = {
      {0x00000000, "Good"},
      {0x80010000, "BadUnexpectedError"},
      {0x80020000, "BadInternalError"},
      {0x80050000, "BadCommunicationError"},
      {0x80060000, "BadEncodingError"},
      {0x80070000, "BadDecodingError"},
      {0x800A0000, "BadTimeout"},
      {0x800B0000, "BadServiceUnsupported"},
      {0x800C0000, "BadShutdown"},
      {0x800E0000, "BadServerHalted"},
      {0x80100000, "BadTooManyOperations"},
      {0x807D0000, "BadTcpServerTooBusy"},
      {0x807E0000, "BadTcpMessageTypeInvalid"},
      {0x807F0000, "BadTcpSecureChannelUnknown"},
      {0x80800000, "BadTcpMessageTooLarge"},
      {0x80810000, "BadTcpNotEnoughResources"},
      {0x80820000, "BadTcpInternalError"},
      {0x80830000, "BadTcpEndpointUrlInvalid"},
      {0x80850000, "BadRequestTimeout"},
      {0x80860000, "BadSecureChannelClosed"},
      {0x80BE0000, "BadProtocolVersionUnsupported"},
  };
  for (const auto& [value, name] : kNames) {
    if (value == code) return absl::StrFormat("%s (0x%08X)", name, code);
  }
  return absl::StrFormat("0x%08X", code);
}

}  // namespace regatta::devices::opcua
