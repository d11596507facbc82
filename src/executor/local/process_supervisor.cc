#include "src/executor/local/process_supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <deque>
#include <filesystem>
#include <map>
#include <set>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/common/thread_name.h"
#include "src/executor/local/cgroup.h"
#include "src/executor/local/files.h"
#include "src/executor/local/proc.h"
#include "src/executor/local/process_supervisor_testing.h"
#include "src/executor/local/run_files.h"
#include "src/executor/local/spawn.h"

namespace regatta::executor {
namespace {

using local::CgroupMemory;
using local::ErrnoText;
using local::RunState;

// How often runs without a pidfd are polled with waitid(WNOHANG).
constexpr absl::Duration kFallbackPollInterval = absl::Milliseconds(20);
// After the main process ended: how often the rest of its group is checked, when to start
// looking past zombies (a /proc scan), how often to scan, and when to give up waiting.
constexpr absl::Duration kDrainCheckInterval = absl::Milliseconds(2);
constexpr absl::Duration kDrainZombieScanAfter = absl::Milliseconds(100);
constexpr absl::Duration kDrainScanInterval = absl::Milliseconds(50);
constexpr absl::Duration kDrainTimeout = absl::Seconds(5);
// Recovery waits this long for a killed leftover process group to disappear.
constexpr absl::Duration kRecoveryKillTimeout = absl::Seconds(10);
// How often zombie orphans reparented to this process (a child subreaper) are looked for (a
// /proc scan): while runs are active, and when none is.
constexpr absl::Duration kOrphanReapInterval = absl::Seconds(1);
constexpr absl::Duration kIdleOrphanReapInterval = absl::Seconds(10);

constexpr char kLostRestarted[] =
    "the executor restarted while the run was running; its outcome is unknown";
constexpr char kLostNeverStarted[] = "the run was never started";
constexpr char kLostShutdown[] = "the executor shut down";

enum class Phase {
  kStarting,   // reserved by Start; being persisted and spawned
  kRunning,    // the main process has not ended
  kDraining,   // the main process ended; the rest of its group is being killed
  kFinishing,  // the group is gone; the result is queued for WaitResults and being written
  kEnded,      // the result is on disk
};

enum class Termination { kNone, kStop, kDeadline, kShutdown };

struct Run {
  std::string run_id;
  std::string dir;
  std::string log_path;
  std::string metadata;
  Phase phase = Phase::kStarting;

  pid_t pid = 0;  // also the process group id
  int pidfd = -1;
  std::string cgroup_dir;
  int64_t memory_limit_bytes = 0;
  absl::Time started;  // clock
  absl::Duration grace;
  absl::Duration active_deadline;
  absl::Time deadline = absl::InfiniteFuture();  // real time

  Termination termination = Termination::kNone;
  RunEnd stop_end = RunEnd::kCancelled;
  absl::Duration termination_grace;             // until kill_at is known (kStarting)
  absl::Time kill_at = absl::InfiniteFuture();  // real time
  bool killed = false;

  // The main process's end.
  bool status_known = false;
  bool exited = false;  // else killed by `signal`
  int exit_code = 0;
  int signal = 0;
  absl::Time drain_started;
  absl::Time next_scan;

  std::optional<RunResult> result;
};

regatta::v1::Error MakeError(regatta::v1::ErrorReason reason, std::string message,
                             absl::string_view category, bool terminal) {
  regatta::v1::Error error;
  error.set_reason(reason);
  error.set_message(std::move(message));
  error.set_category(std::string(category));
  error.set_terminal(terminal);
  return error;
}

RunResult LostResult(std::string run_id, std::string message, absl::Time started,
                     absl::Time finished) {
  RunResult result;
  result.run_id = std::move(run_id);
  result.end = RunEnd::kLost;
  result.error = MakeError(regatta::v1::ERROR_REASON_EXECUTOR_LOST, std::move(message),
                           "Infrastructure", /*terminal=*/false);
  result.started = started;
  result.finished = finished;
  return result;
}

std::string SignalName(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? absl::StrCat("SIG", abbrev) : absl::StrCat("signal ", sig);
}

void SignalGroup(pid_t pgid, int sig) {
  if (local::IsForeignGroup(pgid)) ::kill(-pgid, sig);
}

std::atomic<bool> pidfd_disabled_for_testing{false};

int PidfdOpen(pid_t pid) {
  if (pidfd_disabled_for_testing) return -1;
  int fd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (fd < 0) {
    static std::atomic<bool> warned{false};
    if (!warned.exchange(true)) {
      LOG_WARN("pidfd_open failed; polling run processes with waitpid instead", "error",
               ErrnoText(errno));
    }
    return -1;
  }
  return fd;
}

class ProcessSupervisorImpl final : public ProcessSupervisor {
 public:
  explicit ProcessSupervisorImpl(SupervisorOptions options)
      : options_(std::move(options)),
        clock_(options_.clock != nullptr ? options_.clock : RealClock::Get()) {}

  ~ProcessSupervisorImpl() override {
    if (!abandoned_) {
      bool any_active;
      {
        absl::MutexLock lock(&mu_);
        any_active = ActiveCountLocked() > 0;
      }
      if (any_active) StopAll(absl::ZeroDuration());
      StopThread();
    }
    if (wake_fd_ >= 0) ::close(wake_fd_);
    if (lock_fd_ >= 0) ::close(lock_fd_);
  }

