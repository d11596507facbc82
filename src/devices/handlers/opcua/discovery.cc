#include "src/devices/handlers/opcua/discovery.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "src/common/bounded_parse.h"
#include "yaml-cpp/yaml.h"

namespace regatta::devices::opcua {
namespace {

constexpr char kDetails[] = "discoveryDetails";
constexpr char kMethodField[] = "discoveryDetails.opcuaDiscoveryMethod";
constexpr char kStandardField[] = "discoveryDetails.opcuaDiscoveryMethod.standard";
constexpr char kUrlsField[] = "discoveryDetails.opcuaDiscoveryMethod.standard.discoveryUrls";
constexpr char kNamesField[] = "discoveryDetails.applicationNames";

absl::Status FieldError(absl::string_view field, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", problem));
}

bool Missing(const YAML::Node& node) { return !node.IsDefined() || node.IsNull(); }

// The non-empty string at `node`, or an error naming `field`.
absl::StatusOr<std::string> NonEmptyString(const YAML::Node& node, absl::string_view field) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    return FieldError(field, "must be a non-empty string");
  }
  return node.Scalar();
}

absl::StatusOr<std::vector<std::string>> ParseDiscoveryUrls(const YAML::Node& standard) {
  std::vector<std::string> urls;
  YAML::Node list;
  if (!Missing(standard)) {
    if (!standard.IsMap()) {
      return FieldError(kStandardField,
                        "must be a map, e.g. {discoveryUrls: [opc.tcp://host:4840/]}");
    }
    for (const auto& entry : standard) {
      const std::string key = entry.first.Scalar();
      if (key != "discoveryUrls") {
        return FieldError(absl::StrCat(kStandardField, ".", key),
                          "unknown field (standard takes only 'discoveryUrls')");
      }
      list = entry.second;
    }
  }
  if (Missing(list)) return std::vector<std::string>{kDefaultDiscoveryUrl};
  if (!list.IsSequence()) {
    return FieldError(kUrlsField, "must be a list of opc.tcp:// URLs");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    const std::string field = absl::StrCat(kUrlsField, "[", i, "]");
    absl::StatusOr<std::string> url = NonEmptyString(list[i], field);
    if (!url.ok()) return url.status();
    absl::StatusOr<OpcTcpUrl> parsed = ParseOpcTcpUrl(*url);
    if (!parsed.ok()) return FieldError(field, parsed.status().message());
    urls.push_back(*std::move(url));
  }
  return urls;
}

absl::StatusOr<FilterList> ParseFilterList(const YAML::Node& node) {
  if (!node.IsMap()) {
    return FieldError(kNamesField, "must be a map, e.g. {action: Include, items: [name]}");
  }
  FilterList filter;
  bool has_items = false;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const std::string field = absl::StrCat(kNamesField, ".", key);
    if (key == "action") {
      const std::string action = entry.second.IsScalar() ? entry.second.Scalar() : "";
      if (action == "Include") {
        filter.action = FilterList::Action::kInclude;
      } else if (action == "Exclude") {
        filter.action = FilterList::Action::kExclude;
      } else {
        return FieldError(field, "must be Include or Exclude");
      }
    } else if (key == "items") {
      if (!entry.second.IsSequence()) return FieldError(field, "must be a list of names");
      for (size_t i = 0; i < entry.second.size(); ++i) {
        absl::StatusOr<std::string> item =
            NonEmptyString(entry.second[i], absl::StrCat(field, "[", i, "]"));
        if (!item.ok()) return item.status();
        filter.items.push_back(*std::move(item));
      }
      has_items = true;
    } else {
      return FieldError(field, "unknown field (applicationNames takes 'action' and 'items')");
    }
  }
  if (!has_items) return FieldError(absl::StrCat(kNamesField, ".items"), "required");
  return filter;
}

// The URL a client should use for the server: the first opc.tcp one (Akri's preference).
std::string PreferredUrl(const std::vector<std::string>& urls) {
  for (const std::string& url : urls) {
    if (absl::StartsWithIgnoreCase(url, "opc.tcp")) return url;
  }
  return urls.front();
}

}  // namespace

bool ShouldInclude(const std::optional<FilterList>& filter, absl::string_view item) {
  if (!filter.has_value()) return true;
  const bool listed =
      std::find(filter->items.begin(), filter->items.end(), item) != filter->items.end();
  return filter->action == FilterList::Action::kInclude ? listed : !listed;
}

