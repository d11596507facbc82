#include "src/devices/handlers/udev/discovery.h"

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"
#include "src/devices/handlers/udev/match.h"
#include "yaml-cpp/yaml.h"

namespace regatta::devices::udev {
namespace {

constexpr absl::string_view kRulesExample = "udevRules: ['KERNEL==\"video[0-9]*\"']";

absl::Status FieldError(absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

absl::StatusOr<std::vector<UdevRule>> ParseRules(const YAML::Node& node) {
  if (!node.IsSequence()) {
    return FieldError("udevRules",
                      absl::StrCat("expected a list of udev rules, e.g. ", kRulesExample));
  }
  std::vector<UdevRule> rules;
  for (size_t i = 0; i < node.size(); ++i) {
    const std::string field = absl::StrCat("udevRules[", i, "]");
    if (!node[i].IsScalar()) return FieldError(field, "expected a rule as a string");
    absl::StatusOr<UdevRule> rule = ParseUdevRule(node[i].Scalar());
    if (!rule.ok()) return FieldError(field, rule.status().message());
    rules.push_back(*std::move(rule));
  }
  return rules;
}

// The subsystems a rule pins with SUBSYSTEM=="..." narrow enumeration; none when it pins none
// (or its pattern also accepts devices without a subsystem).
std::vector<std::string> PinnedSubsystems(const UdevRule& rule) {
  for (const RuleMatch& match : rule.matches) {
    if (match.key == RuleKey::kSubsystem && match.op == MatchOp::kEqual &&
        !match.pattern.matches_empty()) {
      return match.pattern.alternatives();
    }
  }
  return {};
}

// The topmost found device among `devpath` and its ancestors.
std::string TopmostFound(const std::string& devpath,
                         const std::map<std::string, std::string>& found) {
  std::string top = devpath;
  for (size_t slash = devpath.rfind('/'); slash != std::string::npos && slash > 0;
       slash = devpath.rfind('/', slash - 1)) {
    std::string ancestor = devpath.substr(0, slash);
    if (found.contains(ancestor)) top = std::move(ancestor);
  }
  return top;
}

// Akri's `permissions`: each of r (read), w (write), m (mknod) at most once.
absl::StatusOr<std::string> ParsePermissions(const YAML::Node& node) {
  if (!node.IsScalar() || node.Scalar().empty()) {
    return FieldError("permissions", "expected a combination of r, w and m, e.g. rwm");
  }
  const std::string text = node.Scalar();
  std::string seen;
  for (char c : text) {
    if (c != 'r' && c != 'w' && c != 'm') {
      return FieldError("permissions",
                        absl::StrCat("'", std::string(1, c), "' is not one of r, w, m"));
    }
    if (seen.find(c) != std::string::npos) {
      return FieldError("permissions", absl::StrCat("'", std::string(1, c), "' repeated"));
    }
    seen.push_back(c);
  }
  return text;
}

v0::Device MakeDevice(const std::string& id, const std::vector<std::string>& devnodes,
                      bool numbered, const std::string& permissions) {
  v0::Device device;
  device.set_id(id);
  auto& properties = *device.mutable_properties();
  properties[std::string(kDevpathProperty)] = id;
  for (size_t i = 0; i < devnodes.size(); ++i) {
    const std::string key =
        numbered ? absl::StrCat(kDevnodeProperty, "_", i) : std::string(kDevnodeProperty);
    properties[key] = devnodes[i];
    v0::DeviceSpec* spec = device.add_device_specs();
    spec->set_host_path(devnodes[i]);
    spec->set_container_path(devnodes[i]);
    spec->set_permissions(permissions);
  }
  return device;
}

}  // namespace

absl::StatusOr<UdevDiscoveryDetails> ParseUdevDiscoveryDetails(absl::string_view yaml) {
  absl::StatusOr<YAML::Node> loaded = LoadYaml(yaml);
  if (!loaded.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("discovery details: ", ParseErrorText(loaded.status(), "not valid YAML")));
  }
  YAML::Node root = *std::move(loaded);
  if (!root.IsDefined() || root.IsNull()) {
    return absl::InvalidArgumentError(
        absl::StrCat("discovery details are empty; expected ", kRulesExample));
  }
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        "discovery details: expected a mapping with udevRules (and optionally groupRecursive)");
  }
  UdevDiscoveryDetails details;
  bool has_rules = false;
  for (const auto& entry : root) {
    if (!entry.first.IsScalar()) {
      return absl::InvalidArgumentError("discovery details: field names must be strings");
    }
    const std::string key = entry.first.Scalar();
    if (key == "udevRules") {
      ASSIGN_OR_RETURN(details.rules, ParseRules(entry.second));
      has_rules = true;
    } else if (key == "groupRecursive") {
      if (!entry.second.IsScalar() ||
          !YAML::convert<bool>::decode(entry.second, details.group_recursive)) {
        return FieldError(key, "expected true or false");
      }
    } else if (key == "permissions") {
      ASSIGN_OR_RETURN(details.permissions, ParsePermissions(entry.second));
    } else {
      return FieldError(key, "unknown field (want udevRules, groupRecursive, permissions)");
    }
  }
  if (!has_rules) {
    return FieldError("udevRules", absl::StrCat("required, e.g. ", kRulesExample));
  }
  return details;
}

absl::StatusOr<std::vector<v0::Device>> FindUdevDevices(const UdevDiscoveryDetails& details,
                                                        UdevSystem& udev) {
  // devpath -> devnode ("" when none); a device several rules match is found once.
  std::map<std::string, std::string> found;
  for (const UdevRule& rule : details.rules) {
    ASSIGN_OR_RETURN(std::vector<std::unique_ptr<UdevDevice>> devices,
                     udev.Enumerate(PinnedSubsystems(rule)));
    for (const std::unique_ptr<UdevDevice>& device : devices) {
      if (RuleMatches(rule, *device)) found.emplace(device->DevPath(), device->DevNode());
    }
  }

  std::vector<v0::Device> result;
  if (!details.group_recursive) {
    for (const auto& [devpath, devnode] : found) {
      std::vector<std::string> devnodes;
      if (!devnode.empty()) devnodes.push_back(devnode);
      result.push_back(MakeDevice(devpath, devnodes, /*numbered=*/false, details.permissions));
    }
    return result;
  }
  // Walking `found` in devpath order puts a group's top device before its members.
  std::map<std::string, std::vector<std::string>> group_devnodes;
  for (const auto& [devpath, devnode] : found) {
    std::vector<std::string>& devnodes = group_devnodes[TopmostFound(devpath, found)];
    if (!devnode.empty()) devnodes.push_back(devnode);
  }
  for (const auto& [id, devnodes] : group_devnodes) {
    result.push_back(MakeDevice(id, devnodes, /*numbered=*/true, details.permissions));
  }
  return result;
}

bool SameDevices(const std::vector<v0::Device>& a, const std::vector<v0::Device>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (!google::protobuf::util::MessageDifferencer::Equals(a[i], b[i])) return false;
  }
  return true;
}

}  // namespace regatta::devices::udev
