// Byte vectors written out by hand from OPC UA Part 6 (§5.2 binary encoding, §6.7 secure
// conversation, §7.1 UA TCP), round trips, and truncated or garbage input.

#include "src/devices/handlers/opcua/codec.h"

#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::devices::opcua {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string Bytes(std::initializer_list<int> bytes) {
  std::string out;
  for (int b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

// An int32-length-prefixed string, as Part 6 §5.2.2.4 encodes it.
std::string Str(const std::string& s) {
  const auto n = static_cast<uint32_t>(s.size());
  return Bytes({static_cast<int>(n & 0xFF), static_cast<int>((n >> 8) & 0xFF),
                static_cast<int>((n >> 16) & 0xFF), static_cast<int>(n >> 24)}) +
         s;
}
const std::string kNull = Bytes({0xFF, 0xFF, 0xFF, 0xFF});
const std::string kUrl = "opc.tcp://a:1";

TEST(OpcuaDateTimeTest, CountsHundredNanosecondTicksSince1601) {
  EXPECT_EQ(ToOpcUaDateTime(absl::UnixEpoch()), 116444736000000000LL);
  EXPECT_EQ(ToOpcUaDateTime(absl::UnixEpoch() + absl::Seconds(1)), 116444736010000000LL);
  const absl::Time t = absl::FromUnixSeconds(1'700'000'000) + absl::Microseconds(3);
  EXPECT_EQ(FromOpcUaDateTime(ToOpcUaDateTime(t)), t);
}

TEST(OpcuaCodecTest, HelloMatchesTheSpecLayout) {
  HelloMessage hello;
  hello.receive_buffer_size = 65536;
  hello.send_buffer_size = 65536;
  hello.max_message_size = 4 * 1024 * 1024;
  hello.max_chunk_count = 64;
  hello.endpoint_url = kUrl;
  const std::string expected = Bytes({'H', 'E', 'L',  'F', 45, 0, 0, 0,  // header, size 45
                                      0,   0,   0,    0,                 // protocolVersion
                                      0,   0,   1,    0,                 // receiveBufferSize
                                      0,   0,   1,    0,                 // sendBufferSize
                                      0,   0,   0x40, 0,                 // maxMessageSize
                                      64,  0,   0,    0}) +              // maxChunkCount
                               Str(kUrl);
  EXPECT_EQ(EncodeHello(hello), expected);
  absl::StatusOr<HelloMessage> decoded = DecodeHello(expected);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->endpoint_url, kUrl);
  EXPECT_EQ(decoded->max_message_size, 4u * 1024 * 1024);
  EXPECT_EQ(decoded->max_chunk_count, 64u);
}

TEST(OpcuaCodecTest, AcknowledgeAndErrorDecodeFromSpecBytes) {
  const std::string ack = Bytes({'A', 'C', 'K', 'F',  28, 0, 0, 0, 0, 0, 0, 0, 0, 0x20,
                                 0,   0,   0,   0x20, 0,  0, 0, 0, 0, 0, 0, 0, 0, 0});
  absl::StatusOr<AcknowledgeMessage> decoded = DecodeAcknowledge(ack);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->receive_buffer_size, 8192u);
  EXPECT_EQ(decoded->send_buffer_size, 8192u);
  EXPECT_EQ(decoded->max_message_size, 0u);
  EXPECT_EQ(EncodeAcknowledge(*decoded), ack);

  const std::string err =
      Bytes({'E', 'R', 'R', 'F', 8 + 4 + 4 + 3, 0, 0, 0, 0, 0, 0x83, 0x80}) + Str("bad");
  absl::StatusOr<ErrorMessage> error = DecodeError(err);
  ASSERT_TRUE(error.ok()) << error.status();
  EXPECT_EQ(error->error, 0x80830000u);
  EXPECT_EQ(error->reason, "bad");
  EXPECT_EQ(StatusCodeName(error->error), "BadTcpEndpointUrlInvalid (0x80830000)");
  EXPECT_EQ(StatusCodeName(0x81230000), "0x81230000");
}

