#include "src/executor/local/podman/podman_runtime.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/executor/local/command.h"
#include "src/executor/local/files.h"

namespace regatta::executor {
namespace {

constexpr absl::Duration kProbeTimeout = absl::Seconds(30);
constexpr absl::Duration kRemoveTimeout = absl::Seconds(60);
constexpr char kCgroupRoot[] = "/sys/fs/cgroup";

// FNV-1a: names derived from it must be the same in the next executor process.
uint64_t StableHash(absl::string_view text) {
  uint64_t hash = 14695981039346656037ull;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ull;
  return hash;
}

bool FitsEnvFile(absl::string_view value) {
  return !absl::StrContains(value, '\n') && !absl::StrContains(value, '\r');
}

bool NameChar(char c) { return absl::ascii_isalnum(c) || c == '_' || c == '.' || c == '-'; }

std::string Tail(absl::string_view text, size_t bytes) {
  text = absl::StripTrailingAsciiWhitespace(text);
  return std::string(text.size() > bytes ? text.substr(text.size() - bytes) : text);
}

// The executor's own cgroup as podman's --cgroup-parent wants it: on cgroup v1 the memory
// controller's path (the one a sandbox or systemd unit limits), on v2 the unified path.
std::string OwnCgroup(bool* v1) {
  std::ifstream in("/proc/self/cgroup");
  std::string line, unified;
  while (std::getline(in, line)) {
    std::vector<std::string> parts = absl::StrSplit(line, absl::MaxSplits(':', 2));
    if (parts.size() != 3) continue;
    for (absl::string_view controller : absl::StrSplit(parts[1], ',')) {
      if (controller == "memory") {
        *v1 = true;
        return parts[2];
      }
    }
    if (parts[0] == "0" && parts[1].empty()) unified = parts[2];
  }
  *v1 = false;
  return unified;
}

std::string ReadSmallFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// rmdir of `dir` and the directories under it, deepest first (cgroupfs directories hold only
// control files, which rmdir takes with them). False if any is left (still has processes).
bool RemoveCgroupTree(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return errno == ENOENT;
  bool all = true;
  std::vector<std::string> children;
  while (dirent* entry = ::readdir(d)) {
    if (entry->d_type != DT_DIR) continue;
    const absl::string_view name = entry->d_name;
    if (name == "." || name == "..") continue;
    children.push_back(absl::StrCat(dir, "/", name));
  }
  ::closedir(d);
  for (const std::string& child : children) all = RemoveCgroupTree(child) && all;
  if (::rmdir(dir.c_str()) != 0 && errno != ENOENT) all = false;
  return all;
}

std::vector<std::string> CgroupMounts(bool v1) {
  if (!v1) return {kCgroupRoot};
  std::vector<std::string> mounts;
  DIR* d = ::opendir(kCgroupRoot);
  if (d == nullptr) return mounts;
  while (dirent* entry = ::readdir(d)) {
    const absl::string_view name = entry->d_name;
    if (name == "." || name == ".." || entry->d_type == DT_LNK) continue;
    if (entry->d_type == DT_DIR) mounts.push_back(absl::StrCat(kCgroupRoot, "/", name));
  }
  ::closedir(d);
  return mounts;
}

// Mode 0600 from its creation on: the values may be secrets.
absl::Status WritePrivateFile(const std::string& path, absl::string_view contents) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return local::ErrnoStatus(errno, absl::StrCat("open '", path, "'"));
  size_t written = 0;
  while (written < contents.size()) {
    const ssize_t n = ::write(fd, contents.data() + written, contents.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      ::close(fd);
      return local::ErrnoStatus(err, absl::StrCat("write '", path, "'"));
    }
    written += static_cast<size_t>(n);
  }
  ::close(fd);
  return absl::OkStatus();
}

}  // namespace

std::string PodmanRuntime::OwnerLabel(absl::string_view data_dir) {
  return absl::StrCat(absl::Hex(StableHash(data_dir), absl::kZeroPad16));
}