absl::StatusOr<OpcuaDiscoveryDetails> ParseOpcuaDiscoveryDetails(absl::string_view details) {
  absl::StatusOr<YAML::Node> loaded = LoadYaml(details);
  if (!loaded.ok()) return FieldError(kDetails, ParseErrorText(loaded.status(), "not valid YAML"));
  YAML::Node root = *std::move(loaded);
  if (!root.IsMap()) {
    return FieldError(kDetails,
                      "must be a map with 'opcuaDiscoveryMethod', e.g. 'opcuaDiscoveryMethod: "
                      "{standard: {discoveryUrls: [opc.tcp://host:4840/]}}'");
  }
  OpcuaDiscoveryDetails out;
  YAML::Node method;
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (key == "opcuaDiscoveryMethod") {
      method = entry.second;
    } else if (key == "applicationNames") {
      if (Missing(entry.second)) continue;
      absl::StatusOr<FilterList> filter = ParseFilterList(entry.second);
      if (!filter.ok()) return filter.status();
      out.application_names = *std::move(filter);
    } else {
      return FieldError(
          absl::StrCat(kDetails, ".", key),
          "unknown field (opcua takes 'opcuaDiscoveryMethod' and 'applicationNames')");
    }
  }
  if (Missing(method)) return FieldError(kMethodField, "required, e.g. {standard: {}}");
  if (!method.IsMap() || method.size() != 1) {
    return FieldError(kMethodField, "must name exactly one method: {standard: {...}}");
  }
  const std::string name = method.begin()->first.Scalar();
  if (name != "standard") {
    return FieldError(absl::StrCat(kMethodField, ".", name),
                      "unknown discovery method (only 'standard' is supported)");
  }
  absl::StatusOr<std::vector<std::string>> urls = ParseDiscoveryUrls(method.begin()->second);
  if (!urls.ok()) return urls.status();
  out.discovery_urls = *std::move(urls);
  return out;
}

DiscoveryResult DiscoverServers(const OpcuaDiscoveryDetails& details, DiscoveryClient& client) {
  DiscoveryResult result;
  auto add = [&](std::string url) {
    if (std::find(result.server_urls.begin(), result.server_urls.end(), url) ==
        result.server_urls.end()) {
      result.server_urls.push_back(std::move(url));
    }
  };
  for (const std::string& discovery_url : details.discovery_urls) {
    absl::StatusOr<OpcTcpUrl> asked = ParseOpcTcpUrl(discovery_url);
    if (!asked.ok()) {
      result.problems.push_back(std::string(asked.status().message()));
      continue;
    }
    absl::StatusOr<std::vector<ApplicationDescription>> applications =
        client.FindServers(discovery_url);
    if (!applications.ok()) {
      result.problems.push_back(
          absl::StrCat("FindServers on ", discovery_url, ": ", applications.status().message()));
      continue;
    }
    for (const ApplicationDescription& application : *applications) {
      if (application.application_type != static_cast<uint32_t>(ApplicationType::kServer)) continue;
      if (!ShouldInclude(details.application_names, application.application_name.text)) continue;
      if (application.discovery_urls.empty()) continue;
      std::string url = PreferredUrl(application.discovery_urls);
      absl::StatusOr<OpcTcpUrl> announced = ParseOpcTcpUrl(url);
      if (!announced.ok()) {
        result.problems.push_back(absl::StrCat("server '", application.application_name.text,
                                               "': ", announced.status().message()));
        continue;
      }
      if (!client.Resolves(announced->host)) {
        // Akri's fallback for a server that announces a name only it knows: the address we
        // asked, with the server's path.
        std::string path = announced->path;
        if (absl::EndsWith(discovery_url, "/") && absl::StartsWith(path, "/")) path.erase(0, 1);
        url = absl::StrCat(discovery_url, path);
      } else if (announced->host != asked->host || announced->port != asked->port) {
        // Listed by a discovery server: it may have gone away since it registered.
        if (!client.Reachable(url)) {
          result.problems.push_back(absl::StrCat("server '", application.application_name.text,
                                                 "' at ", url, " is not reachable"));
          continue;
        }
      }
      add(std::move(url));
    }
  }
  return result;
}

std::vector<v0::Device> ServerDevices(const std::vector<std::string>& server_urls) {
  std::vector<v0::Device> devices;
  for (const std::string& url : server_urls) {
    v0::Device& device = devices.emplace_back();
    device.set_id(url);
    (*device.mutable_properties())[kDiscoveryUrlProperty] = url;
  }
  return devices;
}

}  // namespace regatta::devices::opcua
