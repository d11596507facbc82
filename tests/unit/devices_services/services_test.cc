// Instance and configuration services computed from Configurations, Instances and broker jobs.
#include "src/devices/services/services.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "src/devices/controller/broker_plan.h"

namespace regatta::devices {
namespace {

namespace pb = regatta::v1;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

pb::ServicePort Port(const std::string& name, int port, int target_port = 0) {
  pb::ServicePort p;
  p.set_name(name);
  p.set_port(port);
  p.set_target_port(target_port);
  return p;
}

// "cams": an instance service with port "rtsp", a configuration service with "rtsp" and "http".
pb::Configuration Cams() {
  pb::Configuration c;
  c.set_name("cams");
  *c.mutable_instance_service_spec()->add_ports() = Port("rtsp", 554, 8554);
  *c.mutable_configuration_service_spec()->add_ports() = Port("rtsp", 554, 8554);
  *c.mutable_configuration_service_spec()->add_ports() = Port("http", 80);
  return c;
}

pb::Instance Instance(const std::string& name, const std::string& configuration = "cams") {
  pb::Instance i;
  i.set_name(name);
  i.set_configuration_name(configuration);
  return i;
}

// A broker as the controller labels and annotates it, running on `node` of executor "exec-1".
ServiceBroker Broker(const std::string& job_id, const std::string& instance,
                     const std::string& node, pb::JobState state = pb::JOB_STATE_RUNNING,
                     const std::string& configuration = "cams") {
  ServiceBroker b;
  b.job_id = job_id;
  b.labels[kBrokerConfigurationLabel] = configuration;
  b.labels[kBrokerInstanceLabel] = instance;
  b.labels[kBrokerNodeLabel] = node;
  b.labels[kBrokerAttemptLabel] = "0";
  b.annotations["regatta.dev/broker-port-rtsp"] = "8554";
  b.annotations["regatta.dev/broker-port-http"] = "31000";
  b.state = state;
  if (state == pb::JOB_STATE_RUNNING || state == pb::JOB_STATE_PENDING) {
    b.run_id = "run-" + job_id;
    b.node = node;
    b.executor_id = "exec-1";
  }
  return b;
}

std::string LogsAddress(absl::string_view executor_id) {
  return executor_id == "exec-1" ? "10.0.0.7:7070" : "";
}

const pb::Service* Find(const ComputedServices& computed, const std::string& name) {
  for (const pb::Service& s : computed.services) {
    if (s.name() == name) return &s;
  }
  return nullptr;
}

std::vector<std::string> Names(const ComputedServices& computed) {
  std::vector<std::string> names;
  for (const pb::Service& s : computed.services) names.push_back(s.name());
  return names;
}

std::vector<std::string> EndpointJobs(const pb::Service& service) {
  std::vector<std::string> ids;
  for (const pb::ServiceEndpoint& e : service.endpoints()) ids.push_back(e.broker_job_id());
  return ids;
}

TEST(ComputeServicesTest, InstanceAndConfigurationServices) {
  ComputedServices got =
      ComputeServices({Cams()}, {Instance("cams-bbbbbb"), Instance("cams-aaaaaa")},
                      {Broker("j2", "cams-bbbbbb", "node-b"), Broker("j1", "cams-aaaaaa", "node-a"),
                       Broker("j3", "cams-aaaaaa", "node-b")},
                      LogsAddress);
  EXPECT_THAT(got.warnings, IsEmpty());
  EXPECT_THAT(Names(got), ElementsAre("cams-aaaaaa-svc", "cams-bbbbbb-svc", "cams-svc"));

  const pb::Service* instance = Find(got, "cams-aaaaaa-svc");
  ASSERT_NE(instance, nullptr);
  EXPECT_EQ(instance->kind(), pb::SERVICE_KIND_INSTANCE);
  EXPECT_EQ(instance->configuration_name(), "cams");
  EXPECT_EQ(instance->instance_name(), "cams-aaaaaa");
  ASSERT_EQ(instance->ports_size(), 1);
  EXPECT_EQ(instance->ports(0).port(), 554);
  EXPECT_THAT(EndpointJobs(*instance), ElementsAre("j1", "j3"));  // its own brokers, node order
  const pb::ServiceEndpoint& endpoint = instance->endpoints(0);
  EXPECT_EQ(endpoint.instance_name(), "cams-aaaaaa");
  EXPECT_EQ(endpoint.run_id(), "run-j1");
  EXPECT_EQ(endpoint.node(), "node-a");
  EXPECT_EQ(endpoint.executor_id(), "exec-1");
  EXPECT_EQ(endpoint.address(), "10.0.0.7");
  EXPECT_TRUE(endpoint.ready());
  // Only the ports of the instance service's spec.
  EXPECT_THAT(endpoint.ports(), UnorderedElementsAre(Pair("rtsp", 8554)));

  const pb::Service* configuration = Find(got, "cams-svc");
  ASSERT_NE(configuration, nullptr);
  EXPECT_EQ(configuration->kind(), pb::SERVICE_KIND_CONFIGURATION);
  EXPECT_EQ(configuration->instance_name(), "");
  EXPECT_EQ(configuration->ports_size(), 2);
  // Every Instance's brokers, in Instance order.
  EXPECT_THAT(EndpointJobs(*configuration), ElementsAre("j1", "j3", "j2"));
  EXPECT_THAT(configuration->endpoints(2).ports(),
              UnorderedElementsAre(Pair("rtsp", 8554), Pair("http", 31000)));
}

TEST(ComputeServicesTest, OnlyTheSpecsAConfigurationHas) {
  pb::Configuration instance_only = Cams();
  instance_only.clear_configuration_service_spec();
  pb::Configuration configuration_only = Cams();
  configuration_only.set_name("usb");
  configuration_only.clear_instance_service_spec();
  pb::Configuration none = Cams();
  none.set_name("plain");
  none.clear_instance_service_spec();
  none.clear_configuration_service_spec();
  ComputedServices got = ComputeServices(
      {instance_only, configuration_only, none},
      {Instance("cams-aaaaaa"), Instance("usb-cccccc", "usb"), Instance("plain-dddddd", "plain")},
      {}, LogsAddress);
  EXPECT_THAT(Names(got), ElementsAre("cams-aaaaaa-svc", "usb-svc"));
  // A service without brokers is still a service: it has no endpoints yet.
  EXPECT_THAT(Find(got, "usb-svc")->endpoints(), IsEmpty());
}

TEST(ComputeServicesTest, ReadyOnlyWhenRunningAndTerminalBrokersLeftOut) {
  ComputedServices got =
      ComputeServices({Cams()}, {Instance("cams-aaaaaa")},
                      {Broker("queued", "cams-aaaaaa", "node-a", pb::JOB_STATE_QUEUED),
                       Broker("pending", "cams-aaaaaa", "node-b", pb::JOB_STATE_PENDING),
                       Broker("running", "cams-aaaaaa", "node-c"),
                       Broker("failed", "cams-aaaaaa", "node-d", pb::JOB_STATE_FAILED),
                       Broker("cancelled", "cams-aaaaaa", "node-e", pb::JOB_STATE_CANCELLED),
                       Broker("done", "cams-aaaaaa", "node-f", pb::JOB_STATE_SUCCEEDED)},
                      LogsAddress);
  const pb::Service* service = Find(got, "cams-aaaaaa-svc");
  ASSERT_NE(service, nullptr);
  // The queued broker has no run: no node, so it sorts first.
  EXPECT_THAT(EndpointJobs(*service), ElementsAre("queued", "pending", "running"));
  EXPECT_FALSE(service->endpoints(0).ready());
  EXPECT_EQ(service->endpoints(0).node(), "");
  EXPECT_EQ(service->endpoints(0).address(), "");
  EXPECT_FALSE(service->endpoints(1).ready());
  EXPECT_EQ(service->endpoints(1).address(), "10.0.0.7");  // placed, not yet running
  EXPECT_TRUE(service->endpoints(2).ready());
}

TEST(ComputeServicesTest, BrokersOfDeletedInstancesOrConfigurationsAreNotListed) {
  pb::Configuration other = Cams();
  other.set_name("other");
  ComputedServices got = ComputeServices(
      {Cams(), other}, {Instance("cams-aaaaaa"), Instance("ghost-eeeeee", "ghost")},
      {Broker("live", "cams-aaaaaa", "node-a"),
       Broker("gone", "cams-ffffff", "node-a"),  // its Instance was deleted
       // Of a deleted Configuration (its Instance left with it).
       Broker("orphan", "ghost-eeeeee", "node-a", pb::JOB_STATE_RUNNING, "ghost"),
       // Labelled with another Configuration than its Instance's.
       Broker("mislabelled", "cams-aaaaaa", "node-a", pb::JOB_STATE_RUNNING, "other")},
      LogsAddress);
  EXPECT_THAT(got.warnings, IsEmpty());
  EXPECT_THAT(Names(got), ElementsAre("cams-aaaaaa-svc", "cams-svc", "other-svc"));
  EXPECT_THAT(EndpointJobs(*Find(got, "cams-aaaaaa-svc")), ElementsAre("live"));
  EXPECT_THAT(EndpointJobs(*Find(got, "cams-svc")), ElementsAre("live"));
  EXPECT_THAT(Find(got, "other-svc")->endpoints(), IsEmpty());
}

TEST(ComputeServicesTest, UnreadableBrokersAreSkippedWithAWarning) {
  ServiceBroker unlabelled = Broker("unlabelled", "cams-aaaaaa", "node-a");
  unlabelled.labels.erase(kBrokerInstanceLabel);
  ServiceBroker bad_port = Broker("bad-port", "cams-aaaaaa", "node-a");
  bad_port.annotations["regatta.dev/broker-port-rtsp"] = "85x4";
  ServiceBroker too_big = Broker("too-big", "cams-aaaaaa", "node-a");
  too_big.annotations["regatta.dev/broker-port-http"] = "70000";
  ServiceBroker no_port = Broker("no-port", "cams-aaaaaa", "node-b");
  no_port.annotations.clear();  // submitted before the spec had ports: listed without them
  ComputedServices got = ComputeServices(
      {Cams()}, {Instance("cams-aaaaaa")},
      {unlabelled, bad_port, too_big, no_port, Broker("ok", "cams-aaaaaa", "n")}, LogsAddress);
  ASSERT_EQ(got.warnings.size(), 3u);
  EXPECT_THAT(got.warnings[0], HasSubstr("broker job unlabelled: no regatta.dev/broker-instance"));
  EXPECT_THAT(got.warnings[1], HasSubstr("broker job bad-port: annotation "
                                         "regatta.dev/broker-port-rtsp: '85x4' is not a port"));
  EXPECT_THAT(got.warnings[2], HasSubstr("broker job too-big"));
  const pb::Service* service = Find(got, "cams-aaaaaa-svc");
  ASSERT_NE(service, nullptr);
  EXPECT_THAT(EndpointJobs(*service), ElementsAre("ok", "no-port"));
  EXPECT_THAT(service->endpoints(1).ports(), IsEmpty());
}

TEST(ComputeServicesTest, AddressFallsBackToTheNodeForWildcardOrUnknownExecutors) {
  auto lookup = [](absl::string_view executor_id) -> std::string {
    if (executor_id == "wild4") return "0.0.0.0:7070";
    if (executor_id == "wild6") return "[::]:7070";
    if (executor_id == "v6") return "[fd00::7]:7070";
    return "";  // not connected
  };
  std::vector<ServiceBroker> brokers;
  for (const char* executor : {"wild4", "wild6", "v6", "gone"}) {
    ServiceBroker b = Broker(executor, "cams-aaaaaa", absl::StrCat("node-", executor));
    b.executor_id = executor;
    brokers.push_back(b);
  }
  ComputedServices got = ComputeServices({Cams()}, {Instance("cams-aaaaaa")}, brokers, lookup);
  const pb::Service* service = Find(got, "cams-aaaaaa-svc");
  ASSERT_NE(service, nullptr);
  ASSERT_EQ(service->endpoints_size(), 4);
  std::map<std::string, std::string> address_of;
  for (const pb::ServiceEndpoint& e : service->endpoints()) address_of[e.node()] = e.address();
  EXPECT_EQ(address_of["node-wild4"], "node-wild4");
  EXPECT_EQ(address_of["node-wild6"], "node-wild6");
  EXPECT_EQ(address_of["node-v6"], "fd00::7");
  EXPECT_EQ(address_of["node-gone"], "node-gone");
}

TEST(ServiceNamesTest, TheControllersNamesEndInTheSuffix) {
  EXPECT_EQ(InstanceServiceName("cams-aaaaaa"), absl::StrCat("cams-aaaaaa", kServiceNameSuffix));
  EXPECT_EQ(ConfigurationServiceName("cams"), absl::StrCat("cams", kServiceNameSuffix));
}

TEST(EndpointAddressTest, HostOfTheLogsAddressOrTheNode) {
  EXPECT_EQ(EndpointAddress("gpu-host.lan:7070", "n1"), "gpu-host.lan");
  EXPECT_EQ(EndpointAddress("127.0.0.1:7070", "n1"), "127.0.0.1");
  EXPECT_EQ(EndpointAddress("[fd00::7]:7070", "n1"), "fd00::7");
  EXPECT_EQ(EndpointAddress("0.0.0.0:7070", "n1"), "n1");
  EXPECT_EQ(EndpointAddress("[::]:7070", "n1"), "n1");
  EXPECT_EQ(EndpointAddress(":7070", "n1"), "n1");
  EXPECT_EQ(EndpointAddress("", "n1"), "n1");
  EXPECT_EQ(EndpointAddress("[broken", "n1"), "n1");
}

TEST(ComputeServicesTest, AConfigurationServiceKeepsANameAnInstanceServiceWants) {
  // Configuration "cams-aaaaaa" is named like "cams"'s Instance.
  pb::Configuration clash = Cams();
  clash.set_name("cams-aaaaaa");
  clash.clear_instance_service_spec();
  ComputedServices got = ComputeServices({Cams(), clash}, {Instance("cams-aaaaaa")},
                                         {Broker("j1", "cams-aaaaaa", "node-a")}, LogsAddress);
  const pb::Service* service = Find(got, "cams-aaaaaa-svc");
  ASSERT_NE(service, nullptr);
  EXPECT_EQ(service->kind(), pb::SERVICE_KIND_CONFIGURATION);
  EXPECT_EQ(service->configuration_name(), "cams-aaaaaa");
  EXPECT_THAT(Names(got), ElementsAre("cams-aaaaaa-svc", "cams-svc"));
  ASSERT_EQ(got.warnings.size(), 1u);
  EXPECT_THAT(got.warnings[0], HasSubstr("Instance cams-aaaaaa has the name of a configuration"));
}

TEST(ServiceBrokerFromDetailsTest, ReadsLabelsAnnotationsAndTheActiveRun) {
  pb::JobDetails details;
  details.mutable_summary()->set_job_id("j1");
  details.mutable_summary()->set_state(pb::JOB_STATE_RUNNING);
  (*details.mutable_job()->mutable_labels())[kBrokerInstanceLabel] = "cams-aaaaaa";
  (*details.mutable_job()->mutable_annotations())["regatta.dev/broker-port-rtsp"] = "8554";
  pb::JobRunDetails* old = details.add_runs();
  old->set_run_id("r1");
  old->set_node_id("node-a");
  old->set_state(pb::RUN_STATE_FAILED);
  pb::JobRunDetails* current = details.add_runs();
  current->set_run_id("r2");
  current->set_node_id("node-b");
  current->set_executor_id("exec-1");
  current->set_state(pb::RUN_STATE_RUNNING);
  ServiceBroker broker = ServiceBrokerFromDetails(details);
  EXPECT_EQ(broker.job_id, "j1");
  EXPECT_EQ(broker.state, pb::JOB_STATE_RUNNING);
  EXPECT_EQ(broker.labels.at(kBrokerInstanceLabel), "cams-aaaaaa");
  EXPECT_EQ(broker.annotations.at("regatta.dev/broker-port-rtsp"), "8554");
  EXPECT_EQ(broker.run_id, "r2");
  EXPECT_EQ(broker.node, "node-b");
  EXPECT_EQ(broker.executor_id, "exec-1");

  // Requeued after its run failed: no run, so no node to reach it at.
  details.mutable_summary()->set_state(pb::JOB_STATE_QUEUED);
  details.mutable_runs()->RemoveLast();
  broker = ServiceBrokerFromDetails(details);
  EXPECT_EQ(broker.run_id, "");
  EXPECT_EQ(broker.node, "");
}

}  // namespace
}  // namespace regatta::devices
