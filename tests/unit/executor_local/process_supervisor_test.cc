#include "src/executor/local/process_supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/executor/local/process_supervisor_testing.h"
#include "src/executor/local/run_files.h"
#include "tests/unit/executor_local/test_util.h"

namespace regatta::executor {
namespace {

using ::regatta::executor::testing::ReadTextFile;
using ::regatta::executor::testing::TempDir;
using ::regatta::executor::testing::WriteTextFile;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr absl::Duration kGrace = absl::Milliseconds(200);

// Every process of group `pgid` in /proc, as "pid state ppid" (for failure messages).
std::string DescribeGroup(pid_t pgid) {
  std::string out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (struct dirent* entry = readdir(dir)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    std::string stat = ReadTextFile(absl::StrCat("/proc/", pid, "/stat"));
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
    int pgrp = 0;
    if (fields.size() > 2 && absl::SimpleAtoi(fields[2], &pgrp) && pgrp == pgid) {
      absl::StrAppend(&out, stat.substr(0, close + 1), " state=", fields[0], " ppid=", fields[1],
                      "; ");
    }
  }
  closedir(dir);
  return out;
}

// Non-zombie processes whose process group is `pgid`, from /proc.
std::set<pid_t> LiveMembers(pid_t pgid) {
  std::set<pid_t> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (struct dirent* entry = readdir(dir)) {
    int pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    std::string stat = ReadTextFile(absl::StrCat("/proc/", pid, "/stat"));
    size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::vector<std::string> fields = absl::StrSplit(stat.substr(close + 2), ' ');
    int pgrp = 0;
    if (fields.size() > 2 && fields[0] != "Z" && absl::SimpleAtoi(fields[2], &pgrp) &&
        pgrp == pgid) {
      out.insert(pid);
    }
  }
  closedir(dir);
  return out;
}

// The whole group is gone: kill(-pgid, 0) fails with ESRCH and /proc has no live member.
void ExpectGroupGone(pid_t pgid) {
  ASSERT_GT(pgid, 1);
  errno = 0;
  EXPECT_EQ(kill(-pgid, 0), -1) << "process group " << pgid
                                << " still exists: " << DescribeGroup(pgid);
  EXPECT_EQ(errno, ESRCH);
  EXPECT_THAT(LiveMembers(pgid), IsEmpty());
}

class SupervisorTest : public ::testing::Test {
 protected:
  SupervisorOptions Options() {
    SupervisorOptions options;
    options.root_dir = dir_.Sub("root");
    options.clock = &clock_;
    options.default_termination_grace = kGrace;
    options.base_env = {{"PATH", "/usr/local/bin:/usr/bin:/bin"}, {"LANG", "C"}};
    return options;
  }

  std::unique_ptr<ProcessSupervisor> OpenSupervisor() {
    absl::StatusOr<std::unique_ptr<ProcessSupervisor>> s = ProcessSupervisor::Open(Options());
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() ? *std::move(s) : nullptr;
  }

  static RunLaunch Launch(const std::string& run_id, std::vector<std::string> argv) {
    RunLaunch launch;
    launch.run_id = run_id;
    launch.argv = std::move(argv);
    launch.metadata = "meta-" + run_id;
    return launch;
  }
  static RunLaunch Shell(const std::string& run_id, const std::string& script) {
    return Launch(run_id, {"sh", "-c", script});
  }

  // The result of `run_id`, waiting up to `timeout`; other results are kept for later calls.
  std::optional<RunResult> WaitFor(ProcessSupervisor& s, const std::string& run_id,
                                   absl::Duration timeout = absl::Seconds(10)) {
    absl::Time until = absl::Now() + timeout;
    while (true) {
      if (auto it = pending_.find(run_id); it != pending_.end()) {
        RunResult r = it->second;
        pending_.erase(it);
        return r;
      }
      absl::Duration left = until - absl::Now();
      if (left <= absl::ZeroDuration()) return std::nullopt;
      for (RunResult& r : s.WaitResults(std::min(left, absl::Milliseconds(100)))) {
        pending_[r.run_id] = std::move(r);
      }
    }
  }

  // Waits until the run's log contains `needle`; returns the log.
  static std::string WaitForLog(ProcessSupervisor& s, const std::string& run_id,
                                absl::string_view needle,
                                absl::Duration timeout = absl::Seconds(10)) {
    absl::Time until = absl::Now() + timeout;
    std::string log;
    while (absl::Now() < until) {
      absl::StatusOr<LogRead> read = s.ReadLog(run_id, 0, 1 << 20);
      if (read.ok()) log = read->data;
      if (absl::StrContains(log, needle)) return log;
      absl::SleepFor(absl::Milliseconds(5));
    }
    ADD_FAILURE() << "the log of " << run_id << " never contained '" << needle << "': " << log;
    return log;
  }

  // The first line of the run's log as a pid (scripts start with `echo $$`).
  static pid_t WaitForPid(ProcessSupervisor& s, const std::string& run_id) {
    std::string log = WaitForLog(s, run_id, "\n");
    int pid = 0;
    EXPECT_TRUE(absl::SimpleAtoi(log.substr(0, log.find('\n')), &pid)) << log;
    return pid;
  }

