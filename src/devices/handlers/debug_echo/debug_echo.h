#ifndef REGATTA_SRC_DEVICES_HANDLERS_DEBUG_ECHO_DEBUG_ECHO_H_
#define REGATTA_SRC_DEVICES_HANDLERS_DEBUG_ECHO_DEBUG_ECHO_H_

// debugEcho, Akri's test discovery handler: "finds" one device per description listed in the
// discovery details, and none while its availability file says OFFLINE.
//
//   discoveryDetails: |
//     descriptions: [foo0, foo1]
//
// Each description becomes a device with id = the description and the property
// DEBUG_ECHO_DESCRIPTION=<description>. Writing OFFLINE into the availability file (default
// $DEBUG_ECHO_AVAILABILITY_CHECK_PATH, else /tmp/debug-echo-availability.txt, as in Akri) makes
// every stream report an empty list within tens of milliseconds (Akri polls every 10 s);
// removing the word brings the devices back.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "src/devices/protocol/device_finder.h"

namespace regatta::devices::debug_echo {

inline constexpr char kHandlerName[] = "debugEcho";
inline constexpr char kDescriptionProperty[] = "DEBUG_ECHO_DESCRIPTION";
inline constexpr char kAvailabilityEnv[] = "DEBUG_ECHO_AVAILABILITY_CHECK_PATH";
inline constexpr char kDefaultAvailabilityFile[] = "/tmp/debug-echo-availability.txt";
inline constexpr char kOffline[] = "OFFLINE";

// The availability file from the environment (kAvailabilityEnv), else the default.
std::string DefaultAvailabilityFile();

// The descriptions of the discovery details, or INVALID_ARGUMENT naming the field.
absl::StatusOr<std::vector<std::string>> ParseDetails(absl::string_view discovery_details);

class FileWatcher;

class DebugEchoFinder final : public DeviceFinder {
 public:
  // Starts watching `availability_file` (which may not exist: then devices are online).
  explicit DebugEchoFinder(std::string availability_file);
  ~DebugEchoFinder() override;

  absl::StatusOr<std::unique_ptr<DeviceQuery>> Prepare(const v0::DiscoverRequest& request) override;
  // Notified when the availability file may have changed.
  const ChangeNotifier& changes() const { return changes_; }

  // Whether the availability file says OFFLINE now.
  bool Offline() const;
  const std::string& availability_file() const { return availability_file_; }

 private:
  const std::string availability_file_;
  ChangeNotifier changes_;
  std::unique_ptr<FileWatcher> watcher_;
};

}  // namespace regatta::devices::debug_echo

#endif  // REGATTA_SRC_DEVICES_HANDLERS_DEBUG_ECHO_DEBUG_ECHO_H_
