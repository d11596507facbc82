// End to end: jobs with an image run in a container (podman) from the built binary: the
// image's files, Kubernetes command/args semantics, memory limits and OOM, a missing image,
// cancel, kill -9 of the executor, and no runtime. Needs podman and runc (scripts/install-deps.sh);
// skipped with the reason when they are missing.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/e2e/execution_fixture.h"
#include "tests/e2e/process.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kImage[] = "localhost/busybox:1.35";

class ContainersTest : public ExecutionTest {
 protected:
  static void SetUpTestSuite() {
    // Builds the test image and runs one container: skipped, saying why, where podman cannot.
    const std::string probe = absl::StrCat(REGATTA_SOURCE_DIR, "/scripts/test-images.sh probe 2> ",
                                           ::testing::TempDir(), "/containers-probe.err");
    if (std::system(probe.c_str()) != 0) {
      skip_reason_ = absl::StrCat("this machine cannot run containers: ",
                                  Slurp(::testing::TempDir() + "/containers-probe.err"));
    }
  }

  void SetUp() override {
    if (!skip_reason_.empty()) GTEST_SKIP() << skip_reason_;
    ExecutionTest::SetUp();
  }

  // Containers of a job still known to podman (running or not).
  std::vector<std::string> ContainersOf(const std::string& job_id) {
    RunResult r =
        RunProcess({"/usr/bin/podman", "--runtime", "runc", "--cgroup-manager", "cgroupfs",
                    "--events-backend", "file", "ps", "--all", "--filter",
                    absl::StrCat("label=regatta.job-id=", job_id), "--format", "{{.Names}}"},
                   (dir_ / "scratch").string());
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> names;
    for (absl::string_view line : absl::StrSplit(r.out, '\n', absl::SkipWhitespace())) {
      names.emplace_back(absl::StripAsciiWhitespace(line));
    }
    return names;
  }

  std::string Logs(const std::string& job_id) { return Cli({"logs", job_id}).out; }

  static std::string skip_reason_;
};
std::string ContainersTest::skip_reason_;

TEST_F(ContainersTest, AJobSeesItsImagesFilesWithKubernetesCommandArgsEnvAndWorkingDir) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids = Submit(absl::StrCat(
      "queue: q\njobSet: img\njobs:\n"
      // command replaces the image's ENTRYPOINT; the host's files are not there.
      "  - image: ",
      kImage,
      "\n    command: [sh, -c]\n"
      "    args: ['cat /etc/regatta-test-image; test -e /usr/bin/apt || echo no-host-apt; "
      "echo \"$GREETING from $(pwd) as $(id -u) job $REGATTA_JOB_ID\"']\n"
      "    env: {GREETING: hello}\n    workingDir: /tmp\n"
      // args alone replace the image's CMD (sh).
      "  - image: ",
      kImage,
      "\n    args: [echo, only-args]\n"
      // neither: the image's CMD, with stdin closed, exits at once.
      "  - image: ",
      kImage, "\n"));
  ASSERT_EQ(ids.size(), 3u);
  for (const std::string& id : ids) {
    EXPECT_EQ(WaitForState(id, "JOB_STATE_SUCCEEDED"), "JOB_STATE_SUCCEEDED") << Logs(id);
  }
  EXPECT_EQ(Logs(ids[0]), absl::StrCat("regatta test image\nno-host-apt\nhello from /tmp as 0 job ",
                                       ids[0], "\n"));
  EXPECT_EQ(Logs(ids[1]), "only-args\n");
  for (const std::string& id : ids) EXPECT_THAT(ContainersOf(id), IsEmpty());
}

