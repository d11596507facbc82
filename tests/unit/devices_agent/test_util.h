#ifndef REGATTA_TESTS_UNIT_DEVICES_AGENT_TEST_UTIL_H_
#define REGATTA_TESTS_UNIT_DEVICES_AGENT_TEST_UTIL_H_

// Shared by the device agent tests: a scratch directory short enough for socket paths, and a
// recorder of the agent's callbacks that tests wait on.

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/devices/agent/agent.h"

namespace regatta::devices::testing {

// A fresh directory under /tmp (Unix socket paths must stay under 108 bytes), removed after.
class ScratchDir {
 public:
  ScratchDir() {
    char pattern[] = "/tmp/rgdev.XXXXXX";
    path_ = mkdtemp(pattern);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }
  std::string File(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline void WriteFile(const std::string& path, const std::string& content) {
  std::ofstream(path, std::ios::trunc) << content;
}

// Records what the agent reports, per configuration.
class Recorder {
 public:
  AgentCallbacks Callbacks() {
    AgentCallbacks callbacks;
    callbacks.on_devices = [this](const std::string& configuration,
                                  const std::vector<DiscoveredDevice>& devices) {
      absl::MutexLock lock(&mu_);
      devices_[configuration] = devices;
      ++device_reports_[configuration];
    };
    callbacks.on_error = [this](const std::string& configuration, const std::string& error) {
      absl::MutexLock lock(&mu_);
      errors_[configuration] = error;
      error_history_[configuration].push_back(error);
    };
    return callbacks;
  }

  // Waits until the last device set of `configuration` has exactly these ids.
  bool WaitForIds(const std::string& configuration, std::vector<std::string> ids,
                  absl::Duration timeout = absl::Seconds(5)) {
    std::sort(ids.begin(), ids.end());
    absl::MutexLock lock(&mu_);
    auto matches = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      auto it = devices_.find(configuration);
      if (it == devices_.end()) return false;
      std::vector<std::string> have;
      for (const DiscoveredDevice& d : it->second) have.push_back(d.device.id());
      return have == ids;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&matches), timeout);
  }

  // Waits until the last error of `configuration` contains `part` ("" waits for a cleared one).
  bool WaitForError(const std::string& configuration, const std::string& part,
                    absl::Duration timeout = absl::Seconds(5)) {
    absl::MutexLock lock(&mu_);
    auto matches = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      auto it = errors_.find(configuration);
      if (it == errors_.end()) return false;
      return part.empty() ? it->second.empty() : it->second.find(part) != std::string::npos;
    };
    return mu_.AwaitWithTimeout(absl::Condition(&matches), timeout);
  }

  std::vector<DiscoveredDevice> Devices(const std::string& configuration) {
    absl::MutexLock lock(&mu_);
    return devices_[configuration];
  }
  std::string Error(const std::string& configuration) {
    absl::MutexLock lock(&mu_);
    return errors_[configuration];
  }
  int DeviceReports(const std::string& configuration) {
    absl::MutexLock lock(&mu_);
    return device_reports_[configuration];
  }

 private:
  absl::Mutex mu_;
  std::map<std::string, std::vector<DiscoveredDevice>> devices_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, int> device_reports_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> errors_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::vector<std::string>> error_history_ ABSL_GUARDED_BY(mu_);
};

// Waits (real time) for `condition` to hold, checking every few milliseconds.
template <typename F>
bool Eventually(F condition, absl::Duration timeout = absl::Seconds(5)) {
  absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (condition()) return true;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return condition();
}

}  // namespace regatta::devices::testing

#endif  // REGATTA_TESTS_UNIT_DEVICES_AGENT_TEST_UTIL_H_
