// Secrets at rest through the whole platform in-process: a job's secretEnv reaches its process
// while no file under the data directory holds the value; Secrets' data likewise reaches
// discovery; a key file rotated keeps old values openable, and a value whose key is gone fails
// its job with a reason that names the key.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "regatta/v1/device_service.grpc.pb.h"
#include "src/api/executor_service.h"
#include "src/common/secrets/sealer.h"
#include "tests/integration/platform_fixture.h"

namespace regatta::testing {
namespace {

namespace pb = regatta::v1;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Distinctive enough that finding it in a file is never a coincidence.
constexpr char kJobSecret[] = "hunter2-job-5ecret-7f3a9c";
constexpr char kDeviceSecret[] = "camera-pw-5ecret-b81e04";
// sha256 of kJobSecret: what the job prints, so its log does not hold the value either.
constexpr char kJobSecretSha256[] =
    "3da706a60b31890d61aaf46f4549b4c0a9f4c9081470191e66fcaaf683b3fb0c";

// Every file under `root` whose bytes contain `needle`.
std::vector<std::string> FilesHolding(const std::filesystem::path& root,
                                      const std::string& needle) {
  std::vector<std::string> found;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file()) continue;
    std::ifstream in(entry.path(), std::ios::binary);
    std::stringstream bytes;
    bytes << in.rdbuf();
    if (bytes.str().find(needle) != std::string::npos) found.push_back(entry.path().string());
  }
  return found;
}

class SecretsIntegrationTest : public PlatformTest {
 protected:
  void SetUp() override {
    mode_ = server::Mode::kUp;
    PlatformTest::SetUp();
    ASSERT_TRUE(CreateQueue("q").ok());
  }

  pb::SubmitJobsRequest SecretJob(const std::string& command) {
    pb::SubmitJobsRequest request = Jobs("q", "secrets", 1);
    pb::TaskSpec* task = request.mutable_items(0)->mutable_task();
    task->clear_command();
    task->add_command("/bin/sh");
    task->add_command("-c");
    task->add_command(command);
    (*task->mutable_env())["PLAIN"] = "visible";
    (*task->mutable_secret_env())["TOKEN"] = kJobSecret;
    return request;
  }

  std::string Submit(const pb::SubmitJobsRequest& request) {
    pb::SubmitJobsResponse response;
    grpc::Status status = submit_->SubmitJobs(Alice().get(), request, &response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return status.ok() ? response.items(0).job_id() : "";
  }

  pb::JobDetails WaitForEnd(const std::string& id) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    pb::GetJobDetailsRequest request;
    request.add_job_ids(id);
    request.set_expand_spec(true);
    pb::GetJobDetailsResponse response;
    while (absl::Now() < deadline) {
      EXPECT_TRUE(jobs_->GetJobDetails(Alice().get(), request, &response).ok());
      // Just submitted, the job may not be in the views yet: then it is left out.
      auto it = response.jobs().find(id);
      if (it != response.jobs().end()) {
        const pb::JobState state = it->second.summary().state();
        if (state == pb::JOB_STATE_SUCCEEDED || state == pb::JOB_STATE_FAILED) break;
      }
      absl::SleepFor(absl::Milliseconds(20));
    }
    auto it = response.jobs().find(id);
    EXPECT_NE(it, response.jobs().end()) << "job " << id << " never reached the views";
    return it == response.jobs().end() ? pb::JobDetails() : it->second;
  }

  std::string Logs(const std::string& id) {
    pb::GetJobLogsRequest request;
    request.set_job_id(id);
    std::unique_ptr<grpc::ClientContext> context = Alice();
    auto reader = jobs_->GetJobLogs(context.get(), request);
    std::string out;
    pb::LogChunk chunk;
    while (reader->Read(&chunk)) out += chunk.data();
    return out;
  }

  void WriteKeys(const std::string& name, const std::string& text) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    chmod(path.c_str(), 0600);
  }
};

TEST_F(SecretsIntegrationTest, SecretEnvReachesTheProcessButNoFile) {
  const std::string id = Submit(SecretJob("printf %s \"$TOKEN\" | sha256sum; echo \"$PLAIN\""));
  pb::JobDetails details = WaitForEnd(id);
  ASSERT_EQ(details.summary().state(), pb::JOB_STATE_SUCCEEDED) << details.error().message();
  const std::string logs = Logs(id);
  EXPECT_THAT(logs, HasSubstr(kJobSecretSha256));
  EXPECT_THAT(logs, HasSubstr("visible"));

  // What readers see is the sealed form; the plain env stays as it was.
  const pb::TaskSpec& task = details.job().task();
  EXPECT_THAT(task.secret_env().at("TOKEN"), StartsWith("sealed:v1:"));
  EXPECT_EQ(task.env().at("PLAIN"), "visible");

  // Not in the log, the views, the executor's run state nor the run's log.
  platform_.reset();
  EXPECT_THAT(FilesHolding(dir_ / "data", kJobSecret), ::testing::IsEmpty());
  EXPECT_THAT(FilesHolding(dir_ / "data", "visible"), ::testing::Not(::testing::IsEmpty()));
  Start();
}

TEST_F(SecretsIntegrationTest, SecretEnvMustNotRepeatEnv) {
  pb::SubmitJobsRequest request = SecretJob("true");
  (*request.mutable_items(0)->mutable_task()->mutable_env())["TOKEN"] = "x";
  pb::SubmitJobsResponse response;
  grpc::Status status = submit_->SubmitJobs(Alice().get(), request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("items[0].task.secret_env[TOKEN]: also given in env"));
}

