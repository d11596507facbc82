#ifndef REGATTA_SRC_EXECUTOR_LOCAL_PROC_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_PROC_H_

#include <sys/types.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

// What the process supervisor reads from /proc: a process's start time (so a recycled pid is
// never mistaken for the one recorded), process-group membership, and which processes write to
// a given file (a run's output.log).
namespace regatta::executor::local {

struct ProcStat {
  char state = '?';  // R, S, D, Z, ...
  pid_t ppid = 0;
  pid_t pgrp = 0;
  // Field 22: clock ticks after boot at which the process started.
  uint64_t start_time = 0;
};

// Parses the contents of /proc/<pid>/stat (the command may contain spaces and parentheses).
absl::StatusOr<ProcStat> ParseProcStat(const std::string& contents);
// NOT_FOUND if the process does not exist (any more).
absl::StatusOr<ProcStat> ReadProcStat(pid_t pid);

// Whether `pid` is a process (not a zombie) that started at `start_time`.
bool ProcessIsAlive(pid_t pid, uint64_t start_time);

// Whether any process other than a zombie is in process group `pgid` (a /proc scan).
bool GroupHasLiveMembers(pid_t pgid);

// Reaps every member of process group `pgid` that is an exited child of this process (the
// leader after it ended, or orphans reparented here because this process is a child subreaper).
void ReapGroup(pid_t pgid);

// kill(-pgid, SIGKILL) until the group is gone (no member, or only zombies that are not ours for
// longer than a moment), reaping members that are our children. Returns false if members
// remained at `timeout`.
bool KillGroupAndWait(pid_t pgid, absl::Duration timeout);

// KillGroupAndWait for many groups at once: every group is signalled at the start and all share
// one deadline, so N groups take about as long as one. Returns the groups that still had members
// at `timeout`.
std::set<pid_t> KillGroupsAndWait(const std::set<pid_t>& pgids, absl::Duration timeout);

// The process groups among `pgids` that have a member other than a zombie (one /proc scan).
std::set<pid_t> GroupsWithLiveMembers(const std::set<pid_t>& pgids);

// Zombie children of this process that were reparented to it (it is a child subreaper) from
// process groups or sessions that are not its own: orphans of runs. `groups` are the process
// groups of runs; their `exclude` leaders are left for their own waitid.
std::vector<pid_t> FindOrphanZombies(const std::set<pid_t>& groups, const std::set<pid_t>& exclude);

// The process groups of processes whose stdout or stderr is one of `paths`, by path.
std::map<std::string, std::set<pid_t>> FindGroupsWritingTo(const std::set<std::string>& paths);

// Whether signalling process group `pgid` is safe: not ours, not init's, not "every process".
bool IsForeignGroup(pid_t pgid);

}  // namespace regatta::executor::local

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_PROC_H_
