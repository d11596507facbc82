#include "src/devices/handlers/onvif/soap.h"

#include "absl/strings/escaping.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/devices/handlers/onvif/http_client.h"
#include "src/devices/handlers/onvif/xml.h"

namespace regatta::devices::onvif {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(OnvifSoapTest, TheProbeAsksForNetworkVideoTransmittersWithItsMessageId) {
  const std::string probe = ProbeMessage("urn:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427");
  absl::StatusOr<Probe> parsed = ParseProbe(probe);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->message_id, "urn:uuid:1b4e28ba-2fa1-11d2-883f-0016d3cca427");
  EXPECT_THAT(parsed->types, ElementsAre("NetworkVideoTransmitter"));
  // The namespaces cameras check.
  absl::StatusOr<XmlDocument> doc = XmlDocument::Parse(probe);
  ASSERT_TRUE(doc.ok());
  EXPECT_EQ(doc->Root().NamespaceUri(), kSoapEnvelopeNs);
  std::vector<XmlElement> types = doc->Root().Descendants("Types");
  ASSERT_EQ(types.size(), 1u);
  EXPECT_EQ(types[0].NamespaceUri(), kDiscoveryNs);
  EXPECT_EQ(types[0].Text(), "dn:NetworkVideoTransmitter");
  EXPECT_THAT(probe, HasSubstr("xmlns:dn=\"http://www.onvif.org/ver10/network/wsdl\""));
  std::vector<XmlElement> action = doc->Root().Descendants("Action");
  ASSERT_EQ(action.size(), 1u);
  EXPECT_EQ(action[0].Text(), kProbeAction);
}

// A reply as a real camera's firmware writes it: other prefixes, several XAddrs, an upper-case
// uuid, whitespace around the lists.
constexpr char kCameraReply[] = R"(<?xml version="1.0" encoding="UTF-8"?>
<SOAP-ENV:Envelope xmlns:SOAP-ENV="http://www.w3.org/2003/05/soap-envelope"
    xmlns:wsa="http://schemas.xmlsoap.org/ws/2004/08/addressing"
    xmlns:d="http://schemas.xmlsoap.org/ws/2005/04/discovery"
    xmlns:dn="http://www.onvif.org/ver10/network/wsdl">
  <SOAP-ENV:Header>
    <wsa:MessageID>urn:uuid:2bc6f06c-5566-7788-99ac-0012414fb745</wsa:MessageID>
    <wsa:RelatesTo>uuid:7b1d26aa-b02e-4ad2-8aab-4c928298ee0c</wsa:RelatesTo>
    <wsa:Action>http://schemas.xmlsoap.org/ws/2005/04/discovery/ProbeMatches</wsa:Action>
  </SOAP-ENV:Header>
  <SOAP-ENV:Body>
    <d:ProbeMatches>
      <d:ProbeMatch>
        <wsa:EndpointReference>
          <wsa:Address>urn:uuid:10919DA4-5566-7788-99AA-0012414FB745</wsa:Address>
        </wsa:EndpointReference>
        <d:Types>dn:NetworkVideoTransmitter</d:Types>
        <d:Scopes> onvif://www.onvif.org/type/video_encoder
          onvif://www.onvif.org/name/NVT onvif://www.onvif.org/Profile/Streaming </d:Scopes>
        <d:XAddrs>http://10.0.0.1:80/onvif/device_service http://[fe80::1]/onvif/device_service</d:XAddrs>
        <d:MetadataVersion>10</d:MetadataVersion>
      </d:ProbeMatch>
    </d:ProbeMatches>
  </SOAP-ENV:Body>
</SOAP-ENV:Envelope>)";

TEST(OnvifSoapTest, ReadsProbeMatchesWhateverThePrefixes) {
  absl::StatusOr<ProbeMatches> matches = ParseProbeMatches(kCameraReply);
  ASSERT_TRUE(matches.ok()) << matches.status();
  EXPECT_EQ(matches->relates_to, "uuid:7b1d26aa-b02e-4ad2-8aab-4c928298ee0c");
  ASSERT_EQ(matches->matches.size(), 1u);
  const ProbeMatch& match = matches->matches[0];
  EXPECT_EQ(match.endpoint_address, "urn:uuid:10919DA4-5566-7788-99AA-0012414FB745");
  EXPECT_EQ(match.uuid, "10919da4-5566-7788-99aa-0012414fb745");
  EXPECT_THAT(match.xaddrs, ElementsAre("http://10.0.0.1:80/onvif/device_service",
                                        "http://[fe80::1]/onvif/device_service"));
  EXPECT_THAT(match.scopes, ElementsAre("onvif://www.onvif.org/type/video_encoder",
                                        "onvif://www.onvif.org/name/NVT",
                                        "onvif://www.onvif.org/Profile/Streaming"));
  EXPECT_THAT(match.types, ElementsAre("NetworkVideoTransmitter"));
}

