#include "src/devices/handlers/udev/finder.h"

#include <utility>

#include "src/common/status_macros.h"
#include "src/devices/handlers/udev/host_watch.h"

namespace regatta::devices::udev {
namespace {

class UdevQuery final : public DeviceQuery {
 public:
  explicit UdevQuery(std::unique_ptr<HostDeviceWatch> host) : host_(std::move(host)) {}

  absl::StatusOr<std::vector<v0::Device>> ListDevices() override {
    return host_->watch().Enumerate();
  }
  bool WaitForPossibleChange(absl::Duration timeout) override {
    return host_->watch().WaitForPossibleChange(timeout);
  }

 private:
  std::unique_ptr<HostDeviceWatch> host_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceQuery>> UdevFinder::Prepare(
    const v0::DiscoverRequest& request) {
  ASSIGN_OR_RETURN(std::unique_ptr<HostDeviceWatch> host,
                   HostDeviceWatch::Create(request.discovery_details(), clock_));
  return std::unique_ptr<DeviceQuery>(new UdevQuery(std::move(host)));
}

}  // namespace regatta::devices::udev
