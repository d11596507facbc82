// Unit tests of the supervisor's building blocks: run files, /proc parsing, program lookup,
// environment merging, cgroup v2 detection and machine resources, with fake trees.
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/executor/local/cgroup.h"
#include "src/executor/local/files.h"
#include "src/executor/local/machine.h"
#include "src/executor/local/proc.h"
#include "src/executor/local/run_files.h"
#include "src/executor/local/spawn.h"
#include "tests/unit/executor_local/test_util.h"

namespace regatta::executor::local {
namespace {

using ::regatta::executor::testing::ReadTextFile;
using ::regatta::executor::testing::TempDir;
using ::regatta::executor::testing::WriteTextFile;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RunFilesTest, StateRoundTripsWithBinaryMetadata) {
  RunState state;
  state.run_id = "01HZX-run:1";
  state.metadata = std::string("\0\xff\x01lease", 8);
  state.argv = {"sh", "-c", "echo \"quoted\" \xff"};
  state.working_dir = "/tmp/x";
  state.pid = 1234;
  state.pid_start_time = 987654321;
  state.started = absl::FromUnixNanos(1'800'000'000'123'456'789);
  state.active_deadline = absl::Seconds(5);
  state.termination_grace = absl::Milliseconds(200);
  state.memory_limit_bytes = 1 << 30;
  absl::StatusOr<RunState> back = DecodeRunState(EncodeRunState(state));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->run_id, state.run_id);
  EXPECT_EQ(back->metadata, state.metadata);
  EXPECT_EQ(back->argv.size(), 3u);  // invalid UTF-8 is replaced, not fatal
  EXPECT_EQ(back->pid, 1234);
  EXPECT_EQ(back->pid_start_time, 987654321u);
  EXPECT_EQ(back->started, state.started);
  EXPECT_EQ(back->active_deadline, absl::Seconds(5));
  EXPECT_EQ(back->termination_grace, absl::Milliseconds(200));
  EXPECT_EQ(back->memory_limit_bytes, 1 << 30);
}

TEST(RunFilesTest, ResultRoundTrips) {
  RunResult result;
  result.run_id = "r";
  result.end = RunEnd::kFailed;
  result.error.set_reason(regatta::v1::ERROR_REASON_DEADLINE_EXCEEDED);
  result.error.set_message("m");
  result.error.set_category("DeadlineExceeded");
  result.error.set_terminal(true);
  result.error.set_signal(15);
  result.signal = 15;
  result.started = absl::FromUnixSeconds(10);
  result.finished = absl::FromUnixSeconds(20);
  absl::StatusOr<RunResult> back = DecodeRunResult(EncodeRunResult(result));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->end, RunEnd::kFailed);
  EXPECT_EQ(back->error.reason(), regatta::v1::ERROR_REASON_DEADLINE_EXCEEDED);
  EXPECT_EQ(back->error.category(), "DeadlineExceeded");
  EXPECT_TRUE(back->error.terminal());
  EXPECT_EQ(back->signal, 15);
  EXPECT_EQ(back->started, result.started);
  EXPECT_EQ(back->finished, result.finished);
}

TEST(RunFilesTest, CorruptFilesAreErrorsNotCrashes) {
  for (const char* text : {"", "{", "[]", "{\"version\": 2}", "{\"version\": 1}",
                           "{\"version\": 1, \"run_id\": 3}", "null", "\xff\xfe"}) {
    EXPECT_FALSE(DecodeRunState(text).ok()) << text;
    EXPECT_FALSE(DecodeRunResult(text).ok()) << text;
  }
  RunState state;
  state.run_id = "../escape";
  EXPECT_FALSE(DecodeRunState(EncodeRunState(state)).ok());
}

TEST(RunFilesTest, RunIds) {
  EXPECT_TRUE(ValidateRunId("01HZXABCDEF").ok());
  EXPECT_TRUE(ValidateRunId("job-1.run_2:3").ok());
  for (const char* bad : {"", ".", "..", "a/b", "a b", "x\n"}) {
    EXPECT_TRUE(absl::IsInvalidArgument(ValidateRunId(bad))) << bad;
  }
  EXPECT_FALSE(ValidateRunId(std::string(201, 'a')).ok());
}