  std::string RunDir(const std::string& run_id) { return dir_.Sub("root/runs/" + run_id); }

  TempDir dir_;
  FakeClock clock_{absl::FromUnixSeconds(1'800'000'000)};
  std::map<std::string, RunResult> pending_;
};

TEST_F(SupervisorTest, TrueSucceeds) {
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Launch("r1", {"true"})).ok());
  std::optional<RunResult> r = WaitFor(*s, "r1");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->end, RunEnd::kSucceeded);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->error.reason(), regatta::v1::ERROR_REASON_UNSPECIFIED);
  EXPECT_EQ(r->started, clock_.Now());
  EXPECT_EQ(r->finished, clock_.Now());
  EXPECT_THAT(s->ListRuns(), ::testing::ElementsAre(std::make_pair(std::string("r1"), false)));
  // The result is delivered before its file is written, and Forget waits for the file.
  s->Forget("r1");
  EXPECT_THAT(s->ListRuns(), IsEmpty());
  EXPECT_THAT(ReadTextFile(RunDir("r1") + "/result.json"), HasSubstr("\"succeeded\""));
  // Retired until pruned, not deleted: without state.json the directory is a forgotten run's.
  EXPECT_FALSE(std::filesystem::exists(RunDir("r1") + "/state.json"));
  EXPECT_TRUE(std::filesystem::exists(RunDir("r1") + "/forgotten.json"));
  EXPECT_TRUE(std::filesystem::exists(RunDir("r1") + "/result.json"));
  EXPECT_TRUE(std::filesystem::exists(RunDir("r1") + "/output.log"));

  // A new run of the same id starts without the old result: after a crash it is recovered as
  // itself (lost), not reported with the forgotten run's outcome.
  ASSERT_TRUE(s->Start(Shell("r1", "echo $$; exec sleep 600")).ok());
  EXPECT_FALSE(std::filesystem::exists(RunDir("r1") + "/result.json"));
  WaitForPid(*s, "r1");
  AbandonProcessesForTesting(*s);
  s.reset();
  std::vector<RecoveredRun> recovered = OpenSupervisor()->TakeRecovered();
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].result.end, RunEnd::kLost);
}

TEST_F(SupervisorTest, NonZeroExitIsTerminalContainerError) {
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Shell("r1", "exit 3")).ok());
  std::optional<RunResult> r = WaitFor(*s, "r1");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->end, RunEnd::kFailed);
  EXPECT_EQ(r->exit_code, 3);
  EXPECT_EQ(r->error.reason(), regatta::v1::ERROR_REASON_CONTAINER_ERROR);
  EXPECT_EQ(r->error.category(), "ContainerError");
  EXPECT_TRUE(r->error.terminal());
  EXPECT_EQ(r->error.exit_code(), 3);
  EXPECT_THAT(r->error.message(), HasSubstr("exited with code 3"));
}

TEST_F(SupervisorTest, KilledBySignalItDidNotGetFromUs) {
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Shell("r1", "kill -SEGV $$")).ok());
  std::optional<RunResult> r = WaitFor(*s, "r1");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->end, RunEnd::kFailed);
  EXPECT_EQ(r->signal, SIGSEGV);
  EXPECT_EQ(r->error.reason(), regatta::v1::ERROR_REASON_CONTAINER_ERROR);
  EXPECT_EQ(r->error.signal(), SIGSEGV);
  EXPECT_TRUE(r->error.terminal());
  EXPECT_THAT(r->error.message(), HasSubstr("SIGSEGV"));
}

TEST_F(SupervisorTest, MissingProgramIsFailedPreconditionAndLeavesNothing) {
  auto s = OpenSupervisor();
  absl::Status st = s->Start(Launch("r1", {"regatta-no-such-program", "x"}));
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
  EXPECT_EQ(st.message(), "cannot execute 'regatta-no-such-program': No such file or directory");
  EXPECT_THAT(s->ListRuns(), IsEmpty());
  EXPECT_THAT(s->WaitResults(absl::Milliseconds(100)), IsEmpty());
  EXPECT_FALSE(std::filesystem::exists(RunDir("r1") + "/state.json"));

  st = s->Start(Launch("r2", {"/no/such/dir/prog"}));
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("cannot execute '/no/such/dir/prog'"));

  // Not executable.
  std::string script = dir_.Sub("not-executable.sh");
  WriteTextFile(script, "#!/bin/sh\nexit 0\n");
  chmod(script.c_str(), 0644);
  st = s->Start(Launch("r3", {script}));
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("Permission denied"));

  // A working directory that does not exist.
  RunLaunch launch = Launch("r4", {"true"});
  launch.working_dir = dir_.Sub("missing");
  st = s->Start(launch);
  EXPECT_TRUE(absl::IsFailedPrecondition(st)) << st;
  EXPECT_THAT(st.message(), HasSubstr("working_dir"));
  EXPECT_THAT(st.message(), HasSubstr("No such file or directory"));

  // The id is free again afterwards.
  EXPECT_TRUE(s->Start(Launch("r1", {"true"})).ok());
  ASSERT_TRUE(WaitFor(*s, "r1").has_value());
}

