// End to end with the built binary and certificates made by openssl: `regatta server` on TLS
// requiring client certificates, `regatta executor --local` presenting its own, a job that runs
// to SUCCEEDED and whose log the server reads from the executor's log service over mutual TLS
// (`regatta logs`, and HTTPS); clients without the CA or without a client certificate are
// refused; SIGHUP makes the server serve rotated files to new connections.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/process.h"
#include "tests/integration/tls_certs.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;

// The part of `line` after `marker`.
std::string After(const std::string& line, const std::string& marker) {
  return line.substr(line.find(marker) + marker.size());
}

int PortOf(const std::string& address) { return std::stoi(address.substr(address.rfind(':') + 1)); }

class TlsE2eTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) / absl::StrCat("regatta-tls-e2e-", getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_ / "scratch");
    ASSERT_TRUE(certs_.Make(dir_.string()));
    ASSERT_TRUE(certs_.MakeLeaf("executor", "ca", 4001));

    server_ = std::make_unique<Child>();
    ASSERT_TRUE(server_->Start(
        {RegattaBinary(), "server", "--data-dir", (dir_ / "server").string(), "--grpc-listen",
         "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--set", "auth.anonymous=true", "--set",
         "auth.anonymousGroups=[admins]", "--set", "tls.certFile=" + certs_.crt("server"), "--set",
         "tls.keyFile=" + certs_.key("server"), "--set", "tls.clientCaFile=" + certs_.crt("ca")},
        (dir_ / "server.stderr").string()));
    auto grpc_line = server_->WaitForLine("gRPC: ", std::chrono::seconds(30));
    ASSERT_TRUE(grpc_line.has_value()) << Slurp((dir_ / "server.stderr").string());
    grpc_ = After(*grpc_line, "gRPC: ");
    auto http_line = server_->WaitForLine("HTTP: https://", std::chrono::seconds(5));
    ASSERT_TRUE(http_line.has_value()) << server_->output();
    http_ = After(*http_line, "HTTP: https://");

    executor_ = std::make_unique<Child>();
    ASSERT_TRUE(executor_->Start(
        {RegattaBinary(), "--server", grpc_, "--tls-ca", certs_.crt("ca"), "--tls-cert",
         certs_.crt("executor"), "--tls-key", certs_.key("executor"), "executor", "--local",
         "--data-dir", (dir_ / "executor").string(), "--set", "executor.id=tls-exec"},
        (dir_ / "executor.stderr").string()));
    ASSERT_TRUE(executor_->WaitForLine("regatta executor is running", std::chrono::seconds(30)))
        << Slurp((dir_ / "executor.stderr").string());
    auto logs_line = executor_->WaitForLine("logs: ", std::chrono::seconds(5));
    ASSERT_TRUE(logs_line.has_value()) << executor_->output();
    logs_ = After(*logs_line, "logs: ");
  }

  void TearDown() override {
    executor_.reset();
    server_.reset();
    std::filesystem::remove_all(dir_);
  }

  // The CLI with the CA and a client certificate, plus `args`.
  RunResult Cli(std::vector<std::string> args, const std::string& input = "") {
    std::vector<std::string> argv = {RegattaBinary(),      "--server",       grpc_,
                                     "--tls-ca",           certs_.crt("ca"), "--tls-cert",
                                     certs_.crt("client"), "--tls-key",      certs_.key("client")};
    argv.insert(argv.end(), args.begin(), args.end());
    return RunProcess(argv, (dir_ / "scratch").string(), input);
  }

  // The CLI with only these connection flags.
  RunResult BareCli(std::vector<std::string> flags) {
    std::vector<std::string> argv = {RegattaBinary(), "--server", grpc_, "--timeout", "10s"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    argv.insert(argv.end(), {"queue", "list"});
    return RunProcess(argv, (dir_ / "scratch").string());
  }

  std::string JobState(const std::string& id) {
    RunResult r = Cli({"jobs", "get", id, "-o", "json"});
    nlohmann::json j = nlohmann::json::parse(r.out, nullptr, false);
    return j.is_object() ? j["summary"].value("state", "") : "";
  }

  std::filesystem::path dir_;
  TestCerts certs_;
  std::unique_ptr<Child> server_;
  std::unique_ptr<Child> executor_;
  std::string grpc_;
  std::string http_;
  std::string logs_;
};

