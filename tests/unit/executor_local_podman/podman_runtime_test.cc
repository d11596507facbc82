#include "src/executor/local/podman/podman_runtime.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/executor/local/command.h"

namespace regatta::executor {
namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

bool HavePodman() {
  return !local::FindInPath("podman").empty() && !local::FindInPath("runc").empty();
}

class PodmanRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!HavePodman()) {
      GTEST_SKIP() << "podman and runc are not installed (scripts/install-deps.sh)";
    }
    if (std::system(absl::StrCat(REGATTA_SOURCE_DIR, "/scripts/test-images.sh probe").c_str()) !=
        0) {
      GTEST_SKIP() << "this machine cannot run containers (scripts/test-images.sh probe says why)";
    }
    dir_ = std::filesystem::path(::testing::TempDir()) /
           absl::StrCat("podman-test-", getpid(), "-",
                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    PodmanOptions options;
    options.owner = absl::StrCat("unit-", getpid());
    options.files_dir = (dir_ / "files").string();
    absl::StatusOr<std::unique_ptr<PodmanRuntime>> opened = PodmanRuntime::Open(options);
    ASSERT_TRUE(opened.ok()) << opened.status();
    runtime_ = *std::move(opened);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The value after `flag` in `args` (every one, in order).
  static std::vector<std::string> Values(const std::vector<std::string>& args,
                                         const std::string& flag) {
    std::vector<std::string> out;
    for (size_t i = 0; i + 1 < args.size(); ++i) {
      if (args[i] == flag) out.push_back(args[i + 1]);
    }
    return out;
  }

  std::filesystem::path dir_;
  std::unique_ptr<PodmanRuntime> runtime_;
};

TEST(PodmanNamesTest, ContainerNamesAreValidAndStableForAnyRunId) {
  EXPECT_EQ(PodmanRuntime::ContainerName("01HX-run.1_a"), "regatta-01HX-run.1_a");
  const std::string odd = PodmanRuntime::ContainerName("job:1@x+y=z");
  EXPECT_THAT(odd, ::testing::StartsWith("regatta-job-1-x-y-z-"));
  // The same in every process (a restarted executor finds the container by it) and distinct
  // from the sanitized spelling of another id.
  EXPECT_EQ(odd, PodmanRuntime::ContainerName("job:1@x+y=z"));
  EXPECT_NE(odd, PodmanRuntime::ContainerName("job-1-x-y-z"));
  EXPECT_NE(odd, PodmanRuntime::ContainerName("job:1@x+y=y"));
}