TEST_F(SupervisorTest, InvalidAndDuplicateRuns) {
  auto s = OpenSupervisor();
  EXPECT_TRUE(absl::IsInvalidArgument(s->Start(Launch("../x", {"true"}))));
  EXPECT_TRUE(absl::IsInvalidArgument(s->Start(Launch("", {"true"}))));
  EXPECT_TRUE(absl::IsInvalidArgument(s->Start(Launch("r1", {}))));
  ASSERT_TRUE(s->Start(Launch("r1", {"sleep", "600"})).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(s->Start(Launch("r1", {"true"}))));
  EXPECT_THAT(s->ListRuns(), ::testing::ElementsAre(std::make_pair(std::string("r1"), true)));
  EXPECT_TRUE(absl::IsNotFound(s->Stop("nope", RunEnd::kCancelled)));
  EXPECT_TRUE(absl::IsInvalidArgument(s->Stop("r1", RunEnd::kFailed)));
  s->Forget("r1");  // running: ignored
  EXPECT_EQ(s->ListRuns().size(), 1u);
  ASSERT_TRUE(s->Stop("r1", RunEnd::kCancelled).ok());
  ASSERT_TRUE(WaitFor(*s, "r1").has_value());
  // Finished but not forgotten: still known.
  EXPECT_TRUE(absl::IsAlreadyExists(s->Start(Launch("r1", {"true"}))));
  EXPECT_TRUE(absl::IsNotFound(s->Stop("r1", RunEnd::kCancelled)));
  s->Forget("r1");
  EXPECT_TRUE(s->Start(Launch("r1", {"true"})).ok());
  ASSERT_TRUE(WaitFor(*s, "r1").has_value());
}

TEST_F(SupervisorTest, SecondSupervisorOnTheSameRootIsRefused) {
  auto s = OpenSupervisor();
  absl::StatusOr<std::unique_ptr<ProcessSupervisor>> other = ProcessSupervisor::Open(Options());
  EXPECT_TRUE(absl::IsFailedPrecondition(other.status())) << other.status();
}

TEST_F(SupervisorTest, EnvironmentAndWorkingDirReachTheProcess) {
  setenv("REGATTA_SUPERVISOR_TEST_LEAK", "leaked", 1);
  auto s = OpenSupervisor();
  std::string wd = dir_.Sub("wd");
  std::filesystem::create_directories(wd);
  SupervisorOptions options = Options();
  RunLaunch launch = Shell("r1",
                           "echo \"A=$A B=$B LANG=$LANG pwd=$(pwd)\"; "
                           "echo \"leak=${REGATTA_SUPERVISOR_TEST_LEAK:-none}\"");
  launch.env = {{"A", "run-a"}, {"LANG", "en_US.UTF-8"}};
  launch.working_dir = wd;
  ASSERT_TRUE(s->Start(launch).ok());
  ASSERT_EQ(WaitFor(*s, "r1")->end, RunEnd::kSucceeded);
  std::string log = s->ReadLog("r1", 0, 4096)->data;
  EXPECT_THAT(log, HasSubstr("A=run-a B= LANG=en_US.UTF-8 pwd=" + wd + "\n"));
  EXPECT_THAT(log, HasSubstr("leak=none"));
  unsetenv("REGATTA_SUPERVISOR_TEST_LEAK");

  // Default working directory: the run's own.
  ASSERT_TRUE(s->Start(Shell("r2", "pwd")).ok());
  ASSERT_EQ(WaitFor(*s, "r2")->end, RunEnd::kSucceeded);
  EXPECT_THAT(s->ReadLog("r2", 0, 4096)->data, HasSubstr("/runs/r2/work\n"));
}

TEST_F(SupervisorTest, ProgramIsLookedUpInTheRunsPath) {
  auto s = OpenSupervisor();
  std::string bin = dir_.Sub("bin");
  WriteTextFile(bin + "/regatta-hello", "#!/bin/sh\necho hello from $0\n");
  chmod((bin + "/regatta-hello").c_str(), 0755);
  RunLaunch launch = Launch("r1", {"regatta-hello"});
  EXPECT_TRUE(absl::IsFailedPrecondition(s->Start(launch)));  // not in the base PATH
  launch.env = {{"PATH", bin + ":/usr/bin:/bin"}};
  ASSERT_TRUE(s->Start(launch).ok());
  ASSERT_EQ(WaitFor(*s, "r1")->end, RunEnd::kSucceeded);
  EXPECT_THAT(s->ReadLog("r1", 0, 4096)->data, HasSubstr("hello from " + bin + "/regatta-hello"));
}

