#ifndef REGATTA_SRC_DEVICES_CONFIG_CONFIG_H_
#define REGATTA_SRC_DEVICES_CONFIG_CONFIG_H_

// The user-written device resources (devices.proto): Configuration, Secret and ConfigMap.
//   * validation, with errors that name the field the way files spell it
//     ("discoveryHandler.discoveryProperties[1].valueFrom: exactly one of secretKeyRef,
//     configMapKeyRef");
//   * resolving a Configuration's discovery properties against Secrets and ConfigMaps (what an
//     agent sends in DiscoverRequest.discovery_properties);
//   * reading resource files for `regatta config apply FILE`: YAML or JSON, one or more
//     documents, Akri-like (apiVersion and kind optional, metadata.name, spec).

#include <functional>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "akri/discovery/v0/discovery.pb.h"
#include "regatta/v1/devices.pb.h"

namespace regatta::devices {

// Configuration names prefix Instance names ("<name>-<6 hex>"), which must stay DNS-1123
// labels (63 characters at most).
inline constexpr size_t kMaxConfigurationNameLength = 56;

// Lowercase letters, digits and '-', starting and ending with a letter or digit, at most 63.
bool IsDnsLabel(absl::string_view name);
// DNS labels joined by '.', at most 253 (Secret and ConfigMap names).
bool IsDnsSubdomain(absl::string_view name);

// Fills what a file may leave out: capacity 0 (unset) becomes 1.
void ApplyDefaults(regatta::v1::Configuration& configuration);

// INVALID_ARGUMENT naming the first wrong field. Output-only fields (times, generation, status)
// are not checked. Call ApplyDefaults first.
absl::Status ValidateConfiguration(const regatta::v1::Configuration& configuration);
absl::Status ValidateSecret(const regatta::v1::Secret& secret);
absl::Status ValidateConfigMap(const regatta::v1::ConfigMap& config_map);

// Lookups by name: NOT_FOUND when there is none; other errors (a store or API that is down)
// are passed on as they are.
using SecretLookup = std::function<absl::StatusOr<regatta::v1::Secret>(absl::string_view name)>;
using ConfigMapLookup =
    std::function<absl::StatusOr<regatta::v1::ConfigMap>(absl::string_view name)>;

// Property name -> value. A reference marked optional whose Secret, ConfigMap or key is missing
// leaves the property out; a non-optional one is FAILED_PRECONDITION naming the property and
// what is missing ("discoveryHandler.discoveryProperties[0] (password): secret 'creds' has no
// key 'password'").
absl::StatusOr<std::map<std::string, std::string>> ResolveDiscoveryProperties(
    const regatta::v1::DiscoveryHandlerInfo& handler, const SecretLookup& secrets,
    const ConfigMapLookup& config_maps);

// The DiscoverRequest an agent sends for `configuration`: its discovery details and resolved
// properties.
absl::StatusOr<v0::DiscoverRequest> MakeDiscoverRequest(
    const regatta::v1::Configuration& configuration, const SecretLookup& secrets,
    const ConfigMapLookup& config_maps);

// One document of a resource file.
using Resource =
    std::variant<regatta::v1::Configuration, regatta::v1::Secret, regatta::v1::ConfigMap>;

// Parses every document of a YAML or JSON text (JSON is read as YAML). Each document is
//
//   apiVersion: akri.sh/v0        # optional: akri.sh/v0, regatta.dev/v1 or v1
//   kind: Configuration           # optional (default Configuration): or Secret, ConfigMap
//   metadata: {name: cam}         # or a top-level `name`
//   spec: {...}                   # Configuration: the fields of regatta.v1.Configuration
//                                 # (lowerCamelCase or snake_case); or at the top level
//   data: {...}                   # Secret: base64 values (as Kubernetes); ConfigMap: strings
//   stringData: {...}             # Secret: plain values
//
// Empty documents are skipped. Each resource comes back with defaults applied and validated;
// errors say which document ("document 2 (Configuration cam): spec.capacity: ...").
absl::StatusOr<std::vector<Resource>> ParseResources(absl::string_view text);

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_CONFIG_CONFIG_H_