TEST_F(ContainersTest, ExitCodeAndMemoryLimitOverrunFailWithTheirReasons) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids =
      Submit(absl::StrCat("queue: q\njobSet: fail\njobs:\n"
                          "  - image: ",
                          kImage,
                          "\n    command: [sh, -c, 'echo failing; exit 7']\n"
                          "  - image: ",
                          kImage,
                          "\n"
                          "    command: [sh, -c, 'cat /sys/fs/cgroup/memory/memory.limit_in_bytes; "
                          "head -c 300m /dev/zero | tail > /dev/null']\n"
                          "    resources: {requests: {cpu: 100m, memory: 32Mi}}\n"));
  ASSERT_EQ(ids.size(), 2u);
  for (const std::string& id : ids) {
    EXPECT_EQ(WaitForState(id, "JOB_STATE_FAILED"), "JOB_STATE_FAILED") << Logs(id);
  }
  json exit7 = Job(ids[0]);
  EXPECT_EQ(exit7["error"].value("reason", ""), "ERROR_REASON_CONTAINER_ERROR");
  EXPECT_EQ(exit7["error"].value("exitCode", 0), 7);
  EXPECT_EQ(Logs(ids[0]), "failing\n");

  json oom = Job(ids[1]);
  EXPECT_EQ(oom["error"].value("reason", ""), "ERROR_REASON_OUT_OF_MEMORY") << oom.dump();
  EXPECT_EQ(oom["error"].value("category", ""), "OutOfMemory");
  EXPECT_TRUE(oom["error"].value("terminal", false));
  EXPECT_EQ(oom["runs"].size(), 1u);
  // The limit is the request (32Mi), enforced by the runtime.
  EXPECT_THAT(Logs(ids[1]), HasSubstr("33554432"));
  for (const std::string& id : ids) EXPECT_THAT(ContainersOf(id), IsEmpty());
}

TEST_F(ContainersTest, AMissingImageFailsTerminallyWithTheRuntimesMessage) {
  StartServer("up", {"executor.containers.pull=never"});
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids = Submit(
      "queue: q\njobSet: m\njobs:\n  - image: localhost/no-such-image:1\n"
      "    command: [/bin/true]\n");
  ASSERT_EQ(ids.size(), 1u);
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_FAILED"), "JOB_STATE_FAILED");
  json job = Job(ids[0]);
  EXPECT_EQ(job["error"].value("reason", ""), "ERROR_REASON_CANNOT_EXECUTE") << job.dump();
  EXPECT_EQ(job["error"].value("category", ""), "ContainerRuntimeError");
  EXPECT_TRUE(job["error"].value("terminal", false));
  EXPECT_THAT(job["error"].value("message", ""), HasSubstr("localhost/no-such-image:1"));
  EXPECT_EQ(job["runs"].size(), 1u);  // terminal: not retried
}

TEST_F(ContainersTest, WithoutARuntimeAJobWithAnImageFailsAndNeverRunsOnTheHost) {
  StartServer("up", {"executor.containers.runtime=none"});
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  const std::string marker = (dir_ / "ran-on-host").string();
  std::vector<std::string> ids =
      Submit(absl::StrCat("queue: q\njobSet: n\njobs:\n  - image: ", kImage,
                          "\n    command: [touch, '", marker, "']\n  - command: [/bin/true]\n"));
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_FAILED"), "JOB_STATE_FAILED");
  json job = Job(ids[0]);
  EXPECT_EQ(job["error"].value("reason", ""), "ERROR_REASON_CANNOT_EXECUTE");
  EXPECT_THAT(job["error"].value("message", ""), HasSubstr("needs a container runtime"));
  EXPECT_THAT(job["error"].value("message", ""), HasSubstr("executor.containers.runtime is none"));
  EXPECT_FALSE(std::filesystem::exists(marker));
  // Jobs without an image still run on the host.
  EXPECT_EQ(WaitForState(ids[1], "JOB_STATE_SUCCEEDED"), "JOB_STATE_SUCCEEDED");
}

TEST_F(ContainersTest, CancelStopsTheContainerWithinTheGracePeriodAndLeavesNothing) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  // sleep as the container's PID 1 ignores SIGTERM: only the kill after the grace ends it.
  std::vector<std::string> ids =
      Submit(absl::StrCat("queue: q\njobSet: c\njobs:\n  - image: ", kImage,
                          "\n    command: [sleep, '600']\n    terminationGracePeriod: 2s\n"
                          "  - image: ",
                          kImage,
                          "\n    command: [sh, -c, 'trap \"echo got TERM; exit 0\" TERM; "
                          "echo ready; while true; do sleep 0.1; done']\n"));
  ASSERT_EQ(ids.size(), 2u);
  for (const std::string& id : ids) {
    ASSERT_EQ(WaitForState(id, "JOB_STATE_RUNNING"), "JOB_STATE_RUNNING");
  }
  for (int i = 0; i < 100 && (ContainersOf(ids[0]).empty() || Logs(ids[1]) != "ready\n"); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(ContainersOf(ids[0]).size(), 1u);
  const auto start = std::chrono::steady_clock::now();
  ASSERT_EQ(Cli({"cancel", ids[0]}).exit_code, 0);
  ASSERT_EQ(Cli({"cancel", ids[1]}).exit_code, 0);
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_CANCELLED"), "JOB_STATE_CANCELLED");
  EXPECT_EQ(WaitForState(ids[1], "JOB_STATE_CANCELLED"), "JOB_STATE_CANCELLED");
  WaitForFirstRunState(ids[0], "RUN_STATE_CANCELLED");
  WaitForFirstRunState(ids[1], "RUN_STATE_CANCELLED");
  const auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(15));
  // The container that handles SIGTERM got it (Kubernetes' graceful stop).
  EXPECT_EQ(Logs(ids[1]), "ready\ngot TERM\n");
  for (const std::string& id : ids) EXPECT_THAT(ContainersOf(id), IsEmpty());
}

