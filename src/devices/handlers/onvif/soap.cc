#include "src/devices/handlers/onvif/soap.h"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/common/status_macros.h"
#include "src/devices/handlers/onvif/xml.h"

namespace regatta::devices::onvif {
namespace {

constexpr absl::string_view kSecurityNs =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-secext-1.0.xsd";
constexpr absl::string_view kUtilityNs =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-wssecurity-utility-1.0.xsd";
constexpr absl::string_view kPasswordDigestType =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-username-token-profile-1.0"
    "#PasswordDigest";
constexpr absl::string_view kBase64EncodingType =
    "http://docs.oasis-open.org/wss/2004/01/oasis-200401-wss-soap-message-security-1.0"
    "#Base64Binary";
constexpr absl::string_view kDiscoveryTo = "urn:schemas-xmlsoap-org:ws:2005:04:discovery";
constexpr absl::string_view kAnonymousTo =
    "http://schemas.xmlsoap.org/ws/2004/08/addressing/role/anonymous";

std::string Escape(absl::string_view text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::vector<std::string> SplitList(absl::string_view text) {
  return absl::StrSplit(text, absl::ByAnyChar(" \t\r\n"), absl::SkipEmpty());
}

// "dn:NetworkVideoTransmitter" → "NetworkVideoTransmitter".
std::vector<std::string> TypeLocalNames(absl::string_view text) {
  std::vector<std::string> names;
  for (const std::string& qname : SplitList(text)) {
    size_t colon = qname.rfind(':');
    names.push_back(colon == std::string::npos ? qname : qname.substr(colon + 1));
  }
  return names;
}

absl::StatusOr<XmlElement> Body(const XmlDocument& doc) {
  XmlElement root = doc.Root();
  if (root.LocalName() != "Envelope") {
    return absl::InvalidArgumentError(
        absl::StrCat("not a SOAP envelope (root element ", root.LocalName(), ")"));
  }
  std::optional<XmlElement> body = root.Child("Body");
  if (!body.has_value()) return absl::InvalidArgumentError("SOAP envelope without a Body");
  return *body;
}

// A parsed envelope and its body's element `name` (the message's kind).
struct BodyMessage {
  XmlDocument doc;
  XmlElement element;
};
absl::StatusOr<BodyMessage> ParseBodyMessage(absl::string_view xml, absl::string_view name,
                                             absl::string_view what) {
  ASSIGN_OR_RETURN(XmlDocument doc, XmlDocument::Parse(xml));
  ASSIGN_OR_RETURN(XmlElement body, Body(doc));
  std::optional<XmlElement> element = body.Child(name);
  if (!element.has_value()) return absl::InvalidArgumentError(absl::StrCat("not ", what));
  return BodyMessage{std::move(doc), *element};
}

std::string HeaderText(const XmlDocument& doc, absl::string_view name) {
  std::optional<XmlElement> header = doc.Root().Child("Header");
  if (!header.has_value()) return "";
  std::optional<XmlElement> element = header->Child(name);
  return element.has_value() ? std::string(absl::StripAsciiWhitespace(element->Text())) : "";
}

std::string Envelope(absl::string_view header, absl::string_view body) {
  return absl::StrCat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<s:Envelope xmlns:s=\"",
      kSoapEnvelopeNs, "\" xmlns:a=\"", kAddressingNs, "\" xmlns:d=\"", kDiscoveryNs,
      "\" xmlns:dn=\"", kNetworkWsdlNs, "\" xmlns:tds=\"", kDeviceWsdlNs, "\" xmlns:tt=\"",
      kSchemaNs, "\">", "<s:Header>", header, "</s:Header>", "<s:Body>", body,
      "</s:Body></s:Envelope>");
}

}  // namespace

std::string ProbeMessage(absl::string_view message_id) {
  return Envelope(
      absl::StrCat("<a:MessageID>", Escape(message_id), "</a:MessageID><a:To>", kDiscoveryTo,
                   "</a:To><a:Action>", kProbeAction, "</a:Action>"),
      absl::StrCat("<d:Probe><d:Types>dn:", kNetworkVideoTransmitter, "</d:Types></d:Probe>"));
}

absl::StatusOr<Probe> ParseProbe(absl::string_view xml) {
  ASSIGN_OR_RETURN(BodyMessage message, ParseBodyMessage(xml, "Probe", "a WS-Discovery Probe"));
  Probe result;
  result.message_id = HeaderText(message.doc, "MessageID");
  for (const XmlElement& types : message.element.Children("Types")) {
    for (std::string& name : TypeLocalNames(types.Text())) result.types.push_back(std::move(name));
  }
  return result;
}

std::string NormalizeUuid(absl::string_view endpoint_address) {
  absl::string_view id = absl::StripAsciiWhitespace(endpoint_address);
  absl::ConsumePrefix(&id, "urn:");
  absl::ConsumePrefix(&id, "uuid:");
  return absl::AsciiStrToLower(id);
}

absl::StatusOr<ProbeMatches> ParseProbeMatches(absl::string_view xml) {
  ASSIGN_OR_RETURN(BodyMessage message,
                   ParseBodyMessage(xml, "ProbeMatches", "a WS-Discovery ProbeMatches"));
  ProbeMatches result;
  result.relates_to = HeaderText(message.doc, "RelatesTo");
  for (const XmlElement& element : message.element.Children("ProbeMatch")) {
    ProbeMatch match;
    if (std::optional<XmlElement> reference = element.Child("EndpointReference")) {
      if (std::optional<XmlElement> address = reference->Child("Address")) {
        match.endpoint_address = std::string(absl::StripAsciiWhitespace(address->Text()));
        match.uuid = NormalizeUuid(match.endpoint_address);
      }
    }
    for (const XmlElement& xaddrs : element.Children("XAddrs")) {
      for (std::string& url : SplitList(xaddrs.Text())) match.xaddrs.push_back(std::move(url));
    }
    for (const XmlElement& scopes : element.Children("Scopes")) {
      for (std::string& scope : SplitList(scopes.Text())) match.scopes.push_back(std::move(scope));
    }
    for (const XmlElement& types : element.Children("Types")) {
      for (std::string& name : TypeLocalNames(types.Text())) match.types.push_back(std::move(name));
    }
    result.matches.push_back(std::move(match));
  }
  return result;
}

std::string ProbeMatchesMessage(absl::string_view message_id, absl::string_view probe_message_id,
                                const ProbeMatch& match) {
  std::vector<std::string> escaped_scopes;
  for (const std::string& scope : match.scopes) escaped_scopes.push_back(Escape(scope));
  std::vector<std::string> escaped_xaddrs;
  for (const std::string& url : match.xaddrs) escaped_xaddrs.push_back(Escape(url));
  return Envelope(
      absl::StrCat("<a:MessageID>", Escape(message_id), "</a:MessageID><a:RelatesTo>",
                   Escape(probe_message_id), "</a:RelatesTo><a:To>", kAnonymousTo,
                   "</a:To><a:Action>", kProbeMatchesAction, "</a:Action>"),
      absl::StrCat("<d:ProbeMatches><d:ProbeMatch><a:EndpointReference><a:Address>",
                   Escape(match.endpoint_address),
                   "</a:Address></a:EndpointReference><d:Types>dn:", kNetworkVideoTransmitter,
                   "</d:Types><d:Scopes>", absl::StrJoin(escaped_scopes, " "),
                   "</d:Scopes><d:XAddrs>", absl::StrJoin(escaped_xaddrs, " "),
                   "</d:XAddrs><d:MetadataVersion>1</d:MetadataVersion></d:ProbeMatch>"
                   "</d:ProbeMatches>"));
}

std::string PasswordDigest(absl::string_view nonce, absl::string_view created,
                           absl::string_view password) {
  const std::string input = absl::StrCat(nonce, created, password);
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(input.data(), input.size(), digest, &length, EVP_sha1(), nullptr);
  return absl::Base64Escape(absl::string_view(reinterpret_cast<const char*>(digest), length));
}

std::string FormatCreated(absl::Time time) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", time, absl::UTCTimeZone());
}