  absl::Status Init() {
    if (options_.root_dir.empty()) return absl::InvalidArgumentError("root_dir: must not be empty");
    RETURN_IF_ERROR(local::MakeDirs(options_.root_dir + "/runs"));
    char* real = ::realpath(options_.root_dir.c_str(), nullptr);
    if (real == nullptr) {
      return local::ErrnoStatus(errno,
                                absl::StrCat("root_dir: realpath '", options_.root_dir, "'"));
    }
    root_ = real;
    ::free(real);
    runs_dir_ = root_ + "/runs";

    std::string lock_path = root_ + "/supervisor.lock";
    lock_fd_ = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0) return local::ErrnoStatus(errno, absl::StrCat("open '", lock_path, "'"));
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) {
        return absl::FailedPreconditionError(
            absl::StrCat("root_dir: '", root_, "' is in use by another process supervisor"));
      }
      return local::ErrnoStatus(errno, absl::StrCat("flock '", lock_path, "'"));
    }

    if (options_.use_cgroups) {
      local::CgroupSupport support = local::DetectCgroupMemory(local::CgroupProbe{});
      if (support.usable) {
        auto cgroup = std::make_unique<CgroupMemory>(support.parent_dir);
        absl::Status probe = cgroup->Probe();
        if (probe.ok()) {
          cgroup_ = std::move(cgroup);
        } else {
          support.reason = std::string(probe.message());
        }
      }
      if (cgroup_ == nullptr) {
        LOG_INFO("memory limits are accounted only, not enforced", "reason", support.reason);
      } else {
        LOG_INFO("memory limits are enforced with cgroup v2", "cgroup", support.parent_dir);
      }
    } else {
      LOG_INFO("memory limits are accounted only, not enforced", "reason",
               "cgroups are disabled in the options");
    }

    if (options_.reap_orphans) {
      if (::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0) {
        subreaper_ = true;
      } else {
        LOG_WARN("cannot become a child subreaper; orphans of runs are left to init", "error",
                 ErrnoText(errno));
      }
    }

    wake_fd_ = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (wake_fd_ < 0) return local::ErrnoStatus(errno, "eventfd");

