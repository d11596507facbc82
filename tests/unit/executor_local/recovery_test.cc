// Recovery of many leftover runs at once: the process groups of an earlier executor are killed
// together, not one after another.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "src/common/clock.h"
#include "src/executor/local/proc.h"
#include "src/executor/local/process_supervisor.h"
#include "src/executor/local/run_files.h"
#include "tests/unit/executor_local/test_util.h"

namespace regatta::executor {
namespace {

using ::regatta::executor::testing::TempDir;
using ::regatta::executor::testing::WriteTextFile;

// A shell that starts `n` sleeps, each in a session (and process group) of its own, prints their
// pids, then becomes a process that never waits for its children: like a crashed executor's
// leftovers under a parent that does not reap them at once, the killed sleeps stay zombies and
// only a /proc scan tells that their groups are gone.
class LeftoverGroups {
 public:
  explicit LeftoverGroups(int n) {
    pipe_ = ::popen(absl::StrCat("for i in $(seq ", n,
                                 "); do setsid sleep 600 </dev/null >/dev/null 2>&1 & echo $!; "
                                 "done; echo ready; exec sleep 600")
                        .c_str(),
                    "r");
    if (pipe_ == nullptr) return;
    char line[64];
    while (std::fgets(line, sizeof(line), pipe_) != nullptr) {
      absl::string_view text = absl::StripAsciiWhitespace(line);
      if (text == "ready") break;
      int pid = 0;
      if (absl::SimpleAtoi(text, &pid)) pids_.push_back(pid);
    }
    // `$!` is printed before the child has called setsid(): wait until each leads its group.
    const absl::Time until = absl::Now() + absl::Seconds(10);
    for (pid_t pid : pids_) {
      absl::StatusOr<local::ProcStat> stat = local::ReadProcStat(pid);
      while (stat.ok() && stat->pgrp != pid && absl::Now() < until) {
        absl::SleepFor(absl::Milliseconds(1));
        stat = local::ReadProcStat(pid);
      }
      if (stat.ok()) holder_ = stat->ppid;
    }
  }
  ~LeftoverGroups() {
    for (pid_t pid : pids_) ::kill(-pid, SIGKILL);
    if (pipe_ == nullptr) return;
    if (holder_ > 1) ::kill(holder_, SIGKILL);
    ::pclose(pipe_);
    // The holder's zombies may have been handed to this process (a child subreaper).
    for (pid_t pid : pids_) ::waitpid(pid, nullptr, WNOHANG);
  }

  const std::vector<pid_t>& pids() const { return pids_; }

 private:
  pid_t holder_ = 0;
  FILE* pipe_ = nullptr;
  std::vector<pid_t> pids_;
};

TEST(RecoveryTest, LeftoverProcessGroupsAreKilledTogether) {
  constexpr int kGroups = 50;
  TempDir dir;
  LeftoverGroups leftovers(kGroups);
  ASSERT_EQ(leftovers.pids().size(), static_cast<size_t>(kGroups));
  // The run directories an executor killed -9 leaves behind: a state file with the process.
  const std::string root = dir.Sub("root");
  std::set<pid_t> groups;
  for (int i = 0; i < kGroups; ++i) {
    const pid_t pid = leftovers.pids()[i];
    absl::StatusOr<local::ProcStat> stat = local::ReadProcStat(pid);
    ASSERT_TRUE(stat.ok()) << stat.status();
    ASSERT_EQ(stat->pgrp, pid);
    local::RunState state;
    state.run_id = absl::StrCat("run-", i);
    state.argv = {"sleep", "600"};
    state.pid = pid;
    state.pid_start_time = stat->start_time;
    state.started = absl::FromUnixSeconds(1'800'000'000);
    WriteTextFile(absl::StrCat(root, "/runs/", state.run_id, "/", local::kStateFile),
                  local::EncodeRunState(state));
    groups.insert(pid);
  }
  ASSERT_EQ(local::GroupsWithLiveMembers(groups), groups);

  FakeClock clock(absl::FromUnixSeconds(1'800'000'100));
  SupervisorOptions options;
  options.root_dir = root;
  options.clock = &clock;
  options.use_cgroups = false;
  options.reap_orphans = false;
  options.sync_state = false;  // as the local executor runs it
  const absl::Time start = absl::Now();
  absl::StatusOr<std::unique_ptr<ProcessSupervisor>> supervisor = ProcessSupervisor::Open(options);
  const absl::Duration took = absl::Now() - start;
  ASSERT_TRUE(supervisor.ok()) << supervisor.status();

  // One after another this took ~100 ms per group (5 s here).
  EXPECT_LT(took, absl::Seconds(2)) << "recovering " << kGroups << " leftover groups";
  std::cerr << "recovered " << kGroups << " leftover process groups in " << took << "\n";
  EXPECT_TRUE(local::GroupsWithLiveMembers(groups).empty());
  std::vector<RecoveredRun> recovered = (*supervisor)->TakeRecovered();
  ASSERT_EQ(recovered.size(), static_cast<size_t>(kGroups));
  for (const RecoveredRun& run : recovered) {
    EXPECT_EQ(run.result.end, RunEnd::kLost) << run.run_id;
    EXPECT_EQ(run.result.error.reason(), regatta::v1::ERROR_REASON_EXECUTOR_LOST) << run.run_id;
  }
}

TEST(RecoveryTest, KillGroupsAndWaitReportsNothingLeftForGoneGroups) {
  LeftoverGroups leftovers(3);
  ASSERT_EQ(leftovers.pids().size(), 3u);
  std::set<pid_t> groups(leftovers.pids().begin(), leftovers.pids().end());
  EXPECT_TRUE(local::KillGroupsAndWait(groups, absl::Seconds(5)).empty());
  EXPECT_TRUE(local::GroupsWithLiveMembers(groups).empty());
  // Groups that no longer exist at all, and our own group, which is never signalled.
  EXPECT_TRUE(local::KillGroupsAndWait({999'999'999, ::getpgrp()}, absl::Seconds(1)).empty());
}

}  // namespace
}  // namespace regatta::executor