TEST(OpcuaCodecTest, MessageHeaderRejectsUnknownTypesChunksAndSizes) {
  EXPECT_TRUE(DecodeMessageHeader(Bytes({'M', 'S', 'G', 'C', 8, 0, 0, 0})).ok());
  EXPECT_THAT(DecodeMessageHeader(Bytes({'X', 'Y', 'Z', 'F', 8, 0, 0, 0})).status().message(),
              HasSubstr("unknown message type"));
  EXPECT_THAT(DecodeMessageHeader(Bytes({'H', 'E', 'L', 'C', 8, 0, 0, 0})).status().message(),
              HasSubstr("bad chunk type"));
  EXPECT_THAT(DecodeMessageHeader(Bytes({'M', 'S', 'G', 'F', 7, 0, 0, 0})).status().message(),
              HasSubstr("bad message size 7"));
  EXPECT_THAT(DecodeMessageHeader(Bytes({'M', 'S', 'G', 'F', 0, 0, 0, 0x7F})).status().message(),
              HasSubstr("bad message size"));
  EXPECT_THAT(DecodeMessageHeader("MSG").status().message(), HasSubstr("truncated"));
  // The header's size must be the chunk's.
  std::string ack = EncodeAcknowledge({});
  EXPECT_THAT(DecodeAcknowledge(ack + "x").status().message(), HasSubstr("announces"));
  EXPECT_THAT(DecodeHello(ack).status().message(), HasSubstr("expected a HEL"));
}

TEST(OpcuaCodecTest, FindServersRequestBodyMatchesTheSpecLayout) {
  FindServersRequest request;
  request.header.timestamp = 0x0102030405060708;
  request.header.request_handle = 2;
  request.header.timeout_hint_ms = 5000;
  request.endpoint_url = kUrl;
  const std::string expected = Bytes({0x01, 0x00, 0xA6, 0x01,  // type id: four-byte NodeId i=422
                                      0x00, 0x00,              // authenticationToken: null NodeId
                                      0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01,  // timestamp
                                      2,    0,    0,    0,     // requestHandle
                                      0,    0,    0,    0}) +  // returnDiagnostics
                               kNull +                         // auditEntryId
                               Bytes({0x88, 0x13, 0, 0,        // timeoutHint 5000
                                      0x00, 0x00, 0x00}) +     // additionalHeader: empty
                               Str(kUrl) +
                               Bytes({0, 0, 0, 0, 0, 0, 0, 0});  // localeIds, serverUris: empty
  EXPECT_EQ(EncodeFindServersRequest(request), expected);
  absl::StatusOr<FindServersRequest> decoded = DecodeFindServersRequest(expected);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->endpoint_url, kUrl);
  EXPECT_EQ(decoded->header.timestamp, 0x0102030405060708);
  EXPECT_EQ(decoded->header.request_handle, 2u);
  EXPECT_EQ(decoded->header.timeout_hint_ms, 5000u);
}

// A FindServersResponse as a server would write it: null string table, one server.
std::string SpecFindServersResponse() {
  return Bytes({0x01, 0x00, 0xA9, 0x01,              // type id i=425
                0,    0,    0,    0,    0, 0, 0, 0,  // timestamp
                2,    0,    0,    0,                 // requestHandle
                0,    0,    0,    0,                 // serviceResult Good
                0x00}) +                             // serviceDiagnostics: empty
         kNull +                                     // stringTable: null array
         Bytes({0x00, 0x00, 0x00,                    // additionalHeader
                1, 0, 0, 0}) +                       // servers: 1
         Str("urn:a") +
         kNull +                                      // applicationUri, productUri
         Bytes({0x03}) + Str("en") + Str("Boiler") +  // applicationName: locale and text
         Bytes({0, 0, 0, 0}) +                        // applicationType Server
         kNull + kNull +                              // gatewayServerUri, discoveryProfileUri
         Bytes({1, 0, 0, 0}) + Str(kUrl);             // discoveryUrls
}

TEST(OpcuaCodecTest, FindServersResponseDecodesFromSpecBytes) {
  absl::StatusOr<FindServersResponse> decoded =
      DecodeFindServersResponse(SpecFindServersResponse());
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  ASSERT_EQ(decoded->servers.size(), 1u);
  const ApplicationDescription& server = decoded->servers[0];
  EXPECT_EQ(server.application_uri, "urn:a");
  EXPECT_EQ(server.product_uri, "");
  EXPECT_EQ(server.application_name.locale, "en");
  EXPECT_EQ(server.application_name.text, "Boiler");
  EXPECT_EQ(server.application_type, 0u);
  EXPECT_THAT(server.discovery_urls, ElementsAre(kUrl));
}

TEST(OpcuaCodecTest, FindServersResponseRoundTrips) {
  FindServersResponse response;
  response.header.request_handle = 7;
  for (int i = 0; i < 3; ++i) {
    ApplicationDescription& server = response.servers.emplace_back();
    server.application_uri = "urn:s" + std::to_string(i);
    server.application_name.text = "Server " + std::to_string(i);
    server.application_type = static_cast<uint32_t>(i == 2 ? ApplicationType::kDiscoveryServer
                                                           : ApplicationType::kServer);
    server.discovery_urls = {"http://h:80", "opc.tcp://h:" + std::to_string(4840 + i)};
  }
  absl::StatusOr<FindServersResponse> decoded =
      DecodeFindServersResponse(EncodeFindServersResponse(response));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->header.request_handle, 7u);
  ASSERT_EQ(decoded->servers.size(), 3u);
  EXPECT_EQ(decoded->servers[2].application_name.text, "Server 2");
  EXPECT_EQ(decoded->servers[2].application_type, 3u);
  EXPECT_THAT(decoded->servers[1].discovery_urls, ElementsAre("http://h:80", "opc.tcp://h:4841"));
}

