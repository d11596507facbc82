#include "src/devices/controller/controller.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "absl/strings/str_cat.h"

namespace regatta::devices {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// The platform as the controller sees it: Configurations, Instances and broker jobs in memory.
class FakeBackend : public BrokerBackend {
 public:
  absl::StatusOr<std::vector<regatta::v1::Configuration>> ListConfigurations() override {
    return configurations;
  }
  absl::StatusOr<std::vector<regatta::v1::Instance>> ListInstances() override { return instances; }
  absl::StatusOr<std::vector<BrokerJob>> ActiveBrokers() override {
    std::vector<BrokerJob> active;
    for (const BrokerJob& job : jobs) {
      if (job.active) active.push_back(job);
    }
    return active;
  }
  absl::StatusOr<std::vector<BrokerJob>> RecentBrokers(const BrokerKey& key, int limit) override {
    history_reads.push_back(key);
    std::vector<BrokerJob> recent;
    for (auto it = jobs.rbegin(); it != jobs.rend() && static_cast<int>(recent.size()) < limit;
         ++it) {
      if (it->instance == key.instance && it->node == key.node) recent.push_back(*it);
    }
    return recent;
  }
  absl::StatusOr<std::vector<std::string>> Submit(
      const regatta::v1::SubmitJobsRequest& request) override {
    if (!submit_error.ok()) return submit_error;
    std::vector<std::string> ids;
    for (const auto& item : request.items()) {
      BrokerJob job;
      job.job_id = absl::StrCat("job-", jobs.size());
      job.configuration = item.labels().at(kBrokerConfigurationLabel);
      job.instance = item.labels().at(kBrokerInstanceLabel);
      job.node = item.labels().at(kBrokerNodeLabel);
      job.attempt = std::stoi(item.labels().at(kBrokerAttemptLabel));
      job.active = true;
      jobs.push_back(job);
      ids.push_back(job.job_id);
    }
    return ids;
  }
  absl::Status Cancel(const std::vector<std::string>& job_ids, absl::string_view) override {
    for (BrokerJob& job : jobs) {
      for (const std::string& id : job_ids) {
        if (job.job_id == id) job.active = false;
      }
    }
    cancelled.insert(cancelled.end(), job_ids.begin(), job_ids.end());
    return absl::OkStatus();
  }

  std::vector<regatta::v1::Configuration> configurations;
  std::vector<regatta::v1::Instance> instances;
  std::vector<BrokerJob> jobs;  // oldest first
  std::vector<BrokerKey> history_reads;
  std::vector<std::string> cancelled;
  absl::Status submit_error;
};

class DeviceControllerTest : public ::testing::Test {
 protected:
  DeviceControllerTest() {
    regatta::v1::Configuration config;
    config.set_name("cam");
    regatta::v1::BrokerTemplate* tmpl = config.mutable_broker_spec()->mutable_broker_pod_spec();
    tmpl->set_queue("devices");
    tmpl->mutable_job()->mutable_task()->add_command("./broker");
    backend_.configurations.push_back(config);
    regatta::v1::Instance instance;
    instance.set_name("cam-aaaaaa");
    instance.set_configuration_name("cam");
    instance.add_nodes("n1");
    backend_.instances.push_back(instance);
  }

  FakeClock clock_{absl::FromUnixSeconds(1'800'000'000)};
  FakeBackend backend_;
  DeviceController controller_{&clock_, &backend_};
};

TEST_F(DeviceControllerTest, SubmitsMissingBrokersOnceAndTracksThem) {
  absl::StatusOr<DeviceController::PassResult> pass = controller_.Reconcile();
  ASSERT_TRUE(pass.ok()) << pass.status();
  EXPECT_EQ(pass->submitted, 1);
  EXPECT_TRUE(controller_.IsActiveBroker("job-0"));
  EXPECT_THAT(backend_.history_reads, ElementsAre(BrokerKey{"cam-aaaaaa", "n1"}));
  // The next pass finds it active: nothing to do, and no history read for its key.
  backend_.history_reads.clear();
  pass = controller_.Reconcile();
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->submitted, 0);
  EXPECT_THAT(backend_.history_reads, IsEmpty());
  EXPECT_EQ(controller_.passes(), 2);
}

TEST_F(DeviceControllerTest, AnEndedBrokerComesBackAsTheNextAttemptAfterItsBackOff) {
  ASSERT_TRUE(controller_.Reconcile().ok());
  backend_.jobs[0].active = false;
  backend_.jobs[0].started = clock_.Now();
  backend_.jobs[0].ended = clock_.Now() + absl::Seconds(1);
  clock_.Advance(absl::Seconds(1));
  absl::StatusOr<DeviceController::PassResult> pass = controller_.Reconcile();
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->submitted, 0);
  ASSERT_TRUE(pass->next_plan.has_value());
  EXPECT_EQ(*pass->next_plan, clock_.Now() + absl::Seconds(10));
  EXPECT_FALSE(controller_.IsActiveBroker("job-0"));
  clock_.Advance(absl::Seconds(10));
  pass = controller_.Reconcile();
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->submitted, 1);
  EXPECT_EQ(backend_.jobs[1].attempt, 1);
}

TEST_F(DeviceControllerTest, AFailedSubmitIsReportedAndRetriedAndGoneInstancesCancelTheirBrokers) {
  backend_.submit_error = absl::NotFoundError("queue \"devices\" not found");
  absl::StatusOr<DeviceController::PassResult> pass = controller_.Reconcile();
  ASSERT_TRUE(pass.ok());
  ASSERT_EQ(pass->errors.size(), 1u);
  EXPECT_THAT(pass->errors[0], HasSubstr("broker-cam-aaaaaa-n1-0"));
  EXPECT_THAT(pass->errors[0], HasSubstr("queue \"devices\" not found"));
  backend_.submit_error = absl::OkStatus();
  pass = controller_.Reconcile();
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->submitted, 1);
  EXPECT_THAT(pass->errors, IsEmpty());

  backend_.instances.clear();
  pass = controller_.Reconcile();
  ASSERT_TRUE(pass.ok());
  EXPECT_EQ(pass->cancelled, 1);
  EXPECT_THAT(backend_.cancelled, ElementsAre("job-0"));
  // Cancelled, it ends later: the controller still watches for that end.
  EXPECT_TRUE(controller_.IsActiveBroker("job-0"));
}

TEST_F(DeviceControllerTest, TheLoopRunsAPassWhenWoken) {
  controller_.Start();
  for (int i = 0; i < 200 && controller_.passes() < 1; ++i) absl::SleepFor(absl::Milliseconds(5));
  ASSERT_GE(controller_.passes(), 1);
  const int64_t before = controller_.passes();
  backend_.instances.clear();  // read by the next pass only
  controller_.Wake();
  for (int i = 0; i < 200 && controller_.passes() == before; ++i) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  controller_.Stop();
  EXPECT_GT(controller_.passes(), before);
  EXPECT_THAT(backend_.cancelled, ElementsAre("job-0"));
}

}  // namespace
}  // namespace regatta::devices