std::string PodmanRuntime::ContainerName(absl::string_view run_id) {
  std::string name = "regatta-";
  bool replaced = false;
  for (char c : run_id) {
    const bool ok = NameChar(c);
    replaced |= !ok;
    name.push_back(ok ? c : '-');
  }
  if (replaced) absl::StrAppend(&name, "-", absl::Hex(StableHash(run_id) & 0xffffffff));
  return name;
}

absl::StatusOr<std::unique_ptr<PodmanRuntime>> PodmanRuntime::Open(PodmanOptions options) {
  if (options.network != "host" && options.network != "none") {
    return absl::InvalidArgumentError(absl::StrCat("executor.containers.network: \"",
                                                   options.network, "\" (expected host or none)"));
  }
  if (options.pull != "missing" && options.pull != "never" && options.pull != "always") {
    return absl::InvalidArgumentError(absl::StrCat("executor.containers.pull: \"", options.pull,
                                                   "\" (expected missing, never or always)"));
  }
  if (options.owner.empty() || !std::all_of(options.owner.begin(), options.owner.end(), NameChar)) {
    return absl::InvalidArgumentError(
        absl::StrCat("podman owner label \"", options.owner, "\": expected [A-Za-z0-9._-]+"));
  }
  const std::string podman =
      local::FindInPath(options.podman_path.empty() ? "podman" : options.podman_path);
  if (podman.empty()) {
    return absl::FailedPreconditionError(
        "podman is not installed (apt-get install podman runc; scripts/install-deps.sh does)");
  }
  options.podman_path = podman;
  if (options.files_dir.empty()) return absl::InvalidArgumentError("podman runtime: no files_dir");
  RETURN_IF_ERROR(local::MakeDirs(options.files_dir));
  std::unique_ptr<PodmanRuntime> runtime(new PodmanRuntime(std::move(options)));
  // crun (podman's default in Debian 12) refuses machines with hybrid cgroups; runc works on
  // both v1 and v2, so it is used wherever it is installed.
  if (!local::FindInPath("runc").empty()) runtime->oci_runtime_ = "runc";
  struct rlimit files {
  }, procs{};
  ::getrlimit(RLIMIT_NOFILE, &files);
  ::getrlimit(RLIMIT_NPROC, &procs);
  // podman's defaults (nofile 1048576) fail without CAP_SYS_RESOURCE, and podman lowers its own
  // nproc hard limit to 32768 before it starts the container. A private containers.conf sets
  // them for every container, pods' infra containers included (`--ulimit` cannot reach those).
  const auto cap = [](rlim_t limit, rlim_t most) {
    return limit == RLIM_INFINITY ? most : std::min(limit, most);
  };
  const rlim_t nofile = cap(files.rlim_max, 1048576);
  const rlim_t nproc = cap(procs.rlim_max, 32768);
  const std::string conf = absl::StrCat(runtime->options_.files_dir, "/containers.conf");
  RETURN_IF_ERROR(WritePrivateFile(
      conf, absl::StrCat("# Written by the Regatta executor at each start.\n[containers]\n",
                         "default_ulimits = [\"nofile=", nofile, ":", nofile, "\", \"nproc=", nproc,
                         ":", nproc, "\"]\n")));
  runtime->conf_env_ = absl::StrCat("CONTAINERS_CONF=", conf);
  if (!runtime->options_.cgroup_dir.empty()) {
    std::string own = OwnCgroup(&runtime->cgroup_v1_);
    if (own.empty() || own == "/") own = "";
    runtime->cgroup_base_ = absl::StrCat(own, "/", runtime->options_.cgroup_dir);
  }

  std::vector<std::string> info = runtime->GlobalArguments();
  info.insert(info.end(), {"info", "--format", "{{.Version.Version}} {{.Host.CgroupsVersion}}"});
  ASSIGN_OR_RETURN(local::CommandOutput probe,
                   local::RunCommand(info, kProbeTimeout, 1 << 20, {runtime->conf_env_}));
  if (probe.exit_code != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("podman cannot run here (`podman info` exited ", probe.exit_code,
                     "): ", Tail(probe.output, 600)));
  }
  std::vector<std::string> words =
      absl::StrSplit(absl::StripAsciiWhitespace(probe.output), ' ', absl::SkipEmpty());
  runtime->description_ =
      absl::StrCat("podman ", words.empty() ? "?" : words[0], " (",
                   runtime->oci_runtime_.empty() ? "default OCI runtime" : runtime->oci_runtime_,
                   words.size() > 1 ? absl::StrCat(", cgroup ", words[1]) : "", ")");
  return runtime;
}