TEST_F(ContainersTest, KillNineOfTheExecutorThenRestartResolvesTheRunAndLeavesNoContainer) {
  StartServer("server", {"scheduling.executorTimeout=2s"});
  StartExecutor();
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids =
      Submit(absl::StrCat("queue: q\njobSet: k\njobs:\n  - image: ", kImage,
                          "\n    command: [sh, -c, 'sleep 3; echo done']\n"));
  ASSERT_EQ(ids.size(), 1u);
  ASSERT_EQ(WaitForState(ids[0], "JOB_STATE_RUNNING"), "JOB_STATE_RUNNING");
  for (int i = 0; i < 100 && ContainersOf(ids[0]).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(ContainersOf(ids[0]).size(), 1u);
  executor_->Kill(SIGKILL);
  // The container outlives the executor (podman's conmon keeps it) until the executor returns.
  EXPECT_EQ(ContainersOf(ids[0]).size(), 1u);
  StartExecutor();
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_SUCCEEDED"), "JOB_STATE_SUCCEEDED");
  json job = Job(ids[0]);
  ASSERT_GE(job["runs"].size(), 2u);
  EXPECT_NE(job["runs"][0].value("state", ""), "RUN_STATE_SUCCEEDED");
  EXPECT_EQ(job["runs"].back().value("state", ""), "RUN_STATE_SUCCEEDED");
  for (int i = 0; i < 50 && !ContainersOf(ids[0]).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_THAT(ContainersOf(ids[0]), IsEmpty());
}

TEST_F(ContainersTest, TheReadmesContainerExampleRuns) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "demo"}).exit_code, 0);
  RunResult r =
      Cli({"submit", absl::StrCat(REGATTA_SOURCE_DIR, "/examples/container.yaml"), "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json doc = json::parse(r.out, nullptr, false);
  ASSERT_TRUE(doc.is_object() && doc.contains("items")) << r.out;
  const std::string id = doc["items"][0].value("jobId", "");
  EXPECT_EQ(WaitForState(id, "JOB_STATE_SUCCEEDED"), "JOB_STATE_SUCCEEDED") << Logs(id);
  EXPECT_EQ(Logs(id), "hello from a container: busybox sh, 32 MiB limit\n");
}

TEST_F(ContainersTest, APodRunsItsInitContainerThenItsContainersSharingAnEmptyDir) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  std::vector<std::string> ids = Submit(R"(queue: q
jobSet: pods
jobs:
  - podSpec:
      terminationGracePeriodSeconds: 2
      volumes: [{name: shared, emptyDir: {}}]
      initContainers:
        - name: seed
          image: localhost/busybox:1.35
          command: [sh, -c, 'echo seeded > /data/seed']
          volumeMounts: [{name: shared, mountPath: /data}]
      containers:
        - name: reader
          image: localhost/busybox:1.35
          command: [sh, -c, 'cat /data/seed; echo "pod $POD_NAME on $NODE"']
          env:
            - {name: POD_NAME, valueFrom: {fieldRef: {fieldPath: metadata.name}}}
            - {name: NODE, valueFrom: {fieldRef: {fieldPath: spec.nodeName}}}
          volumeMounts: [{name: shared, mountPath: /data}]
          resources: {requests: {cpu: 100m, memory: 32Mi}}
        - name: writer
          image: localhost/busybox:1.35
          command: [sh, -c, 'test -f /data/seed && echo writer-saw-seed']
          volumeMounts: [{name: shared, mountPath: /data, readOnly: true}]
  - podSpec:
      containers:
        - {name: good, image: localhost/busybox:1.35, command: [sh, -c, 'exit 0']}
        - {name: bad, image: localhost/busybox:1.35, command: [sh, -c, 'sleep 0.3; exit 3']}
)");
  ASSERT_EQ(ids.size(), 2u);
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_SUCCEEDED"), "JOB_STATE_SUCCEEDED") << Logs(ids[0]);
  const std::string log = Logs(ids[0]);
  EXPECT_THAT(log, HasSubstr("seeded\n"));
  EXPECT_THAT(log, HasSubstr(absl::StrCat("pod regatta-", ids[0], " on ")));
  EXPECT_THAT(log, HasSubstr("writer-saw-seed\n"));
  // The pod fails when one of its containers does, with that container's exit code.
  EXPECT_EQ(WaitForState(ids[1], "JOB_STATE_FAILED"), "JOB_STATE_FAILED") << Logs(ids[1]);
  EXPECT_EQ(Job(ids[1])["error"].value("exitCode", 0), 3);
  for (const std::string& id : ids) EXPECT_THAT(ContainersOf(id), IsEmpty());
}

