// Resolving discovery properties against Secrets and ConfigMaps (config.h).
#include <map>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/common/status_macros.h"
#include "src/devices/config/config.h"

namespace regatta::devices {
namespace {

// The value of `key` in the resource `kind` named `name`; nullopt (a missing resource or key)
// when the reference is optional, FAILED_PRECONDITION when it is not.
template <typename Resource, typename Lookup>
absl::StatusOr<std::optional<std::string>> LookUpKey(const Lookup& lookup, absl::string_view kind,
                                                     absl::string_view name, absl::string_view key,
                                                     bool optional,
                                                     absl::string_view property_path) {
  auto missing = [&](absl::string_view what) -> absl::StatusOr<std::optional<std::string>> {
    if (optional) return std::nullopt;
    return absl::FailedPreconditionError(absl::StrCat(property_path, ": ", what));
  };
  absl::StatusOr<Resource> resource = lookup(name);
  if (absl::IsNotFound(resource.status())) {
    return missing(absl::StrCat(kind, " '", name, "' not found"));
  }
  RETURN_IF_ERROR(resource.status());
  auto it = resource->data().find(std::string(key));
  if (it == resource->data().end()) {
    return missing(absl::StrCat(kind, " '", name, "' has no key '", key, "'"));
  }
  return std::string(it->second);
}

}  // namespace

absl::StatusOr<std::map<std::string, std::string>> ResolveDiscoveryProperties(
    const regatta::v1::DiscoveryHandlerInfo& handler, const SecretLookup& secrets,
    const ConfigMapLookup& config_maps) {
  std::map<std::string, std::string> out;
  for (int i = 0; i < handler.discovery_properties_size(); ++i) {
    const regatta::v1::DiscoveryProperty& property = handler.discovery_properties(i);
    const std::string path =
        absl::StrCat("discoveryHandler.discoveryProperties[", i, "] (", property.name(), ")");
    if (property.has_value()) {
      out[property.name()] = property.value();
      continue;
    }
    const regatta::v1::DiscoveryPropertySource& source = property.value_from();
    std::optional<std::string> value;
    if (source.has_secret_key_ref()) {
      const regatta::v1::SecretKeySelector& ref = source.secret_key_ref();
      ASSIGN_OR_RETURN(value, LookUpKey<regatta::v1::Secret>(secrets, "secret", ref.name(),
                                                             ref.key(), ref.optional(), path));
    } else if (source.has_config_map_key_ref()) {
      const regatta::v1::ConfigMapKeySelector& ref = source.config_map_key_ref();
      ASSIGN_OR_RETURN(
          value, LookUpKey<regatta::v1::ConfigMap>(config_maps, "config map", ref.name(), ref.key(),
                                                   ref.optional(), path));
    } else {
      return absl::InvalidArgumentError(absl::StrCat(path, ": exactly one of value, valueFrom"));
    }
    if (value.has_value()) out[property.name()] = *std::move(value);
  }
  return out;
}

absl::StatusOr<v0::DiscoverRequest> MakeDiscoverRequest(
    const regatta::v1::Configuration& configuration, const SecretLookup& secrets,
    const ConfigMapLookup& config_maps) {
  using PropertyMap = std::map<std::string, std::string>;
  ASSIGN_OR_RETURN(
      PropertyMap properties,
      ResolveDiscoveryProperties(configuration.discovery_handler(), secrets, config_maps));
  v0::DiscoverRequest request;
  request.set_discovery_details(configuration.discovery_handler().discovery_details());
  for (auto& [name, value] : properties) {
    (*request.mutable_discovery_properties())[name].set_vec(std::move(value));
  }
  return request;
}

}  // namespace regatta::devices