TEST_F(SupervisorTest, StdioSignalsAndDescriptorsAreClean) {
  // The server blocks SIGTERM in every thread and ignores SIGPIPE; children must not inherit
  // either, nor a descriptor without O_CLOEXEC, nor the server's stdin.
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &block, &old_mask), 0);
  struct sigaction ignore = {}, old_pipe = {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGPIPE, &ignore, &old_pipe);
  int leaked = open("/dev/null", O_RDONLY);  // no O_CLOEXEC
  ASSERT_GE(leaked, 0);
  ASSERT_EQ(dup2(leaked, 77), 77);

  auto s = OpenSupervisor();
  ASSERT_TRUE(
      s->Start(
           Shell("r1",
                 "grep -E 'SigBlk|SigIgn' /proc/self/status; "
                 "echo stdin=$(readlink /proc/$$/fd/0); "
                 "echo fds: $(ls /proc/$$/fd); echo pgid=$(cut -d' ' -f5 /proc/$$/stat) pid=$$"))
          .ok());
  ASSERT_EQ(WaitFor(*s, "r1")->end, RunEnd::kSucceeded);
  std::string log = s->ReadLog("r1", 0, 4096)->data;

  close(77);
  close(leaked);
  sigaction(SIGPIPE, &old_pipe, nullptr);
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);

  EXPECT_THAT(log, HasSubstr("SigBlk:\t0000000000000000"));
  EXPECT_THAT(log, HasSubstr("SigIgn:\t0000000000000000"));
  EXPECT_THAT(log, HasSubstr("stdin=/dev/null"));
  std::string fds = log.substr(log.find("fds:"));
  fds = fds.substr(0, fds.find('\n'));
  EXPECT_THAT(fds, Not(HasSubstr(" 77")));
  // Its own process group: pgid == pid.
  std::string pg = log.substr(log.find("pgid="));
  pg = pg.substr(0, pg.find('\n'));
  std::vector<std::string> parts = absl::StrSplit(pg, ' ');
  ASSERT_EQ(parts.size(), 2u) << pg;
  EXPECT_EQ(parts[0].substr(5), parts[1].substr(4)) << pg;
}

TEST_F(SupervisorTest, StdoutAndStderrLandInTheLog) {
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Shell("r1", "echo out1; echo err1 >&2; echo out2; echo err2 >&2")).ok());
  ASSERT_EQ(WaitFor(*s, "r1")->end, RunEnd::kSucceeded);
  absl::StatusOr<LogRead> read = s->ReadLog("r1", 0, 4096);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->data, "out1\nerr1\nout2\nerr2\n");
  EXPECT_EQ(read->next_offset, 20);
  EXPECT_TRUE(read->finished);
  // In pieces.
  read = s->ReadLog("r1", 0, 5);
  EXPECT_EQ(read->data, "out1\n");
  EXPECT_FALSE(read->finished);
  read = s->ReadLog("r1", 5, 100);
  EXPECT_EQ(read->data, "err1\nout2\nerr2\n");
  EXPECT_TRUE(read->finished);
  read = s->ReadLog("r1", 20, 100);
  EXPECT_EQ(read->data, "");
  EXPECT_TRUE(read->finished);
  EXPECT_EQ(*s->TailOffset("r1", 1), 15);
  EXPECT_EQ(*s->TailOffset("r1", 2), 10);
  EXPECT_EQ(*s->TailOffset("r1", 4), 0);
  EXPECT_EQ(*s->TailOffset("r1", 100), 0);
  EXPECT_EQ(*s->TailOffset("r1", 0), 20);
  EXPECT_TRUE(absl::IsNotFound(s->ReadLog("unknown", 0, 10).status()));
  EXPECT_TRUE(absl::IsNotFound(s->TailOffset("unknown", 1).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(s->ReadLog("../../etc", 0, 10).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(s->ReadLog("r1", -1, 10).status()));
}

TEST_F(SupervisorTest, LogIsReadableWhileRunningAndAfterForgetUntilPruned) {
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Shell("r1", "echo a; echo b >&2; printf partial; sleep 600")).ok());
  WaitForLog(*s, "r1", "partial");
  absl::StatusOr<LogRead> read = s->ReadLog("r1", 0, 4096);
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(read->data, "a\nb\npartial");
  EXPECT_FALSE(read->finished);           // still running
  EXPECT_EQ(*s->TailOffset("r1", 1), 4);  // the unterminated last line
  EXPECT_EQ(*s->TailOffset("r1", 2), 2);
  ASSERT_TRUE(s->Stop("r1", RunEnd::kCancelled).ok());
  ASSERT_EQ(WaitFor(*s, "r1")->end, RunEnd::kCancelled);
  read = s->ReadLog("r1", read->next_offset, 4096);
  EXPECT_EQ(read->data, "");
  EXPECT_TRUE(read->finished);

  s->Forget("r1");
  read = s->ReadLog("r1", 0, 4096);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->data, "a\nb\npartial");
  EXPECT_TRUE(read->finished);
  // Retired, not deleted (deleting slows every new file on ext4 without a journal): the next
  // supervisor on this root does not report it again.
  EXPECT_FALSE(std::filesystem::exists(RunDir("r1") + "/state.json"));
  EXPECT_TRUE(std::filesystem::exists(RunDir("r1") + "/forgotten.json"));
  s->Prune();  // within the retention: kept
  EXPECT_TRUE(s->ReadLog("r1", 0, 4096).ok());

  SupervisorOptions options = Options();
  s.reset();
  options.log_retention = absl::ZeroDuration();
  auto pruning = ProcessSupervisor::Open(options);
  ASSERT_TRUE(pruning.ok());
  ASSERT_TRUE((*pruning)->Start(Launch("kept", {"true"})).ok());
  ASSERT_TRUE(WaitFor(**pruning, "kept").has_value());
  (*pruning)->Prune();
  EXPECT_TRUE(absl::IsNotFound((*pruning)->ReadLog("r1", 0, 4096).status()));
  EXPECT_FALSE(std::filesystem::exists(RunDir("r1")));
  EXPECT_TRUE((*pruning)->ReadLog("kept", 0, 4096).ok());  // not forgotten: kept
}

