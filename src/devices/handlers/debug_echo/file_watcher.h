#ifndef REGATTA_SRC_DEVICES_HANDLERS_DEBUG_ECHO_FILE_WATCHER_H_
#define REGATTA_SRC_DEVICES_HANDLERS_DEBUG_ECHO_FILE_WATCHER_H_

#include <cstdint>
#include <functional>
#include <string>
#include <thread>

#include "absl/time/time.h"

namespace regatta::devices::debug_echo {

// Calls `on_change` (on its own thread) soon after the file at `path` is created, written,
// replaced or removed. Watches the parent directory with inotify, so a file that does not exist
// yet or is replaced by a rename is seen; where inotify is unavailable (or the directory is
// missing) it compares the file's metadata every `poll_interval`. A spurious call is possible;
// a missed change is not.
class FileWatcher {
 public:
  FileWatcher(std::string path, std::function<void()> on_change,
              absl::Duration poll_interval = absl::Milliseconds(20));
  ~FileWatcher();
  FileWatcher(const FileWatcher&) = delete;
  FileWatcher& operator=(const FileWatcher&) = delete;

  // Whether changes arrive through inotify right now (else by polling).
  bool using_inotify() const { return watch_ >= 0; }

 private:
  // What changes when the file does; a missing file is all zeros.
  struct Snapshot {
    uint64_t device = 0;
    uint64_t inode = 0;
    int64_t size = 0;
    int64_t modified_ns = 0;
    int64_t changed_ns = 0;
    bool operator==(const Snapshot&) const = default;
  };
  static Snapshot Take(const std::string& path);
  void Loop(Snapshot last);
  void TryWatch();

  const std::string path_;
  std::string directory_;
  std::string file_name_;
  const std::function<void()> on_change_;
  const absl::Duration poll_interval_;
  int inotify_fd_ = -1;
  int watch_ = -1;
  int stop_fd_ = -1;  // an eventfd that wakes the loop to stop
  std::thread thread_;
};

}  // namespace regatta::devices::debug_echo

#endif  // REGATTA_SRC_DEVICES_HANDLERS_DEBUG_ECHO_FILE_WATCHER_H_