TEST(FilesTest, AtomicWriteReplacesAndLeavesNoTemporary) {
  TempDir dir;
  std::string path = dir.Sub("f.json");
  ASSERT_TRUE(WriteFileAtomically(path, "one").ok());
  ASSERT_TRUE(WriteFileAtomically(path, "two").ok());
  EXPECT_EQ(*ReadFile(path), "two");
  EXPECT_FALSE(access(dir.Sub(".f.json.tmp").c_str(), F_OK) == 0);
  EXPECT_TRUE(absl::IsNotFound(ReadFile(dir.Sub("missing")).status()));
  EXPECT_TRUE(RemoveFileDurably(path).ok());
  EXPECT_TRUE(RemoveFileDurably(path).ok());
  EXPECT_FALSE(WriteFileAtomically(dir.Sub("no/such/dir/f"), "x").ok());
  EXPECT_TRUE(MakeDirs(dir.Sub("a/b/c")).ok());
  EXPECT_TRUE(MakeDirs(dir.Sub("a/b/c")).ok());
  EXPECT_EQ(ErrnoText(ENOENT), "No such file or directory");
}

// The state file's second write: no new inode (see StartReserved), and JSON padded to the old
// size still parses.
TEST(FilesTest, OverwriteInPlaceKeepsTheInodeAndPadsShorterContents) {
  TempDir dir;
  std::string path = dir.Sub("state.json");
  ASSERT_TRUE(WriteFileAtomically(path, R"({"pid": 0, "argv": ["a"]})").ok());
  struct stat before;
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  ASSERT_TRUE(OverwriteFileInPlace(path, R"({"pid": 12345, "argv": ["a"]})").ok());
  EXPECT_EQ(*ReadFile(path), R"({"pid": 12345, "argv": ["a"]})");
  ASSERT_TRUE(OverwriteFileInPlace(path, R"({"pid": 7})").ok());
  EXPECT_EQ(*ReadFile(path), std::string(R"({"pid": 7})") + std::string(19, ' '));
  struct stat after;
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(after.st_ino, before.st_ino);
  EXPECT_TRUE(absl::IsNotFound(OverwriteFileInPlace(dir.Sub("missing"), "x")));
}

TEST(ProcTest, ParsesStatWithAwkwardCommandNames) {
  std::string stat =
      "4242 (we ird) (name)) S 1 4240 4240 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
      "123456789 1000 100 18446744073709551615";
  absl::StatusOr<ProcStat> parsed = ParseProcStat(stat);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->state, 'S');
  EXPECT_EQ(parsed->ppid, 1);
  EXPECT_EQ(parsed->pgrp, 4240);
  EXPECT_EQ(parsed->start_time, 123456789u);
  EXPECT_FALSE(ParseProcStat("garbage").ok());
  EXPECT_FALSE(ParseProcStat("1 (x) S 1 2").ok());
}

TEST(ProcTest, ReadsThisProcess) {
  absl::StatusOr<ProcStat> self = ReadProcStat(getpid());
  ASSERT_TRUE(self.ok());
  EXPECT_EQ(self->pgrp, getpgrp());
  EXPECT_TRUE(ProcessIsAlive(getpid(), self->start_time));
  EXPECT_FALSE(ProcessIsAlive(getpid(), self->start_time + 1));
  EXPECT_FALSE(IsForeignGroup(getpgrp()));
  EXPECT_FALSE(IsForeignGroup(1));
  EXPECT_FALSE(IsForeignGroup(0));
}

TEST(SpawnTest, MergeEnvironmentLetsTheRunWin) {
  EXPECT_THAT(MergeEnvironment({{"A", "1"}, {"B", "2"}}, {{"B", "run"}, {"C", "3"}}),
              ElementsAre("A=1", "B=run", "C=3"));
  std::vector<std::string> env = {"PATHX=1", "PATH=/bin"};
  ASSERT_NE(FindEnv(env, "PATH"), nullptr);
  EXPECT_EQ(*FindEnv(env, "PATH"), "PATH=/bin");
  EXPECT_EQ(FindEnv(env, "PAT"), nullptr);
}

TEST(SpawnTest, ResolveProgramLikeExecvp) {
  TempDir dir;
  WriteTextFile(dir.Sub("a/tool"), "#!/bin/sh\n");
  chmod(dir.Sub("a/tool").c_str(), 0755);
  WriteTextFile(dir.Sub("b/tool"), "#!/bin/sh\n");
  chmod(dir.Sub("b/tool").c_str(), 0755);
  WriteTextFile(dir.Sub("c/plain"), "x");
  chmod(dir.Sub("c/plain").c_str(), 0644);
  std::string path = absl::StrCat(dir.Sub("a"), ":", dir.Sub("b"));
  EXPECT_EQ(*ResolveProgram("tool", path, "/"), dir.Sub("a/tool"));
  EXPECT_EQ(*ResolveProgram("tool", dir.Sub("b"), "/"), dir.Sub("b/tool"));
  // Relative names and relative PATH entries are relative to the working directory.
  EXPECT_EQ(*ResolveProgram("./a/tool", "", dir.path()), dir.path() + "/./a/tool");
  EXPECT_EQ(*ResolveProgram("tool", "b", dir.path()), dir.path() + "/b/tool");
  absl::StatusOr<std::string> missing = ResolveProgram("nope", path, "/");
  EXPECT_TRUE(absl::IsFailedPrecondition(missing.status()));
  EXPECT_EQ(missing.status().message(), "cannot execute 'nope': No such file or directory");
  absl::StatusOr<std::string> plain = ResolveProgram("plain", dir.Sub("c"), "/");
  EXPECT_THAT(plain.status().message(), HasSubstr("Permission denied"));
  EXPECT_THAT(ResolveProgram(dir.Sub("a"), "", "/").status().message(),
              HasSubstr("Permission denied"));  // a directory
}

