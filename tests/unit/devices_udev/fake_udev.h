#ifndef REGATTA_TESTS_UNIT_DEVICES_UDEV_FAKE_UDEV_H_
#define REGATTA_TESTS_UNIT_DEVICES_UDEV_FAKE_UDEV_H_

#include <fnmatch.h>

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "akri/discovery/v0/discovery.pb.h"
#include "src/common/clock.h"
#include "src/devices/handlers/udev/udev_device.h"

namespace regatta::devices::udev::testing {

// A device as a plain value; the fake system sets `parent`.
struct FakeUdevDevice final : public UdevDevice {
  std::string sysname;
  std::string subsystem;
  std::string driver;
  std::string devpath;
  std::string devnode;
  std::vector<std::string> tags;
  std::map<std::string, std::string> sysattrs;
  std::map<std::string, std::string> properties;
  const FakeUdevDevice* parent = nullptr;

  std::string SysName() const override { return sysname; }
  std::string Subsystem() const override { return subsystem; }
  std::string Driver() const override { return driver; }
  std::string DevPath() const override { return devpath; }
  std::string DevNode() const override { return devnode; }
  std::vector<std::string> Tags() const override { return tags; }
  std::optional<std::string> SysAttr(absl::string_view name) const override {
    return Lookup(sysattrs, name);
  }
  std::optional<std::string> Property(absl::string_view name) const override {
    return Lookup(properties, name);
  }
  const UdevDevice* Parent() const override { return parent; }

 private:
  static std::optional<std::string> Lookup(const std::map<std::string, std::string>& values,
                                           absl::string_view name) {
    auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  }
};

// A device tree keyed by devpath: a device's parent is the nearest device above it in the tree,
// as in sysfs. Enumerate honours the subsystem narrowing and records it.
class FakeUdevSystem final : public UdevSystem {
 public:
  // Adds (or replaces) a device; its sysname defaults to the last devpath component.
  void Add(FakeUdevDevice device) {
    if (device.sysname.empty())
      device.sysname = device.devpath.substr(device.devpath.rfind('/') + 1);
    const std::string devpath = device.devpath;
    devices_[devpath] = std::make_unique<FakeUdevDevice>(std::move(device));
    Relink();
  }
  void Remove(const std::string& devpath) {
    devices_.erase(devpath);
    Relink();
  }
  FakeUdevDevice& Get(const std::string& devpath) { return *devices_.at(devpath); }

  absl::StatusOr<std::vector<std::unique_ptr<UdevDevice>>> Enumerate(
      absl::Span<const std::string> subsystems) override {
    ++enumerations_;
    last_subsystems_.assign(subsystems.begin(), subsystems.end());
    if (!enumerate_error_.ok()) return enumerate_error_;
    std::vector<std::unique_ptr<UdevDevice>> result;
    for (const auto& [devpath, device] : devices_) {
      if (!subsystems.empty() && !AnyMatches(subsystems, device->subsystem)) continue;
      result.push_back(std::make_unique<FakeUdevDevice>(*device));
    }
    return result;
  }

  int enumerations() const { return enumerations_; }
  const std::vector<std::string>& last_subsystems() const { return last_subsystems_; }
  void set_enumerate_error(absl::Status status) { enumerate_error_ = std::move(status); }

 private:
  static bool AnyMatches(absl::Span<const std::string> patterns, const std::string& value) {
    for (const std::string& pattern : patterns) {
      if (fnmatch(pattern.c_str(), value.c_str(), 0) == 0) return true;
    }
    return false;
  }

  void Relink() {
    for (auto& [devpath, device] : devices_) {
      device->parent = nullptr;
      for (size_t slash = devpath.rfind('/'); slash != std::string::npos && slash > 0;
           slash = devpath.rfind('/', slash - 1)) {
        auto it = devices_.find(devpath.substr(0, slash));
        if (it != devices_.end()) {
          device->parent = it->second.get();
          break;
        }
      }
    }
  }

  std::map<std::string, std::unique_ptr<FakeUdevDevice>> devices_;
  int enumerations_ = 0;
  std::vector<std::string> last_subsystems_;
  absl::Status enumerate_error_;
};

// Waiting advances a FakeClock instead of sleeping. Changes scheduled at a time run when a wait
// reaches that time; those scheduled "with an event" end the wait as a udev event would.
class FakeEventSource final : public UdevEventSource {
 public:
  explicit FakeEventSource(FakeClock* clock) : clock_(clock) {}

  void At(absl::Time when, bool with_event, std::function<void()> change) {
    scheduled_.emplace(when, Scheduled{with_event, std::move(change)});
  }

  bool WaitForEvents(absl::Duration timeout) override {
    ++waits_;
    const absl::Time deadline = clock_->Now() + timeout;
    while (!scheduled_.empty() && scheduled_.begin()->first <= deadline) {
      auto node = scheduled_.extract(scheduled_.begin());
      if (node.key() > clock_->Now()) clock_->Set(node.key());
      node.mapped().change();
      if (node.mapped().with_event) return true;
    }
    clock_->Set(deadline);
    return false;
  }

  int waits() const { return waits_; }

 private:
  struct Scheduled {
    bool with_event;
    std::function<void()> change;
  };
  FakeClock* clock_;
  std::multimap<absl::Time, Scheduled> scheduled_;
  int waits_ = 0;
};

inline std::vector<std::string> DeviceIds(const std::vector<v0::Device>& devices) {
  std::vector<std::string> ids;
  for (const v0::Device& device : devices) ids.push_back(device.id());
  return ids;
}

}  // namespace regatta::devices::udev::testing

#endif  // REGATTA_TESTS_UNIT_DEVICES_UDEV_FAKE_UDEV_H_
