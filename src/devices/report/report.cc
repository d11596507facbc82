#include "src/devices/report/report.h"

#include <map>
#include <set>
#include <utility>

#include "absl/strings/str_cat.h"
#include "google/protobuf/util/message_differencer.h"
#include "src/devices/naming/naming.h"

namespace regatta::devices {
namespace {

namespace pb = regatta::v1;

absl::Status FieldError(absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

absl::Status CheckSize(absl::string_view field, absl::string_view value, size_t max) {
  if (value.size() > max) {
    return FieldError(field, absl::StrCat("longer than ", max, " bytes"));
  }
  return absl::OkStatus();
}

absl::Status CheckCount(absl::string_view field, int count, int max) {
  if (count > max) return FieldError(field, absl::StrCat("more than ", max, " entries"));
  return absl::OkStatus();
}

absl::Status ValidateDevice(const std::string& base, const v0::Device& device) {
  const std::string id_field = absl::StrCat(base, ".id");
  if (device.id().empty()) return FieldError(id_field, "must not be empty");
  if (absl::Status s = CheckSize(id_field, device.id(), kMaxDeviceIdBytes); !s.ok()) return s;
  const std::string properties = absl::StrCat(base, ".properties");
  if (absl::Status s = CheckCount(properties, device.properties_size(), kMaxDeviceEntries);
      !s.ok()) {
    return s;
  }
  for (const auto& [name, value] : device.properties()) {
    const std::string field = absl::StrCat(properties, "[", name.substr(0, 64), "]");
    if (name.empty()) return FieldError(properties, "a property name is empty");
    if (absl::Status s = CheckSize(field, name, kMaxDeviceFieldBytes); !s.ok()) return s;
    if (absl::Status s = CheckSize(field, value, kMaxDeviceFieldBytes); !s.ok()) return s;
  }
  const std::string mounts = absl::StrCat(base, ".mounts");
  if (absl::Status s = CheckCount(mounts, device.mounts_size(), kMaxDeviceEntries); !s.ok()) {
    return s;
  }
  for (int i = 0; i < device.mounts_size(); ++i) {
    const v0::Mount& mount = device.mounts(i);
    const std::string field = absl::StrCat(mounts, "[", i, "]");
    for (const auto& [name, value] :
         {std::pair<const char*, const std::string*>{"containerPath", &mount.container_path()},
          {"hostPath", &mount.host_path()}}) {
      if (absl::Status s = CheckSize(absl::StrCat(field, ".", name), *value, kMaxDeviceFieldBytes);
          !s.ok()) {
        return s;
      }
    }
  }
  const std::string specs = absl::StrCat(base, ".deviceSpecs");
  if (absl::Status s = CheckCount(specs, device.device_specs_size(), kMaxDeviceEntries); !s.ok()) {
    return s;
  }
  for (int i = 0; i < device.device_specs_size(); ++i) {
    const v0::DeviceSpec& spec = device.device_specs(i);
    const std::string field = absl::StrCat(specs, "[", i, "]");
    for (const auto& [name, value] :
         {std::pair<const char*, const std::string*>{"containerPath", &spec.container_path()},
          {"hostPath", &spec.host_path()},
          {"permissions", &spec.permissions()}}) {
      if (absl::Status s = CheckSize(absl::StrCat(field, ".", name), *value, kMaxDeviceFieldBytes);
          !s.ok()) {
        return s;
      }
    }
  }
  return absl::OkStatus();
}

// The device fields of an Instance: what InstanceNodeSeen replaces.
pb::Instance DeviceFields(pb::Instance instance) {
  instance.clear_nodes();
  instance.clear_device_usage();
  instance.clear_create_time();
  instance.clear_update_time();
  return instance;
}

}  // namespace

absl::Status ValidateDeviceReport(const pb::ReportDevicesRequest& report) {
  if (report.executor_id().empty()) return FieldError("executor_id", "must not be empty");
  if (report.node_id().empty()) return FieldError("node_id", "must not be empty");
  if (report.configuration().empty()) return FieldError("configuration", "must not be empty");
  if (absl::Status s = CheckSize("error", report.error(), kMaxDiscoveryErrorBytes); !s.ok()) {
    return s;
  }
  if (report.devices_size() > kMaxReportedDevices) {
    return FieldError("devices", absl::StrCat("more than ", kMaxReportedDevices, " devices"));
  }
  // (id, shared) names the Instance: listing one twice is ambiguous.
  std::map<std::pair<std::string, bool>, int> seen;
  for (int i = 0; i < report.devices_size(); ++i) {
    const pb::ReportedDevice& reported = report.devices(i);
    const std::string base = absl::StrCat("devices[", i, "].device");
    if (absl::Status s = ValidateDevice(base, reported.device()); !s.ok()) return s;
    auto [it, inserted] =
        seen.emplace(std::make_pair(reported.device().id(), reported.shared()), i);
    if (!inserted) {
      return FieldError(absl::StrCat(base, ".id"),
                        absl::StrCat("'", reported.device().id(), "' is also devices[", it->second,
                                     "] (each device once)"));
    }
  }
  return absl::OkStatus();
}

pb::Instance InstanceFromDevice(const pb::Configuration& configuration, absl::string_view node,
                                const v0::Device& device, bool shared) {
  pb::Instance instance;
  instance.set_name(InstanceName(configuration.name(), device.id(), node, shared));
  instance.set_configuration_name(configuration.name());
  instance.set_cdi_name(CdiName(configuration.name(), device.id(), node, shared));
  instance.set_capacity(configuration.capacity() > 0 ? configuration.capacity() : 1);
  // The device's properties, then the Configuration's brokerProperties over them (Akri's order).
  auto& broker = *instance.mutable_broker_properties();
  broker.insert(device.properties().begin(), device.properties().end());
  for (const auto& [name, value] : configuration.broker_properties()) broker[name] = value;
  instance.mutable_properties()->insert(device.properties().begin(), device.properties().end());
  *instance.mutable_mounts() = device.mounts();
  *instance.mutable_device_specs() = device.device_specs();
  instance.set_shared(shared);
  instance.set_device_id(device.id());
  return instance;
}

std::vector<pb::Event> DiffDeviceReport(const pb::Configuration& configuration,
                                        const std::vector<pb::Instance>& seen_by_node,
                                        const pb::ReportDevicesRequest& report) {
  const std::string& node = report.node_id();
  std::map<std::string, const pb::Instance*> current;
  for (const pb::Instance& instance : seen_by_node) current[instance.name()] = &instance;

  std::map<std::string, pb::Instance> reported;
  for (const pb::ReportedDevice& device : report.devices()) {
    pb::Instance instance =
        InstanceFromDevice(configuration, node, device.device(), device.shared());
    std::string name = instance.name();
    reported.emplace(std::move(name), std::move(instance));
  }

  std::vector<pb::Event> events;
  for (auto& [name, instance] : reported) {
    auto it = current.find(name);
    if (it != current.end() &&
        google::protobuf::util::MessageDifferencer::Equals(DeviceFields(*it->second), instance)) {
      continue;  // the node already sees it as it is
    }
    pb::InstanceNodeSeen* seen = events.emplace_back().mutable_instance_node_seen();
    seen->set_node(node);
    *seen->mutable_instance() = std::move(instance);
  }
  for (const auto& [name, instance] : current) {
    if (reported.contains(name)) continue;
    pb::InstanceNodeLost* lost = events.emplace_back().mutable_instance_node_lost();
    lost->set_instance_name(name);
    lost->set_node(node);
  }

  const pb::ConfigurationNodeStatus* status = nullptr;
  for (const pb::ConfigurationNodeStatus& entry : configuration.status().nodes()) {
    if (entry.node() == node) status = &entry;
  }
  if (status == nullptr || status->error() != report.error()) {
    pb::ConfigurationStatusUpdated* update =
        events.emplace_back().mutable_configuration_status_updated();
    update->set_configuration_name(configuration.name());
    update->set_node(node);
    update->set_error(report.error());
  }
  return events;
}

std::vector<pb::Event> NodeLostEvents(const std::vector<pb::Instance>& instances,
                                      absl::string_view node) {
  std::vector<pb::Event> events;
  for (const pb::Instance& instance : instances) {
    pb::InstanceNodeLost* lost = events.emplace_back().mutable_instance_node_lost();
    lost->set_instance_name(instance.name());
    lost->set_node(std::string(node));
  }
  return events;
}

}  // namespace regatta::devices