TEST_F(SupervisorTest, DeadlineExceeded) {
  auto s = OpenSupervisor();
  RunLaunch launch = Launch("r1", {"sleep", "600"});
  launch.active_deadline = absl::Milliseconds(300);
  absl::Time start = absl::Now();
  ASSERT_TRUE(s->Start(launch).ok());
  std::optional<RunResult> r = WaitFor(*s, "r1");
  ASSERT_TRUE(r.has_value());
  absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_LT(took, absl::Seconds(3));
  EXPECT_EQ(r->end, RunEnd::kFailed);
  EXPECT_EQ(r->error.reason(), regatta::v1::ERROR_REASON_DEADLINE_EXCEEDED);
  EXPECT_EQ(r->error.category(), "DeadlineExceeded");
  EXPECT_TRUE(r->error.terminal());
  EXPECT_THAT(r->error.message(), HasSubstr("exceeded its active deadline of 300ms"));
  EXPECT_EQ(r->signal, SIGTERM);
}

TEST_F(SupervisorTest, StopKillsTheWholeProcessGroup) {
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Shell("r1", "echo $$; sleep 600 & sleep 600 & wait")).ok());
  pid_t pgid = WaitForPid(*s, "r1");
  absl::Time until = absl::Now() + absl::Seconds(5);
  while (LiveMembers(pgid).size() < 3 && absl::Now() < until) absl::SleepFor(absl::Milliseconds(5));
  ASSERT_EQ(LiveMembers(pgid).size(), 3u);
  ASSERT_TRUE(s->Stop("r1", RunEnd::kCancelled).ok());
  std::optional<RunResult> r = WaitFor(*s, "r1");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->end, RunEnd::kCancelled);
  ExpectGroupGone(pgid);
}

TEST_F(SupervisorTest, PreemptReportsPreempted) {
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Launch("r1", {"sleep", "600"})).ok());
  ASSERT_TRUE(s->Stop("r1", RunEnd::kPreempted).ok());
  EXPECT_EQ(WaitFor(*s, "r1")->end, RunEnd::kPreempted);
}

TEST_F(SupervisorTest, IgnoredSigtermIsFollowedBySigkillAfterTheGrace) {
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Shell("r1", "trap '' TERM; echo $$; sleep 600")).ok());
  pid_t pgid = WaitForPid(*s, "r1");
  absl::Time start = absl::Now();
  ASSERT_TRUE(s->Stop("r1", RunEnd::kCancelled, absl::Milliseconds(300)).ok());
  std::optional<RunResult> r = WaitFor(*s, "r1");
  ASSERT_TRUE(r.has_value());
  absl::Duration took = absl::Now() - start;
  EXPECT_GE(took, absl::Milliseconds(300));
  EXPECT_LT(took, absl::Seconds(3));
  EXPECT_EQ(r->end, RunEnd::kCancelled);
  EXPECT_EQ(r->signal, SIGKILL);
  ExpectGroupGone(pgid);
}

TEST_F(SupervisorTest, BlockedSigtermInTheCallerIsNotInherited) {
  sigset_t block, old_mask;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  ASSERT_EQ(pthread_sigmask(SIG_BLOCK, &block, &old_mask), 0);
  auto s = OpenSupervisor();
  ASSERT_TRUE(
      s->Start(Shell("r1", "trap 'echo got-term; exit 0' TERM; echo ready; sleep 600 & wait"))
          .ok());
  pthread_sigmask(SIG_SETMASK, &old_mask, nullptr);
  WaitForLog(*s, "r1", "ready");
  absl::Time start = absl::Now();
  // A long grace: the result must come from SIGTERM, not from the SIGKILL after the grace.
  ASSERT_TRUE(s->Stop("r1", RunEnd::kCancelled, absl::Seconds(20)).ok());
  std::optional<RunResult> r = WaitFor(*s, "r1", absl::Seconds(15));
  ASSERT_TRUE(r.has_value());
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  EXPECT_EQ(r->end, RunEnd::kCancelled);
  EXPECT_EQ(r->exit_code, 0);
  EXPECT_EQ(r->signal, 0);
  EXPECT_THAT(s->ReadLog("r1", 0, 4096)->data, HasSubstr("got-term"));
}

TEST_F(SupervisorTest, GrandchildLeftBehindIsKilled) {
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Shell("r1", "echo $$; sleep 600 & echo $!")).ok());
  std::optional<RunResult> r = WaitFor(*s, "r1");
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r->end, RunEnd::kSucceeded);
  std::vector<std::string> lines =
      absl::StrSplit(s->ReadLog("r1", 0, 4096)->data, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u);
  int pgid = 0, grandchild = 0;
  ASSERT_TRUE(absl::SimpleAtoi(lines[0], &pgid));
  ASSERT_TRUE(absl::SimpleAtoi(lines[1], &grandchild));
  ExpectGroupGone(pgid);
  std::string stat = ReadTextFile(absl::StrCat("/proc/", grandchild, "/stat"));
  EXPECT_TRUE(stat.empty() || stat.find(") Z ") != std::string::npos) << stat;
}