std::vector<std::string> PodmanRuntime::GlobalArguments() const {
  std::vector<std::string> args = {options_.podman_path};
  if (!oci_runtime_.empty()) args.insert(args.end(), {"--runtime", oci_runtime_});
  // No systemd here to manage cgroups or keep a journal.
  args.insert(args.end(), {"--cgroup-manager", "cgroupfs", "--events-backend", "file"});
  return args;
}

std::string PodmanRuntime::RunCgroup(absl::string_view run_id) const {
  if (cgroup_base_.empty()) return "";
  return absl::StrCat(cgroup_base_, "/", ContainerName(run_id));
}

std::string PodmanRuntime::RunDir(absl::string_view run_id) const {
  return absl::StrCat(options_.files_dir, "/", ContainerName(run_id));
}

std::vector<std::string> PodmanRuntime::RunArguments(const ContainerLaunch& launch,
                                                     const std::string& env_file,
                                                     absl::string_view pod) const {
  std::vector<std::string> args = {
      "run", "--rm", "--name",
      pod.empty() ? ContainerName(launch.run_id) : absl::StrCat(pod, "-", launch.name)};
  for (const std::string& label : Labels(launch.run_id, launch.job_id, launch.queue)) {
    args.insert(args.end(), {"--label", label});
  }
  if (pod.empty()) {
    args.insert(args.end(), {"--network", options_.network});
    if (const std::string cgroup = RunCgroup(launch.run_id); !cgroup.empty()) {
      args.insert(args.end(), {"--cgroup-parent", cgroup});
    }
  } else {
    // The pod has the network and the cgroup parent.
    args.insert(args.end(), {"--pod", std::string(pod)});
  }
  // The output reaches the run's log through this process; conmon keeping a second copy would
  // only cost disk.
  args.insert(args.end(), {"--pull", options_.pull, "--log-driver", "none"});
  if (launch.memory_limit_bytes > 0) {
    // Equal swap limit: no swap, as in Kubernetes.
    const std::string bytes = absl::StrCat(launch.memory_limit_bytes, "b");
    args.insert(args.end(), {"--memory", bytes, "--memory-swap", bytes});
  }
  if (launch.cpu_limit_milli > 0) {
    args.insert(args.end(), {"--cpus", absl::StrFormat("%.3f", launch.cpu_limit_milli / 1000.0)});
  }
  if (!launch.working_dir.empty()) args.insert(args.end(), {"--workdir", launch.working_dir});
  if (!launch.user.empty()) args.insert(args.end(), {"--user", launch.user});
  if (!env_file.empty()) args.insert(args.end(), {"--env-file", env_file});
  for (const auto& [name, value] : launch.env) {
    // An env file holds one line per variable; the rare value with a line break goes on the
    // command line instead.
    if (!FitsEnvFile(value)) args.insert(args.end(), {"--env", absl::StrCat(name, "=", value)});
  }
  for (const ContainerMount& mount : launch.mounts) {
    const std::string host =
        mount.empty_dir.empty() ? mount.host_path : EmptyDirPath(launch.run_id, mount.empty_dir);
    args.insert(args.end(), {"--volume", absl::StrCat(host, ":", mount.container_path,
                                                      mount.read_only ? ":ro" : "")});
  }
  for (const ContainerDevice& device : launch.devices) {
    args.insert(
        args.end(),
        {"--device",
         absl::StrCat(device.host_path, ":",
                      device.container_path.empty() ? device.host_path : device.container_path, ":",
                      device.permissions.empty() ? "rwm" : device.permissions)});
  }
  if (!launch.command.empty()) {
    args.insert(args.end(), {"--entrypoint", nlohmann::json(launch.command).dump()});
  }
  args.push_back(launch.image);
  args.insert(args.end(), launch.args.begin(), launch.args.end());
  return args;
}