TEST(OpcuaCodecTest, AServiceFaultOrABadResultIsAnErrorWithItsCode) {
  ResponseHeader header;
  header.service_result = 0x800A0000;
  const std::string fault = EncodeServiceFault(header);
  EXPECT_EQ(fault.substr(0, 4), Bytes({0x01, 0x00, 0x8D, 0x01}));  // i=397
  absl::Status status = DecodeFindServersResponse(fault).status();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable);
  EXPECT_THAT(status.message(), HasSubstr("FindServers failed: BadTimeout (0x800A0000)"));

  FindServersResponse bad;
  bad.header.service_result = 0x800B0000;
  EXPECT_THAT(DecodeFindServersResponse(EncodeFindServersResponse(bad)).status().message(),
              HasSubstr("BadServiceUnsupported"));
  // Another response type is not taken for FindServers.
  FindServersRequest request;
  EXPECT_THAT(DecodeFindServersResponse(EncodeFindServersRequest(request)).status().message(),
              HasSubstr("unexpected response type i=422"));
}

TEST(OpcuaCodecTest, ARequestOfAnotherTypeIsRefused) {
  EXPECT_THAT(DecodeFindServersRequest(EncodeFindServersResponse({})).status().message(),
              HasSubstr("not a FindServersRequest (type id i=425, wanted i=422)"));
  MessageChunk chunk;
  chunk.body = EncodeFindServersRequest({});
  std::string as_close = EncodeMessageChunk(chunk);
  as_close.replace(0, 3, "CLO");
  EXPECT_THAT(DecodeCloseSecureChannelRequest(as_close).status().message(),
              HasSubstr("not a CloseSecureChannelRequest"));
}

TEST(OpcuaCodecTest, OpenSecureChannelRequestMatchesTheSpecLayoutAndRoundTrips) {
  OpenSecureChannelRequest request;
  request.frame.sequence_number = 1;
  request.frame.request_id = 1;
  request.header.request_handle = 1;
  request.requested_lifetime_ms = 60000;
  const std::string chunk = EncodeOpenSecureChannelRequest(request);
  const std::string policy = Str(kSecurityPolicyNone);
  const std::string start = Bytes({'O', 'P', 'N', 'F'});
  ASSERT_GE(chunk.size(), 12 + policy.size());
  EXPECT_EQ(chunk.substr(0, 4), start);
  EXPECT_EQ(chunk.substr(8, 4), Bytes({0, 0, 0, 0}));  // secureChannelId 0 before one exists
  EXPECT_EQ(chunk.substr(12, policy.size()), policy);
  // No certificates, then sequence number 1 and request id 1, then type id i=446.
  EXPECT_EQ(chunk.substr(12 + policy.size(), 8 + 8 + 4),
            kNull + kNull + Bytes({1, 0, 0, 0, 1, 0, 0, 0, 0x01, 0x00, 0xBE, 0x01}));
  // ... clientProtocolVersion 0, requestType Issue, securityMode None, null nonce, lifetime.
  EXPECT_EQ(chunk.substr(chunk.size() - 20),
            Bytes({0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}) + kNull + Bytes({0x60, 0xEA, 0, 0}));

  absl::StatusOr<OpenSecureChannelRequest> decoded = DecodeOpenSecureChannelRequest(chunk);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->requested_lifetime_ms, 60000u);
  EXPECT_EQ(decoded->security_mode, 1u);
  EXPECT_EQ(decoded->frame.request_id, 1u);
}

TEST(OpcuaCodecTest, OpenSecureChannelResponseRoundTripsAndRefusesOtherPolicies) {
  OpenSecureChannelResponse response;
  response.frame.secure_channel_id = 9;
  response.frame.sequence_number = 51;
  response.frame.request_id = 1;
  response.channel_id = 9;
  response.token_id = 4;
  response.revised_lifetime_ms = 600000;
  absl::StatusOr<OpenSecureChannelResponse> decoded =
      DecodeOpenSecureChannelResponse(EncodeOpenSecureChannelResponse(response));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->channel_id, 9u);
  EXPECT_EQ(decoded->token_id, 4u);
  EXPECT_EQ(decoded->revised_lifetime_ms, 600000u);
  EXPECT_EQ(decoded->frame.sequence_number, 51u);

  response.security_policy_uri = "http://opcfoundation.org/UA/SecurityPolicy#Basic256Sha256";
  EXPECT_THAT(
      DecodeOpenSecureChannelResponse(EncodeOpenSecureChannelResponse(response)).status().message(),
      HasSubstr("only SecurityPolicy None"));
}

