#include "src/devices/handlers/debug_echo/file_watcher.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <tuple>

namespace regatta::devices::debug_echo {
namespace {

constexpr uint32_t kEvents = IN_CREATE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_TO | IN_MOVED_FROM |
                             IN_DELETE | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF;

}  // namespace

FileWatcher::Snapshot FileWatcher::Take(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return {};
  return {info.st_dev, info.st_ino, info.st_size,
          info.st_mtim.tv_sec * 1'000'000'000LL + info.st_mtim.tv_nsec,
          info.st_ctim.tv_sec * 1'000'000'000LL + info.st_ctim.tv_nsec};
}

FileWatcher::FileWatcher(std::string path, std::function<void()> on_change,
                         absl::Duration poll_interval)
    : path_(std::move(path)), on_change_(std::move(on_change)), poll_interval_(poll_interval) {
  size_t slash = path_.rfind('/');
  if (slash == std::string::npos) {
    directory_ = ".";
    file_name_ = path_;
  } else {
    directory_ = slash == 0 ? "/" : path_.substr(0, slash);
    file_name_ = path_.substr(slash + 1);
  }
  inotify_fd_ = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
  stop_fd_ = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  TryWatch();
  // The first snapshot is taken here, not on the thread: a write right after construction
  // must count as a change.
  Snapshot first = Take(path_);
  thread_ = std::thread([this, first] { Loop(first); });
}

FileWatcher::~FileWatcher() {
  uint64_t one = 1;
  if (stop_fd_ >= 0) (void)!write(stop_fd_, &one, sizeof(one));
  if (thread_.joinable()) thread_.join();
  if (inotify_fd_ >= 0) close(inotify_fd_);
  if (stop_fd_ >= 0) close(stop_fd_);
}

void FileWatcher::TryWatch() {
  if (inotify_fd_ < 0 || watch_ >= 0) return;
  watch_ = inotify_add_watch(inotify_fd_, directory_.c_str(), kEvents);
}

void FileWatcher::Loop(Snapshot last) {
  const int poll_ms = static_cast<int>(absl::ToInt64Milliseconds(poll_interval_));
  while (true) {
    pollfd fds[2] = {{stop_fd_, POLLIN, 0}, {inotify_fd_, POLLIN, 0}};
    // With inotify, polling is only a safety net; without, it is how changes are seen.
    int timeout = using_inotify() ? 50 * poll_ms : poll_ms;
    int ready = poll(fds, inotify_fd_ >= 0 ? 2 : 1, timeout);
    if (ready > 0 && (fds[0].revents & POLLIN)) return;
    bool changed = false;
    if (ready > 0 && inotify_fd_ >= 0 && (fds[1].revents & POLLIN)) {
      alignas(inotify_event) char buffer[4096];
      ssize_t n;
      while ((n = read(inotify_fd_, buffer, sizeof(buffer))) > 0) {
        for (ssize_t offset = 0; offset < n;) {
          const auto* event = reinterpret_cast<const inotify_event*>(buffer + offset);
          if (event->mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF)) {
            // The directory itself went away: fall back to polling until it is back.
            if (event->wd == watch_) {
              inotify_rm_watch(inotify_fd_, watch_);
              watch_ = -1;
            }
            changed = true;
          } else if (event->len > 0 && file_name_ == event->name) {
            changed = true;
          }
          offset += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
        }
      }
    }
    TryWatch();
    Snapshot now = Take(path_);
    if (now != last) changed = true;
    last = now;
    if (changed) on_change_();
  }
}

}  // namespace regatta::devices::debug_echo