std::vector<std::string> PodmanRuntime::Labels(absl::string_view run_id, absl::string_view job_id,
                                               absl::string_view queue) const {
  return {absl::StrCat("regatta.owner=", options_.owner), absl::StrCat("regatta.run-id=", run_id),
          absl::StrCat("regatta.job-id=", job_id), absl::StrCat("regatta.queue=", queue)};
}

std::string PodmanRuntime::EmptyDirPath(absl::string_view run_id, absl::string_view volume) const {
  return absl::StrCat(RunDir(run_id), "/volumes/", volume);
}

absl::StatusOr<std::string> PodmanRuntime::WriteEnvFile(const ContainerLaunch& launch,
                                                        absl::string_view file_name) const {
  std::string lines;
  for (const auto& [name, value] : launch.env) {
    if (FitsEnvFile(value)) absl::StrAppend(&lines, name, "=", value, "\n");
  }
  if (lines.empty()) return std::string();
  const std::string path = absl::StrCat(RunDir(launch.run_id), "/", file_name);
  RETURN_IF_ERROR(WritePrivateFile(path, lines));
  return path;
}

absl::Status PodmanRuntime::MakeRunDir(const ContainerLaunch& launch) const {
  RETURN_IF_ERROR(local::MakeDirs(RunDir(launch.run_id)));
  for (const ContainerMount& mount : launch.mounts) {
    if (!mount.empty_dir.empty()) {
      RETURN_IF_ERROR(local::MakeDirs(EmptyDirPath(launch.run_id, mount.empty_dir)));
    }
  }
  return absl::OkStatus();
}

absl::Status PodmanRuntime::CheckPorts(const ContainerLaunch& launch) const {
  if (launch.ports.empty() || options_.network != "none") return absl::OkStatus();
  // FAILED_PRECONDITION: the run fails terminal (another try would fail the same way).
  return absl::FailedPreconditionError(absl::StrCat(
      "container \"", launch.name, "\" ports: executor.containers.network is none, so no port ",
      launch.ports.front(), " can be served (set it to host)"));
}

absl::StatusOr<ContainerRuntime::Command> PodmanRuntime::PrepareRun(
    const ContainerLaunch& launch) const {
  if (launch.image.empty()) return absl::InvalidArgumentError("container launch without image");
  RETURN_IF_ERROR(CheckPorts(launch));
  RETURN_IF_ERROR(MakeRunDir(launch));
  ASSIGN_OR_RETURN(const std::string env_file, WriteEnvFile(launch, "env"));
  Command command;
  command.argv = GlobalArguments();
  std::vector<std::string> run = RunArguments(launch, env_file);
  command.argv.insert(command.argv.end(), run.begin(), run.end());
  command.env.emplace_back("CONTAINERS_CONF", conf_env_.substr(conf_env_.find('=') + 1));
  return command;
}

namespace {

// 'text' for sh, with each ' as '\''.
std::string ShellQuote(absl::string_view text) {
  return absl::StrCat("'", absl::StrReplaceAll(text, {{"'", "'\\''"}}), "'");
}

std::string ShellWords(const std::vector<std::string>& words) {
  std::vector<std::string> quoted;
  for (const std::string& word : words) quoted.push_back(ShellQuote(word));
  return absl::StrJoin(quoted, " ");
}

}  // namespace