TEST_F(SecretsIntegrationTest, SecretDataIsSealedAtRestAndOpenedForDiscovery) {
  auto devices = pb::DeviceService::NewStub(channel_);
  pb::ApplySecretRequest secret;
  secret.mutable_secret()->set_name("creds");
  (*secret.mutable_secret()->mutable_data())["password"] = kDeviceSecret;
  pb::Secret applied;
  ASSERT_TRUE(devices->ApplySecret(Alice().get(), secret, &applied).ok());
  EXPECT_THAT(applied.keys(), ::testing::ElementsAre("password"));
  EXPECT_TRUE(applied.data().empty());

  pb::ApplyConfigurationRequest apply;
  pb::Configuration& c = *apply.mutable_configuration();
  c.set_name("cams");
  c.set_capacity(1);
  c.mutable_discovery_handler()->set_name("debugEcho");
  c.mutable_discovery_handler()->set_discovery_details("descriptions: [c0]");
  pb::DiscoveryProperty* p = c.mutable_discovery_handler()->add_discovery_properties();
  p->set_name("PASSWORD");
  p->mutable_value_from()->mutable_secret_key_ref()->set_name("creds");
  p->mutable_value_from()->mutable_secret_key_ref()->set_key("password");
  pb::Configuration applied_configuration;
  ASSERT_TRUE(devices->ApplyConfiguration(Alice().get(), apply, &applied_configuration).ok());
  SyncViews();

  // The discovery handlers get the value itself.
  absl::StatusOr<pb::DiscoverySnapshot> snapshot =
      platform_->executor_service()->CurrentDiscovery();
  ASSERT_TRUE(snapshot.ok()) << snapshot.status();
  ASSERT_EQ(snapshot->configurations_size(), 1);
  EXPECT_EQ(snapshot->configurations(0).error(), "");
  EXPECT_EQ(snapshot->configurations(0).discovery_properties().at("PASSWORD"), kDeviceSecret);

  platform_.reset();
  EXPECT_THAT(FilesHolding(dir_ / "data", kDeviceSecret), ::testing::IsEmpty());
  Start();
}

// A job queued under one key runs after a rotation that keeps that key, and fails with a
// reason naming the key when the key file no longer holds it.
class SecretsRotationTest : public SecretsIntegrationTest {
 protected:
  void SetUp() override {
    old_key_ = secrets::NewKeyLine("old");
    WriteKeys("before.keys", old_key_ + "\n");
    extra_overrides_ = {absl::StrCat("secrets.keyFile=", (dir_ / "before.keys").string())};
    // No executor yet: the jobs wait in the queue.
    mode_ = server::Mode::kServer;
    PlatformTest::SetUp();
    ASSERT_TRUE(CreateQueue("q").ok());
  }

  void RestartWithKeys(const std::string& keys) {
    WriteKeys("after.keys", keys);
    extra_overrides_ = {absl::StrCat("secrets.keyFile=", (dir_ / "after.keys").string())};
    mode_ = server::Mode::kUp;
    Restart();
  }

  std::string old_key_;
};

TEST_F(SecretsRotationTest, OldValuesOpenWhileTheirKeyStays) {
  const std::string id = Submit(SecretJob("printf %s \"$TOKEN\" | sha256sum"));
  RestartWithKeys(absl::StrCat(secrets::NewKeyLine("new"), "\n", old_key_, "\n"));
  EXPECT_EQ(platform_->sealer().sealing_key_id(), "new");
  pb::JobDetails details = WaitForEnd(id);
  ASSERT_EQ(details.summary().state(), pb::JOB_STATE_SUCCEEDED) << details.error().message();
  EXPECT_THAT(Logs(id), HasSubstr(kJobSecretSha256));
  EXPECT_EQ(secrets::SealedKeyId(details.job().task().secret_env().at("TOKEN")), "old");
  // New values are sealed with the new key.
  const std::string fresh = Submit(SecretJob("true"));
  EXPECT_EQ(secrets::SealedKeyId(WaitForEnd(fresh).job().task().secret_env().at("TOKEN")), "new");
}

TEST_F(SecretsRotationTest, AValueWhoseKeyIsGoneFailsItsJobNamingTheKey) {
  const std::string id = Submit(SecretJob("true"));
  RestartWithKeys(secrets::NewKeyLine("new") + "\n");
  pb::JobDetails details = WaitForEnd(id);
  ASSERT_EQ(details.summary().state(), pb::JOB_STATE_FAILED);
  EXPECT_THAT(details.error().message(), HasSubstr("secret_env TOKEN"));
  EXPECT_THAT(details.error().message(), HasSubstr("key \"old\""));
  EXPECT_TRUE(details.error().terminal());
}

TEST(SecretsConfigTest, AKeyFileOthersCanReadIsRefusedAtStart) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / absl::StrCat("regatta-keys-", getpid());
  std::filesystem::create_directories(dir);
  const std::string keys = (dir / "keys").string();
  std::ofstream(keys) << secrets::NewKeyLine("k") << "\n";
  chmod(keys.c_str(), 0644);
  server::UpFlags flags;
  flags.data_dir = (dir / "data").string();
  flags.grpc_listen = "127.0.0.1:0";
  flags.http_listen = "127.0.0.1:0";
  flags.overrides = {absl::StrCat("secrets.keyFile=", keys)};
  absl::StatusOr<server::ServerConfig> config = server::LoadServerConfig(flags, {});
  ASSERT_TRUE(config.ok()) << config.status();
  absl::StatusOr<std::unique_ptr<server::Platform>> platform =
      server::Platform::Start(*config, server::Mode::kServer);
  ASSERT_FALSE(platform.ok());
  EXPECT_THAT(platform.status().message(), HasSubstr("secrets.keyFile: key file"));
  EXPECT_THAT(platform.status().message(), HasSubstr("chmod 600"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace regatta::testing
