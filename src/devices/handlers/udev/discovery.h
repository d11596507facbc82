#ifndef REGATTA_SRC_DEVICES_HANDLERS_UDEV_DISCOVERY_H_
#define REGATTA_SRC_DEVICES_HANDLERS_UDEV_DISCOVERY_H_

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "akri/discovery/v0/discovery.pb.h"
#include "src/devices/handlers/udev/rule.h"
#include "src/devices/handlers/udev/udev_device.h"

namespace regatta::devices::udev {

// The name the handler registers under, and the property names Akri's udev handler gives its
// devices (brokers and jobs see them as environment variables).
inline constexpr absl::string_view kHandlerName = "udev";
// Registration's `shared`: a udev device belongs to the node that sees it.
inline constexpr bool kSharedDevices = false;
inline constexpr absl::string_view kDevnodeProperty = "UDEV_DEVNODE";
inline constexpr absl::string_view kDevpathProperty = "UDEV_DEVPATH";
// Cgroup permissions of every device node handed to a run, unless the details say others.
inline constexpr absl::string_view kDevicePermissions = "rwm";

// A Configuration's discovery details for the udev handler (Akri's UdevDiscoveryDetails).
struct UdevDiscoveryDetails {
  // A device is found when it matches any of the rules.
  std::vector<UdevRule> rules;
  // Found devices below another found device join it: one Device whose id is the topmost one.
  bool group_recursive = false;
  // The device nodes' cgroup permissions: a non-empty combination of r, w and m, as Akri's
  // `permissions` (its Helm chart always writes "rwm").
  std::string permissions = std::string(kDevicePermissions);
};

// Parses the YAML (or JSON) discovery details:
//   udevRules:
//   - 'KERNEL=="video[0-9]*"'
//   groupRecursive: false        # optional
//   permissions: rwm             # optional: r, w, m
// Errors name the field: "udevRules[1]: key 'PROGRAM' is not supported; ...".
absl::StatusOr<UdevDiscoveryDetails> ParseUdevDiscoveryDetails(absl::string_view yaml);

// The devices matching the details now, sorted by id, each once:
// - id and UDEV_DEVPATH: the devpath (for a group, the topmost device's);
// - UDEV_DEVNODE: the device node, when there is one (for a group: UDEV_DEVNODE_0, _1, ... over
//   the members with a node, in devpath order);
// - one device spec per device node, host and container path the node, the details'
//   permissions.
absl::StatusOr<std::vector<v0::Device>> FindUdevDevices(const UdevDiscoveryDetails& details,
                                                        UdevSystem& udev);

// Whether two device lists say the same (lists from FindUdevDevices are in a stable order).
bool SameDevices(const std::vector<v0::Device>& a, const std::vector<v0::Device>& b);

}  // namespace regatta::devices::udev

#endif  // REGATTA_SRC_DEVICES_HANDLERS_UDEV_DISCOVERY_H_