    RETURN_IF_ERROR(Recover());
    thread_ = std::thread([this] {
      SetThreadName("rg-supervisor");
      Loop();
    });
    return absl::OkStatus();
  }

  std::vector<RecoveredRun> TakeRecovered() override {
    absl::MutexLock lock(&mu_);
    return std::exchange(recovered_, {});
  }

  absl::Status Start(const RunLaunch& launch) override {
    RETURN_IF_ERROR(local::ValidateRunId(launch.run_id));
    if (launch.argv.empty()) return absl::InvalidArgumentError("argv: must not be empty");
    if (launch.memory_limit_bytes < 0) {
      return absl::InvalidArgumentError("memory_limit_bytes: must not be negative");
    }
    Run* run;
    {
      absl::MutexLock lock(&mu_);
      if (shut_down_) return absl::UnavailableError("the process supervisor is shutting down");
      auto [it, inserted] = runs_.try_emplace(launch.run_id, nullptr);
      if (!inserted) {
        return absl::AlreadyExistsError(
            absl::StrCat("run_id: run '", launch.run_id, "' already exists"));
      }
      it->second = std::make_unique<Run>();
      run = it->second.get();
      run->run_id = launch.run_id;
      run->dir = absl::StrCat(runs_dir_, "/", launch.run_id);
      run->log_path = absl::StrCat(run->dir, "/", local::kLogFile);
      run->metadata = launch.metadata;
      run->grace = launch.termination_grace > absl::ZeroDuration()
                       ? launch.termination_grace
                       : options_.default_termination_grace;
      run->active_deadline = launch.active_deadline;
      run->memory_limit_bytes = launch.memory_limit_bytes;
    }
    // `run` stays valid: only Forget erases, and only runs that have ended.
    absl::Status status = StartReserved(launch, *run);
    if (!status.ok()) {
      absl::MutexLock lock(&mu_);
      runs_.erase(launch.run_id);
      return status;
    }
    Wake();
    return absl::OkStatus();
  }

  absl::Status Stop(absl::string_view run_id, RunEnd why, absl::Duration grace) override {
    if (why != RunEnd::kCancelled && why != RunEnd::kPreempted) {
      return absl::InvalidArgumentError("why: must be kCancelled or kPreempted");
    }
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) {
      return absl::NotFoundError(absl::StrCat("run_id: run '", run_id, "' is unknown"));
    }
    Run& run = *it->second;
    if (run.phase == Phase::kRunning && MainProcessEnded(run)) {
      // It ended on its own before this Stop; its own result follows.
      Wake();
      return absl::NotFoundError(absl::StrCat("run_id: run '", run_id, "' has already ended"));
    }
    if (run.phase != Phase::kStarting && run.phase != Phase::kRunning) {
      return absl::NotFoundError(absl::StrCat("run_id: run '", run_id, "' has already ended"));
    }
    if (grace <= absl::ZeroDuration()) grace = run.grace;
    RequestTerminationLocked(run, Termination::kStop, grace);
    if (run.termination == Termination::kStop) run.stop_end = why;
    Wake();
    return absl::OkStatus();
  }

  std::vector<RunResult> WaitResults(absl::Duration timeout) override {
    absl::MutexLock lock(&mu_);
    mu_.AwaitWithTimeout(absl::Condition(
                             +[](std::deque<RunResult>* q) { return !q->empty(); }, &results_),
                         timeout);
    std::vector<RunResult> out(std::make_move_iterator(results_.begin()),
                               std::make_move_iterator(results_.end()));
    results_.clear();
    return out;
  }

  // Not fsynced: if a machine crash undoes it, the run is recovered and reported once more,
  // which the executor's at-least-once reporting has to tolerate anyway.
  void Forget(absl::string_view run_id) override {
    absl::MutexLock lock(&mu_);
    auto it = runs_.find(run_id);
    if (it == runs_.end()) return;
    if (it->second->phase == Phase::kFinishing) {
      // Reported before its result file is written (a local write; the supervisor thread does
      // it next): forgotten once it is, so the directory is left as a forgotten run's.
      auto written = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        auto found = runs_.find(run_id);
        return found == runs_.end() || found->second->phase != Phase::kFinishing;
      };
      mu_.Await(absl::Condition(&written));
      it = runs_.find(run_id);
      if (it == runs_.end()) return;
    }
    if (it->second->phase != Phase::kEnded) {
      LOG_WARN("not forgetting a run that has not ended", "run_id", run_id);
      return;
    }
    std::string dir = it->second->dir;
    runs_.erase(it);
    results_.erase(std::remove_if(results_.begin(), results_.end(),
                                  [&](const RunResult& r) { return r.run_id == run_id; }),
                   results_.end());
    // Renamed under the lock so a new Start of the same id cannot lose its fresh state file:
    // without a state file the directory is a forgotten run's, pruned with its log later. Not
    // unlinked now, for the reason the state is rewritten in place (see StartReserved).
    std::string path = absl::StrCat(dir, "/", local::kStateFile);
    std::string forgotten = absl::StrCat(dir, "/", local::kForgottenStateFile);
    if (::rename(path.c_str(), forgotten.c_str()) != 0 && errno != ENOENT) {
      LOG_WARN("cannot retire a forgotten run's state file", "path", path, "error",
               ErrnoText(errno));
    }
  }

  std::vector<std::pair<std::string, bool>> ListRuns() const override {
    absl::MutexLock lock(&mu_);
    std::vector<std::pair<std::string, bool>> out;
    out.reserve(runs_.size());
    for (const auto& [id, run] : runs_) out.emplace_back(id, run->phase < Phase::kFinishing);
    std::sort(out.begin(), out.end());
    return out;
  }

  absl::StatusOr<LogRead> ReadLog(absl::string_view run_id, int64_t offset,
                                  int64_t max_bytes) const override {
    if (offset < 0) return absl::InvalidArgumentError("offset: must not be negative");
    if (max_bytes <= 0) return absl::InvalidArgumentError("max_bytes: must be positive");
    ASSIGN_OR_RETURN(LogFile log, OpenLog(run_id));
    LogRead read;
    read.next_offset = offset;
    if (log.fd >= 0) {
      struct stat st;
      if (::fstat(log.fd, &st) != 0) {
        int err = errno;
        ::close(log.fd);
        return local::ErrnoStatus(err, absl::StrCat("fstat '", log.path, "'"));
      }
      int64_t size = st.st_size;
      int64_t want = std::max<int64_t>(0, std::min<int64_t>(max_bytes, size - offset));
      read.data.resize(static_cast<size_t>(want));
      int64_t got = 0;
      while (got < want) {
        ssize_t n =
            ::pread(log.fd, read.data.data() + got, static_cast<size_t>(want - got), offset + got);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        got += n;
      }
      ::close(log.fd);
      read.data.resize(static_cast<size_t>(got));
      read.next_offset = offset + got;
      read.finished = log.ended && read.next_offset >= size;
    } else {
      read.finished = log.ended;
    }
    return read;
  }

  absl::StatusOr<int64_t> TailOffset(absl::string_view run_id, int lines) const override {
    ASSIGN_OR_RETURN(LogFile log, OpenLog(run_id));
    if (log.fd < 0) return 0;
    struct stat st;
    if (::fstat(log.fd, &st) != 0) {
      int err = errno;
      ::close(log.fd);
      return local::ErrnoStatus(err, absl::StrCat("fstat '", log.path, "'"));
    }
    int64_t size = st.st_size;
    int64_t result = lines <= 0 ? size : 0;
    if (lines > 0 && size > 0) {
      // Scan backwards; a newline ending the file terminates the last line, not a new one.
      int64_t end = size;
      int seen = 0;
      bool skip_final_newline = true;
      char buf[8192];
      bool done = false;
      while (end > 0 && !done) {
        int64_t start = std::max<int64_t>(0, end - static_cast<int64_t>(sizeof(buf)));
        ssize_t n = ::pread(log.fd, buf, static_cast<size_t>(end - start), start);
        if (n <= 0) break;
        for (int64_t i = n - 1; i >= 0; --i) {
          if (buf[i] != '\n') {
            skip_final_newline = false;
            continue;
          }
          if (skip_final_newline && start + i == size - 1) {
            skip_final_newline = false;
            continue;
          }
          if (++seen == lines) {
            result = start + i + 1;
            done = true;
            break;
          }
        }
        end = start;
      }
    }
    ::close(log.fd);
    return result;
  }

  void Prune() override {
    std::error_code ec;
    absl::Time now = absl::Now();
    std::vector<std::string> trash;
    {
      absl::MutexLock lock(&mu_);
      for (const auto& entry : std::filesystem::directory_iterator(runs_dir_, ec)) {
        std::string name = entry.path().filename().string();
        std::string path = entry.path().string();
        if (absl::StartsWith(name, ".prune-")) {
          trash.push_back(path);  // left over from an interrupted prune
          continue;
        }
        if (!entry.is_directory(ec) || runs_.contains(name)) continue;
        if (::access(absl::StrCat(path, "/", local::kStateFile).c_str(), F_OK) == 0) continue;
        absl::Time modified = absl::InfinitePast();
        for (const std::string& p : {path, absl::StrCat(path, "/", local::kLogFile)}) {
          struct stat st;
          if (::stat(p.c_str(), &st) == 0) {
            modified = std::max(modified, absl::TimeFromTimespec(st.st_mtim));
          }
        }
        if (now - modified < options_.log_retention) continue;
        // Renamed under the lock (a new Start of the same id then gets a fresh directory),
        // deleted outside it.
        std::string target = absl::StrCat(runs_dir_, "/.prune-", name);
        if (::rename(path.c_str(), target.c_str()) == 0) trash.push_back(target);
      }
    }
    for (const std::string& path : trash) {
      std::filesystem::remove_all(path, ec);
      if (ec) LOG_WARN("cannot prune a run directory", "path", path, "error", ec.message());
    }
  }

  void StopAll(absl::Duration grace) override {
    absl::MutexLock lock(&mu_);
    shut_down_ = true;
    for (auto& [id, run] : runs_) {
      if (run->phase == Phase::kStarting || run->phase == Phase::kRunning) {
        RequestTerminationLocked(*run, Termination::kShutdown, grace);
      }
    }
    Wake();
    mu_.Await(absl::Condition(
        +[](ProcessSupervisorImpl* self)
             ABSL_NO_THREAD_SAFETY_ANALYSIS { return self->ActiveCountLocked() == 0; },
        this));
  }

  bool EnforcesMemoryLimits() const override { return cgroup_ != nullptr; }

  // Stops supervising without touching any process, as if this process had been killed -9.
  void Abandon() {
    StopThread();
    absl::MutexLock lock(&mu_);
    for (auto& [id, run] : runs_) {
      if (run->pidfd >= 0) ::close(run->pidfd);
      run->pidfd = -1;
    }
    abandoned_ = true;
    if (lock_fd_ >= 0) ::close(lock_fd_);
    lock_fd_ = -1;
  }

 private:
  struct LogFile {
    std::string path;
    int fd = -1;  // -1: no log yet
    bool ended = false;
  };

  absl::StatusOr<LogFile> OpenLog(absl::string_view run_id) const {
    RETURN_IF_ERROR(local::ValidateRunId(run_id));
    LogFile log;
    log.path = absl::StrCat(runs_dir_, "/", run_id, "/", local::kLogFile);
    bool known;
    {
      absl::MutexLock lock(&mu_);
      auto it = runs_.find(run_id);
      known = it != runs_.end();
      // Taken before the size is read: once the group is gone nothing appends any more.
      log.ended = !known || it->second->phase >= Phase::kFinishing;
    }
    log.fd = ::open(log.path.c_str(), O_RDONLY | O_CLOEXEC);
    if (log.fd < 0) {
      if (errno == ENOENT && known) return log;  // still starting
      if (errno == ENOENT) {
        return absl::NotFoundError(absl::StrCat("run_id: run '", run_id, "' has no log"));
      }
      return local::ErrnoStatus(errno, absl::StrCat("open '", log.path, "'"));
    }
    return log;
  }

  absl::Status StartReserved(const RunLaunch& launch, Run& run) {
    RETURN_IF_ERROR(local::MakeDirs(run.dir));
    // A forgotten run of the same id may have left its files; this run gets fresh ones.
    for (const std::string& path : {run.log_path, absl::StrCat(run.dir, "/", local::kResultFile)}) {
      if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
        return local::ErrnoStatus(errno, absl::StrCat("unlink '", path, "'"));
      }
    }
    std::string working_dir = launch.working_dir;
    if (working_dir.empty()) {
      working_dir = absl::StrCat(run.dir, "/", local::kWorkDir);
      RETURN_IF_ERROR(local::MakeDirs(working_dir));
    }
    RunState state;
    state.run_id = launch.run_id;
    state.metadata = launch.metadata;
    state.argv = launch.argv;
    state.working_dir = working_dir;
    state.started = clock_->Now();
    state.active_deadline = launch.active_deadline;
    state.termination_grace = run.grace;
    state.memory_limit_bytes = launch.memory_limit_bytes;
    std::string state_path = absl::StrCat(run.dir, "/", local::kStateFile);
    RETURN_IF_ERROR(
        local::WriteFileAtomically(state_path, local::EncodeRunState(state), options_.sync_state));
    // The run directory's own entry, so the state file survives a machine crash (cheap after the
    // state file's fsync, which on ext4 already committed the mkdir).
    if (absl::Status s = options_.sync_state ? local::SyncDir(runs_dir_) : absl::OkStatus();
        !s.ok()) {
      local::RemoveFileDurably(state_path, options_.sync_state).IgnoreError();
      return s;
    }

    local::SpawnRequest request;
    request.argv = launch.argv;
    request.env = local::MergeEnvironment(options_.base_env, launch.env);
    request.working_dir = working_dir;
    request.log_path = run.log_path;
    absl::StatusOr<pid_t> pid = local::SpawnProcess(request);
    if (!pid.ok()) {
      // Nothing runs and no result follows: the run must not be recovered later either.
      local::RemoveFileDurably(state_path, options_.sync_state).IgnoreError();
      return pid.status();
    }
    // Kills and reaps the new process (and its group) when a later step fails.
    auto abort_spawn = [&](absl::Status status) {
      local::KillGroupAndWait(*pid, kRecoveryKillTimeout);  // reaps it too
      if (!state.cgroup_dir.empty()) CgroupMemory::Remove(state.cgroup_dir);
      local::RemoveFileDurably(state_path, options_.sync_state).IgnoreError();
      return status;
    };
    // The process exists until we reap it (possibly as a zombie), so its stat is readable.
    absl::StatusOr<local::ProcStat> stat = local::ReadProcStat(*pid);
    state.pid = *pid;
    state.pid_start_time = stat.ok() ? stat->start_time : 0;
    if (cgroup_ != nullptr && launch.memory_limit_bytes > 0) {
      // The process runs in the supervisor's cgroup until it is moved here, a few microseconds
      // after exec; anything it forks in that window stays outside the limit.
      absl::StatusOr<std::string> dir = cgroup_->Create(launch.run_id, launch.memory_limit_bytes);
      if (!dir.ok()) return abort_spawn(dir.status());
      state.cgroup_dir = *dir;
      if (absl::Status s = CgroupMemory::AddProcess(*dir, *pid); !s.ok()) return abort_spawn(s);
    }
    // The same file again, with the process: in place unless it must survive a machine crash.
    // A replacement would free an inode per run, and on ext4 without a journal every new file
    // then scans past the inodes freed in the last seconds (0.1-0.5 ms per file after a busy
    // minute). A crash mid-write leaves a corrupt state, recovered like a crash just before it:
    // lost, with whatever still writes to the run's log killed.
    const std::string with_process = local::EncodeRunState(state);
    if (absl::Status s = options_.sync_state
                             ? local::WriteFileAtomically(state_path, with_process, true)
                             : local::OverwriteFileInPlace(state_path, with_process);
        !s.ok()) {
      return abort_spawn(s);
    }
    int pidfd = PidfdOpen(*pid);

    absl::MutexLock lock(&mu_);
    run.pid = *pid;
    run.pidfd = pidfd;
    run.cgroup_dir = state.cgroup_dir;
    run.started = state.started;
    absl::Time now = absl::Now();
    if (launch.active_deadline > absl::ZeroDuration()) run.deadline = now + launch.active_deadline;
    run.phase = Phase::kRunning;
    if (run.termination != Termination::kNone) {
      // Stop or StopAll came while it was starting.
      SignalGroup(run.pid, SIGTERM);
      run.kill_at = now + run.termination_grace;
    }
    return absl::OkStatus();
  }

  // First termination wins the result; a later one can only bring the SIGKILL forward.
  void RequestTerminationLocked(Run& run, Termination why, absl::Duration grace)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::Time now = absl::Now();
    if (run.termination == Termination::kNone) {
      run.termination = why;
      run.termination_grace = grace;
      if (run.phase == Phase::kRunning) {
        SignalGroup(run.pid, SIGTERM);
        run.kill_at = now + grace;
      }
      return;
    }
    run.termination_grace = std::min(run.termination_grace, grace);
    if (run.phase == Phase::kRunning) run.kill_at = std::min(run.kill_at, now + grace);
  }

  // Whether the main process has ended (it is then a zombie, still holding its pid and so its
  // process group id, until ReapLocked).
  bool MainProcessEnded(Run& run, siginfo_t* info = nullptr) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    siginfo_t si;
    memset(&si, 0, sizeof(si));
    int rc;
    do {
      rc = run.pidfd >= 0 ? ::waitid(P_PIDFD, run.pidfd, &si, WEXITED | WNOHANG | WNOWAIT)
                          : ::waitid(P_PID, run.pid, &si, WEXITED | WNOHANG | WNOWAIT);
    } while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      // ECHILD: someone else reaped it (SIGCHLD ignored, or waitpid(-1) elsewhere).
      if (errno != ECHILD) return false;
      if (info != nullptr) info->si_pid = 0;
      return true;
    }
    if (si.si_pid == 0) return false;
    if (info != nullptr) *info = si;
    return true;
  }

  // The main process has ended: kill the rest of its group (before reaping, while the zombie
  // still pins the group id), reap it and start draining.
  void ReapLocked(Run& run, const siginfo_t& info) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    SignalGroup(run.pid, SIGKILL);
    if (!run.cgroup_dir.empty()) CgroupMemory::KillAll(run.cgroup_dir);
    if (info.si_pid != 0) {
      run.status_known = true;
      run.exited = info.si_code == CLD_EXITED;
      if (run.exited) {
        run.exit_code = info.si_status;
      } else {
        run.signal = info.si_status;
      }
      siginfo_t reaped;
      while (::waitid(P_PID, run.pid, &reaped, WEXITED) != 0 && errno == EINTR) {
      }
    }
    if (run.pidfd >= 0) ::close(run.pidfd);
    run.pidfd = -1;
    run.phase = Phase::kDraining;
    run.drain_started = absl::Now();
    run.next_scan = run.drain_started + kDrainZombieScanAfter;
  }

  // Whether nothing of the run's process group is left.
  bool GroupGoneLocked(Run& run, absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (!local::IsForeignGroup(run.pid)) return true;
    // Members orphaned by the main process's end are our children when we are a subreaper.
    local::ReapGroup(run.pid);
    if (::kill(-run.pid, SIGKILL) != 0 && errno == ESRCH) return true;
    if (now >= run.next_scan) {
      // Killed processes stay zombies until their parent (usually init) reaps them.
      run.next_scan = now + kDrainScanInterval;
      if (!local::GroupHasLiveMembers(run.pid)) return true;
    }
    if (now - run.drain_started > kDrainTimeout) {
      LOG_WARN("processes of a finished run did not go away after SIGKILL", "run_id", run.run_id,
               "pgid", run.pid);
      return true;
    }
    return false;
  }

  RunResult ComputeResultLocked(const Run& run) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    RunResult result;
    result.run_id = run.run_id;
    result.started = run.started;
    result.finished = clock_->Now();
    result.exit_code = run.exit_code;
    result.signal = run.signal;
    auto fail = [&](regatta::v1::ErrorReason reason, std::string message,
                    absl::string_view category) {
      result.end = RunEnd::kFailed;
      result.error = MakeError(reason, std::move(message), category, /*terminal=*/true);
      result.error.set_exit_code(run.exit_code);
      result.error.set_signal(run.signal);
    };
    switch (run.termination) {
      case Termination::kStop:
        result.end = run.stop_end;
        return result;
      case Termination::kShutdown: {
        RunResult lost = LostResult(run.run_id, kLostShutdown, run.started, result.finished);
        lost.exit_code = run.exit_code;
        lost.signal = run.signal;
        return lost;
      }
      case Termination::kDeadline:
        fail(regatta::v1::ERROR_REASON_DEADLINE_EXCEEDED,
             absl::StrCat("the run exceeded its active deadline of ",
                          absl::FormatDuration(run.active_deadline)),
             "DeadlineExceeded");
        return result;
      case Termination::kNone:
        break;
    }
    if (!run.status_known) {
      return LostResult(run.run_id,
                        "the exit status of the run's process was not available (reaped by "
                        "someone else)",
                        run.started, result.finished);
    }
    if (run.exited && run.exit_code == 0) {
      result.end = RunEnd::kSucceeded;
      return result;
    }
    // A failure after the kernel's OOM killer struck inside the run's cgroup is blamed on memory.
    if (!run.cgroup_dir.empty() && CgroupMemory::OomKills(run.cgroup_dir) > 0) {
      fail(regatta::v1::ERROR_REASON_OUT_OF_MEMORY,
           absl::StrCat("the run exceeded its memory limit of ", run.memory_limit_bytes,
                        " bytes and was killed by the kernel's OOM killer"),
           "OutOfMemory");
      return result;
    }
    if (run.exited) {
      fail(regatta::v1::ERROR_REASON_CONTAINER_ERROR,
           absl::StrCat("the process exited with code ", run.exit_code), "ContainerError");
    } else {
      fail(regatta::v1::ERROR_REASON_CONTAINER_ERROR,
           absl::StrCat("the process was killed by signal ", run.signal, " (",
                        SignalName(run.signal), ")"),
           "ContainerError");
    }
    return result;
  }

  // The supervisor thread: process exits, deadlines and SIGKILL escalations.
  void Loop() {
    std::set<std::string> ready;  // runs whose pidfd polled readable
    std::vector<pollfd> fds;
    std::vector<std::string> fd_runs;
    absl::Time next_orphan_reap = absl::Now() + kOrphanReapInterval;
    while (true) {
      std::vector<Run*> finishing;
      absl::Time wake = absl::InfiniteFuture();
      std::set<pid_t> run_groups;
      std::set<pid_t> running_leaders;
      bool reap_orphans = false;
      {
        absl::MutexLock lock(&mu_);
        if (exit_thread_) return;
        absl::Time now = absl::Now();
        if (subreaper_ && now >= next_orphan_reap) {
          reap_orphans = true;
          for (const auto& [id, run] : runs_) {
            if (run->phase == Phase::kRunning) running_leaders.insert(run->pid);
            if (run->phase == Phase::kRunning || run->phase == Phase::kDraining) {
              run_groups.insert(run->pid);
            }
          }
          next_orphan_reap =
              now + (run_groups.empty() ? kIdleOrphanReapInterval : kOrphanReapInterval);
        }
        for (auto& [id, run_ptr] : runs_) {
          Run& run = *run_ptr;
          if (run.phase == Phase::kRunning) {
            bool check = run.pidfd < 0 || ready.count(id) > 0;
            siginfo_t info;
            if (check && MainProcessEnded(run, &info)) {
              ReapLocked(run, info);
            } else {
              if (run.termination == Termination::kNone && now >= run.deadline) {
                RequestTerminationLocked(run, Termination::kDeadline, run.grace);
              }
              if (run.termination != Termination::kNone && !run.killed && now >= run.kill_at) {
                SignalGroup(run.pid, SIGKILL);
                if (!run.cgroup_dir.empty()) CgroupMemory::KillAll(run.cgroup_dir);
                run.killed = true;
              }
              if (run.termination == Termination::kNone) wake = std::min(wake, run.deadline);
              if (!run.killed) wake = std::min(wake, run.kill_at);
              if (run.pidfd < 0) wake = std::min(wake, now + kFallbackPollInterval);
            }
          }
          if (run.phase == Phase::kDraining) {
            if (GroupGoneLocked(run, now)) {
              run.phase = Phase::kFinishing;
              run.result = ComputeResultLocked(run);
              if (!run.cgroup_dir.empty()) CgroupMemory::Remove(run.cgroup_dir);
              finishing.push_back(&run);
            } else {
              wake = std::min(wake, now + kDrainCheckInterval);
            }
          }
        }
        fds.clear();
        fd_runs.clear();
        fds.push_back({wake_fd_, POLLIN, 0});
        fd_runs.emplace_back();
        for (auto& [id, run] : runs_) {
          if (run->phase == Phase::kRunning && run->pidfd >= 0) {
            fds.push_back({run->pidfd, POLLIN, 0});
            fd_runs.push_back(id);
          }
        }
      }
      ready.clear();
      if (reap_orphans) ReapOrphans(run_groups, running_leaders);
      if (!finishing.empty()) {
        // Reported before the result file is written: the file only matters to a later process
        // that finds the run unreported, and writing it first put ~0.1 ms between every step's
        // end and its report. Runs ended by StopAll are left on disk for the next process.
        {
          absl::MutexLock lock(&mu_);
          for (Run* run : finishing) {
            if (run->termination != Termination::kShutdown) results_.push_back(*run->result);
          }
        }
        // Runs in kFinishing are never erased (Forget waits for kEnded), so the pointers hold.
        for (Run* run : finishing) {
          std::string path = absl::StrCat(run->dir, "/", local::kResultFile);
          if (absl::Status s = local::WriteFileAtomically(
                  path, local::EncodeRunResult(*run->result), options_.sync_state);
              !s.ok()) {
            LOG_ERROR("cannot persist a run's result; reporting it anyway", "run_id", run->run_id,
                      "error", s.message());
          }
        }
        absl::MutexLock lock(&mu_);
        for (Run* run : finishing) {
          run->phase = Phase::kEnded;
        }
        continue;  // re-evaluate before sleeping
      }
      if (subreaper_) wake = std::min(wake, next_orphan_reap);
      absl::Duration wait = wake - absl::Now();
      int timeout_ms = 1000;
      if (wait < absl::Milliseconds(1000)) {
        timeout_ms = static_cast<int>(std::max<int64_t>(
            0, absl::ToInt64Milliseconds(absl::Ceil(wait, absl::Milliseconds(1)))));
      }
      int n = ::poll(fds.data(), fds.size(), timeout_ms);
      if (n <= 0) continue;
      if (fds[0].revents != 0) {
        uint64_t value;
        while (::read(wake_fd_, &value, sizeof(value)) > 0) {
        }
      }
      for (size_t i = 1; i < fds.size(); ++i) {
        if (fds[i].revents != 0) ready.insert(fd_runs[i]);
      }
    }
  }

  // Processes orphaned inside a run are reparented to us (a child subreaper); those that exit
  // while their run still runs, or that left the run's process group and session, are reaped
  // here by pid. Never waitpid(-1): other children of this process are left alone.
  static void ReapOrphans(const std::set<pid_t>& run_groups, const std::set<pid_t>& leaders) {
    for (pid_t pid : local::FindOrphanZombies(run_groups, leaders)) {
      siginfo_t info;
      ::waitid(P_PID, static_cast<id_t>(pid), &info, WEXITED | WNOHANG);
    }
  }

  void Wake() {
    uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(wake_fd_, &one, sizeof(one));
  }

  void StopThread() {
    {
      absl::MutexLock lock(&mu_);
      exit_thread_ = true;
    }
    if (thread_.joinable()) {
      Wake();
      thread_.join();
    }
  }

  int ActiveCountLocked() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    int n = 0;
    for (const auto& [id, run] : runs_) n += run->phase != Phase::kEnded ? 1 : 0;
    return n;
  }

  // Finds the runs of an earlier process: reports finished ones with their result, kills what is
  // left of unfinished ones and reports them as lost. Each recovered run gets a result file.
  absl::Status Recover() {
    struct Pending {
      std::string run_id;
      std::string dir;
      std::optional<RunState> state;
      std::string lost_message;  // set: corrupt
    };
    std::vector<Pending> unfinished;
    std::vector<RecoveredRun> recovered;
    std::error_code ec;
    std::filesystem::directory_iterator it(runs_dir_, ec);
    if (ec) {
      return absl::InternalError(
          absl::StrCat("root_dir: cannot read '", runs_dir_, "': ", ec.message()));
    }
    std::vector<std::string> names;
    for (const auto& entry : it) {
      std::string name = entry.path().filename().string();
      if (name.empty() || name[0] == '.' || !entry.is_directory(ec)) continue;
      names.push_back(name);
    }
    std::sort(names.begin(), names.end());
    absl::Time now = clock_->Now();
    for (const std::string& name : names) {
      std::string dir = absl::StrCat(runs_dir_, "/", name);
      std::string state_path = absl::StrCat(dir, "/", local::kStateFile);
      std::string result_path = absl::StrCat(dir, "/", local::kResultFile);
      absl::StatusOr<std::string> state_text = local::ReadFile(state_path);
      if (absl::IsNotFound(state_text.status())) continue;  // forgotten; kept until pruned
      if (!local::ValidateRunId(name).ok()) {
        LOG_WARN("ignoring a run directory with an invalid name", "dir", dir);
        continue;
      }
      absl::StatusOr<RunState> state =
          state_text.ok() ? local::DecodeRunState(*state_text) : state_text.status();
      if (state.ok() && state->run_id != name) {
        state = absl::DataLossError(absl::StrCat("it names run '", state->run_id, "'"));
      }
      absl::StatusOr<std::string> result_text = local::ReadFile(result_path);
      if (result_text.ok()) {
        absl::StatusOr<RunResult> result = local::DecodeRunResult(*result_text);
        RecoveredRun run;
        run.run_id = name;
        if (state.ok()) run.metadata = state->metadata;
        if (result.ok() && result->run_id == name) {
          run.result = *std::move(result);
        } else {
          run.result =
              LostResult(name,
                         absl::StrCat("the result file '", result_path, "' is corrupt (",
                                      result.ok() ? "wrong run id" : result.status().message(),
                                      "); the run's outcome is unknown"),
                         state.ok() ? state->started : absl::InfinitePast(), now);
        }
        recovered.push_back(std::move(run));
        continue;
      }
      Pending pending;
      pending.run_id = name;
      pending.dir = dir;
      if (state.ok()) {
        pending.state = *std::move(state);
      } else {
        pending.lost_message =
            absl::StrCat("the state file '", state_path, "' is corrupt (", state.status().message(),
                         "); the run's outcome is unknown");
      }
      unfinished.push_back(std::move(pending));
    }

    // Kill whatever is left of unfinished runs: the recorded process group if its leader is
    // still the recorded process, and any process still writing to the run's log (which also
    // covers a crash between spawn and recording the pid, and a corrupt state file).
    // Every group is signalled first and then all are waited for together: one after another,
    // 100 leftover runs took ~10 s (each group's zombies wait for their parent to reap them).
    std::set<std::string> log_paths;
    std::map<std::string, bool> found_processes;  // by run id
    std::map<pid_t, std::string> groups;          // pgid -> run id, for the log
    for (const Pending& p : unfinished) {
      log_paths.insert(absl::StrCat(p.dir, "/", local::kLogFile));
      if (!p.state || p.state->pid <= 0) continue;
      if (local::ProcessIsAlive(p.state->pid, p.state->pid_start_time)) {
        LOG_WARN("killing the process group of a run left by an earlier executor", "run_id",
                 p.run_id, "pgid", p.state->pid);
        SignalGroup(p.state->pid, SIGKILL);
        groups[p.state->pid] = p.run_id;
        found_processes[p.run_id] = true;
      }
      if (!p.state->cgroup_dir.empty()) CgroupMemory::KillAll(p.state->cgroup_dir);
    }
    for (const auto& [path, writers] : local::FindGroupsWritingTo(log_paths)) {
      for (const Pending& p : unfinished) {
        if (absl::StrCat(p.dir, "/", local::kLogFile) != path) continue;
        found_processes[p.run_id] = true;
        for (pid_t pgid : writers) {
          if (groups.count(pgid) > 0) continue;
          LOG_WARN("killing leftover processes writing to a run's log", "log", path, "pgid", pgid);
          groups[pgid] = p.run_id;
        }
      }
    }
    std::set<pid_t> pgids;
    for (const auto& [pgid, run_id] : groups) pgids.insert(pgid);
    for (pid_t pgid : local::KillGroupsAndWait(pgids, kRecoveryKillTimeout)) {
      LOG_WARN("a recovered run's process group is still there", "run_id", groups[pgid], "pgid",
               pgid);
    }
    for (Pending& p : unfinished) {
      RecoveredRun run;
      run.run_id = p.run_id;
      if (p.state) {
        run.metadata = p.state->metadata;
        bool ran = p.state->pid > 0 || found_processes[p.run_id];
        run.result =
            LostResult(p.run_id, ran ? kLostRestarted : kLostNeverStarted, p.state->started, now);
        if (!p.state->cgroup_dir.empty()) CgroupMemory::Remove(p.state->cgroup_dir);
      } else {
        run.result = LostResult(p.run_id, p.lost_message, absl::InfinitePast(), now);
      }
      std::string result_path = absl::StrCat(p.dir, "/", local::kResultFile);
      RETURN_IF_ERROR(local::WriteFileAtomically(result_path, local::EncodeRunResult(run.result),
                                                 options_.sync_state));
      recovered.push_back(std::move(run));
    }

    absl::MutexLock lock(&mu_);
    for (const RecoveredRun& r : recovered) {
      auto run = std::make_unique<Run>();
      run->run_id = r.run_id;
      run->dir = absl::StrCat(runs_dir_, "/", r.run_id);
      run->log_path = absl::StrCat(run->dir, "/", local::kLogFile);
      run->metadata = r.metadata;
      run->phase = Phase::kEnded;
      run->started = r.result.started;
      run->result = r.result;
      runs_[r.run_id] = std::move(run);
    }
    if (!recovered.empty()) {
      LOG_INFO("recovered the runs of an earlier executor", "runs", recovered.size(), "unfinished",
               unfinished.size());
    }
    std::sort(recovered.begin(), recovered.end(),
              [](const RecoveredRun& a, const RecoveredRun& b) { return a.run_id < b.run_id; });
    recovered_ = std::move(recovered);
    return absl::OkStatus();
  }

  const SupervisorOptions options_;
  const Clock* const clock_;
  std::string root_;
  std::string runs_dir_;
  int lock_fd_ = -1;
  int wake_fd_ = -1;
  std::unique_ptr<CgroupMemory> cgroup_;
  std::thread thread_;
  bool abandoned_ = false;
  bool subreaper_ = false;

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<Run>> runs_ ABSL_GUARDED_BY(mu_);
  std::deque<RunResult> results_ ABSL_GUARDED_BY(mu_);
  std::vector<RecoveredRun> recovered_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
  bool exit_thread_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ProcessSupervisor>> ProcessSupervisor::Open(
    SupervisorOptions options) {
  auto supervisor = std::make_unique<ProcessSupervisorImpl>(std::move(options));
  RETURN_IF_ERROR(supervisor->Init());
  return std::unique_ptr<ProcessSupervisor>(std::move(supervisor));
}

void AbandonProcessesForTesting(ProcessSupervisor& supervisor) {
  static_cast<ProcessSupervisorImpl&>(supervisor).Abandon();
}

void DisablePidfdForTesting(bool disable) { pidfd_disabled_for_testing = disable; }

}  // namespace regatta::executor
