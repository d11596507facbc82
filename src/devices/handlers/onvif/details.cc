#include "src/devices/handlers/onvif/details.h"

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace regatta::devices::onvif {
namespace {

constexpr absl::string_view kPrefix = "discoveryDetails";

absl::Status FieldError(absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(kPrefix, ".", field, ": ", message));
}

absl::StatusOr<FilterList> ParseFilterList(const std::string& field, const YAML::Node& node) {
  if (!node.IsMap()) {
    return FieldError(field, "must be a map {action: Include|Exclude, items: [...]}");
  }
  FilterList filter;
  bool has_items = false;
  for (const auto& entry : node) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    if (key == "action") {
      if (!value.IsScalar() || (value.Scalar() != "Include" && value.Scalar() != "Exclude")) {
        return FieldError(absl::StrCat(field, ".action"), "must be Include or Exclude");
      }
      filter.action = value.Scalar() == "Include" ? FilterAction::kInclude : FilterAction::kExclude;
    } else if (key == "items") {
      if (!value.IsSequence()) {
        return FieldError(absl::StrCat(field, ".items"), "must be a list of strings");
      }
      for (size_t i = 0; i < value.size(); ++i) {
        if (!value[i].IsScalar()) {
          return FieldError(absl::StrCat(field, ".items[", i, "]"), "must be a string");
        }
        filter.items.push_back(value[i].Scalar());
      }
      has_items = true;
    } else {
      return FieldError(absl::StrCat(field, ".", key), "unknown field (expected action, items)");
    }
  }
  if (!has_items) return FieldError(absl::StrCat(field, ".items"), "required");
  return filter;
}

}  // namespace

absl::StatusOr<OnvifDiscoveryDetails> ParseOnvifDiscoveryDetails(absl::string_view yaml) {
  OnvifDiscoveryDetails details;
  absl::StatusOr<YAML::Node> loaded = LoadYaml(yaml);
  if (!loaded.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kPrefix, ": ", ParseErrorText(loaded.status(), "not valid YAML")));
  }
  YAML::Node root = *std::move(loaded);
  if (root.IsNull() || !root.IsDefined()) return details;
  if (!root.IsMap()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kPrefix,
                     ": must be a map of ipAddresses, macAddresses, scopes, uuids, "
                     "discoveryTimeoutSeconds"));
  }
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    const YAML::Node& value = entry.second;
    std::optional<FilterList>* filter = nullptr;
    if (key == "ipAddresses") {
      filter = &details.ip_addresses;
    } else if (key == "macAddresses") {
      filter = &details.mac_addresses;
    } else if (key == "scopes") {
      filter = &details.scopes;
    } else if (key == "uuids") {
      filter = &details.uuids;
    } else if (key == "discoveryTimeoutSeconds") {
      int seconds = 0;
      if (!value.IsScalar() || !YAML::convert<int>::decode(value, seconds) || seconds < 1 ||
          seconds > kMaxDiscoveryTimeoutSeconds) {
        return FieldError(key, absl::StrCat("must be a whole number of seconds from 1 to ",
                                            kMaxDiscoveryTimeoutSeconds));
      }
      details.discovery_timeout_seconds = seconds;
      continue;
    } else {
      return FieldError(key,
                        "unknown field (the onvif handler takes ipAddresses, macAddresses, scopes, "
                        "uuids, discoveryTimeoutSeconds)");
    }
    if (value.IsNull()) continue;  // `scopes:` with nothing: no filter, as Akri's Option
    ASSIGN_OR_RETURN(FilterList parsed, ParseFilterList(key, value));
    *filter = std::move(parsed);
  }
  return details;
}

bool FilteredOut(const std::optional<FilterList>& filter,
                 const std::optional<std::vector<std::string>>& values,
                 const std::function<bool(absl::string_view, absl::string_view)>& match) {
  if (!filter.has_value()) return false;
  if (filter->action == FilterAction::kExclude && filter->items.empty()) return false;
  if (!values.has_value()) return true;
  bool any_item_matches = false;
  for (const std::string& item : filter->items) {
    for (const std::string& value : *values) {
      if (match(value, item)) any_item_matches = true;
    }
  }
  return filter->action == FilterAction::kInclude ? !any_item_matches : any_item_matches;
}

bool EqualsIgnoringCase(absl::string_view value, absl::string_view item) {
  return absl::EqualsIgnoreCase(value, item);
}

bool EqualsExactly(absl::string_view value, absl::string_view item) { return value == item; }

}  // namespace regatta::devices::onvif
