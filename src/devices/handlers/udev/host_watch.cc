#include "src/devices/handlers/udev/host_watch.h"

#include <utility>

#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/devices/handlers/udev/discovery.h"
#include "src/devices/handlers/udev/libudev_system.h"

namespace regatta::devices::udev {

absl::StatusOr<std::unique_ptr<HostDeviceWatch>> HostDeviceWatch::Create(
    absl::string_view discovery_details, const Clock* clock, DeviceWatch::Options options) {
  ASSIGN_OR_RETURN(UdevDiscoveryDetails details, ParseUdevDiscoveryDetails(discovery_details));
  std::unique_ptr<HostDeviceWatch> host(new HostDeviceWatch());
  host->system_ = NewLibudevSystem();
  absl::StatusOr<std::unique_ptr<UdevEventSource>> monitor = NewUdevMonitor();
  if (monitor.ok()) {
    host->events_ = *std::move(monitor);
    host->monitoring_ = true;
  } else {
    LOG_WARN("udev monitor unavailable; finding changes by rescanning only", "error",
             monitor.status().message(), "rescan_interval",
             absl::FormatDuration(options.rescan_interval));
    host->events_ = NewTimerOnlyEventSource();
  }
  host->watch_.emplace(std::move(details), host->system_.get(), host->events_.get(), clock,
                       options);
  return host;
}

}  // namespace regatta::devices::udev