absl::StatusOr<ContainerRuntime::Command> PodmanRuntime::PreparePod(const PodLaunch& pod) const {
  if (pod.containers.empty()) return absl::InvalidArgumentError("pod launch without containers");
  for (const ContainerLaunch& c : pod.init_containers) RETURN_IF_ERROR(CheckPorts(c));
  for (const ContainerLaunch& c : pod.containers) RETURN_IF_ERROR(CheckPorts(c));
  const std::string name = ContainerName(pod.run_id);
  const std::string dir = RunDir(pod.run_id);
  RETURN_IF_ERROR(local::MakeDirs(dir));
  std::vector<std::string> create = {"pod", "create", "--name", name};
  for (const std::string& label : Labels(pod.run_id, pod.job_id, pod.queue)) {
    create.insert(create.end(), {"--label", label});
  }
  create.insert(create.end(), {"--network", options_.network});
  if (const std::string cgroup = RunCgroup(pod.run_id); !cgroup.empty()) {
    create.insert(create.end(), {"--cgroup-parent", cgroup});
  }
  const std::string podman = ShellWords(GlobalArguments());
  const int64_t grace = std::max<int64_t>(0, absl::ToInt64Seconds(pod.termination_grace));
  // POSIX sh, supervised like any run: SIGTERM to its process group reaches every `podman run`
  // (each forwards it to its container) and the trap stops the pod with the grace; the pod is
  // removed however the script ends, except by SIGKILL, after which the executor removes it.
  std::string script = absl::StrCat(
      "# Written by the Regatta executor for run ", pod.run_id, ".\n", "set -u\n", "podman() { ",
      podman, " \"$@\"; }\n", "pod=", ShellQuote(name), "\n",
      "finish() { podman pod rm --force --ignore --time 0 \"$pod\" > /dev/null 2>&1; exit \"$1\"; "
      "}\n",
      "trap 'podman pod stop --ignore --time ", grace, " \"$pod\" > /dev/null 2>&1' TERM INT\n",
      // A wait interrupted by the trap returns > 128 while the child still runs: wait again.
      "wait_for() { while :; do wait \"$1\"; r=$?; if [ \"$r\" -le 128 ] || ! kill -0 \"$1\" "
      "2> /dev/null; then return \"$r\"; fi; done; }\n",
      "podman ", ShellWords(create), " > /dev/null || exit 125\n");
  std::set<std::string> empty_dirs;
  auto container_command = [&](const ContainerLaunch& c) -> absl::StatusOr<std::string> {
    for (const ContainerMount& mount : c.mounts) {
      if (!mount.empty_dir.empty() && empty_dirs.insert(mount.empty_dir).second) {
        RETURN_IF_ERROR(local::MakeDirs(EmptyDirPath(pod.run_id, mount.empty_dir)));
      }
    }
    ASSIGN_OR_RETURN(const std::string env_file, WriteEnvFile(c, absl::StrCat(c.name, ".env")));
    return absl::StrCat("podman ", ShellWords(RunArguments(c, env_file, name)));
  };
  for (const ContainerLaunch& init : pod.init_containers) {
    ASSIGN_OR_RETURN(const std::string run, container_command(init));
    absl::StrAppend(&script, run, "\nr=$?; [ \"$r\" -eq 0 ] || finish \"$r\"\n");
  }
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    ASSIGN_OR_RETURN(const std::string run, container_command(pod.containers[i]));
    absl::StrAppend(&script, run, " &\np", i, "=$!\n");
  }
  absl::StrAppend(&script, "rc=0\n");
  for (size_t i = 0; i < pod.containers.size(); ++i) {
    absl::StrAppend(&script, "wait_for \"$p", i, "\"; r=$?; [ \"$rc\" -ne 0 ] || rc=$r\n");
  }
  absl::StrAppend(&script, "finish \"$rc\"\n");
  const std::string path = absl::StrCat(dir, "/pod.sh");
  RETURN_IF_ERROR(WritePrivateFile(path, script));
  Command command;
  command.argv = {"/bin/sh", path};
  command.env.emplace_back("CONTAINERS_CONF", conf_env_.substr(conf_env_.find('=') + 1));
  return command;
}