TEST(OnvifSoapTest, ProbeMatchesRoundTrip) {
  ProbeMatch match;
  match.endpoint_address = "urn:uuid:3fa1fe68-b915-4053-a3e1-a8294833fe3c";
  match.scopes = {"onvif://www.onvif.org/name/A&B", "onvif://www.onvif.org/location/x"};
  match.xaddrs = {"http://127.0.0.2:8080/onvif/device_service"};
  absl::StatusOr<ProbeMatches> parsed =
      ParseProbeMatches(ProbeMatchesMessage("urn:uuid:reply", "urn:uuid:probe", match));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->relates_to, "urn:uuid:probe");
  ASSERT_EQ(parsed->matches.size(), 1u);
  EXPECT_EQ(parsed->matches[0].uuid, "3fa1fe68-b915-4053-a3e1-a8294833fe3c");
  EXPECT_EQ(parsed->matches[0].scopes, match.scopes);
  EXPECT_EQ(parsed->matches[0].xaddrs, match.xaddrs);
}

TEST(OnvifSoapTest, RejectsWhatIsNotAProbeMatch) {
  EXPECT_THAT(ParseProbeMatches("<a><b></a>").status().message(), HasSubstr("not well-formed"));
  EXPECT_THAT(ParseProbeMatches("<x/>").status().message(), HasSubstr("not a SOAP envelope"));
  EXPECT_THAT(ParseProbeMatches(ProbeMessage("urn:uuid:1")).status().message(),
              HasSubstr("not a WS-Discovery ProbeMatches"));
  EXPECT_FALSE(ParseProbe("").ok());
}

TEST(OnvifSoapTest, NormalizesUuidsAsAkri) {
  EXPECT_EQ(NormalizeUuid("urn:uuid:ABC-1"), "abc-1");
  EXPECT_EQ(NormalizeUuid("uuid:abc-2"), "abc-2");
  EXPECT_EQ(NormalizeUuid(" abc-3 "), "abc-3");
}

TEST(OnvifSoapTest, PasswordDigestMatchesTheOnvifSpecificationExample) {
  // ONVIF Core Specification, "user token profile" example.
  std::string nonce;
  ASSERT_TRUE(absl::Base64Unescape("LKqI6G/AikKCQrN0zqZFlg==", &nonce));
  EXPECT_EQ(PasswordDigest(nonce, "2010-09-16T07:50:45Z", "userpassword"),
            "tuOSpGlFlIXsozq4HFNeeGeFLEI=");
}

