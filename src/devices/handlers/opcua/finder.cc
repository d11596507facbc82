#include "src/devices/handlers/opcua/finder.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "src/common/logging.h"
#include "src/devices/handlers/opcua/discovery.h"

namespace regatta::devices::opcua {
namespace {

class OpcuaQuery final : public DeviceQuery {
 public:
  OpcuaQuery(DiscoveryClient* client, OpcuaDiscoveryDetails details)
      : client_(client), details_(std::move(details)) {}

  absl::StatusOr<std::vector<v0::Device>> ListDevices() override {
    DiscoveryResult result = DiscoverServers(details_, *client_);
    // Every poll meets the same unreachable server again: log what changed only.
    if (result.problems != last_problems_) {
      if (!result.problems.empty()) {
        LOG_INFO("opcua discovery skipped", "problems", absl::StrJoin(result.problems, "; "));
      }
      last_problems_ = std::move(result.problems);
    }
    return ServerDevices(result.server_urls);
  }

  // Servers are polled: nothing announces a change, so the HandlerServer's relist interval
  // drives discovery.
  bool WaitForPossibleChange(absl::Duration timeout) override {
    absl::SleepFor(timeout);
    return false;
  }

 private:
  DiscoveryClient* const client_;
  const OpcuaDiscoveryDetails details_;
  std::vector<std::string> last_problems_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<DeviceQuery>> OpcuaFinder::Prepare(
    const v0::DiscoverRequest& request) {
  absl::StatusOr<OpcuaDiscoveryDetails> details =
      ParseOpcuaDiscoveryDetails(request.discovery_details());
  if (!details.ok()) return details.status();
  return std::make_unique<OpcuaQuery>(client_, *std::move(details));
}

}  // namespace regatta::devices::opcua
