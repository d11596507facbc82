#ifndef REGATTA_TESTS_E2E_PROCESS_H_
#define REGATTA_TESTS_E2E_PROCESS_H_

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

extern char** environ;

namespace regatta::testing {

// The built binary, from the environment CTest sets (regatta_add_test).
inline std::string RegattaBinary() {
  const char* path = std::getenv("REGATTA_BINARY");
  return path != nullptr ? path : "regatta";
}

struct RunResult {
  int exit_code = -1;
  std::string out;
  std::string err;
};

inline std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Runs argv to completion with stdin from `input`, capturing stdout and stderr.
inline RunResult RunProcess(const std::vector<std::string>& argv, const std::string& scratch_dir,
                            const std::string& input = "") {
  static int counter = 0;
  const std::string base = scratch_dir + "/run" + std::to_string(counter++);
  std::ofstream(base + ".in") << input;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, (base + ".in").c_str(), O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, (base + ".out").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, (base + ".err").c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  RunResult result;
  if (posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ) != 0) {
    result.err = "spawn failed";
    return result;
  }
  posix_spawn_file_actions_destroy(&actions);
  int status = 0;
  waitpid(pid, &status, 0);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.out = Slurp(base + ".out");
  result.err = Slurp(base + ".err");
  return result;
}

// A long-running child (e.g. `regatta up`) whose stdout is read line by line.
class Child {
 public:
  Child() = default;
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() { Kill(SIGKILL); }

  bool Start(const std::vector<std::string>& argv, const std::string& stderr_path) {
    int fds[2];
    if (pipe(fds) != 0) return false;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, fds[0]);
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(),
                                     O_WRONLY | O_CREAT | O_APPEND, 0644);
    std::vector<char*> args;
    for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    int rc = posix_spawn(&pid_, args[0], &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(fds[1]);
    if (rc != 0) {
      close(fds[0]);
      pid_ = -1;
      return false;
    }
    out_fd_ = fds[0];
    return true;
  }

  // Reads stdout until a line containing `needle` appears; returns that line.
  std::optional<std::string> WaitForLine(const std::string& needle,
                                         std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      size_t nl;
      while ((nl = buffer_.find('\n')) != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        output_ += line + "\n";
        if (line.find(needle) != std::string::npos) return line;
      }
      pollfd pfd{out_fd_, POLLIN, 0};
      int left = static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                      deadline - std::chrono::steady_clock::now())
                                      .count());
      if (poll(&pfd, 1, std::max(1, left)) <= 0) continue;
      char chunk[4096];
      ssize_t n = read(out_fd_, chunk, sizeof(chunk));
      if (n <= 0) return std::nullopt;  // the child closed stdout (exited)
      buffer_.append(chunk, static_cast<size_t>(n));
    }
    return std::nullopt;
  }

  void Kill(int sig) {
    if (pid_ > 0) {
      kill(pid_, sig);
      if (sig == SIGKILL) Wait();
    }
  }

  // Waits for exit; returns the exit code (128 + signal if killed), -1 if not running.
  int Wait() {
    if (pid_ <= 0) return -1;
    int status = 0;
    waitpid(pid_, &status, 0);
    pid_ = -1;
    if (out_fd_ >= 0) close(out_fd_);
    out_fd_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

  // Waits up to `timeout` for exit; -2 if still running.
  int WaitFor(std::chrono::milliseconds timeout) {
    auto deadline = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < deadline) {
      int status = 0;
      pid_t r = waitpid(pid_, &status, WNOHANG);
      if (r == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      usleep(20000);
    }
    return -2;
  }

  const std::string& output() const { return output_; }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int out_fd_ = -1;
  std::string buffer_;
  std::string output_;
};

// Starts a server (`regatta up` or `regatta server`) as `child` and waits for the gRPC address
// it prints; "" if it did not start (its stderr is in `stderr_path`).
inline std::string StartServerProcess(Child& child, const std::vector<std::string>& argv,
                                      const std::string& stderr_path) {
  if (!child.Start(argv, stderr_path)) return "";
  std::optional<std::string> line = child.WaitForLine("gRPC: ", std::chrono::seconds(30));
  return line.has_value() ? line->substr(line->find("gRPC: ") + 6) : "";
}

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_E2E_PROCESS_H_