TEST(OpcuaCodecTest, MessageAndCloseChunksRoundTrip) {
  MessageChunk chunk;
  chunk.frame = {'C', 9, 4, 2, 2};
  chunk.body = "partial body";
  const std::string encoded = EncodeMessageChunk(chunk);
  EXPECT_EQ(encoded.substr(0, 16),
            Bytes({'M', 'S', 'G', 'C', 36, 0, 0, 0, 9, 0, 0, 0, 4, 0, 0, 0}));
  absl::StatusOr<MessageChunk> decoded = DecodeMessageChunk(encoded);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->frame.chunk_type, 'C');
  EXPECT_EQ(decoded->frame.token_id, 4u);
  EXPECT_EQ(decoded->body, "partial body");

  CloseSecureChannelRequest close;
  close.frame = {'F', 9, 4, 3, 3};
  absl::StatusOr<CloseSecureChannelRequest> closed =
      DecodeCloseSecureChannelRequest(EncodeCloseSecureChannelRequest(close));
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->frame.sequence_number, 3u);
}

TEST(OpcuaCodecTest, EveryTruncationIsAnErrorNotACrash) {
  const std::string response = SpecFindServersResponse();
  for (size_t n = 0; n < response.size(); ++n) {
    EXPECT_FALSE(DecodeFindServersResponse(response.substr(0, n)).ok()) << n;
  }
  OpenSecureChannelResponse opn;
  const std::string chunk = EncodeOpenSecureChannelResponse(opn);
  for (size_t n = 0; n < chunk.size(); ++n) {
    // The header's size no longer matches, and neither does what follows once it is patched.
    std::string cut = chunk.substr(0, n);
    if (cut.size() >= 8) cut[4] = static_cast<char>(n);
    EXPECT_FALSE(DecodeOpenSecureChannelResponse(cut).ok()) << n;
  }
}

TEST(OpcuaCodecTest, LengthsTheInputCannotHoldAreRefusedBeforeAllocating) {
  std::string response = SpecFindServersResponse();
  // servers count at its offset: type id 4 + header (8+4+4+1+4+3) = 28.
  response[28] = static_cast<char>(0xFF);
  response[29] = static_cast<char>(0xFF);
  response[30] = static_cast<char>(0xFF);
  response[31] = 0x7F;
  EXPECT_THAT(DecodeFindServersResponse(response).status().message(), HasSubstr("cannot fit"));
  // A string longer than what is left.
  std::string hello = EncodeHello({});
  hello[28] = 0x10;
  EXPECT_THAT(DecodeHello(hello).status().message(), HasSubstr("truncated HEL endpointUrl"));
  // A negative length other than -1.
  hello[28] = static_cast<char>(0xFE);
  hello[29] = hello[30] = hello[31] = static_cast<char>(0xFF);
  EXPECT_THAT(DecodeHello(hello).status().message(), HasSubstr("negative length -2"));
}

TEST(OpcuaCodecTest, DeeplyNestedDiagnosticsAreRefused) {
  std::string body =
      Bytes({0x01, 0x00, 0xA9, 0x01, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0});
  body += std::string(100, static_cast<char>(0x40));  // innerDiagnosticInfo, 100 deep
  body += Bytes({0x00});
  EXPECT_THAT(DecodeFindServersResponse(body).status().message(), HasSubstr("nested deeper"));
}

TEST(OpcuaCodecTest, GarbageNeverCrashes) {
  std::mt19937 random(42);
  const std::string valid = SpecFindServersResponse();
  for (int round = 0; round < 2000; ++round) {
    std::string input = valid;
    // Flip a few bytes of a valid response, or use pure noise.
    if (round % 4 == 0) {
      input.resize(random() % 200);
      for (char& c : input) c = static_cast<char>(random());
    } else {
      for (int flips = 0; flips < 1 + round % 5; ++flips) {
        input[random() % input.size()] = static_cast<char>(random());
      }
    }
    (void)DecodeFindServersResponse(input);
    (void)DecodeFindServersRequest(input);
    (void)DecodeMessageChunk(input);
    (void)DecodeOpenSecureChannelResponse(input);
    (void)DecodeHello(input);
  }
  SUCCEED() << "no crash, no sanitizer report";
}

}  // namespace
}  // namespace regatta::devices::opcua