TEST_F(SupervisorTest, WithoutPidfdsRunsAreStillSupervised) {
  DisablePidfdForTesting(true);
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Shell("exit", "exit 5")).ok());
  RunLaunch deadline = Launch("deadline", {"sleep", "600"});
  deadline.active_deadline = absl::Milliseconds(100);
  ASSERT_TRUE(s->Start(deadline).ok());
  ASSERT_TRUE(s->Start(Shell("stop", "echo $$; sleep 600 & wait")).ok());
  pid_t pgid = WaitForPid(*s, "stop");
  DisablePidfdForTesting(false);
  EXPECT_EQ(WaitFor(*s, "exit")->exit_code, 5);
  EXPECT_EQ(WaitFor(*s, "deadline")->error.reason(), regatta::v1::ERROR_REASON_DEADLINE_EXCEEDED);
  ASSERT_TRUE(s->Stop("stop", RunEnd::kPreempted).ok());
  EXPECT_EQ(WaitFor(*s, "stop")->end, RunEnd::kPreempted);
  ExpectGroupGone(pgid);
}

TEST_F(SupervisorTest, OrphansThatLeftTheGroupAreReapedNotLeftAsZombies) {
  // A process that calls setsid escapes the group kill (only a cgroup could catch it); once it
  // exits it is our zombie (we are a child subreaper) and must be reaped.
  auto s = OpenSupervisor();
  ASSERT_TRUE(s->Start(Launch("keeper", {"sleep", "600"})).ok());  // keeps reaping frequent
  ASSERT_TRUE(s->Start(Shell("escaper", "setsid sleep 0.3 & echo $!")).ok());
  ASSERT_EQ(WaitFor(*s, "escaper")->end, RunEnd::kSucceeded);
  std::string log = s->ReadLog("escaper", 0, 100)->data;
  int escaped = 0;
  ASSERT_TRUE(absl::SimpleAtoi(log.substr(0, log.find('\n')), &escaped)) << log;
  absl::Time until = absl::Now() + absl::Seconds(5);
  while (absl::Now() < until && !ReadTextFile(absl::StrCat("/proc/", escaped, "/stat")).empty()) {
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ(ReadTextFile(absl::StrCat("/proc/", escaped, "/stat")), "") << "not reaped";
  ASSERT_TRUE(s->Stop("keeper", RunEnd::kCancelled).ok());
  ASSERT_TRUE(WaitFor(*s, "keeper").has_value());
}

TEST_F(SupervisorTest, ManyConcurrentRuns) {
  auto s = OpenSupervisor();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 8; ++i) {
        std::string id = absl::StrCat("r", t, "-", i);
        EXPECT_TRUE(s->Start(Shell(id, i % 2 == 0 ? "exit 0" : "exit 7")).ok());
      }
    });
  }
  for (auto& t : threads) t.join();
  for (int t = 0; t < 4; ++t) {
    for (int i = 0; i < 8; ++i) {
      std::optional<RunResult> r = WaitFor(*s, absl::StrCat("r", t, "-", i));
      ASSERT_TRUE(r.has_value());
      EXPECT_EQ(r->exit_code, i % 2 == 0 ? 0 : 7);
    }
  }
}

TEST_F(SupervisorTest, RecoveryKillsARunningRunAndReportsItLost) {
  pid_t pgid;
  {
    auto s = OpenSupervisor();
    ASSERT_TRUE(s->Start(Shell("r1", "echo $$; sleep 600 & exec sleep 600")).ok());
    pgid = WaitForPid(*s, "r1");
    absl::Time until = absl::Now() + absl::Seconds(5);
    while (LiveMembers(pgid).size() < 2 && absl::Now() < until) {
      absl::SleepFor(absl::Milliseconds(5));
    }
    AbandonProcessesForTesting(*s);  // as if the executor was killed -9
  }
  ASSERT_EQ(LiveMembers(pgid).size(), 2u);
  clock_.Advance(absl::Minutes(1));
  auto s = OpenSupervisor();
  ExpectGroupGone(pgid);
  std::vector<RecoveredRun> recovered = s->TakeRecovered();
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].run_id, "r1");
  EXPECT_EQ(recovered[0].metadata, "meta-r1");
  EXPECT_EQ(recovered[0].result.end, RunEnd::kLost);
  EXPECT_EQ(recovered[0].result.error.reason(), regatta::v1::ERROR_REASON_EXECUTOR_LOST);
  EXPECT_EQ(recovered[0].result.error.category(), "Infrastructure");
  EXPECT_FALSE(recovered[0].result.error.terminal());
  EXPECT_EQ(recovered[0].result.error.message(),
            "the executor restarted while the run was running; its outcome is unknown");
  EXPECT_EQ(recovered[0].result.finished, clock_.Now());
  EXPECT_THAT(s->TakeRecovered(), IsEmpty());
  // Known until forgotten; its log is readable.
  EXPECT_THAT(s->ListRuns(), ::testing::ElementsAre(std::make_pair(std::string("r1"), false)));
  EXPECT_TRUE(absl::IsAlreadyExists(s->Start(Launch("r1", {"true"}))));
  EXPECT_TRUE(s->ReadLog("r1", 0, 100)->finished);
  s->Forget("r1");
  EXPECT_THAT(s->ListRuns(), IsEmpty());
  s.reset();
  EXPECT_THAT(OpenSupervisor()->TakeRecovered(), IsEmpty());
}

