#include "src/devices/handlers/onvif/discovery.h"

#include <algorithm>
#include <future>
#include <map>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/devices/handlers/onvif/http_client.h"

namespace regatta::devices::onvif {
namespace {

constexpr size_t kParallelChecks = 16;

// One device service URL of a camera that passed the scope filter.
struct Candidate {
  std::string service_url;
  std::string uuid;
};

// What the per-camera calls found, computed in parallel so one slow camera costs one timeout.
struct Checked {
  bool responding = false;
  std::optional<IpAndMac> ip_and_mac;
};

Checked CheckCamera(const Candidate& candidate, const OnvifDiscoveryDetails& details,
                    const CredentialStore& credentials, OnvifNetwork& network) {
  Checked checked;
  absl::Status responding = network.CheckResponding(candidate.service_url);
  if (!responding.ok()) {
    LOG_INFO("camera does not answer GetSystemDateAndTime", "url", candidate.service_url, "error",
             responding.message());
    return checked;
  }
  checked.responding = true;
  if (FilteredOut(details.uuids, std::vector<std::string>{candidate.uuid}, EqualsIgnoringCase)) {
    return checked;  // no need to ask for its addresses
  }
  absl::StatusOr<IpAndMac> ip_and_mac =
      network.GetIpAndMac(candidate.service_url, credentials.Lookup(candidate.uuid));
  if (ip_and_mac.ok()) {
    checked.ip_and_mac = *std::move(ip_and_mac);
  } else {
    LOG_INFO("GetNetworkInterfaces failed", "url", candidate.service_url, "error",
             ip_and_mac.status().message());
  }
  return checked;
}

}  // namespace

absl::StatusOr<std::vector<ProbeMatch>> UdpHttpNetwork::Probe(absl::Duration timeout) {
  return ProbeCameras(options_.probe, timeout);
}

absl::Status UdpHttpNetwork::CheckResponding(const std::string& service_url) {
  ASSIGN_OR_RETURN(std::string reply,
                   PostSoap(service_url, DeviceAction(kGetSystemDateAndTime),
                            DeviceRequest(kGetSystemDateAndTime), options_.http_timeout));
  return CheckSoapFault(reply);
}

absl::StatusOr<IpAndMac> UdpHttpNetwork::GetIpAndMac(const std::string& service_url,
                                                     const std::optional<Credential>& credential) {
  std::optional<UsernameToken> token;
  if (credential.has_value()) {
    token = MakeUsernameToken(credential->username, credential->password, clock_->Now());
  }
  ASSIGN_OR_RETURN(std::string reply,
                   PostSoap(service_url, DeviceAction(kGetNetworkInterfaces),
                            DeviceRequest(kGetNetworkInterfaces, token), options_.http_timeout));
  return ParseNetworkInterfaces(reply);
}

absl::StatusOr<std::vector<v0::Device>> DiscoverCameras(const OnvifDiscoveryDetails& details,
                                                        const CredentialStore& credentials,
                                                        OnvifNetwork& network) {
  ASSIGN_OR_RETURN(std::vector<ProbeMatch> matches,
                   network.Probe(absl::Seconds(details.discovery_timeout_seconds)));
  // service URL → uuid; a camera answering twice (or on two interfaces) counts once.
  std::map<std::string, std::string> urls;
  for (const ProbeMatch& match : matches) {
    if (FilteredOut(details.scopes, match.scopes, EqualsExactly)) continue;
    for (const std::string& url : match.xaddrs) urls.emplace(url, match.uuid);
  }
  std::vector<Candidate> candidates;
  for (const auto& [url, uuid] : urls) candidates.push_back({url, uuid});

  // In parallel, at most kParallelChecks at a time (a site may have hundreds of cameras).
  std::vector<Checked> checked_all(candidates.size());
  for (size_t first = 0; first < candidates.size(); first += kParallelChecks) {
    const size_t end = std::min(candidates.size(), first + kParallelChecks);
    std::vector<std::future<Checked>> checks;
    for (size_t i = first; i < end; ++i) {
      checks.push_back(std::async(std::launch::async, [&, i] {
        return CheckCamera(candidates[i], details, credentials, network);
      }));
    }
    for (size_t i = first; i < end; ++i) checked_all[i] = checks[i - first].get();
  }
  std::vector<v0::Device> devices;
  for (size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& candidate = candidates[i];
    const Checked& checked = checked_all[i];
    if (!checked.responding) continue;
    if (FilteredOut(details.uuids, std::vector<std::string>{candidate.uuid}, EqualsIgnoringCase)) {
      continue;
    }
    std::optional<std::vector<std::string>> ip;
    std::optional<std::vector<std::string>> mac;
    if (checked.ip_and_mac.has_value()) {
      ip = std::vector<std::string>{checked.ip_and_mac->ip};
      mac = std::vector<std::string>{checked.ip_and_mac->mac};
    }
    if (FilteredOut(details.ip_addresses, ip, EqualsIgnoringCase)) continue;
    if (FilteredOut(details.mac_addresses, mac, EqualsIgnoringCase)) continue;
    v0::Device& device = devices.emplace_back();
    device.set_id(absl::StrCat(candidate.service_url, "-", candidate.uuid));
    auto& properties = *device.mutable_properties();
    properties[std::string(kServiceUrlProperty)] = candidate.service_url;
    properties[std::string(kUuidProperty)] = candidate.uuid;
    if (checked.ip_and_mac.has_value()) {
      properties[std::string(kIpAddressProperty)] = checked.ip_and_mac->ip;
      properties[std::string(kMacAddressProperty)] = checked.ip_and_mac->mac;
    }
  }
  std::sort(devices.begin(), devices.end(),
            [](const v0::Device& a, const v0::Device& b) { return a.id() < b.id(); });
  return devices;
}

}  // namespace regatta::devices::onvif
