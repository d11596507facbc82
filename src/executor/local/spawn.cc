#include "src/executor/local/spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/executor/local/files.h"

namespace regatta::executor::local {
namespace {

constexpr char kDefaultPath[] = "/usr/local/bin:/usr/bin:/bin";

absl::Status CannotExecute(const std::string& program, int err) {
  return absl::FailedPreconditionError(
      absl::StrCat("cannot execute '", program, "': ", ErrnoText(err)));
}

// 0 if `path` is an executable regular file, else the errno execve would give.
int CheckExecutable(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) return errno;
  if (S_ISDIR(st.st_mode)) return EACCES;
  if (!S_ISREG(st.st_mode)) return EACCES;
  if (::access(path.c_str(), X_OK) != 0) return errno;
  return 0;
}

std::string Join(const std::string& dir, const std::string& name) {
  if (!name.empty() && name[0] == '/') return name;
  if (dir.empty()) return name;
  return absl::StrCat(dir, dir.back() == '/' ? "" : "/", name);
}

// Owns the posix_spawn attribute and file-action objects.
class SpawnConfig {
 public:
  SpawnConfig() {
    posix_spawnattr_init(&attr_);
    posix_spawn_file_actions_init(&actions_);
  }
  ~SpawnConfig() {
    posix_spawn_file_actions_destroy(&actions_);
    posix_spawnattr_destroy(&attr_);
  }
  SpawnConfig(const SpawnConfig&) = delete;
  SpawnConfig& operator=(const SpawnConfig&) = delete;

  posix_spawnattr_t* attr() { return &attr_; }
  posix_spawn_file_actions_t* actions() { return &actions_; }

 private:
  posix_spawnattr_t attr_;
  posix_spawn_file_actions_t actions_;
};

}  // namespace

std::vector<std::string> MergeEnvironment(
    const std::vector<std::pair<std::string, std::string>>& base,
    const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::pair<std::string, std::string>> merged;
  auto set = [&merged](const std::pair<std::string, std::string>& kv) {
    for (auto& existing : merged) {
      if (existing.first == kv.first) {
        existing.second = kv.second;
        return;
      }
    }
    merged.push_back(kv);
  };
  for (const auto& kv : base) set(kv);
  for (const auto& kv : overrides) set(kv);
  std::vector<std::string> out;
  out.reserve(merged.size());
  for (const auto& [name, value] : merged) out.push_back(absl::StrCat(name, "=", value));
  return out;
}

const std::string* FindEnv(const std::vector<std::string>& env, absl::string_view name) {
  for (const std::string& entry : env) {
    if (entry.size() > name.size() && entry[name.size()] == '=' &&
        absl::string_view(entry).substr(0, name.size()) == name) {
      return &entry;
    }
  }
  return nullptr;
}

absl::StatusOr<std::string> ResolveProgram(const std::string& program, absl::string_view path,
                                           const std::string& working_dir) {
  if (program.empty()) return CannotExecute(program, ENOENT);
  if (program.find('/') != std::string::npos) {
    std::string full = Join(working_dir, program);
    if (int err = CheckExecutable(full); err != 0) return CannotExecute(program, err);
    return full;
  }
  int last_error = ENOENT;
  for (absl::string_view entry : absl::StrSplit(path, ':')) {
    std::string dir = Join(working_dir, std::string(entry.empty() ? "." : entry));
    std::string candidate = Join(dir, program);
    int err = CheckExecutable(candidate);
    if (err == 0) return candidate;
    // Like execvp: a match that cannot be executed is reported if nothing better is found.
    if (err == EACCES) last_error = EACCES;
  }
  return CannotExecute(program, last_error);
}

absl::StatusOr<pid_t> SpawnProcess(const SpawnRequest& request) {
  if (request.argv.empty()) return absl::InvalidArgumentError("argv: must not be empty");
  struct stat st;
  if (::stat(request.working_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    int err = errno;
    if (::stat(request.working_dir.c_str(), &st) == 0) err = ENOTDIR;
    return absl::FailedPreconditionError(
        absl::StrCat("working_dir: cannot use '", request.working_dir, "': ", ErrnoText(err)));
  }
  const std::string* path_entry = FindEnv(request.env, "PATH");
  absl::string_view path =
      path_entry != nullptr ? absl::string_view(*path_entry).substr(5) : kDefaultPath;
  const std::string& program = request.argv[0];
  std::string resolved;
  {
    absl::StatusOr<std::string> found = ResolveProgram(program, path, request.working_dir);
    if (!found.ok()) return found.status();
    resolved = *std::move(found);
  }

  // Opened here with O_CLOEXEC so a process spawned concurrently by another thread never
  // inherits it; dup2 onto 1 and 2 in the child clears the flag on those.
  int log_fd = ::open(request.log_path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (log_fd < 0) return ErrnoStatus(errno, absl::StrCat("open '", request.log_path, "'"));

  SpawnConfig config;
  sigset_t empty_mask;
  sigemptyset(&empty_mask);
  sigset_t all_signals;
  sigfillset(&all_signals);
  sigdelset(&all_signals, SIGKILL);
  sigdelset(&all_signals, SIGSTOP);
  // glibc keeps its two internal signals (kernel signals 32 and 33, SIGCANCEL and SIGSETXID) out
  // of sigfillset, and its spawn helper then sets them to SIG_IGN in the child, which survives
  // exec. Naming them in the raw set makes the helper reset them to SIG_DFL instead.
  all_signals.__val[0] |= (1UL << (32 - 1)) | (1UL << (33 - 1));
  int rc = posix_spawnattr_setflags(
      config.attr(), POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
  if (rc == 0) rc = posix_spawnattr_setpgroup(config.attr(), 0);
  // The server blocks SIGINT/SIGTERM in every thread; the child must not inherit that.
  if (rc == 0) rc = posix_spawnattr_setsigmask(config.attr(), &empty_mask);
  // Ignored dispositions (e.g. SIGPIPE) survive exec; reset every one to the default.
  if (rc == 0) rc = posix_spawnattr_setsigdefault(config.attr(), &all_signals);
  // dup2 first: if log_fd happens to be 0, the /dev/null open below replaces it afterwards.
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(config.actions(), log_fd, STDOUT_FILENO);
  if (rc == 0) rc = posix_spawn_file_actions_adddup2(config.actions(), log_fd, STDERR_FILENO);
  if (rc == 0) {
    rc = posix_spawn_file_actions_addopen(config.actions(), STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  }
  if (rc == 0) {
    rc = posix_spawn_file_actions_addchdir_np(config.actions(), request.working_dir.c_str());
  }
  if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(config.actions(), 3);
  if (rc != 0) {
    ::close(log_fd);
    return ErrnoStatus(rc, "posix_spawn setup");
  }

  std::vector<char*> argv;
  argv.reserve(request.argv.size() + 1);
  for (const std::string& arg : request.argv) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  std::vector<char*> envp;
  envp.reserve(request.env.size() + 1);
  for (const std::string& entry : request.env) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);

  pid_t pid = 0;
  // glibc reports a failed exec (and failed file actions) as the return value; the child has
  // exited (and been reaped by glibc) by then, so nothing is left behind.
  rc = posix_spawn(&pid, resolved.c_str(), config.actions(), config.attr(), argv.data(),
                   envp.data());
  ::close(log_fd);
  if (rc != 0) {
    if (rc == ENOMEM || rc == EAGAIN) return ErrnoStatus(rc, absl::StrCat("spawn '", program, "'"));
    return CannotExecute(program, rc);
  }
  return pid;
}

}  // namespace regatta::executor::local