TEST(OnvifSoapTest, AUsernameTokenCarriesAFreshNonceAndItsDigest) {
  const absl::Time now = absl::FromUnixSeconds(1'284'623'445);  // 2010-09-16T07:50:45Z
  UsernameToken a = MakeUsernameToken("admin", "s3cret", now);
  UsernameToken b = MakeUsernameToken("admin", "s3cret", now);
  EXPECT_EQ(a.created, "2010-09-16T07:50:45Z");
  EXPECT_NE(a.nonce, b.nonce);
  std::string nonce;
  ASSERT_TRUE(absl::Base64Unescape(a.nonce, &nonce));
  EXPECT_EQ(nonce.size(), 16u);
  EXPECT_EQ(a.password_digest, PasswordDigest(nonce, a.created, "s3cret"));

  absl::StatusOr<XmlDocument> doc = XmlDocument::Parse(DeviceRequest(kGetNetworkInterfaces, a));
  ASSERT_TRUE(doc.ok()) << doc.status();
  std::vector<XmlElement> token = doc->Root().Descendants("UsernameToken");
  ASSERT_EQ(token.size(), 1u);
  EXPECT_EQ(token[0].Child("Username")->Text(), "admin");
  EXPECT_EQ(token[0].Child("Password")->Text(), a.password_digest);
  EXPECT_EQ(token[0].Child("Nonce")->Text(), a.nonce);
  EXPECT_EQ(token[0].Child("Created")->Text(), a.created);
  EXPECT_EQ(doc->Root().Descendants("GetNetworkInterfaces").size(), 1u);
  // Without a token there is no Security header.
  EXPECT_THAT(DeviceRequest(kGetSystemDateAndTime), ::testing::Not(HasSubstr("Security")));
  EXPECT_EQ(DeviceAction(kGetSystemDateAndTime),
            "http://www.onvif.org/ver10/device/wsdl/GetSystemDateAndTime");
}

std::string NetworkInterfacesReply(const std::string& interfaces) {
  return "<s:Envelope xmlns:s=\"http://www.w3.org/2003/05/soap-envelope\" "
         "xmlns:tds=\"http://www.onvif.org/ver10/device/wsdl\" "
         "xmlns:tt=\"http://www.onvif.org/ver10/schema\"><s:Body>"
         "<tds:GetNetworkInterfacesResponse>" +
         interfaces + "</tds:GetNetworkInterfacesResponse></s:Body></s:Envelope>";
}

TEST(OnvifSoapTest, ReadsIpAndMacFromNetworkInterfaces) {
  absl::StatusOr<IpAndMac> manual = ParseNetworkInterfaces(NetworkInterfacesReply(
      "<tds:NetworkInterfaces token=\"eth0\"><tt:Info><tt:HwAddress>00:0F:7C:11:22:33"
      "</tt:HwAddress></tt:Info><tt:IPv4><tt:Config><tt:Manual><tt:Address>192.168.1.20"
      "</tt:Address><tt:PrefixLength>24</tt:PrefixLength></tt:Manual></tt:Config></tt:IPv4>"
      "</tds:NetworkInterfaces>"));
  ASSERT_TRUE(manual.ok()) << manual.status();
  EXPECT_EQ(manual->ip, "192.168.1.20");
  EXPECT_EQ(manual->mac, "00:0F:7C:11:22:33");

  absl::StatusOr<IpAndMac> dhcp = ParseNetworkInterfaces(NetworkInterfacesReply(
      "<tds:NetworkInterfaces><tt:Info><tt:HwAddress>aa:bb:cc:dd:ee:ff</tt:HwAddress></tt:Info>"
      "<tt:IPv4><tt:Config><tt:FromDHCP><tt:Address>10.1.2.3</tt:Address></tt:FromDHCP>"
      "<tt:DHCP>true</tt:DHCP></tt:Config></tt:IPv4></tds:NetworkInterfaces>"));
  ASSERT_TRUE(dhcp.ok()) << dhcp.status();
  EXPECT_EQ(dhcp->ip, "10.1.2.3");

  EXPECT_THAT(ParseNetworkInterfaces(
                  NetworkInterfacesReply(
                      "<tds:NetworkInterfaces><tt:IPv4><tt:Config><tt:Manual><tt:Address>1.2.3.4"
                      "</tt:Address></tt:Manual></tt:Config></tt:IPv4></tds:NetworkInterfaces>"))
                  .status()
                  .message(),
              HasSubstr("no HwAddress"));
  EXPECT_THAT(ParseNetworkInterfaces(NetworkInterfacesReply("")).status().message(),
              HasSubstr("no IPv4 address"));
}

TEST(OnvifSoapTest, AFaultReportsItsReason) {
  const std::string fault =
      "<env:Envelope xmlns:env=\"http://www.w3.org/2003/05/soap-envelope\" "
      "xmlns:ter=\"http://www.onvif.org/ver10/error\"><env:Body><env:Fault><env:Code>"
      "<env:Value>env:Sender</env:Value><env:Subcode><env:Value>ter:NotAuthorized</env:Value>"
      "</env:Subcode></env:Code><env:Reason><env:Text xml:lang=\"en\">Sender not Authorized"
      "</env:Text></env:Reason></env:Fault></env:Body></env:Envelope>";
  absl::Status status = CheckSoapFault(fault);
  EXPECT_THAT(status.message(), HasSubstr("ter:NotAuthorized"));
  EXPECT_THAT(status.message(), HasSubstr("Sender not Authorized"));
  EXPECT_THAT(ParseNetworkInterfaces(fault).status().message(), HasSubstr("NotAuthorized"));
  EXPECT_TRUE(CheckSoapFault(NetworkInterfacesReply("")).ok());
}

TEST(OnvifHttpTest, ParsesDeviceServiceUrls) {
  absl::StatusOr<HttpUrl> url = ParseHttpUrl("http://10.0.0.1:8080/onvif/device_service");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "10.0.0.1");
  EXPECT_EQ(url->port, "8080");
  EXPECT_EQ(url->target, "/onvif/device_service");
  url = ParseHttpUrl("http://camera.local");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->port, "80");
  EXPECT_EQ(url->target, "/");
  url = ParseHttpUrl("http://[fe80::1]:81/x?y=1");
  ASSERT_TRUE(url.ok());
  EXPECT_EQ(url->host, "fe80::1");
  EXPECT_EQ(url->port, "81");
  EXPECT_EQ(url->target, "/x?y=1");
  EXPECT_THAT(ParseHttpUrl("https://10.0.0.1/").status().message(), HasSubstr("only http:// URLs"));
  EXPECT_FALSE(ParseHttpUrl("http:///x").ok());
}

}  // namespace
}  // namespace regatta::devices::onvif