TEST_F(TlsE2eTest, AJobRunsOverMutualTlsAndItsLogIsRead) {
  ASSERT_EQ(Cli({"queue", "create", "q"}).exit_code, 0);
  RunResult submitted = Cli({"submit", "-", "-o", "json"},
                            "queue: q\njobSet: s\njobs:\n  - command: [/bin/echo, hello over tls]\n"
                            "    resources: {requests: {cpu: 100m, memory: 64Mi}}\n");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  nlohmann::json doc = nlohmann::json::parse(submitted.out, nullptr, false);
  ASSERT_TRUE(doc.is_object() && doc.contains("items")) << submitted.out;
  const std::string id = doc["items"][0].value("jobId", "");

  std::string state;
  for (auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
       std::chrono::steady_clock::now() < deadline;
       std::this_thread::sleep_for(std::chrono::milliseconds(100))) {
    state = JobState(id);
    if (state == "JOB_STATE_SUCCEEDED" || state == "JOB_STATE_FAILED") break;
  }
  ASSERT_EQ(state, "JOB_STATE_SUCCEEDED") << Slurp((dir_ / "executor.stderr").string());

  // The server reads the log from the executor's log service over mutual TLS.
  RunResult logs = Cli({"logs", id});
  EXPECT_EQ(logs.exit_code, 0) << logs.err;
  EXPECT_EQ(logs.out, "hello over tls\n");
  RunResult https =
      RunProcess({"/usr/bin/curl", "-sS", "--max-time", "30", "--cacert", certs_.crt("ca"),
                  "--cert", certs_.crt("client"), "--key", certs_.key("client"),
                  absl::StrCat("https://", http_, "/v1/jobs/", id, "/logs")},
                 (dir_ / "scratch").string());
  EXPECT_EQ(https.exit_code, 0) << https.err;
  EXPECT_EQ(https.out, "hello over tls\n");
  // The log service itself is TLS with the executor's certificate.
  EXPECT_EQ(certs_.ServedSerial(PortOf(logs_)), "4001");
}

TEST_F(TlsE2eTest, ClientsWithoutTheCaOrACertificateAreRefused) {
  EXPECT_EQ(BareCli({"--tls-ca", certs_.crt("ca"), "--tls-cert", certs_.crt("client"), "--tls-key",
                     certs_.key("client")})
                .exit_code,
            0);
  RunResult plain = BareCli({});
  EXPECT_NE(plain.exit_code, 0);
  EXPECT_THAT(plain.err, HasSubstr("UNAVAILABLE"));
  RunResult no_ca = BareCli({"--server", "https://" + grpc_, "--tls-cert", certs_.crt("client"),
                             "--tls-key", certs_.key("client")});
  EXPECT_NE(no_ca.exit_code, 0);
  RunResult wrong_ca = BareCli({"--tls-ca", certs_.crt("other-ca"), "--tls-cert",
                                certs_.crt("client"), "--tls-key", certs_.key("client")});
  EXPECT_NE(wrong_ca.exit_code, 0);
  RunResult no_cert = BareCli({"--tls-ca", certs_.crt("ca")});
  EXPECT_NE(no_cert.exit_code, 0);
  RunResult bad_key = BareCli({"--tls-ca", certs_.crt("ca"), "--tls-cert", certs_.crt("client"),
                               "--tls-key", certs_.key("stranger")});
  EXPECT_NE(bad_key.exit_code, 0);
  EXPECT_THAT(bad_key.err, HasSubstr("--tls-key"));
}

TEST_F(TlsE2eTest, SighupServesRotatedFilesToNewConnections) {
  ASSERT_EQ(certs_.ServedSerial(PortOf(grpc_)), "1001");
  ASSERT_EQ(certs_.ServedSerial(PortOf(http_)), "1001");
  ASSERT_TRUE(certs_.MakeLeaf("server", "ca", 1002));
  ASSERT_EQ(kill(server_->pid(), SIGHUP), 0);
  std::string grpc_serial;
  for (int i = 0; i < 100 && grpc_serial != "1002"; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    grpc_serial = certs_.ServedSerial(PortOf(grpc_));
  }
  EXPECT_EQ(grpc_serial, "1002");
  EXPECT_EQ(certs_.ServedSerial(PortOf(http_)), "1002");
  // Still serving, with the new certificate.
  EXPECT_EQ(Cli({"queue", "list"}).exit_code, 0);
  EXPECT_EQ(server_->WaitFor(std::chrono::milliseconds(10)), -2);
  EXPECT_THAT(Slurp((dir_ / "server.stderr").string()), HasSubstr("reloaded the TLS"));
}

}  // namespace
}  // namespace regatta::testing