TEST_F(SupervisorTest, RecoveryKillsLeftoversOfAnEndedMainProcess) {
  // The main process ended while the executor was down, its background child still runs.
  int grandchild = 0;
  {
    auto s = OpenSupervisor();
    ASSERT_TRUE(s->Start(Shell("r1", "sleep 600 & echo $!; exec sleep 0.2")).ok());
    std::string log = WaitForLog(*s, "r1", "\n");
    ASSERT_TRUE(absl::SimpleAtoi(log.substr(0, log.find('\n')), &grandchild));
    AbandonProcessesForTesting(*s);
  }
  absl::SleepFor(absl::Milliseconds(400));
  ASSERT_EQ(kill(grandchild, 0), 0);
  auto s = OpenSupervisor();
  std::vector<RecoveredRun> recovered = s->TakeRecovered();
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].result.end, RunEnd::kLost);
  EXPECT_THAT(recovered[0].result.error.message(),
              HasSubstr("restarted while the run was running"));
  std::string stat = ReadTextFile(absl::StrCat("/proc/", grandchild, "/stat"));
  EXPECT_TRUE(stat.empty() || stat.find(") Z ") != std::string::npos) << stat;
}

TEST_F(SupervisorTest, RecoveryReportsAFinishedRunWithItsResult) {
  {
    auto s = OpenSupervisor();
    ASSERT_TRUE(s->Start(Shell("done", "exit 4")).ok());
    ASSERT_TRUE(WaitFor(*s, "done").has_value());  // delivered, never forgotten
    ASSERT_TRUE(s->Start(Shell("ok", "true")).ok());
    ASSERT_TRUE(WaitFor(*s, "ok").has_value());
    s->Forget("ok");
    AbandonProcessesForTesting(*s);
  }
  auto s = OpenSupervisor();
  std::vector<RecoveredRun> recovered = s->TakeRecovered();
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].run_id, "done");
  EXPECT_EQ(recovered[0].metadata, "meta-done");
  EXPECT_EQ(recovered[0].result.end, RunEnd::kFailed);
  EXPECT_EQ(recovered[0].result.exit_code, 4);
  EXPECT_EQ(recovered[0].result.error.reason(), regatta::v1::ERROR_REASON_CONTAINER_ERROR);
  EXPECT_TRUE(recovered[0].result.error.terminal());
  EXPECT_EQ(recovered[0].result.started, clock_.Now());
}

TEST_F(SupervisorTest, WithoutFsyncRunsAreStillRecovered) {
  SupervisorOptions options = Options();
  options.sync_state = false;  // the local executor's default
  pid_t pgid;
  {
    auto s = ProcessSupervisor::Open(options);
    ASSERT_TRUE(s.ok());
    ASSERT_TRUE((*s)->Start(Shell("done", "exit 2")).ok());
    ASSERT_TRUE(WaitFor(**s, "done").has_value());
    ASSERT_TRUE((*s)->Start(Shell("running", "echo $$; exec sleep 600")).ok());
    pgid = WaitForPid(**s, "running");
    // The state file was rewritten in place with the process (no temporary left behind).
    absl::StatusOr<local::RunState> state =
        local::DecodeRunState(ReadTextFile(RunDir("running") + "/state.json"));
    ASSERT_TRUE(state.ok()) << state.status();
    EXPECT_EQ(state->pid, pgid);
    EXPECT_FALSE(std::filesystem::exists(RunDir("running") + "/.state.json.tmp"));
    AbandonProcessesForTesting(**s);
  }
  auto s = ProcessSupervisor::Open(options);
  ASSERT_TRUE(s.ok());
  ExpectGroupGone(pgid);
  std::vector<RecoveredRun> recovered = (*s)->TakeRecovered();
  ASSERT_EQ(recovered.size(), 2u);
  EXPECT_EQ(recovered[0].run_id, "done");
  EXPECT_EQ(recovered[0].result.exit_code, 2);
  EXPECT_EQ(recovered[1].run_id, "running");
  EXPECT_EQ(recovered[1].result.end, RunEnd::kLost);
}

TEST_F(SupervisorTest, RecoveryOfARunThatWasNeverStarted) {
  local::RunState state;
  state.run_id = "r1";
  state.metadata = std::string("\0\x01binary lease\xff", 15);
  state.argv = {"true"};
  state.started = clock_.Now();
  WriteTextFile(RunDir("r1") + "/state.json", local::EncodeRunState(state));
  auto s = OpenSupervisor();
  std::vector<RecoveredRun> recovered = s->TakeRecovered();
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0].metadata, state.metadata);
  EXPECT_EQ(recovered[0].result.end, RunEnd::kLost);
  EXPECT_EQ(recovered[0].result.error.message(), "the run was never started");
  EXPECT_FALSE(recovered[0].result.error.terminal());
}