TEST(PodmanOpenTest, RefusesUnknownSettingsNamingThem) {
  PodmanOptions options;
  options.owner = "o";
  options.files_dir = ::testing::TempDir() + "/podman-open-test";
  options.network = "bridge";
  EXPECT_THAT(PodmanRuntime::Open(options).status().message(),
              HasSubstr("executor.containers.network"));
  options.network = "host";
  options.pull = "sometimes";
  EXPECT_THAT(PodmanRuntime::Open(options).status().message(),
              HasSubstr("executor.containers.pull"));
  options.pull = "never";
  options.podman_path = "/no/such/podman";
  EXPECT_EQ(PodmanRuntime::Open(options).status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(PodmanRuntimeTest, RunArgumentsMapTheLaunchTheKubernetesWay) {
  ContainerLaunch launch;
  launch.run_id = "run-1";
  launch.job_id = "job-1";
  launch.queue = "team-a";
  launch.image = "localhost/busybox:1.35";
  launch.command = {"sh", "-c"};
  launch.args = {"echo $A", "x"};
  launch.working_dir = "/work";
  launch.user = "1000:1000";
  launch.memory_limit_bytes = 64 << 20;
  launch.cpu_limit_milli = 1500;
  launch.mounts = {{"/srv/data", "/data", true}};
  launch.devices = {{"/dev/zero", "/dev/akri0", "rw"}, {"/dev/null", "", ""}};
  const std::vector<std::string> args = runtime_->RunArguments(launch, "/f/env");
  EXPECT_EQ(args[0], "run");
  EXPECT_THAT(args, Contains("--rm"));
  EXPECT_THAT(Values(args, "--name"), ElementsAre("regatta-run-1"));
  EXPECT_THAT(Values(args, "--label"),
              ElementsAre(absl::StrCat("regatta.owner=unit-", getpid()), "regatta.run-id=run-1",
                          "regatta.job-id=job-1", "regatta.queue=team-a"));
  EXPECT_THAT(Values(args, "--network"), ElementsAre("none"));
  EXPECT_THAT(Values(args, "--pull"), ElementsAre("missing"));
  EXPECT_THAT(Values(args, "--memory"), ElementsAre("67108864b"));
  EXPECT_THAT(Values(args, "--memory-swap"), ElementsAre("67108864b"));
  EXPECT_THAT(Values(args, "--cpus"), ElementsAre("1.500"));
  EXPECT_THAT(Values(args, "--workdir"), ElementsAre("/work"));
  EXPECT_THAT(Values(args, "--user"), ElementsAre("1000:1000"));
  EXPECT_THAT(Values(args, "--env-file"), ElementsAre("/f/env"));
  EXPECT_THAT(Values(args, "--volume"), ElementsAre("/srv/data:/data:ro"));
  EXPECT_THAT(Values(args, "--device"),
              ElementsAre("/dev/zero:/dev/akri0:rw", "/dev/null:/dev/null:rwm"));
  // command replaces ENTRYPOINT (a JSON array keeps each word whole); args follow the image.
  EXPECT_THAT(Values(args, "--entrypoint"), ElementsAre(R"(["sh","-c"])"));
  ASSERT_GE(args.size(), 3u);
  EXPECT_THAT(std::vector<std::string>(args.end() - 3, args.end()),
              ElementsAre("localhost/busybox:1.35", "echo $A", "x"));
  EXPECT_THAT(Values(args, "--cgroup-parent"),
              ElementsAre(::testing::EndsWith("/regatta/regatta-run-1")));
  // The ulimits come from the runtime's private containers.conf instead.
  EXPECT_THAT(args, Not(Contains("--ulimit")));
}

TEST_F(PodmanRuntimeTest, WithoutCommandTheImagesEntrypointStays) {
  ContainerLaunch launch;
  launch.run_id = "r";
  launch.image = "img";
  launch.args = {"a"};
  const std::vector<std::string> args = runtime_->RunArguments(launch, "");
  EXPECT_THAT(args, Not(Contains("--entrypoint")));
  EXPECT_THAT(args, Not(Contains("--env-file")));
  EXPECT_THAT(args, Not(Contains("--memory")));
  EXPECT_THAT(std::vector<std::string>(args.end() - 2, args.end()), ElementsAre("img", "a"));
}

TEST_F(PodmanRuntimeTest, TheEnvironmentGoesToAPrivateFileNotTheCommandLine) {
  ContainerLaunch launch;
  launch.run_id = "env-run";
  launch.image = "img";
  launch.env = {{"TOKEN", "s3cret value=1"}, {"PEM", "line1\nline2"}};
  absl::StatusOr<ContainerRuntime::Command> command = runtime_->PrepareRun(launch);
  ASSERT_TRUE(command.ok()) << command.status();
  const std::string joined = absl::StrJoin(command->argv, " ");
  EXPECT_THAT(joined, Not(HasSubstr("s3cret")));
  const std::vector<std::string> files = Values(command->argv, "--env-file");
  ASSERT_EQ(files.size(), 1u);
  std::ifstream in(files[0]);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "TOKEN=s3cret value=1\n");
  struct stat st {};
  ASSERT_EQ(::stat(files[0].c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  // A value with a line break cannot be an env-file line: it goes on the command line.
  EXPECT_THAT(Values(command->argv, "--env"), ElementsAre("PEM=line1\nline2"));
  EXPECT_THAT(command->env, Contains(::testing::Pair("CONTAINERS_CONF", ::testing::_)));
  ASSERT_TRUE(runtime_->CleanUpRun("env-run", false).ok());
  EXPECT_FALSE(std::filesystem::exists(files[0]));
}

// What the supervisor does with a run's command: spawn it with the command's environment.
absl::StatusOr<local::CommandOutput> RunIt(const ContainerRuntime::Command& command) {
  std::vector<std::string> env;
  for (const auto& [name, value] : command.env) env.push_back(absl::StrCat(name, "=", value));
  return local::RunCommand(command.argv, absl::Seconds(120), 1 << 20, env);
}

TEST_F(PodmanRuntimeTest, APodRunsItsInitContainersFirstAndSharesItsEmptyDir) {
  auto container = [](const std::string& name, const std::string& script) {
    ContainerLaunch c;
    c.name = name;
    c.run_id = absl::StrCat("unit-pod-", getpid());
    c.job_id = "job-pod";
    c.image = "localhost/busybox:1.35";
    c.command = {"sh", "-c", script};
    c.mounts = {{"", "/shared", false, "scratch"}};
    return c;
  };
  PodLaunch pod;
  pod.run_id = absl::StrCat("unit-pod-", getpid());
  pod.job_id = "job-pod";
  pod.init_containers = {container("init", "echo from-init > /shared/seed")};
  pod.containers = {container("a", "cat /shared/seed; echo a > /shared/a"),
                    container("b", "sleep 0.5; cat /shared/a")};
  absl::StatusOr<ContainerRuntime::Command> command = runtime_->PreparePod(pod);
  ASSERT_TRUE(command.ok()) << command.status();
  absl::StatusOr<local::CommandOutput> out = RunIt(*command);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->exit_code, 0) << out->output;
  EXPECT_THAT(out->output, HasSubstr("from-init\n"));
  EXPECT_THAT(out->output, HasSubstr("a\n"));
  ASSERT_TRUE(runtime_->CleanUpRun(pod.run_id, false).ok());
  EXPECT_FALSE(std::filesystem::exists(runtime_->RunDir(pod.run_id)));

  // A failing init container ends the pod with its code; the containers never start.
  pod.init_containers = {container("init", "exit 4")};
  pod.containers = {container("a", "echo should-not-run")};
  command = runtime_->PreparePod(pod);
  ASSERT_TRUE(command.ok());
  out = RunIt(*command);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->exit_code, 4) << out->output;
  EXPECT_THAT(out->output, Not(HasSubstr("should-not-run")));

  // One container failing fails the pod, whatever the others do.
  pod.init_containers.clear();
  pod.containers = {container("a", "exit 0"), container("b", "exit 6")};
  command = runtime_->PreparePod(pod);
  ASSERT_TRUE(command.ok());
  out = RunIt(*command);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->exit_code, 6) << out->output;
  ASSERT_TRUE(runtime_->CleanUpRun(pod.run_id, true).ok());
  absl::StatusOr<std::vector<std::string>> left = runtime_->ListRunIds();
  ASSERT_TRUE(left.ok());
  EXPECT_THAT(*left, IsEmpty());
}

