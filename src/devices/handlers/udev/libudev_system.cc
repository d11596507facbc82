#include "src/devices/handlers/udev/libudev_system.h"

#include <fcntl.h>
#include <libudev.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace regatta::devices::udev {
namespace {

using UdevContext = std::shared_ptr<::udev>;

UdevContext NewContext() {
  ::udev* context = udev_new();
  if (context == nullptr) return nullptr;
  return UdevContext(context, [](::udev* c) { udev_unref(c); });
}

std::string OrEmpty(const char* value) { return value == nullptr ? std::string() : value; }

class LibudevDevice final : public UdevDevice {
 public:
  // Takes over one reference to `device`; `context` outlives it.
  LibudevDevice(UdevContext context, udev_device* device)
      : context_(std::move(context)), device_(device) {}
  ~LibudevDevice() override {
    parent_.reset();
    udev_device_unref(device_);
  }
  LibudevDevice(const LibudevDevice&) = delete;
  LibudevDevice& operator=(const LibudevDevice&) = delete;

  std::string SysName() const override { return OrEmpty(udev_device_get_sysname(device_)); }
  std::string Subsystem() const override { return OrEmpty(udev_device_get_subsystem(device_)); }
  std::string Driver() const override { return OrEmpty(udev_device_get_driver(device_)); }
  std::string DevPath() const override { return OrEmpty(udev_device_get_devpath(device_)); }
  std::string DevNode() const override { return OrEmpty(udev_device_get_devnode(device_)); }

  std::vector<std::string> Tags() const override {
    std::vector<std::string> tags;
    for (udev_list_entry* entry = udev_device_get_tags_list_entry(device_); entry != nullptr;
         entry = udev_list_entry_get_next(entry)) {
      tags.push_back(OrEmpty(udev_list_entry_get_name(entry)));
    }
    return tags;
  }

  std::optional<std::string> SysAttr(absl::string_view name) const override {
    const char* value = udev_device_get_sysattr_value(device_, std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }

  std::optional<std::string> Property(absl::string_view name) const override {
    const char* value = udev_device_get_property_value(device_, std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  }

  const UdevDevice* Parent() const override {
    if (!parent_loaded_) {
      parent_loaded_ = true;
      // Borrowed from device_; our own reference keeps it valid as long as we hold it.
      udev_device* parent = udev_device_get_parent(device_);
      if (parent != nullptr) {
        parent_ = std::make_unique<LibudevDevice>(context_, udev_device_ref(parent));
      }
    }
    return parent_.get();
  }

 private:
  UdevContext context_;
  udev_device* device_;
  mutable bool parent_loaded_ = false;
  mutable std::unique_ptr<LibudevDevice> parent_;
};

class LibudevSystem final : public UdevSystem {
 public:
  absl::StatusOr<std::vector<std::unique_ptr<UdevDevice>>> Enumerate(
      absl::Span<const std::string> subsystems) override {
    UdevContext context = NewContext();
    if (context == nullptr) return absl::InternalError("udev: cannot create a libudev context");
    std::unique_ptr<udev_enumerate, void (*)(udev_enumerate*)> enumerate(
        udev_enumerate_new(context.get()), [](udev_enumerate* e) { udev_enumerate_unref(e); });
    if (enumerate == nullptr) return absl::InternalError("udev: cannot create an enumerator");
    for (const std::string& subsystem : subsystems) {
      const int r = udev_enumerate_add_match_subsystem(enumerate.get(), subsystem.c_str());
      if (r < 0) {
        return absl::InternalError(
            absl::StrCat("udev: cannot filter by subsystem '", subsystem, "': ", strerror(-r)));
      }
    }
    const int r = udev_enumerate_scan_devices(enumerate.get());
    if (r < 0) {
      return absl::UnavailableError(absl::StrCat("udev: cannot list devices: ", strerror(-r)));
    }
    std::vector<std::unique_ptr<UdevDevice>> devices;
    for (udev_list_entry* entry = udev_enumerate_get_list_entry(enumerate.get()); entry != nullptr;
         entry = udev_list_entry_get_next(entry)) {
      udev_device* device =
          udev_device_new_from_syspath(context.get(), udev_list_entry_get_name(entry));
      if (device == nullptr) continue;  // removed since the scan
      devices.push_back(std::make_unique<LibudevDevice>(context, device));
    }
    return devices;
  }
};

class LibudevMonitor final : public UdevEventSource {
 public:
  LibudevMonitor(UdevContext context, udev_monitor* monitor)
      : context_(std::move(context)), monitor_(monitor), fd_(udev_monitor_get_fd(monitor)) {
    // Draining must never block once the queue is empty.
    const int flags = fcntl(fd_, F_GETFL);
    if (flags >= 0) fcntl(fd_, F_SETFL, flags | O_NONBLOCK);
  }
  ~LibudevMonitor() override { udev_monitor_unref(monitor_); }
  LibudevMonitor(const LibudevMonitor&) = delete;
  LibudevMonitor& operator=(const LibudevMonitor&) = delete;

  bool WaitForEvents(absl::Duration timeout) override {
    // Round up so a sub-millisecond remainder does not become a busy loop.
    const int64_t ms = std::clamp<int64_t>(
        absl::ToInt64Milliseconds(timeout + absl::Microseconds(999)), 0, INT_MAX);
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(ms)) <= 0) return false;
    bool any = false;
    while (udev_device* device = udev_monitor_receive_device(monitor_)) {
      udev_device_unref(device);
      any = true;
    }
    return any;
  }

 private:
  UdevContext context_;
  udev_monitor* monitor_;
  int fd_;
};

class TimerOnlyEventSource final : public UdevEventSource {
 public:
  bool WaitForEvents(absl::Duration timeout) override {
    absl::SleepFor(timeout);
    return false;
  }
};

}  // namespace

std::unique_ptr<UdevSystem> NewLibudevSystem() { return std::make_unique<LibudevSystem>(); }

absl::StatusOr<std::unique_ptr<UdevEventSource>> NewUdevMonitor() {
  UdevContext context = NewContext();
  if (context == nullptr) return absl::InternalError("udev: cannot create a libudev context");
  const char* source = access("/run/udev/control", F_OK) == 0 ? "udev" : "kernel";
  udev_monitor* monitor = udev_monitor_new_from_netlink(context.get(), source);
  if (monitor == nullptr) {
    return absl::UnavailableError(absl::StrCat(
        "udev monitor (", source, " events): cannot open a netlink socket: ", strerror(errno)));
  }
  const int r = udev_monitor_enable_receiving(monitor);
  if (r < 0) {
    udev_monitor_unref(monitor);
    return absl::UnavailableError(
        absl::StrCat("udev monitor (", source, " events): cannot receive: ", strerror(-r)));
  }
  return std::make_unique<LibudevMonitor>(std::move(context), monitor);
}

std::unique_ptr<UdevEventSource> NewTimerOnlyEventSource() {
  return std::make_unique<TimerOnlyEventSource>();
}

}  // namespace regatta::devices::udev
