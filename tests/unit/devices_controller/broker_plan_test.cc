#include "src/devices/controller/broker_plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

namespace regatta::devices {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

regatta::v1::Configuration Config(const std::string& name, bool long_running) {
  regatta::v1::Configuration config;
  config.set_name(name);
  regatta::v1::BrokerTemplate* tmpl = long_running
                                          ? config.mutable_broker_spec()->mutable_broker_pod_spec()
                                          : config.mutable_broker_spec()->mutable_broker_job_spec();
  tmpl->set_queue("devices");
  tmpl->mutable_job()->mutable_task()->add_command("./broker");
  (*tmpl->mutable_job()->mutable_task()->mutable_resources()->mutable_requests())["cpu"] = "100m";
  return config;
}

regatta::v1::Instance Instance(const std::string& name, const std::string& config, bool shared,
                               std::vector<std::string> nodes) {
  regatta::v1::Instance instance;
  instance.set_name(name);
  instance.set_configuration_name(config);
  instance.set_shared(shared);
  for (const std::string& node : nodes) instance.add_nodes(node);
  return instance;
}

BrokerJob Ended(const std::string& id, const std::string& instance, const std::string& node,
                int attempt, absl::Duration ran, absl::Duration ago) {
  BrokerJob job{id, "cam", instance, node, attempt, false, kNow - ago - ran, kNow - ago};
  return job;
}

std::vector<std::string> ClientIds(const BrokerPlan& plan) {
  std::vector<std::string> ids;
  for (const auto& request : plan.submits) {
    for (const auto& item : request.items()) ids.push_back(item.client_id());
  }
  return ids;
}

TEST(BrokerPlanTest, LongRunningBrokersPerNodeOfASharedInstanceAndOnceForALocalOne) {
  BrokerPlan plan = PlanBrokers({Config("cam", true)},
                                {Instance("cam-aaaaaa", "cam", /*shared=*/true, {"n1", "n2"}),
                                 Instance("cam-bbbbbb", "cam", /*shared=*/false, {"n1"})},
                                {}, kNow);
  ASSERT_EQ(plan.submits.size(), 1u);
  EXPECT_EQ(plan.submits[0].queue(), "devices");
  EXPECT_EQ(plan.submits[0].job_set(), "broker-cam");
  EXPECT_THAT(ClientIds(plan), ElementsAre("broker-cam-aaaaaa-n1-0", "broker-cam-aaaaaa-n2-0",
                                           "broker-cam-bbbbbb-n1-0"));
  const regatta::v1::JobSubmitRequestItem& item = plan.submits[0].items(1);
  EXPECT_THAT(item.task().node_selector(), ElementsAre(Pair("kubernetes.io/hostname", "n2")));
  EXPECT_THAT(
      item.task().resources().requests(),
      testing::UnorderedElementsAre(Pair("cpu", "100m"), Pair("regatta.dev/cam-aaaaaa", "1")));
  EXPECT_EQ(item.labels().at(kBrokerInstanceLabel), "cam-aaaaaa");
  EXPECT_EQ(item.labels().at(kBrokerNodeLabel), "n2");
  EXPECT_EQ(item.labels().at(kBrokerConfigurationLabel), "cam");
  EXPECT_EQ(item.labels().at(kBrokerAttemptLabel), "0");
  EXPECT_THAT(plan.cancels, IsEmpty());
  EXPECT_FALSE(plan.next_plan.has_value());
}

TEST(BrokerPlanTest, AJobBrokerRunsOncePerInstanceOnAnyNode) {
  regatta::v1::Configuration config = Config("cam", false);
  config.mutable_broker_spec()->mutable_broker_job_spec()->set_job_set("jobs");
  std::vector<regatta::v1::Instance> instances = {
      Instance("cam-aaaaaa", "cam", true, {"n1", "n2"})};
  BrokerPlan plan = PlanBrokers({config}, instances, {}, kNow);
  EXPECT_THAT(ClientIds(plan), ElementsAre("broker-cam-aaaaaa-job-0"));
  EXPECT_EQ(plan.submits[0].job_set(), "jobs");
  EXPECT_THAT(plan.submits[0].items(0).task().node_selector(), IsEmpty());
  // Once it ran (whatever its end), it is not run again.
  plan = PlanBrokers({config}, instances,
                     {Ended("j1", "cam-aaaaaa", "", 0, absl::Seconds(1), absl::Hours(1))}, kNow);
  EXPECT_THAT(plan.submits, IsEmpty());
}

TEST(BrokerPlanTest, ActiveBrokersStayAndUnwantedOnesAreCancelled) {
  std::vector<BrokerJob> brokers = {
      {"keep", "cam", "cam-aaaaaa", "n1", 0, true, kNow, kNow},
      {"node-gone", "cam", "cam-aaaaaa", "n2", 0, true, kNow, kNow},
      {"instance-gone", "cam", "cam-cccccc", "n1", 3, true, kNow, kNow},
      {"ended-long-ago", "cam", "cam-dddddd", "n1", 0, false, kNow, kNow},
  };
  BrokerPlan plan = PlanBrokers({Config("cam", true)},
                                {Instance("cam-aaaaaa", "cam", true, {"n1"})}, brokers, kNow);
  EXPECT_THAT(plan.submits, IsEmpty());
  EXPECT_THAT(plan.cancels, ElementsAre("instance-gone", "node-gone"));
  // The Configuration deleted (or without a broker spec): every active broker goes.
  regatta::v1::Configuration plain;
  plain.set_name("cam");
  plan = PlanBrokers({plain}, {Instance("cam-aaaaaa", "cam", true, {"n1"})}, brokers, kNow);
  EXPECT_THAT(plan.cancels, ElementsAre("instance-gone", "keep", "node-gone"));
  plan = PlanBrokers({}, {Instance("cam-aaaaaa", "cam", true, {"n1"})}, brokers, kNow);
  EXPECT_EQ(plan.cancels.size(), 3u);
}

TEST(BrokerPlanTest, AnEndedLongRunningBrokerRestartsAfterADoublingBackOff) {
  std::vector<regatta::v1::Configuration> configs = {Config("cam", true)};
  std::vector<regatta::v1::Instance> instances = {Instance("cam-aaaaaa", "cam", false, {"n1"})};
  // Ran an hour: restarted at once as attempt 1.
  BrokerPlan plan =
      PlanBrokers(configs, instances,
                  {Ended("a0", "cam-aaaaaa", "n1", 0, absl::Hours(1), absl::Seconds(1))}, kNow);
  EXPECT_THAT(ClientIds(plan), ElementsAre("broker-cam-aaaaaa-n1-1"));
  // Crashed after 2 s, twice in a row: 20 s back-off from the last end.
  std::vector<BrokerJob> crashing = {
      Ended("a0", "cam-aaaaaa", "n1", 0, absl::Seconds(2), absl::Seconds(30)),
      Ended("a1", "cam-aaaaaa", "n1", 1, absl::Seconds(2), absl::Seconds(5))};
  plan = PlanBrokers(configs, instances, crashing, kNow);
  EXPECT_THAT(plan.submits, IsEmpty());
  ASSERT_TRUE(plan.next_plan.has_value());
  EXPECT_EQ(*plan.next_plan, kNow + absl::Seconds(15));
  plan = PlanBrokers(configs, instances, crashing, kNow + absl::Seconds(15));
  EXPECT_THAT(ClientIds(plan), ElementsAre("broker-cam-aaaaaa-n1-2"));
  // Capped at five minutes.
  std::vector<BrokerJob> many;
  for (int i = 0; i < 12; ++i) {
    many.push_back(Ended("x", "cam-aaaaaa", "n1", i, absl::Seconds(1), absl::Seconds(1)));
  }
  plan = PlanBrokers(configs, instances, many, kNow);
  ASSERT_TRUE(plan.next_plan.has_value());
  EXPECT_EQ(*plan.next_plan, kNow - absl::Seconds(1) + absl::Minutes(5));
}

TEST(BrokerPlanTest, InstancesWithoutNodesOrConfigurationGetNoBrokers) {
  BrokerPlan plan = PlanBrokers(
      {Config("cam", true)},
      {Instance("cam-aaaaaa", "cam", true, {}), Instance("usb-bbbbbb", "usb", false, {"n1"})}, {},
      kNow);
  EXPECT_THAT(plan.submits, IsEmpty());
}

TEST(BrokerPlanTest, AnInstanceThatCameBackStartsAFreshLifeWithNewAttemptNumbers) {
  regatta::v1::Configuration config = Config("cam", false);
  regatta::v1::Instance instance = Instance("cam-aaaaaa", "cam", true, {"n1"});
  instance.mutable_create_time()->set_seconds(absl::ToUnixSeconds(kNow - absl::Minutes(1)));
  // The job broker ran in the Instance's earlier life (submitted before it was created again).
  BrokerJob earlier = Ended("j0", "cam-aaaaaa", "", 0, absl::Seconds(1), absl::Minutes(5));
  earlier.submitted = kNow - absl::Minutes(10);
  BrokerPlan plan = PlanBrokers({config}, {instance}, {earlier}, kNow);
  EXPECT_THAT(ClientIds(plan), ElementsAre("broker-cam-aaaaaa-job-1"));
  // A crash-looping long-running broker of the earlier life does not delay the new one.
  std::vector<BrokerJob> crashed = {
      Ended("a0", "cam-aaaaaa", "n1", 0, absl::Seconds(1), absl::Minutes(3)),
      Ended("a1", "cam-aaaaaa", "n1", 1, absl::Seconds(1), absl::Minutes(2))};
  for (BrokerJob& job : crashed) job.submitted = kNow - absl::Minutes(4);
  plan = PlanBrokers({Config("cam", true)}, {instance}, crashed, kNow);
  EXPECT_THAT(ClientIds(plan), ElementsAre("broker-cam-aaaaaa-n1-2"));
  EXPECT_FALSE(plan.next_plan.has_value());
}

TEST(BrokerPlanTest, BrokersGetServiceNamesAndPortsNoActiveBrokerHolds) {
  regatta::v1::Configuration config = Config("cam", true);
  regatta::v1::ServicePort* http = config.mutable_instance_service_spec()->add_ports();
  http->set_name("http");
  http->set_port(80);
  regatta::v1::ServicePort* rtsp = config.mutable_configuration_service_spec()->add_ports();
  rtsp->set_name("rtsp");
  rtsp->set_port(554);
  rtsp->set_target_port(8554);  // the first broker on each node listens there
  BrokerJob holder{"held", "cam", "cam-cccccc", "n1", 0, true, kNow, kNow};
  holder.ports = {{"http", 30000}, {"rtsp", 8554}};
  BrokerPlanOptions options;
  options.last_port = 30004;
  BrokerPlan plan = PlanBrokers(
      {config},
      {Instance("cam-aaaaaa", "cam", true, {"n1", "n2"}),
       Instance("cam-bbbbbb", "cam", false, {"n1"}), Instance("cam-cccccc", "cam", false, {"n1"})},
      {holder}, kNow, options);
  ASSERT_EQ(plan.submits.size(), 1u);
  ASSERT_EQ(plan.submits[0].items_size(), 2);
  // On n1 the holder listens on 8554 already: this broker gets its own port from the range.
  const regatta::v1::JobSubmitRequestItem& on_n1 = plan.submits[0].items(0);
  EXPECT_EQ(on_n1.labels().at(kBrokerNodeLabel), "n1");
  EXPECT_THAT(on_n1.task().env(),
              testing::IsSupersetOf({Pair("REGATTA_INSTANCE_SERVICE", "cam-aaaaaa-svc"),
                                     Pair("REGATTA_CONFIGURATION_SERVICE", "cam-svc"),
                                     Pair("REGATTA_PORT_HTTP", "30001"),
                                     Pair("REGATTA_PORT_RTSP", "30002")}));
  EXPECT_THAT(on_n1.annotations(),
              testing::IsSupersetOf({Pair("regatta.dev/broker-port-http", "30001"),
                                     Pair("regatta.dev/broker-port-rtsp", "30002")}));
  EXPECT_EQ(on_n1.labels().at(kBrokerLabel), "true");
  // On n2 nobody holds 8554: the targetPort.
  const regatta::v1::JobSubmitRequestItem& on_n2 = plan.submits[0].items(1);
  EXPECT_EQ(on_n2.labels().at(kBrokerNodeLabel), "n2");
  EXPECT_EQ(on_n2.task().env().at("REGATTA_PORT_HTTP"), "30003");
  EXPECT_EQ(on_n2.task().env().at("REGATTA_PORT_RTSP"), "8554");
  // cam-bbbbbb on n1 needs two more ports and one is left: it waits, and the plan says why.
  ASSERT_EQ(plan.errors.size(), 1u);
  EXPECT_EQ(plan.errors[0].configuration, "cam");
  EXPECT_THAT(plan.errors[0].message, testing::HasSubstr("cam-bbbbbb"));
  EXPECT_THAT(plan.errors[0].message, testing::HasSubstr("no free port left in 30000..30004"));
  EXPECT_EQ(BrokerPortVariable("web-ui"), "REGATTA_PORT_WEB_UI");
}

// Two brokers on one node never share a port, even when their Configuration fixes one; a job
// broker (node unknown until it runs) holds its ports everywhere.
TEST(BrokerPlanTest, TwoBrokersOnANodeGetTheirOwnPorts) {
  regatta::v1::Configuration config = Config("cam", true);
  regatta::v1::ServicePort* grpc = config.mutable_instance_service_spec()->add_ports();
  grpc->set_name("grpc");
  grpc->set_port(8083);
  grpc->set_target_port(8083);
  BrokerPlan plan = PlanBrokers(
      {config},
      {Instance("cam-aaaaaa", "cam", false, {"n1"}), Instance("cam-bbbbbb", "cam", false, {"n1"}),
       Instance("cam-cccccc", "cam", false, {"n2"})},
      {}, kNow);
  ASSERT_EQ(plan.submits.size(), 1u);
  ASSERT_EQ(plan.submits[0].items_size(), 3);
  std::map<std::string, std::string> port_of;
  for (const auto& item : plan.submits[0].items()) {
    port_of[item.labels().at(kBrokerInstanceLabel)] = item.task().env().at("REGATTA_PORT_GRPC");
  }
  EXPECT_EQ(port_of["cam-aaaaaa"], "8083");
  EXPECT_EQ(port_of["cam-bbbbbb"], "30000");
  EXPECT_EQ(port_of["cam-cccccc"], "8083");

  BrokerJob job_broker{"jb", "cam", "cam-dddddd", "", 0, true, kNow, kNow};
  job_broker.ports = {{"grpc", 8083}};
  plan = PlanBrokers({config}, {Instance("cam-cccccc", "cam", false, {"n2"})}, {job_broker}, kNow);
  ASSERT_EQ(plan.submits.size(), 1u);
  EXPECT_EQ(plan.submits[0].items(0).task().env().at("REGATTA_PORT_GRPC"), "30000");
}

TEST(BrokerPlanTest, DesiredBrokersFollowTheSpecKindAndTheNodes) {
  std::vector<BrokerKey> keys = DesiredBrokers({Config("cam", true), Config("usb", false)},
                                               {Instance("cam-aaaaaa", "cam", true, {"n1", "n2"}),
                                                Instance("usb-bbbbbb", "usb", false, {"n2"}),
                                                Instance("other-cccccc", "other", false, {"n1"})});
  EXPECT_THAT(keys, ElementsAre(BrokerKey{"cam-aaaaaa", "n1"}, BrokerKey{"cam-aaaaaa", "n2"},
                                BrokerKey{"usb-bbbbbb", ""}));
}

}  // namespace
}  // namespace regatta::devices
