#ifndef REGATTA_SRC_DEVICES_HANDLERS_UDEV_LIBUDEV_SYSTEM_H_
#define REGATTA_SRC_DEVICES_HANDLERS_UDEV_LIBUDEV_SYSTEM_H_

#include <memory>

#include "absl/status/statusor.h"
#include "src/devices/handlers/udev/udev_device.h"

namespace regatta::devices::udev {

// The host's devices through libudev. Each Enumerate uses its own libudev context, so one
// instance may serve several threads; a returned device belongs to the thread that asked.
std::unique_ptr<UdevSystem> NewLibudevSystem();

// A netlink udev monitor: udevd's events when udevd runs here (/run/udev/control exists), the
// kernel's uevents otherwise. Fails where netlink is not allowed.
absl::StatusOr<std::unique_ptr<UdevEventSource>> NewUdevMonitor();

// No events at all: waiting just lets the time pass (for hosts without a usable monitor; the
// rescan interval of DeviceWatch then finds changes).
std::unique_ptr<UdevEventSource> NewTimerOnlyEventSource();

}  // namespace regatta::devices::udev

#endif  // REGATTA_SRC_DEVICES_HANDLERS_UDEV_LIBUDEV_SYSTEM_H_