UsernameToken MakeUsernameToken(absl::string_view username, absl::string_view password,
                                absl::Time now) {
  unsigned char nonce[16];
  // A fresh nonce per request (cameras may reject a repeated one as a replay).
  RAND_bytes(nonce, sizeof(nonce));
  const absl::string_view raw_nonce(reinterpret_cast<const char*>(nonce), sizeof(nonce));
  UsernameToken token;
  token.username = std::string(username);
  token.created = FormatCreated(now);
  token.nonce = absl::Base64Escape(raw_nonce);
  token.password_digest = PasswordDigest(raw_nonce, token.created, password);
  return token;
}

std::string DeviceRequest(absl::string_view operation, const std::optional<UsernameToken>& token) {
  std::string header;
  if (token.has_value()) {
    header = absl::StrCat("<wsse:Security s:mustUnderstand=\"1\" xmlns:wsse=\"", kSecurityNs,
                          "\" xmlns:wsu=\"", kUtilityNs, "\"><wsse:UsernameToken><wsse:Username>",
                          Escape(token->username), "</wsse:Username><wsse:Password Type=\"",
                          kPasswordDigestType, "\">", token->password_digest,
                          "</wsse:Password><wsse:Nonce EncodingType=\"", kBase64EncodingType, "\">",
                          token->nonce, "</wsse:Nonce><wsu:Created>", token->created,
                          "</wsu:Created></wsse:UsernameToken></wsse:Security>");
  }
  return Envelope(header, absl::StrCat("<tds:", operation, "/>"));
}

