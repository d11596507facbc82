// Validation of Configurations, Secrets and ConfigMaps (config.h).
#include <set>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/common/status_macros.h"
#include "src/devices/config/config.h"
#include "src/devices/config/field_error.h"

namespace regatta::devices {
namespace {

// Slots per device (Akri's default capacity is 1).
constexpr int32_t kMaxCapacity = 10000;

using regatta::v1::BrokerTemplate;
using regatta::v1::Configuration;
using regatta::v1::ServiceSpec;

std::string Indexed(absl::string_view path, int index) {
  return absl::StrCat(path, "[", index, "]");
}

// Keys of Secret and ConfigMap data (Kubernetes' rule): letters, digits, '-', '_', '.'.
bool IsDataKey(absl::string_view key) {
  if (key.empty() || key.size() > 253) return false;
  for (char c : key) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return true;
}

template <typename DataMap>
absl::Status ValidateDataKeys(const DataMap& data) {
  for (const auto& [key, value] : data) {
    if (!IsDataKey(key)) {
      return FieldError(absl::StrCat("data[\"", absl::CEscape(key), "\"]"),
                        "not a valid key (letters, digits, '-', '_', '.')");
    }
  }
  return absl::OkStatus();
}

// Handler names end up in socket file names ("<name>.sock"): letters, digits, '-', '_', '.'.
bool IsHandlerName(absl::string_view name) {
  return IsDataKey(name) && name != "." && name != "..";
}

absl::Status ValidateDnsSubdomainField(absl::string_view path, absl::string_view name) {
  if (name.empty()) return FieldError(path, "required");
  if (!IsDnsSubdomain(name)) {
    return FieldError(path, absl::StrCat("'", name,
                                         "' is not a DNS-1123 subdomain (lowercase letters, "
                                         "digits, '-' and '.'; at most 253 characters)"));
  }
  return absl::OkStatus();
}

absl::Status ValidateKeyRef(absl::string_view path, absl::string_view name, absl::string_view key) {
  RETURN_IF_ERROR(ValidateDnsSubdomainField(absl::StrCat(path, ".name"), name));
  if (key.empty()) return FieldError(absl::StrCat(path, ".key"), "required");
  if (!IsDataKey(key)) {
    return FieldError(
        absl::StrCat(path, ".key"),
        absl::StrCat("'", key, "' is not a valid key (letters, digits, '-', '_', '.')"));
  }
  return absl::OkStatus();
}

absl::Status ValidateDiscoveryHandler(const regatta::v1::DiscoveryHandlerInfo& handler) {
  constexpr absl::string_view kPath = "discoveryHandler";
  if (handler.name().empty()) return FieldError("discoveryHandler.name", "required");
  if (!IsHandlerName(handler.name())) {
    return FieldError("discoveryHandler.name",
                      absl::StrCat("'", handler.name(),
                                   "' is not a handler name (letters, digits, '-', '_', '.')"));
  }
  std::set<std::string> names;
  for (int i = 0; i < handler.discovery_properties_size(); ++i) {
    const regatta::v1::DiscoveryProperty& property = handler.discovery_properties(i);
    const std::string path = Indexed(absl::StrCat(kPath, ".discoveryProperties"), i);
    if (property.name().empty()) return FieldError(absl::StrCat(path, ".name"), "required");
    if (!names.insert(property.name()).second) {
      return FieldError(absl::StrCat(path, ".name"),
                        absl::StrCat("'", property.name(), "' is given twice"));
    }
    if (property.has_value() == property.has_value_from()) {
      return FieldError(path, "exactly one of value, valueFrom");
    }
    if (!property.has_value_from()) continue;
    const regatta::v1::DiscoveryPropertySource& source = property.value_from();
    const std::string source_path = absl::StrCat(path, ".valueFrom");
    if (source.has_secret_key_ref() == source.has_config_map_key_ref()) {
      return FieldError(source_path, "exactly one of secretKeyRef, configMapKeyRef");
    }
    if (source.has_secret_key_ref()) {
      RETURN_IF_ERROR(ValidateKeyRef(absl::StrCat(source_path, ".secretKeyRef"),
                                     source.secret_key_ref().name(),
                                     source.secret_key_ref().key()));
    } else {
      RETURN_IF_ERROR(ValidateKeyRef(absl::StrCat(source_path, ".configMapKeyRef"),
                                     source.config_map_key_ref().name(),
                                     source.config_map_key_ref().key()));
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateBroker(absl::string_view path, const BrokerTemplate& broker) {
  if (broker.queue().empty()) return FieldError(absl::StrCat(path, ".queue"), "required");
  const regatta::v1::TaskSpec& task = broker.job().task();
  if (task.command().empty() && task.image().empty()) {
    return FieldError(absl::StrCat(path, ".job.task"), "a broker needs a command or an image");
  }
  return absl::OkStatus();
}

absl::Status ValidateService(absl::string_view path, const ServiceSpec& service) {
  if (service.ports().empty()) {
    return FieldError(absl::StrCat(path, ".ports"), "a service needs at least one port");
  }
  std::set<std::string> names;
  for (int i = 0; i < service.ports_size(); ++i) {
    const regatta::v1::ServicePort& port = service.ports(i);
    const std::string port_path = Indexed(absl::StrCat(path, ".ports"), i);
    if (!IsDnsLabel(port.name())) {
      return FieldError(absl::StrCat(port_path, ".name"),
                        absl::StrCat("'", port.name(), "' is not a DNS-1123 label"));
    }
    if (!names.insert(port.name()).second) {
      return FieldError(absl::StrCat(port_path, ".name"),
                        absl::StrCat("'", port.name(), "' is given twice"));
    }
    if (port.port() < 1 || port.port() > 65535) {
      return FieldError(absl::StrCat(port_path, ".port"),
                        absl::StrCat("must be within 1..65535, got ", port.port()));
    }
    if (port.target_port() < 0 || port.target_port() > 65535) {
      return FieldError(
          absl::StrCat(port_path, ".targetPort"),
          absl::StrCat("must be within 1..65535 (0: port), got ", port.target_port()));
    }
    if (!port.protocol().empty() && port.protocol() != "TCP" && port.protocol() != "UDP") {
      return FieldError(absl::StrCat(port_path, ".protocol"),
                        absl::StrCat("'", port.protocol(), "' is not TCP or UDP"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool IsDnsLabel(absl::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (char c : name) {
    if (!absl::ascii_islower(static_cast<unsigned char>(c)) &&
        !absl::ascii_isdigit(static_cast<unsigned char>(c)) && c != '-') {
      return false;
    }
  }
  return name.front() != '-' && name.back() != '-';
}

bool IsDnsSubdomain(absl::string_view name) {
  if (name.empty() || name.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(name, '.')) {
    if (!IsDnsLabel(label)) return false;
  }
  return true;
}

void ApplyDefaults(Configuration& configuration) {
  if (configuration.capacity() == 0) configuration.set_capacity(1);
}

absl::Status ValidateConfiguration(const Configuration& configuration) {
  const std::string& name = configuration.name();
  if (name.empty()) return FieldError("name", "required");
  if (!IsDnsLabel(name) || name.size() > kMaxConfigurationNameLength) {
    return FieldError("name", absl::StrCat("'", name, "' is not a DNS-1123 label of at most ",
                                           kMaxConfigurationNameLength,
                                           " characters (lowercase letters, digits and '-')"));
  }
  RETURN_IF_ERROR(ValidateDiscoveryHandler(configuration.discovery_handler()));
  // Every slot is a key of the Instance's device usage: the count is bounded.
  if (configuration.capacity() < 1 || configuration.capacity() > kMaxCapacity) {
    return FieldError("capacity", absl::StrCat("must be between 1 and ", kMaxCapacity, ", got ",
                                               configuration.capacity()));
  }
  if (configuration.has_broker_spec()) {
    const regatta::v1::BrokerSpec& broker = configuration.broker_spec();
    switch (broker.broker_case()) {
      case regatta::v1::BrokerSpec::kBrokerJobSpec:
        RETURN_IF_ERROR(ValidateBroker("brokerSpec.brokerJobSpec", broker.broker_job_spec()));
        break;
      case regatta::v1::BrokerSpec::kBrokerPodSpec:
        RETURN_IF_ERROR(ValidateBroker("brokerSpec.brokerPodSpec", broker.broker_pod_spec()));
        break;
      case regatta::v1::BrokerSpec::BROKER_NOT_SET:
        return FieldError("brokerSpec", "exactly one of brokerJobSpec, brokerPodSpec");
    }
  }
  if (configuration.has_instance_service_spec()) {
    RETURN_IF_ERROR(ValidateService("instanceServiceSpec", configuration.instance_service_spec()));
  }
  if (configuration.has_configuration_service_spec()) {
    RETURN_IF_ERROR(
        ValidateService("configurationServiceSpec", configuration.configuration_service_spec()));
  }
  for (const auto& [key, value] : configuration.broker_properties()) {
    // They become environment variables.
    if (key.empty() || key.find('=') != std::string::npos || key.find('\0') != std::string::npos) {
      return FieldError(absl::StrCat("brokerProperties[\"", absl::CEscape(key), "\"]"),
                        "not an environment variable name (empty, or with '=' or NUL)");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateSecret(const regatta::v1::Secret& secret) {
  RETURN_IF_ERROR(ValidateDnsSubdomainField("name", secret.name()));
  return ValidateDataKeys(secret.data());
}

absl::Status ValidateConfigMap(const regatta::v1::ConfigMap& config_map) {
  RETURN_IF_ERROR(ValidateDnsSubdomainField("name", config_map.name()));
  return ValidateDataKeys(config_map.data());
}

}  // namespace regatta::devices