// A fake cgroup tree: root with the supervisor's cgroup at /svc.
struct FakeCgroupTree {
  TempDir dir;
  CgroupProbe probe;
  explicit FakeCgroupTree(bool v2) {
    probe.cgroup_root = dir.Sub("cgroup");
    probe.self_cgroup_file = dir.Sub("self_cgroup");
    probe.is_cgroup2 = [v2](const std::string&) { return v2; };
    WriteTextFile(probe.self_cgroup_file, "0::/svc\n");
    WriteTextFile(probe.cgroup_root + "/svc/cgroup.controllers", "cpuset cpu io memory pids\n");
    WriteTextFile(probe.cgroup_root + "/svc/cgroup.subtree_control", "cpu memory\n");
  }
};

TEST(CgroupTest, CgroupV1OrHybridIsAccountingOnly) {
  FakeCgroupTree tree(/*v2=*/false);
  CgroupSupport support = DetectCgroupMemory(tree.probe);
  EXPECT_FALSE(support.usable);
  EXPECT_THAT(support.reason, HasSubstr("not a cgroup v2 mount"));
}

TEST(CgroupTest, V2WithDelegatedMemoryIsUsable) {
  FakeCgroupTree tree(/*v2=*/true);
  CgroupSupport support = DetectCgroupMemory(tree.probe);
  EXPECT_TRUE(support.usable) << support.reason;
  EXPECT_EQ(support.parent_dir, tree.probe.cgroup_root + "/svc");

  CgroupMemory cgroup(support.parent_dir);
  absl::StatusOr<std::string> run = cgroup.Create("r1", 1 << 20);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(*run, support.parent_dir + "/regatta-r1");
  EXPECT_EQ(ReadTextFile(*run + "/memory.max"), "1048576");
  EXPECT_TRUE(CgroupMemory::AddProcess(*run, 4242).ok());
  EXPECT_EQ(ReadTextFile(*run + "/cgroup.procs"), "4242");
  EXPECT_EQ(CgroupMemory::OomKills(*run), 0);
  WriteTextFile(*run + "/memory.events", "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n");
  EXPECT_EQ(CgroupMemory::OomKills(*run), 1);
}

TEST(CgroupTest, V2WithoutDelegationOrMemoryIsAccountingOnly) {
  {
    FakeCgroupTree tree(true);
    WriteTextFile(tree.probe.cgroup_root + "/svc/cgroup.subtree_control", "cpu\n");
    CgroupSupport support = DetectCgroupMemory(tree.probe);
    EXPECT_FALSE(support.usable);
    EXPECT_THAT(support.reason, HasSubstr("cgroup.subtree_control"));
  }
  {
    FakeCgroupTree tree(true);
    WriteTextFile(tree.probe.cgroup_root + "/svc/cgroup.controllers", "cpu pids\n");
    CgroupSupport support = DetectCgroupMemory(tree.probe);
    EXPECT_FALSE(support.usable);
    EXPECT_THAT(support.reason, HasSubstr("memory controller is not available"));
  }
  {
    FakeCgroupTree tree(true);
    WriteTextFile(tree.probe.self_cgroup_file, "4:memory:/x\n");
    CgroupSupport support = DetectCgroupMemory(tree.probe);
    EXPECT_FALSE(support.usable);
    EXPECT_THAT(support.reason, HasSubstr("no cgroup v2 entry"));
  }
  {
    // The root cgroup ("0::/").
    FakeCgroupTree tree(true);
    WriteTextFile(tree.probe.self_cgroup_file, "0::/\n");
    WriteTextFile(tree.probe.cgroup_root + "/cgroup.controllers", "memory\n");
    WriteTextFile(tree.probe.cgroup_root + "/cgroup.subtree_control", "memory\n");
    CgroupSupport support = DetectCgroupMemory(tree.probe);
    EXPECT_TRUE(support.usable) << support.reason;
    EXPECT_EQ(support.parent_dir, tree.probe.cgroup_root);
  }
}

