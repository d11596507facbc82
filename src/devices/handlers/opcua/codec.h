#ifndef REGATTA_SRC_DEVICES_HANDLERS_OPCUA_CODEC_H_
#define REGATTA_SRC_DEVICES_HANDLERS_OPCUA_CODEC_H_

// The few OPC UA Binary messages (OPC UA Part 6: UA TCP §7.1, secure conversation §6.7, binary
// encoding §5.2) that discovery needs, with SecurityPolicy None: HEL/ACK/ERR, OpenSecureChannel,
// FindServers and CloseSecureChannel. Both directions are encoded and decoded so the codec can be
// tested by round trips and a test can play the server.
//
// Every decoder checks each length against the bytes left, so truncated or hostile input is an
// error naming what was being read, never a crash or an allocation larger than the input.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace regatta::devices::opcua {

inline constexpr char kSecurityPolicyNone[] = "http://opcfoundation.org/UA/SecurityPolicy#None";

// Numeric ids (namespace 0) of the binary encodings used (Part 6 / NodeIds.csv).
inline constexpr uint32_t kServiceFaultEncoding = 397;
inline constexpr uint32_t kFindServersRequestEncoding = 422;
inline constexpr uint32_t kFindServersResponseEncoding = 425;
inline constexpr uint32_t kOpenSecureChannelRequestEncoding = 446;
inline constexpr uint32_t kOpenSecureChannelResponseEncoding = 449;
inline constexpr uint32_t kCloseSecureChannelRequestEncoding = 452;

// Every message chunk starts with this header: 3-byte type, 1-byte chunk type, uint32 size
// (the whole chunk, header included).
inline constexpr size_t kMessageHeaderSize = 8;
// A header announcing a larger chunk is refused before the chunk is read (the client bounds it
// further by the receive buffer size it announced in HEL).
inline constexpr uint32_t kMaxChunkSize = 16 * 1024 * 1024;

// DateTime: 100 ns ticks since 1601-01-01 UTC.
int64_t ToOpcUaDateTime(absl::Time time);
absl::Time FromOpcUaDateTime(int64_t ticks);

struct MessageHeader {
  std::string type;     // "HEL", "ACK", "ERR", "OPN", "MSG", "CLO" (others are an error)
  char chunk_type = 0;  // 'F' final, 'C' intermediate, 'A' abort
  uint32_t size = 0;    // of the whole chunk
};
// Reads the first kMessageHeaderSize bytes of `data`.
absl::StatusOr<MessageHeader> DecodeMessageHeader(absl::string_view data);

struct HelloMessage {
  uint32_t protocol_version = 0;
  uint32_t receive_buffer_size = 0;
  uint32_t send_buffer_size = 0;
  uint32_t max_message_size = 0;  // 0: no limit
  uint32_t max_chunk_count = 0;   // 0: no limit
  std::string endpoint_url;       // at most 4096 bytes
};
struct AcknowledgeMessage {
  uint32_t protocol_version = 0;
  uint32_t receive_buffer_size = 0;
  uint32_t send_buffer_size = 0;
  uint32_t max_message_size = 0;
  uint32_t max_chunk_count = 0;
};
struct ErrorMessage {
  uint32_t error = 0;  // a StatusCode
  std::string reason;
};

// Whole chunks, header included.
std::string EncodeHello(const HelloMessage& hello);
absl::StatusOr<HelloMessage> DecodeHello(absl::string_view chunk);
std::string EncodeAcknowledge(const AcknowledgeMessage& ack);
absl::StatusOr<AcknowledgeMessage> DecodeAcknowledge(absl::string_view chunk);
std::string EncodeError(const ErrorMessage& error);
absl::StatusOr<ErrorMessage> DecodeError(absl::string_view chunk);

// What frames one request or response chunk on a secure channel.
struct ChunkFrame {
  char chunk_type = 'F';
  uint32_t secure_channel_id = 0;
  uint32_t token_id = 0;  // MSG and CLO (symmetric header); OPN has the policy URI instead
  uint32_t sequence_number = 0;
  uint32_t request_id = 0;
};

