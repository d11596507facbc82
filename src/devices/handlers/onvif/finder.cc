#include "src/devices/handlers/onvif/finder.h"

#include <utility>

#include "absl/synchronization/notification.h"
#include "src/common/status_macros.h"

namespace regatta::devices::onvif {
namespace {

class OnvifQuery final : public DeviceQuery {
 public:
  OnvifQuery(OnvifDiscoveryDetails details, CredentialStore credentials,
             std::unique_ptr<OnvifNetwork> network)
      : details_(std::move(details)),
        credentials_(std::move(credentials)),
        network_(std::move(network)) {}

  absl::StatusOr<std::vector<v0::Device>> ListDevices() override {
    return DiscoverCameras(details_, credentials_, *network_);
  }
  // Nothing announces a camera between passes (Akri polls too): wait out the time, and the
  // server's rediscovery interval triggers the next pass.
  bool WaitForPossibleChange(absl::Duration timeout) override {
    never_.WaitForNotificationWithTimeout(timeout);
    return false;
  }

 private:
  const OnvifDiscoveryDetails details_;
  const CredentialStore credentials_;
  std::unique_ptr<OnvifNetwork> network_;
  absl::Notification never_;
};

}  // namespace

OnvifFinder::OnvifFinder(NetworkOptions options, const Clock* clock)
    : networks_([options = std::move(options), clock] {
        return std::make_unique<UdpHttpNetwork>(options, clock);
      }) {}

absl::StatusOr<std::unique_ptr<DeviceQuery>> OnvifFinder::Prepare(
    const v0::DiscoverRequest& request) {
  ASSIGN_OR_RETURN(OnvifDiscoveryDetails details,
                   ParseOnvifDiscoveryDetails(request.discovery_details()));
  ASSIGN_OR_RETURN(CredentialStore credentials,
                   CredentialStore::FromProperties(request.discovery_properties()));
  return std::unique_ptr<DeviceQuery>(
      new OnvifQuery(std::move(details), std::move(credentials), networks_()));
}

}  // namespace regatta::devices::onvif
