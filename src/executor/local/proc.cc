#include "src/executor/local/proc.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "src/executor/local/files.h"

namespace regatta::executor::local {
namespace {

// Numeric entries of /proc.
std::vector<pid_t> ListPids() {
  std::vector<pid_t> pids;
  DIR* dir = ::opendir("/proc");
  if (dir == nullptr) return pids;
  while (struct dirent* entry = ::readdir(dir)) {
    int pid = 0;
    if (absl::SimpleAtoi(entry->d_name, &pid) && pid > 0) pids.push_back(pid);
  }
  ::closedir(dir);
  return pids;
}

std::string ReadLink(const std::string& path) {
  char buf[4096];
  ssize_t n = ::readlink(path.c_str(), buf, sizeof(buf));
  if (n <= 0) return "";
  return std::string(buf, static_cast<size_t>(n));
}

}  // namespace

absl::StatusOr<ProcStat> ParseProcStat(const std::string& contents) {
  size_t close = contents.rfind(')');
  if (close == std::string::npos || close + 2 > contents.size()) {
    return absl::InvalidArgumentError("malformed /proc/<pid>/stat");
  }
  // Fields after "pid (comm) ": state is field 3.
  std::vector<absl::string_view> fields =
      absl::StrSplit(absl::string_view(contents).substr(close + 2), ' ', absl::SkipEmpty());
  constexpr size_t kStartTimeIndex = 22 - 3;
  if (fields.size() <= kStartTimeIndex || fields[0].size() != 1) {
    return absl::InvalidArgumentError("malformed /proc/<pid>/stat");
  }
  ProcStat stat;
  stat.state = fields[0][0];
  if (!absl::SimpleAtoi(fields[1], &stat.ppid) || !absl::SimpleAtoi(fields[2], &stat.pgrp) ||
      !absl::SimpleAtoi(fields[kStartTimeIndex], &stat.start_time)) {
    return absl::InvalidArgumentError("malformed /proc/<pid>/stat");
  }
  return stat;
}

absl::StatusOr<ProcStat> ReadProcStat(pid_t pid) {
  absl::StatusOr<std::string> contents = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  if (!contents.ok()) {
    if (absl::IsNotFound(contents.status())) return contents.status();
    return absl::NotFoundError(contents.status().message());  // e.g. ESRCH while exiting
  }
  return ParseProcStat(*contents);
}

bool ProcessIsAlive(pid_t pid, uint64_t start_time) {
  if (pid <= 0) return false;
  absl::StatusOr<ProcStat> stat = ReadProcStat(pid);
  return stat.ok() && stat->state != 'Z' && stat->start_time == start_time;
}

bool GroupHasLiveMembers(pid_t pgid) { return !GroupsWithLiveMembers({pgid}).empty(); }

std::set<pid_t> GroupsWithLiveMembers(const std::set<pid_t>& pgids) {
  std::set<pid_t> live;
  if (pgids.empty()) return live;
  for (pid_t pid : ListPids()) {
    absl::StatusOr<ProcStat> stat = ReadProcStat(pid);
    if (stat.ok() && stat->state != 'Z' && pgids.count(stat->pgrp) > 0) live.insert(stat->pgrp);
  }
  return live;
}

void ReapGroup(pid_t pgid) {
  if (!IsForeignGroup(pgid)) return;
  while (true) {
    siginfo_t info;
    info.si_pid = 0;
    if (::waitid(P_PGID, static_cast<id_t>(pgid), &info, WEXITED | WNOHANG) != 0) {
      if (errno == EINTR) continue;
      return;  // ECHILD: none of our children is in the group
    }
    if (info.si_pid == 0) return;  // members left, none exited
  }
}

bool KillGroupAndWait(pid_t pgid, absl::Duration timeout) {
  return KillGroupsAndWait({pgid}, timeout).empty();
}

std::set<pid_t> KillGroupsAndWait(const std::set<pid_t>& pgids, absl::Duration timeout) {
  std::set<pid_t> left;
  for (pid_t pgid : pgids) {
    if (IsForeignGroup(pgid)) left.insert(pgid);
  }
  const absl::Time start = absl::Now();
  absl::Time next_scan = start + absl::Milliseconds(10);
  while (!left.empty()) {
    for (auto it = left.begin(); it != left.end();) {
      ReapGroup(*it);
      if (::kill(-*it, SIGKILL) != 0 && errno == ESRCH) {
        it = left.erase(it);
      } else {
        ++it;
      }
    }
    if (left.empty()) break;
    const absl::Time now = absl::Now();
    // Killed processes that are not our children linger as zombies until their parent (often
    // init) reaps them: a group of only zombies is gone. One /proc scan covers every group.
    if (now >= next_scan) {
      left = GroupsWithLiveMembers(left);
      next_scan = now + absl::Milliseconds(10);
      if (left.empty()) break;
    }
    if (now - start > timeout) break;
    absl::SleepFor(absl::Milliseconds(2));
  }
  return left;
}

std::vector<pid_t> FindOrphanZombies(const std::set<pid_t>& groups,
                                     const std::set<pid_t>& exclude) {
  std::vector<pid_t> out;
  pid_t self = ::getpid();
  pid_t own_session = ::getsid(0);
  for (pid_t pid : ListPids()) {
    absl::StatusOr<std::string> contents = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
    if (!contents.ok()) continue;
    absl::StatusOr<ProcStat> stat = ParseProcStat(*contents);
    if (!stat.ok() || stat->state != 'Z' || stat->ppid != self || exclude.count(pid) > 0) continue;
    if (groups.count(stat->pgrp) > 0 || ::getsid(pid) != own_session) out.push_back(pid);
  }
  return out;
}

std::map<std::string, std::set<pid_t>> FindGroupsWritingTo(const std::set<std::string>& paths) {
  std::map<std::string, std::set<pid_t>> found;
  if (paths.empty()) return found;
  pid_t self = ::getpid();
  for (pid_t pid : ListPids()) {
    if (pid == self) continue;
    for (int fd : {1, 2}) {
      std::string target = ReadLink(absl::StrCat("/proc/", pid, "/fd/", fd));
      if (target.empty() || paths.count(target) == 0) continue;
      absl::StatusOr<ProcStat> stat = ReadProcStat(pid);
      if (stat.ok() && stat->state != 'Z' && IsForeignGroup(stat->pgrp)) {
        found[target].insert(stat->pgrp);
      }
      break;
    }
  }
  return found;
}

bool IsForeignGroup(pid_t pgid) { return pgid > 1 && pgid != ::getpgrp(); }

}  // namespace regatta::executor::local