TEST(CgroupTest, ThisMachine) {
  // Whatever this machine is, detection must not crash and must explain a refusal.
  CgroupSupport support = DetectCgroupMemory(CgroupProbe{});
  if (!support.usable) {
    EXPECT_FALSE(support.reason.empty());
  }
}

TEST(CgroupTest, ParseOomKills) {
  EXPECT_EQ(ParseOomKills("low 0\noom 2\noom_kill 3\noom_group_kill 0\n"), 3);
  EXPECT_EQ(ParseOomKills(""), 0);
  EXPECT_EQ(ParseOomKills("oom_kill x\n"), 0);
}

TEST(MachineTest, Parsers) {
  EXPECT_EQ(ParseCpuMax("max 100000"), std::nullopt);
  EXPECT_EQ(ParseCpuMax("150000 100000\n"), 1500);
  EXPECT_EQ(ParseCpuMax("50000"), 500);
  EXPECT_EQ(CpuQuotaMilli("-1", "100000"), std::nullopt);
  EXPECT_EQ(CpuQuotaMilli("250000", "100000"), 2500);
  EXPECT_EQ(ParseMemTotal("MemTotal:       16384 kB\nMemFree: 1 kB\n"), 16384 * 1024);
  EXPECT_EQ(ParseMemTotal("nothing"), 0);
}

TEST(MachineTest, CgroupV1QuotaAndMemoryLimitCapTheMachine) {
  TempDir dir;
  MachineProbe probe;
  probe.cgroup_root = dir.Sub("cg");
  probe.self_cgroup_file = dir.Sub("self");
  probe.meminfo_file = dir.Sub("meminfo");
  probe.affinity_cpus = 4;
  probe.hostname = "node-a";
  WriteTextFile(probe.meminfo_file, "MemTotal: 8388608 kB\n");  // 8 GiB
  WriteTextFile(probe.self_cgroup_file, "4:memory:/job\n3:cpu,cpuacct:/job\n0::/\n");
  WriteTextFile(probe.cgroup_root + "/cpu,cpuacct/job/cpu.cfs_quota_us", "150000\n");
  WriteTextFile(probe.cgroup_root + "/cpu,cpuacct/job/cpu.cfs_period_us", "100000\n");
  WriteTextFile(probe.cgroup_root + "/memory/job/memory.limit_in_bytes", "2147483648\n");
  WriteTextFile(probe.cgroup_root + "/memory/memory.limit_in_bytes", "9223372036854771712\n");
  MachineResources m = DetectMachineResourcesFrom(probe);
  EXPECT_EQ(m.cpu_milli, 1500);
  EXPECT_EQ(m.memory_bytes, int64_t{2} << 30);
  EXPECT_EQ(m.hostname, "node-a");

  // No quota, a limit above MemTotal: the machine's own figures.
  WriteTextFile(probe.cgroup_root + "/cpu,cpuacct/job/cpu.cfs_quota_us", "-1\n");
  WriteTextFile(probe.cgroup_root + "/memory/job/memory.limit_in_bytes", "99999999999999\n");
  m = DetectMachineResourcesFrom(probe);
  EXPECT_EQ(m.cpu_milli, 4000);
  EXPECT_EQ(m.memory_bytes, int64_t{8} << 30);
}

TEST(MachineTest, CgroupV2LimitsOnTheProcessOrAnAncestor) {
  TempDir dir;
  MachineProbe probe;
  probe.cgroup_root = dir.Sub("cg");
  probe.self_cgroup_file = dir.Sub("self");
  probe.meminfo_file = dir.Sub("meminfo");
  probe.affinity_cpus = 8;
  WriteTextFile(probe.meminfo_file, "MemTotal: 8388608 kB\n");
  WriteTextFile(probe.self_cgroup_file, "0::/a/b\n");
  WriteTextFile(probe.cgroup_root + "/cgroup.controllers", "cpu memory\n");
  WriteTextFile(probe.cgroup_root + "/a/b/cpu.max", "max 100000\n");
  WriteTextFile(probe.cgroup_root + "/a/cpu.max", "300000 100000\n");
  WriteTextFile(probe.cgroup_root + "/a/b/memory.max", "max\n");
  WriteTextFile(probe.cgroup_root + "/a/memory.max", "1073741824\n");
  MachineResources m = DetectMachineResourcesFrom(probe);
  EXPECT_EQ(m.cpu_milli, 3000);
  EXPECT_EQ(m.memory_bytes, int64_t{1} << 30);
  EXPECT_FALSE(m.hostname.empty());  // gethostname
}

}  // namespace
}  // namespace regatta::executor::local
