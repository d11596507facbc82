// DeviceService's cores against a real log, ingester and SQLite views (in-process, no gRPC).
#include "src/api/device_service.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "src/api/job_services.h"
#include "src/common/clock.h"
#include "src/common/ids.h"
#include "src/common/secrets/sealer.h"
#include "src/devices/controller/broker_plan.h"
#include "src/ingest/ingester.h"
#include "src/store/sqlite/sqlite_store.h"
#include "tests/testing/in_memory_event_log.h"
#include "tests/testing/test_dir.h"
#include "tests/unit/ingest/test_events.h"

namespace regatta::api {
namespace {

namespace pb = regatta::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

pb::Configuration TestConfiguration(const std::string& name) {
  pb::Configuration c;
  c.set_name(name);
  c.mutable_discovery_handler()->set_name("debugEcho");
  c.mutable_discovery_handler()->set_discovery_details("descriptions: [foo0]");
  return c;
}

class DeviceServiceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir("regatta_device_service_");
    ASSERT_FALSE(dir_.empty());
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> opened =
        store::SqliteStore::Open(dir_ + "/store.db");
    ASSERT_TRUE(opened.ok()) << opened.status();
    store_ = *std::move(opened);
    ingester_ = std::make_unique<ingest::Ingester>(&log_, store_.get(), RealClock::Get());
    ASSERT_TRUE(ingester_->Start().ok());

    auth::AuthorizationConfig config;
    config.permission_group_mapping["create_queue"] = {"admins"};
    config.permission_group_mapping["watch_all_events"] = {"operators"};
    absl::StatusOr<auth::Authorizer> authorizer = auth::Authorizer::Create(config);
    ASSERT_TRUE(authorizer.ok()) << authorizer.status();
    authorizer_ = std::make_unique<auth::Authorizer>(*std::move(authorizer));

    ctx_.log = &log_;
    ctx_.store = store_.get();
    ctx_.authorizer = authorizer_.get();
    ctx_.clock = RealClock::Get();
    ctx_.ids = &ids_;
    ctx_.sealer = sealer_.get();
    ctx_.wait_for_views = [this](int64_t offset, absl::Time deadline) {
      return ingester_->WaitForOffset(offset, deadline);
    };
    service_ = std::make_unique<DeviceService>(&ctx_);
  }

  void TearDown() override {
    ingester_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Publishes an agent's event directly and waits for the views.
  void PublishAsAgent(pb::Event event) {
    pb::EventSequence sequence;
    *sequence.add_events() = std::move(event);
    absl::StatusOr<std::vector<int64_t>> offsets = log_.Append({sequence});
    ASSERT_TRUE(offsets.ok()) << offsets.status();
    ASSERT_TRUE(ingester_->WaitForOffset(offsets->back(), absl::Now() + absl::Seconds(10)).ok());
  }

  const auth::Principal admin_{.name = "alice", .groups = {"admins"}};
  const auth::Principal user_{.name = "bob", .groups = {"users"}};
  std::string dir_;
  testing::InMemoryEventLog log_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<ingest::Ingester> ingester_;
  std::unique_ptr<auth::Authorizer> authorizer_;
  UlidGenerator ids_{RealClock::Get(), 7};
  std::unique_ptr<secrets::Sealer> sealer_ =
      *secrets::Sealer::FromText(secrets::NewKeyLine("test"), "test keys");
  ApiContext ctx_;
  std::unique_ptr<DeviceService> service_;
};

TEST_F(DeviceServiceTest, ConfigurationsApplyReadAndDelete) {
  pb::Configuration given = TestConfiguration("cams");
  given.set_generation(99);  // output only: ignored
  absl::StatusOr<pb::Configuration> applied = service_->ApplyConfigurationCore(admin_, given);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->generation(), 1);
  EXPECT_EQ(applied->capacity(), 1);  // defaulted
  applied = service_->ApplyConfigurationCore(admin_, TestConfiguration("cams"));
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->generation(), 2);
  ASSERT_TRUE(service_->ApplyConfigurationCore(admin_, TestConfiguration("usb")).ok());

  pb::ListConfigurationsRequest list;
  list.set_page_size(1);
  absl::StatusOr<pb::ListConfigurationsResponse> page =
      service_->ListConfigurationsCore(admin_, list);
  ASSERT_TRUE(page.ok()) << page.status();
  ASSERT_EQ(page->configurations_size(), 1);
  EXPECT_EQ(page->configurations(0).name(), "cams");
  list.set_page_token(page->next_page_token());
  page = service_->ListConfigurationsCore(admin_, list);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->configurations(0).name(), "usb");
  EXPECT_TRUE(page->next_page_token().empty());

  ASSERT_TRUE(service_->DeleteConfigurationCore(admin_, "cams").ok());
  EXPECT_EQ(store_->GetConfiguration("cams").status().code(), absl::StatusCode::kNotFound);
  absl::Status again = service_->DeleteConfigurationCore(admin_, "cams");
  EXPECT_EQ(again.code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(again.message(), HasSubstr("configuration cams"));
}