TEST_F(SupervisorTest, RecoveryDoesNotKillARecycledPid) {
  // The recorded pid is alive but is another process (different start time): left alone.
  pid_t other = 0;
  {
    auto s = OpenSupervisor();
    ASSERT_TRUE(s->Start(Shell("other", "echo $$; exec sleep 600")).ok());
    other = WaitForPid(*s, "other");
    local::RunState state;
    state.run_id = "r1";
    state.pid = other;
    state.pid_start_time = 1;  // not the start time of `other`
    state.started = clock_.Now();
    WriteTextFile(RunDir("r1") + "/state.json", local::EncodeRunState(state));
    auto recovered_root = Options();
    recovered_root.root_dir = dir_.Sub("root2");
    WriteTextFile(recovered_root.root_dir + "/runs/r1/state.json", local::EncodeRunState(state));
    auto s2 = ProcessSupervisor::Open(recovered_root);
    ASSERT_TRUE(s2.ok());
    std::vector<RecoveredRun> recovered = (*s2)->TakeRecovered();
    ASSERT_EQ(recovered.size(), 1u);
    EXPECT_EQ(recovered[0].result.end, RunEnd::kLost);
    EXPECT_EQ(kill(other, 0), 0) << "a process with a recycled pid was killed";
    ASSERT_TRUE(s->Stop("other", RunEnd::kCancelled).ok());
    ASSERT_TRUE(WaitFor(*s, "other").has_value());
  }
}

TEST_F(SupervisorTest, CorruptStateFileIsReportedLostNamingTheFile) {
  WriteTextFile(RunDir("bad") + "/state.json", "{not json");
  WriteTextFile(RunDir("bad2") + "/state.json", "{\"version\": 1, \"run_id\": 5}");
  auto s = OpenSupervisor();
  std::vector<RecoveredRun> recovered = s->TakeRecovered();
  ASSERT_EQ(recovered.size(), 2u);
  for (const RecoveredRun& r : recovered) {
    EXPECT_EQ(r.result.end, RunEnd::kLost);
    EXPECT_THAT(r.result.error.message(), HasSubstr("runs/" + r.run_id + "/state.json"));
    EXPECT_THAT(r.result.error.message(), HasSubstr("corrupt"));
  }
  s->Forget("bad");
  s->Forget("bad2");
  EXPECT_THAT(s->ListRuns(), IsEmpty());
}

TEST_F(SupervisorTest, StopAllStopsEverythingAndLeavesResultsForTheNextProcess) {
  std::vector<pid_t> groups;
  {
    auto s = OpenSupervisor();
    ASSERT_TRUE(s->Start(Shell("a", "echo $$; sleep 600 & wait")).ok());
    ASSERT_TRUE(s->Start(Shell("b", "trap '' TERM; echo $$; sleep 600")).ok());
    groups = {WaitForPid(*s, "a"), WaitForPid(*s, "b")};
    absl::Time start = absl::Now();
    s->StopAll(absl::Milliseconds(200));
    EXPECT_LT(absl::Now() - start, absl::Seconds(3));
    for (pid_t pgid : groups) ExpectGroupGone(pgid);
    EXPECT_THAT(s->WaitResults(absl::Milliseconds(50)), IsEmpty());
    absl::Status st = s->Start(Launch("c", {"true"}));
    EXPECT_TRUE(absl::IsUnavailable(st)) << st;
  }
  auto s = OpenSupervisor();
  std::vector<RecoveredRun> recovered = s->TakeRecovered();
  ASSERT_EQ(recovered.size(), 2u);
  for (const RecoveredRun& r : recovered) {
    EXPECT_EQ(r.result.end, RunEnd::kLost);
    EXPECT_EQ(r.result.error.message(), "the executor shut down");
    EXPECT_FALSE(r.result.error.terminal());
  }
}

TEST_F(SupervisorTest, DestroyingTheSupervisorKillsItsRuns) {
  pid_t pgid;
  {
    auto s = OpenSupervisor();
    ASSERT_TRUE(s->Start(Shell("a", "echo $$; sleep 600")).ok());
    pgid = WaitForPid(*s, "a");
  }
  ExpectGroupGone(pgid);
}

TEST_F(SupervisorTest, MemoryLimitsAreEnforcedOnlyWithCgroupV2) {
  SupervisorOptions options = Options();
  options.use_cgroups = false;
  auto s = ProcessSupervisor::Open(options);
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE((*s)->EnforcesMemoryLimits());
  s->reset();
  // This machine decides; either way a limited run starts.
  auto t = OpenSupervisor();
  RunLaunch launch = Launch("r1", {"true"});
  launch.memory_limit_bytes = 256 << 20;
  ASSERT_TRUE(t->Start(launch).ok());
  EXPECT_EQ(WaitFor(*t, "r1")->end, RunEnd::kSucceeded);
}

TEST(MachineResourcesTest, DetectsThisMachine) {
  MachineResources m = DetectMachineResources();
  EXPECT_GE(m.cpu_milli, 1);
  EXPECT_LE(m.cpu_milli, int64_t{sysconf(_SC_NPROCESSORS_ONLN)} * 1000);
  EXPECT_GT(m.memory_bytes, 0);
  EXPECT_FALSE(m.hostname.empty());
}

}  // namespace
}  // namespace regatta::executor
