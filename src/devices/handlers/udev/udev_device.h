#ifndef REGATTA_SRC_DEVICES_HANDLERS_UDEV_UDEV_DEVICE_H_
#define REGATTA_SRC_DEVICES_HANDLERS_UDEV_UDEV_DEVICE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace regatta::devices::udev {

// The narrow view of a udev device that rule matching and discovery need. Implemented over
// libudev (libudev_system.h) and by a hand-written fake in the unit tests.
class UdevDevice {
 public:
  virtual ~UdevDevice() = default;

  // The kernel name, e.g. "video0" (what KERNEL matches).
  virtual std::string SysName() const = 0;
  // Empty when the device has none (as udev, a missing value matches "").
  virtual std::string Subsystem() const = 0;
  virtual std::string Driver() const = 0;
  // The sysfs path without "/sys", e.g. "/devices/virtual/mem/null".
  virtual std::string DevPath() const = 0;
  // The device node, e.g. "/dev/null"; empty when the device has none.
  virtual std::string DevNode() const = 0;
  virtual std::vector<std::string> Tags() const = 0;
  // A sysfs attribute of this device; nullopt when it does not exist or cannot be read.
  virtual std::optional<std::string> SysAttr(absl::string_view name) const = 0;
  // A udev property (ENV{name}); nullopt when unset.
  virtual std::optional<std::string> Property(absl::string_view name) const = 0;
  // The parent device, or nullptr at the top. Owned by (and valid as long as) this device.
  virtual const UdevDevice* Parent() const = 0;
};

// Lists the devices of this host.
class UdevSystem {
 public:
  virtual ~UdevSystem() = default;

  // Every device, or when `subsystems` is not empty only those whose subsystem matches one of
  // these fnmatch(3) patterns (a narrowing, not a guarantee: callers still match every rule).
  virtual absl::StatusOr<std::vector<std::unique_ptr<UdevDevice>>> Enumerate(
      absl::Span<const std::string> subsystems) = 0;
};

// A source of "something changed" signals: a udev monitor, or nothing but the passing of time.
class UdevEventSource {
 public:
  virtual ~UdevEventSource() = default;

  // Waits until device events arrive (then consumes all pending ones and returns true) or
  // `timeout` passes (returns false).
  virtual bool WaitForEvents(absl::Duration timeout) = 0;
};

}  // namespace regatta::devices::udev

#endif  // REGATTA_SRC_DEVICES_HANDLERS_UDEV_UDEV_DEVICE_H_