// The reply to an HTTP GET of / on 127.0.0.1:port, or "" when nothing answers.
std::string HttpGet(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    const std::string request = "GET / HTTP/1.0\r\n\r\n";
    if (::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
      char buffer[4096];
      for (ssize_t n; (n = ::read(fd, buffer, sizeof(buffer))) > 0;) reply.append(buffer, n);
    }
  }
  ::close(fd);
  return reply;
}

TEST_F(ContainersTest, AJobsContainerPortIsServedOnTheNodeAndListedAsAService) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  const int port = FreePort();
  std::vector<std::string> ids = Submit(absl::StrCat(R"(queue: q
jobSet: web
jobs:
  - podSpec:
      terminationGracePeriodSeconds: 1
      containers:
        - name: web
          image: localhost/busybox:1.35
          command: [sh, -c, 'mkdir -p /tmp/www && echo served-from-the-pod > /tmp/www/index.html && exec httpd -f -p 127.0.0.1:)",
                                                     port, R"( -h /tmp/www']
          ports: [{name: http, containerPort: )",
                                                     port, "}]\n"));
  ASSERT_EQ(ids.size(), 1u);
  ASSERT_EQ(WaitForState(ids[0], "JOB_STATE_RUNNING"), "JOB_STATE_RUNNING");
  const std::string name = absl::StrCat(ids[0], "-svc");
  json service;
  for (int i = 0; i < 100; ++i) {
    RunResult r = Cli({"services", "get", name, "-o", "json"});
    if (r.exit_code == 0) {
      service = json::parse(r.out, nullptr, false);
      if (service.is_object() && !service["endpoints"].empty() &&
          service["endpoints"][0].value("ready", false) && !HttpGet(port).empty()) {
        break;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_TRUE(service.is_object()) << "no service " << name;
  EXPECT_EQ(service.value("kind", ""), "SERVICE_KIND_JOB");
  EXPECT_EQ(service.value("jobId", ""), ids[0]);
  ASSERT_EQ(service["endpoints"].size(), 1u) << service.dump();
  const json& endpoint = service["endpoints"][0];
  EXPECT_FALSE(endpoint.value("node", "").empty());
  EXPECT_FALSE(endpoint.value("address", "").empty());
  EXPECT_EQ(endpoint["ports"].value("http", 0), port);
  // Served on the node's own network: the host reaches the container's port.
  EXPECT_THAT(HttpGet(port), HasSubstr("served-from-the-pod"));
  // The list names the job, its port, node and address:port.
  RunResult list = Cli({"services", "list"});
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_THAT(list.out, HasSubstr(name));
  EXPECT_THAT(list.out, HasSubstr(absl::StrCat("http:", port, "/TCP")));
  EXPECT_THAT(list.out, HasSubstr(absl::StrCat(endpoint.value("address", ""), ":", port)));
  // The service lives as long as the job.
  ASSERT_EQ(Cli({"cancel", ids[0]}).exit_code, 0);
  EXPECT_EQ(WaitForState(ids[0], "JOB_STATE_CANCELLED"), "JOB_STATE_CANCELLED");
  EXPECT_THAT(Cli({"services", "get", name}).err, HasSubstr("not found"));
  EXPECT_THAT(Cli({"services", "list"}).out, Not(HasSubstr(name)));
}

TEST_F(ContainersTest, APodFieldOutsideTheSubsetIsRefusedNamingItsPath) {
  StartServer("up");
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  RunResult r = Cli({"submit", "-"}, R"(queue: q
jobSet: bad
jobs:
  - podSpec:
      containers:
        - name: main
          image: localhost/busybox:1.35
          securityContext: {privileged: true}
)");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_THAT(r.err, HasSubstr("podSpec.containers[0].securityContext.privileged"));
  EXPECT_THAT(r.err, HasSubstr("not supported"));
}

}  // namespace
}  // namespace regatta::testing