struct RequestHeader {
  int64_t timestamp = 0;  // OPC UA DateTime
  uint32_t request_handle = 0;
  uint32_t timeout_hint_ms = 0;
};
struct ResponseHeader {
  int64_t timestamp = 0;
  uint32_t request_handle = 0;
  uint32_t service_result = 0;  // StatusCode; 0 is Good
};

struct OpenSecureChannelRequest {
  ChunkFrame frame;  // token_id unused
  RequestHeader header;
  uint32_t client_protocol_version = 0;
  uint32_t request_type = 0;   // 0 Issue, 1 Renew
  uint32_t security_mode = 1;  // MessageSecurityMode None
  uint32_t requested_lifetime_ms = 0;
};
struct OpenSecureChannelResponse {
  ChunkFrame frame;  // token_id unused
  std::string security_policy_uri;
  ResponseHeader header;
  uint32_t server_protocol_version = 0;
  uint32_t channel_id = 0;  // of the security token
  uint32_t token_id = 0;
  int64_t created_at = 0;
  uint32_t revised_lifetime_ms = 0;
};
std::string EncodeOpenSecureChannelRequest(const OpenSecureChannelRequest& request);
absl::StatusOr<OpenSecureChannelRequest> DecodeOpenSecureChannelRequest(absl::string_view chunk);
// A ServiceFault in place of the response decodes as an error carrying its StatusCode.
std::string EncodeOpenSecureChannelResponse(const OpenSecureChannelResponse& response);
absl::StatusOr<OpenSecureChannelResponse> DecodeOpenSecureChannelResponse(absl::string_view chunk);

struct CloseSecureChannelRequest {
  ChunkFrame frame;
  RequestHeader header;
};
std::string EncodeCloseSecureChannelRequest(const CloseSecureChannelRequest& request);
absl::StatusOr<CloseSecureChannelRequest> DecodeCloseSecureChannelRequest(absl::string_view chunk);

// A MSG chunk: its frame and its part of the message body.
struct MessageChunk {
  ChunkFrame frame;
  std::string body;
};
std::string EncodeMessageChunk(const MessageChunk& chunk);
absl::StatusOr<MessageChunk> DecodeMessageChunk(absl::string_view chunk);

enum class ApplicationType : uint32_t {
  kServer = 0,
  kClient = 1,
  kClientAndServer = 2,
  kDiscoveryServer = 3,
};

struct LocalizedText {
  std::string locale;
  std::string text;
};

struct ApplicationDescription {
  std::string application_uri;
  std::string product_uri;
  LocalizedText application_name;
  uint32_t application_type = 0;  // ApplicationType (kept raw: unknown values are not an error)
  std::string gateway_server_uri;
  std::string discovery_profile_uri;
  std::vector<std::string> discovery_urls;
};

struct FindServersRequest {
  RequestHeader header;
  std::string endpoint_url;
  std::vector<std::string> locale_ids;
  std::vector<std::string> server_uris;
};
struct FindServersResponse {
  ResponseHeader header;
  std::vector<ApplicationDescription> servers;
};
// Message bodies (the type id and the structure), to travel in MessageChunks.
std::string EncodeFindServersRequest(const FindServersRequest& request);
absl::StatusOr<FindServersRequest> DecodeFindServersRequest(absl::string_view body);
std::string EncodeFindServersResponse(const FindServersResponse& response);
// A ServiceFault, or a response whose service result is Bad, decodes as an error with its code.
absl::StatusOr<FindServersResponse> DecodeFindServersResponse(absl::string_view body);
std::string EncodeServiceFault(const ResponseHeader& header);

// "BadTimeout (0x800A0000)" for the codes discovery meets, else the hex value.
std::string StatusCodeName(uint32_t code);

}  // namespace regatta::devices::opcua

#endif  // REGATTA_SRC_DEVICES_HANDLERS_OPCUA_CODEC_H_