ContainerExit PodmanRuntime::Classify(int exit_code) const {
  // podman's own failures (no such image, pull failed, bad option) exit 125; 126 and 127 come
  // from the container's command as well, so they stay the container's.
  return exit_code == 125 ? ContainerExit::kRuntimeError : ContainerExit::kContainer;
}

bool PodmanRuntime::EndedOutOfMemory(absl::string_view run_id, int exit_code,
                                     int64_t memory_limit_bytes) const {
  if (memory_limit_bytes <= 0 || exit_code != 128 + 9) return false;
  // podman reports OOMKilled=false under cgroup v1 + runc, and the container's own cgroup is
  // gone with it; the run's parent cgroup (which also holds conmon) still shows the peak. (Its
  // memory.oom_control counts no kill of a child on cgroup v1, so one container of a pod killed
  // under its own limit is not seen: docs/operations.md.)
  const std::string cgroup = RunCgroup(run_id);
  if (cgroup.empty() || !cgroup_v1_) return true;
  const std::string peak_text =
      ReadSmallFile(absl::StrCat(kCgroupRoot, "/memory", cgroup, "/memory.max_usage_in_bytes"));
  int64_t peak = 0;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(peak_text), &peak)) return true;
  return peak >= memory_limit_bytes - std::max<int64_t>(1 << 20, memory_limit_bytes / 50);
}

void PodmanRuntime::RemoveRunCgroups(absl::string_view run_id) const {
  const std::string cgroup = RunCgroup(run_id);
  if (cgroup.empty()) return;
  for (const std::string& mount : CgroupMounts(cgroup_v1_)) {
    RemoveCgroupTree(absl::StrCat(mount, cgroup));
  }
}

absl::Status PodmanRuntime::CleanUpRun(absl::string_view run_id, bool container_may_remain) {
  std::error_code ignored;
  std::filesystem::remove_all(RunDir(run_id), ignored);
  if (!container_may_remain) {
    RemoveRunCgroups(run_id);
    return absl::OkStatus();
  }
  // The run's container, or its pod with every container in it.
  const std::string name = ContainerName(run_id);
  std::string problems;
  for (const std::vector<std::string>& verb :
       {std::vector<std::string>{"rm", "--force", "--ignore", "--time", "0", name},
        std::vector<std::string>{"pod", "rm", "--force", "--ignore", "--time", "0", name}}) {
    std::vector<std::string> argv = GlobalArguments();
    argv.insert(argv.end(), verb.begin(), verb.end());
    ASSIGN_OR_RETURN(local::CommandOutput out,
                     local::RunCommand(argv, kRemoveTimeout, 1 << 20, {conf_env_}));
    if (out.exit_code != 0) {
      absl::StrAppend(&problems, "podman ", verb[0], " ", name, " exited ", out.exit_code, ": ",
                      Tail(out.output, 600), "; ");
    }
  }
  RemoveRunCgroups(run_id);
  if (!problems.empty()) return absl::UnavailableError(problems);
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> PodmanRuntime::ListRunIds() const {
  std::vector<std::string> ps = GlobalArguments();
  ps.insert(ps.end(),
            {"ps", "--all", "--filter", absl::StrCat("label=regatta.owner=", options_.owner),
             "--format", "{{index .Labels \"regatta.run-id\"}}"});
  ASSIGN_OR_RETURN(local::CommandOutput out,
                   local::RunCommand(ps, kProbeTimeout, 1 << 20, {conf_env_}));
  if (out.exit_code != 0) {
    return absl::UnavailableError(
        absl::StrCat("podman ps exited ", out.exit_code, ": ", Tail(out.output, 600)));
  }
  std::vector<std::string> ids;
  for (absl::string_view line : absl::StrSplit(out.output, '\n', absl::SkipWhitespace())) {
    ids.emplace_back(absl::StripAsciiWhitespace(line));
  }
  return ids;
}

}  // namespace regatta::executor