TEST_F(DeviceServiceTest, InvalidOrForbiddenWritesPublishNothing) {
  const int64_t before = log_.LastOffset();
  pb::Configuration bad = TestConfiguration("cams");
  bad.mutable_discovery_handler()->add_discovery_properties()->set_name("password");
  absl::StatusOr<pb::Configuration> applied = service_->ApplyConfigurationCore(admin_, bad);
  EXPECT_EQ(applied.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      applied.status().message(),
      HasSubstr("discoveryHandler.discoveryProperties[0]: exactly one of value, valueFrom"));

  applied = service_->ApplyConfigurationCore(user_, TestConfiguration("cams"));
  EXPECT_EQ(applied.status().code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(applied.status().message(), HasSubstr("needs permission \"create_queue\""));
  pb::Secret secret;
  secret.set_name("creds");
  EXPECT_EQ(service_->ApplySecretCore(user_, secret).status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(service_->DeleteConfigMapCore(user_, "urls").code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(log_.LastOffset(), before);

  pb::ListInstancesRequest list;
  list.set_page_size(-1);
  EXPECT_EQ(service_->ListInstancesCore(admin_, list).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(DeviceServiceTest, SecretValuesNeverLeave) {
  pb::Secret secret;
  secret.set_name("creds");
  (*secret.mutable_data())["password"] = "s3cr3t";
  (*secret.mutable_data())["username"] = "admin";
  absl::StatusOr<pb::Secret> applied = service_->ApplySecretCore(admin_, secret);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_THAT(applied->data(), IsEmpty());
  EXPECT_THAT(applied->keys(), ElementsAre("password", "username"));
  absl::StatusOr<pb::Secret> got = service_->GetSecretCore("creds");
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_THAT(got->data(), IsEmpty());
  absl::StatusOr<pb::ListSecretsResponse> listed = service_->ListSecretsCore({});
  ASSERT_TRUE(listed.ok()) << listed.status();
  ASSERT_EQ(listed->secrets_size(), 1);
  EXPECT_THAT(listed->secrets(0).data(), IsEmpty());
  EXPECT_EQ(listed->secrets(0).keys_size(), 2);
  // The views keep them for the agents, sealed.
  const std::string stored = store_->GetSecret("creds")->data().at("password");
  EXPECT_TRUE(secrets::IsSealed(stored)) << stored;
  EXPECT_EQ(*sealer_->Open(stored, SecretDataContext("creds", "password")), "s3cr3t");

  ASSERT_TRUE(service_->DeleteSecretCore(admin_, "creds").ok());
  EXPECT_EQ(service_->GetSecretCore("creds").status().code(), absl::StatusCode::kNotFound);
}

TEST_F(DeviceServiceTest, ConfigMapsAndInstances) {
  pb::ConfigMap config_map;
  config_map.set_name("urls");
  (*config_map.mutable_data())["url"] = "opc.tcp://localhost:4840";
  absl::StatusOr<pb::ConfigMap> applied = service_->ApplyConfigMapCore(admin_, config_map);
  ASSERT_TRUE(applied.ok()) << applied.status();
  EXPECT_EQ(applied->data().at("url"), "opc.tcp://localhost:4840");
  absl::StatusOr<pb::ListConfigMapsResponse> maps = service_->ListConfigMapsCore({});
  ASSERT_TRUE(maps.ok()) << maps.status();
  EXPECT_EQ(maps->config_maps_size(), 1);

  ASSERT_TRUE(service_->ApplyConfigurationCore(admin_, TestConfiguration("cams")).ok());
  for (const char* node : {"node-a", "node-b"}) {
    pb::Event seen;
    seen.mutable_instance_node_seen()->set_node(node);
    pb::Instance* instance = seen.mutable_instance_node_seen()->mutable_instance();
    instance->set_name(absl::StrCat("cams-", node == std::string("node-a") ? "aaaaaa" : "bbbbbb"));
    instance->set_configuration_name("cams");
    instance->set_capacity(1);
    PublishAsAgent(seen);
  }
  pb::ListInstancesRequest list;
  list.set_configuration_name("cams");
  list.set_node("node-b");
  absl::StatusOr<pb::ListInstancesResponse> instances = service_->ListInstancesCore(admin_, list);
  ASSERT_TRUE(instances.ok()) << instances.status();
  ASSERT_EQ(instances->instances_size(), 1);
  EXPECT_EQ(instances->instances(0).name(), "cams-bbbbbb");
  EXPECT_EQ(instances->instances(0).device_usage().at("cams-bbbbbb-0"), "");
}

// Broker jobs as the controller submits them: labelled with their Configuration and Instance,
// their ports annotated.
class DeviceServicesTest : public DeviceServiceTest {
 protected:
  void SetUp() override {
    DeviceServiceTest::SetUp();
    ctx_.executor_logs_address = [](absl::string_view executor_id) -> std::string {
      return executor_id == "exec" ? "0.0.0.0:7070" : "";  // a wildcard: the node is the host
    };
    pb::Configuration cams = TestConfiguration("cams");
    pb::ServicePort* rtsp = cams.mutable_instance_service_spec()->add_ports();
    rtsp->set_name("rtsp");
    rtsp->set_port(554);
    *cams.mutable_configuration_service_spec()->add_ports() = *rtsp;
    ASSERT_TRUE(service_->ApplyConfigurationCore(admin_, cams).ok());
    pb::Configuration usb = TestConfiguration("usb");
    usb.mutable_configuration_service_spec()->add_ports()->set_name("http");
    usb.mutable_configuration_service_spec()->mutable_ports(0)->set_port(80);
    ASSERT_TRUE(service_->ApplyConfigurationCore(admin_, usb).ok());
    for (const char* name : {"cams-aaaaaa", "cams-bbbbbb"}) {
      pb::Event seen;
      seen.mutable_instance_node_seen()->set_node("node-a");
      pb::Instance* instance = seen.mutable_instance_node_seen()->mutable_instance();
      instance->set_name(name);
      instance->set_configuration_name("cams");
      instance->set_capacity(1);
      PublishAsAgent(seen);
    }
    Append(ingest::testing::QueueCreated(0, ingest::testing::MakeQueue("brokers")));
  }

  void Append(pb::Event event) {
    absl::StatusOr<std::vector<int64_t>> offsets =
        log_.Append({ingest::testing::Sequence("brokers", "broker-cams", {std::move(event)})});
    ASSERT_TRUE(offsets.ok()) << offsets.status();
    ASSERT_TRUE(ingester_->WaitForOffset(offsets->back(), absl::Now() + absl::Seconds(10)).ok());
  }

  // Broker job `i` of `instance`, with port annotation `port`.
  void SubmitBroker(int i, const std::string& instance, const std::string& port,
                    const std::string& configuration = "cams") {
    pb::Job job = ingest::testing::MakeJob(i, "brokers", "broker-cams");
    (*job.mutable_labels())[devices::kBrokerConfigurationLabel] = configuration;
    (*job.mutable_labels())[devices::kBrokerInstanceLabel] = instance;
    (*job.mutable_labels())[devices::kBrokerNodeLabel] = "node-a";
    (*job.mutable_labels())[devices::kBrokerAttemptLabel] = "0";
    (*job.mutable_annotations())["regatta.dev/broker-port-rtsp"] = port;
    Append(ingest::testing::Submit(i, std::move(job)));
  }

  void Run(int i, const std::string& node) {
    Append(ingest::testing::Leased(i, i, i, node));
    Append(ingest::testing::Running(i, i, i));
  }

  static std::vector<std::string> Names(const pb::ListServicesResponse& response) {
    std::vector<std::string> names;
    for (const pb::Service& s : response.services()) names.push_back(s.name());
    return names;
  }
};

TEST_F(DeviceServicesTest, ServicesListTheActiveBrokersOfExistingInstances) {
  using ingest::testing::JobId;
  SubmitBroker(1, "cams-aaaaaa", "8554");
  Run(1, "node-a");
  SubmitBroker(2, "cams-aaaaaa", "8555");  // queued: listed, not ready
  SubmitBroker(3, "cams-cccccc", "8556");  // its Instance is gone
  Run(3, "node-a");
  SubmitBroker(4, "cams-bbbbbb", "not-a-port");  // unreadable: skipped, the call succeeds
  SubmitBroker(5, "cams-bbbbbb", "8557");
  Run(5, "node-a");
  Append(ingest::testing::RunSucceeded(6, 5, 5));
  Append(ingest::testing::Succeeded(6, 5));         // ended: not listed
  SubmitBroker(7, "cams-bbbbbb", "8558", "other");  // another Configuration's label
  Run(7, "node-a");

  absl::StatusOr<pb::ListServicesResponse> all = service_->ListServicesCore(admin_, {});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(Names(*all),
              ElementsAre("cams-aaaaaa-svc", "cams-bbbbbb-svc", "cams-svc", "usb-svc"));

  absl::StatusOr<pb::Service> instance = service_->GetServiceCore(admin_, "cams-aaaaaa-svc");
  ASSERT_TRUE(instance.ok()) << instance.status();
  EXPECT_EQ(instance->kind(), pb::SERVICE_KIND_INSTANCE);
  EXPECT_EQ(instance->instance_name(), "cams-aaaaaa");
  ASSERT_EQ(instance->ports_size(), 1);
  EXPECT_EQ(instance->ports(0).name(), "rtsp");
  ASSERT_EQ(instance->endpoints_size(), 2);
  // The queued one has no node yet: it sorts first.
  const pb::ServiceEndpoint& queued = instance->endpoints(0);
  EXPECT_EQ(queued.broker_job_id(), JobId(2));
  EXPECT_FALSE(queued.ready());
  EXPECT_EQ(queued.address(), "");
  EXPECT_EQ(queued.ports().at("rtsp"), 8555);
  const pb::ServiceEndpoint& running = instance->endpoints(1);
  EXPECT_EQ(running.broker_job_id(), JobId(1));
  EXPECT_TRUE(running.ready());
  EXPECT_EQ(running.run_id(), ingest::testing::RunId(1));
  EXPECT_EQ(running.node(), "node-a");
  EXPECT_EQ(running.executor_id(), "exec");
  EXPECT_EQ(running.address(), "node-a");
  EXPECT_EQ(running.ports().at("rtsp"), 8554);

  absl::StatusOr<pb::Service> other = service_->GetServiceCore(admin_, "cams-bbbbbb-svc");
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_THAT(other->endpoints(), IsEmpty());
  absl::StatusOr<pb::Service> configuration = service_->GetServiceCore(admin_, "cams-svc");
  ASSERT_TRUE(configuration.ok()) << configuration.status();
  EXPECT_EQ(configuration->kind(), pb::SERVICE_KIND_CONFIGURATION);
  EXPECT_EQ(configuration->endpoints_size(), 2);  // the brokers of every Instance

  for (const char* missing : {"cams-cccccc-svc", "cams-aaaaaa", "ghost-svc", "-svc"}) {
    absl::StatusOr<pb::Service> got = service_->GetServiceCore(admin_, missing);
    EXPECT_EQ(got.status().code(), absl::StatusCode::kNotFound) << missing;
    EXPECT_THAT(got.status().message(), HasSubstr(absl::StrCat("service ", missing)));
  }
  EXPECT_EQ(service_->GetServiceCore(admin_, "").status().code(),
            absl::StatusCode::kInvalidArgument);
}

// Device objects are read like the jobs of the queue the Configuration's brokers run in (or with
// watch_all_events / create_queue): services, Instances and Configurations alike.
TEST_F(DeviceServicesTest, ReadsFollowTheBrokerQueue) {
  pb::Queue watched = ingest::testing::MakeQueue("watched");
  pb::QueuePermission* watch = watched.add_permissions();
  watch->add_subjects()->set_kind("group");
  watch->mutable_subjects(0)->set_name("watchers");
  watch->add_verbs("watch");
  Append(ingest::testing::QueueCreated(0, watched));
  absl::StatusOr<pb::Configuration> cams = store_->GetConfiguration("cams");
  ASSERT_TRUE(cams.ok()) << cams.status();
  pb::BrokerTemplate* broker = cams->mutable_broker_spec()->mutable_broker_job_spec();
  broker->set_queue("watched");
  broker->mutable_job()->mutable_task()->add_command("/bin/true");
  ASSERT_TRUE(service_->ApplyConfigurationCore(admin_, *cams).ok());
  const auth::Principal watcher{.name = "carol", .groups = {"watchers"}};

  absl::StatusOr<pb::ListServicesResponse> services = service_->ListServicesCore(watcher, {});
  ASSERT_TRUE(services.ok()) << services.status();
  EXPECT_THAT(Names(*services), ElementsAre("cams-aaaaaa-svc", "cams-bbbbbb-svc", "cams-svc"));
  EXPECT_TRUE(service_->GetServiceCore(watcher, "cams-svc").ok());
  absl::Status denied = service_->GetServiceCore(watcher, "usb-svc").status();
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(denied.message(), HasSubstr("may not read service \"usb-svc\""));
  EXPECT_THAT(denied.message(), HasSubstr("\"watch_all_events\" or \"create_queue\""));

  services = service_->ListServicesCore(user_, {});
  ASSERT_TRUE(services.ok()) << services.status();
  EXPECT_THAT(Names(*services), IsEmpty());
  denied = service_->GetServiceCore(user_, "cams-aaaaaa-svc").status();
  EXPECT_EQ(denied.code(), absl::StatusCode::kPermissionDenied);
  EXPECT_THAT(denied.message(), HasSubstr("verb \"watch\" on queue \"watched\""));

  absl::StatusOr<pb::ListInstancesResponse> instances = service_->ListInstancesCore(watcher, {});
  ASSERT_TRUE(instances.ok()) << instances.status();
  EXPECT_EQ(instances->instances_size(), 2);
  instances = service_->ListInstancesCore(user_, {});
  ASSERT_TRUE(instances.ok()) << instances.status();
  EXPECT_EQ(instances->instances_size(), 0);
  EXPECT_TRUE(service_->GetInstanceCore(watcher, "cams-aaaaaa").ok());
  EXPECT_EQ(service_->GetInstanceCore(user_, "cams-aaaaaa").status().code(),
            absl::StatusCode::kPermissionDenied);

  absl::StatusOr<pb::ListConfigurationsResponse> configurations =
      service_->ListConfigurationsCore(watcher, {});
  ASSERT_TRUE(configurations.ok()) << configurations.status();
  ASSERT_EQ(configurations->configurations_size(), 1);
  EXPECT_EQ(configurations->configurations(0).name(), "cams");
  EXPECT_EQ(service_->GetConfigurationCore(watcher, "usb").status().code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_TRUE(service_->GetConfigurationCore(admin_, "usb").ok());  // create_queue
}

TEST_F(DeviceServicesTest, ListingPagesAndFiltersByConfiguration) {
  pb::ListServicesRequest request;
  request.set_page_size(3);
  absl::StatusOr<pb::ListServicesResponse> page = service_->ListServicesCore(admin_, request);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(Names(*page), ElementsAre("cams-aaaaaa-svc", "cams-bbbbbb-svc", "cams-svc"));
  EXPECT_EQ(page->next_page_token(), "cams-svc");
  request.set_page_token(page->next_page_token());
  page = service_->ListServicesCore(admin_, request);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(Names(*page), ElementsAre("usb-svc"));
  EXPECT_EQ(page->next_page_token(), "");

  pb::ListServicesRequest only_usb;
  only_usb.set_configuration_name("usb");
  page = service_->ListServicesCore(admin_, only_usb);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(Names(*page), ElementsAre("usb-svc"));
  only_usb.set_configuration_name("ghost");
  page = service_->ListServicesCore(admin_, only_usb);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(page->services(), IsEmpty());
  request.set_page_size(-1);
  EXPECT_EQ(service_->ListServicesCore(admin_, request).status().code(),
            absl::StatusCode::kInvalidArgument);

  // A service goes with its Instance: the last node loses it.
  pb::Event lost;
  lost.mutable_instance_node_lost()->set_instance_name("cams-aaaaaa");
  lost.mutable_instance_node_lost()->set_node("node-a");
  PublishAsAgent(lost);
  page = service_->ListServicesCore(admin_, {});
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_THAT(Names(*page), ElementsAre("cams-bbbbbb-svc", "cams-svc", "usb-svc"));
}

// Jobs whose pods declare ports (labelled at submit), with and without Armada's services.
TEST_F(DeviceServicesTest, JobServicesListTheContainerPortsOfActiveJobs) {
  using ingest::testing::JobId;
  const auth::Principal ops{.name = "olga", .groups = {"operators"}};
  auto port_job = [&](int i, bool armada_services) {
    pb::Job job = ingest::testing::MakeJob(i, "brokers", "web");
    job.mutable_task()->clear_command();
    pb::Container* web = job.mutable_task()->mutable_pod_spec()->add_containers();
    web->set_name("web");
    web->set_image("localhost/busybox:1.35");
    pb::ContainerPort* http = web->add_ports();
    http->set_name("http");
    http->set_container_port(8080);
    web->add_ports()->set_container_port(9090);
    if (armada_services) {
      pb::ServiceConfig* named = job.add_services();
      named->set_name("web-frontend");
      named->add_ports(8080);
      job.add_services()->add_ports(9090);
    }
    (*job.mutable_labels())[std::string(kServesPortsLabel)] = "true";
    Append(ingest::testing::Submit(i, std::move(job)));
  };
  port_job(11, false);
  Run(11, "node-a");
  port_job(12, true);  // queued: listed without an endpoint
  port_job(13, false);
  Run(13, "node-a");
  Append(ingest::testing::RunSucceeded(14, 13, 13));
  Append(ingest::testing::Succeeded(14, 13));  // ended: no service

  absl::StatusOr<pb::ListServicesResponse> all = service_->ListServicesCore(ops, {});
  ASSERT_TRUE(all.ok()) << all.status();
  std::vector<std::string> expected = {JobId(11) + "-svc", JobId(12) + "-svc-1", "cams-aaaaaa-svc",
                                       "cams-bbbbbb-svc",  "cams-svc",           "usb-svc",
                                       "web-frontend"};
  std::sort(expected.begin(), expected.end());
  EXPECT_THAT(Names(*all), ::testing::ElementsAreArray(expected));

  absl::StatusOr<pb::Service> own = service_->GetServiceCore(ops, JobId(11) + "-svc");
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(own->kind(), pb::SERVICE_KIND_JOB);
  EXPECT_EQ(own->job_id(), JobId(11));
  EXPECT_EQ(own->queue(), "brokers");
  ASSERT_EQ(own->ports_size(), 2);
  EXPECT_EQ(own->ports(0).name(), "http");
  EXPECT_EQ(own->ports(1).port(), 9090);
  EXPECT_EQ(own->ports(1).protocol(), "TCP");
  ASSERT_EQ(own->endpoints_size(), 1);
  const pb::ServiceEndpoint& endpoint = own->endpoints(0);
  EXPECT_TRUE(endpoint.ready());
  EXPECT_EQ(endpoint.node(), "node-a");
  EXPECT_EQ(endpoint.address(), "node-a");  // the executor listens on a wildcard
  EXPECT_EQ(endpoint.ports().at("http"), 8080);
  EXPECT_EQ(endpoint.ports().at("9090"), 9090);  // unnamed: keyed by its number

  absl::StatusOr<pb::Service> named = service_->GetServiceCore(ops, "web-frontend");
  ASSERT_TRUE(named.ok()) << named.status();
  ASSERT_EQ(named->ports_size(), 1);
  EXPECT_EQ(named->ports(0).name(), "http");
  EXPECT_THAT(named->endpoints(), IsEmpty());
  EXPECT_EQ(service_->GetServiceCore(ops, JobId(13) + "-svc").status().code(),
            absl::StatusCode::kNotFound);
  // Only the configuration filter's services; none of a job.
  pb::ListServicesRequest only_usb;
  only_usb.set_configuration_name("usb");
  all = service_->ListServicesCore(ops, only_usb);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(Names(*all), ElementsAre("usb-svc"));
  // Readers of the job's queue only: a device writer (create_queue) sees the device services.
  all = service_->ListServicesCore(admin_, {});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(Names(*all),
              ElementsAre("cams-aaaaaa-svc", "cams-bbbbbb-svc", "cams-svc", "usb-svc"));
  EXPECT_EQ(service_->GetServiceCore(admin_, "web-frontend").status().code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace regatta::api