TEST_F(PodmanRuntimeTest, TheForegroundCommandRunsTheContainerAndPassesItsExitCode) {
  ContainerLaunch launch;
  launch.run_id = absl::StrCat("unit-run-", getpid());
  launch.image = "localhost/busybox:1.35";
  launch.command = {"sh", "-c", "echo \"$MSG\"; exit 3"};
  launch.env = {{"MSG", "from the container"}};
  absl::StatusOr<ContainerRuntime::Command> command = runtime_->PrepareRun(launch);
  ASSERT_TRUE(command.ok()) << command.status();
  absl::StatusOr<local::CommandOutput> out = RunIt(*command);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->exit_code, 3) << out->output;
  EXPECT_EQ(out->output, "from the container\n");
  EXPECT_EQ(runtime_->Classify(out->exit_code), ContainerExit::kContainer);
  EXPECT_FALSE(runtime_->EndedOutOfMemory(launch.run_id, out->exit_code, 0));
  ASSERT_TRUE(runtime_->CleanUpRun(launch.run_id, true).ok());
  absl::StatusOr<std::vector<std::string>> left = runtime_->ListRunIds();
  ASSERT_TRUE(left.ok()) << left.status();
  EXPECT_THAT(*left, IsEmpty());

  launch.image = "localhost/no-such-image:0";
  launch.run_id += "-missing";
  PodmanOptions never;
  never.owner = "unit-never";
  never.pull = "never";
  never.files_dir = (dir_ / "files2").string();
  absl::StatusOr<std::unique_ptr<PodmanRuntime>> strict = PodmanRuntime::Open(never);
  ASSERT_TRUE(strict.ok()) << strict.status();
  command = (*strict)->PrepareRun(launch);
  ASSERT_TRUE(command.ok());
  out = RunIt(*command);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*strict)->Classify(out->exit_code), ContainerExit::kRuntimeError) << out->output;
  EXPECT_THAT(out->output, HasSubstr("no-such-image"));
}

}  // namespace
}  // namespace regatta::executor
