#ifndef REGATTA_SRC_DEVICES_REPORT_REPORT_H_
#define REGATTA_SRC_DEVICES_REPORT_REPORT_H_

// What a node's device report (ExecutorService.ReportDevices) means for the views.
//
// A report is the full device set of one Configuration on one node plus its discovery error;
// the server compares it with the Instances the views say that node sees and publishes only the
// difference, so a repeated report changes nothing:
//   * InstanceNodeSeen for a device whose Instance the node does not see yet, or whose device
//     fields (properties, mounts, device specs, capacity, broker properties) changed;
//   * InstanceNodeLost for an Instance of that Configuration the node sees but no longer lists;
//   * ConfigurationStatusUpdated when the node's status entry is missing or its error differs.

#include <cstddef>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "akri/discovery/v0/discovery.pb.h"
#include "regatta/v1/devices.pb.h"
#include "regatta/v1/events.pb.h"
#include "regatta/v1/executor_service.pb.h"

namespace regatta::devices {

// Bounds on a report, so one bad handler cannot flood the log.
inline constexpr int kMaxReportedDevices = 10000;
inline constexpr size_t kMaxDeviceIdBytes = 1024;
// Properties, mounts and device specs of one device, each.
inline constexpr int kMaxDeviceEntries = 1000;
// A property name or value, a path, a permission string.
inline constexpr size_t kMaxDeviceFieldBytes = 64 << 10;
inline constexpr size_t kMaxDiscoveryErrorBytes = 8192;

// INVALID_ARGUMENT naming the first bad field ("devices[2].device.id: must not be empty"):
// empty ids or names, sizes past the bounds above, a device listed twice.
absl::Status ValidateDeviceReport(const regatta::v1::ReportDevicesRequest& report);

// The Instance `node` reports for `device` of `configuration`: name and CDI name from
// src/devices/naming, capacity and broker properties from the Configuration (the device's
// properties win over the Configuration's broker properties). Nodes, slots and times unset.
regatta::v1::Instance InstanceFromDevice(const regatta::v1::Configuration& configuration,
                                         absl::string_view node, const v0::Device& device,
                                         bool shared);

// The events a validated `report` implies. `configuration` as the views hold it (with status);
// `seen_by_node`: the Instances of that Configuration whose nodes include the report's node.
// Events carry no `created` time (the publisher sets it).
std::vector<regatta::v1::Event> DiffDeviceReport(
    const regatta::v1::Configuration& configuration,
    const std::vector<regatta::v1::Instance>& seen_by_node,
    const regatta::v1::ReportDevicesRequest& report);

// The events that drop `node` from each of `instances` (the node was lost).
std::vector<regatta::v1::Event> NodeLostEvents(const std::vector<regatta::v1::Instance>& instances,
                                               absl::string_view node);

}  // namespace regatta::devices

#endif  // REGATTA_SRC_DEVICES_REPORT_REPORT_H_