std::string DeviceAction(absl::string_view operation) {
  return absl::StrCat(kDeviceWsdlNs, "/", operation);
}

absl::Status CheckSoapFault(absl::string_view xml) {
  ASSIGN_OR_RETURN(XmlDocument doc, XmlDocument::Parse(xml));
  ASSIGN_OR_RETURN(XmlElement body, Body(doc));
  std::optional<XmlElement> fault = body.Child("Fault");
  if (!fault.has_value()) return absl::OkStatus();
  std::string reason;
  for (const XmlElement& text : fault->Descendants("Text")) {
    reason = std::string(absl::StripAsciiWhitespace(text.Text()));
    if (!reason.empty()) break;
  }
  std::vector<std::string> codes;
  for (const XmlElement& value : fault->Descendants("Value")) {
    codes.push_back(std::string(absl::StripAsciiWhitespace(value.Text())));
  }
  return absl::FailedPreconditionError(
      absl::StrCat("SOAP fault ", absl::StrJoin(codes, "/"), reason.empty() ? "" : ": ", reason));
}

absl::StatusOr<IpAndMac> ParseNetworkInterfaces(absl::string_view xml) {
  RETURN_IF_ERROR(CheckSoapFault(xml));
  ASSIGN_OR_RETURN(BodyMessage message, ParseBodyMessage(xml, "GetNetworkInterfacesResponse",
                                                         "a GetNetworkInterfacesResponse"));
  const XmlElement& response = message.element;
  std::optional<std::string> ip;
  std::optional<std::string> mac;
  for (const XmlElement& interface : response.Children("NetworkInterfaces")) {
    if (!mac.has_value()) {
      if (std::optional<XmlElement> info = interface.Child("Info")) {
        if (std::optional<XmlElement> hw = info->Child("HwAddress")) {
          mac = std::string(absl::StripAsciiWhitespace(hw->Text()));
        }
      }
    }
    if (!ip.has_value()) {
      std::optional<XmlElement> ipv4 = interface.Child("IPv4");
      std::optional<XmlElement> config =
          ipv4.has_value() ? ipv4->Child("Config") : std::optional<XmlElement>();
      if (config.has_value()) {
        for (absl::string_view kind : {"Manual", "FromDHCP", "LinkLocal"}) {
          for (const XmlElement& entry : config->Children(kind)) {
            if (std::optional<XmlElement> address = entry.Child("Address")) {
              ip = std::string(absl::StripAsciiWhitespace(address->Text()));
              break;
            }
          }
          if (ip.has_value()) break;
        }
      }
    }
  }
  if (!ip.has_value()) {
    return absl::InvalidArgumentError("GetNetworkInterfacesResponse names no IPv4 address");
  }
  if (!mac.has_value()) {
    return absl::InvalidArgumentError("GetNetworkInterfacesResponse names no HwAddress");
  }
  return IpAndMac{*std::move(ip), *std::move(mac)};
}

}  // namespace regatta::devices::onvif
