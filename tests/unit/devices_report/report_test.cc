#include "src/devices/report/report.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/devices/naming/naming.h"

namespace regatta::devices {
namespace {

namespace pb = regatta::v1;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

pb::Configuration Config(int capacity = 2) {
  pb::Configuration c;
  c.set_name("echo");
  c.set_capacity(capacity);
  c.mutable_discovery_handler()->set_name("debugEcho");
  (*c.mutable_broker_properties())["RESOLUTION"] = "800x600";
  (*c.mutable_broker_properties())["SHARED_KEY"] = "from-config";
  return c;
}

void AddStatus(pb::Configuration& c, const std::string& node, const std::string& error) {
  pb::ConfigurationNodeStatus* s = c.mutable_status()->add_nodes();
  s->set_node(node);
  s->set_error(error);
}

pb::ReportDevicesRequest Report(const std::string& node, std::vector<std::string> ids,
                                bool shared = false) {
  pb::ReportDevicesRequest r;
  r.set_executor_id("e1");
  r.set_node_id(node);
  r.set_configuration("echo");
  for (const std::string& id : ids) {
    pb::ReportedDevice* d = r.add_devices();
    d->mutable_device()->set_id(id);
    (*d->mutable_device()->mutable_properties())["DEBUG_ECHO_DESCRIPTION"] = id;
    d->set_shared(shared);
  }
  return r;
}

// The Instance as the views would hold it after `node` reported `id`.
pb::Instance Viewed(const pb::Configuration& c, const std::string& node, const std::string& id,
                    bool shared = false) {
  v0::Device device;
  device.set_id(id);
  (*device.mutable_properties())["DEBUG_ECHO_DESCRIPTION"] = id;
  pb::Instance instance = InstanceFromDevice(c, node, device, shared);
  instance.add_nodes(node);
  (*instance.mutable_device_usage())[SlotName(instance.name(), 0)] = "";
  instance.mutable_create_time()->set_seconds(5);
  return instance;
}

TEST(InstanceFromDevice, NamesAndFieldsFollowNamingAndConfiguration) {
  pb::Configuration c = Config(3);
  v0::Device device;
  device.set_id("foo0");
  (*device.mutable_properties())["SHARED_KEY"] = "from-device";
  device.add_device_specs()->set_host_path("/dev/null");
  device.add_mounts()->set_host_path("/tmp");
  pb::Instance local = InstanceFromDevice(c, "n1", device, false);
  EXPECT_EQ(local.name(), InstanceName("echo", "foo0", "n1", false));
  EXPECT_EQ(local.cdi_name(), CdiName("echo", "foo0", "n1", false));
  EXPECT_EQ(local.configuration_name(), "echo");
  EXPECT_EQ(local.capacity(), 3);
  EXPECT_FALSE(local.shared());
  EXPECT_EQ(local.device_id(), "foo0");
  EXPECT_EQ(local.broker_properties().at("RESOLUTION"), "800x600");
  // The Configuration's wins a name both have, as in Akri.
  EXPECT_EQ(local.broker_properties().at("SHARED_KEY"), "from-config");
  EXPECT_EQ(local.properties().at("SHARED_KEY"), "from-device");
  ASSERT_THAT(local.device_specs(), SizeIs(1));
  ASSERT_THAT(local.mounts(), SizeIs(1));
  EXPECT_TRUE(local.nodes().empty());

  // A shared device's name leaves the node out: two nodes name it alike.
  pb::Instance shared1 = InstanceFromDevice(c, "n1", device, true);
  pb::Instance shared2 = InstanceFromDevice(c, "n2", device, true);
  EXPECT_EQ(shared1.name(), shared2.name());
  EXPECT_EQ(shared1.name(), InstanceName("echo", "foo0", "", true));
  EXPECT_NE(local.name(), shared1.name());
  EXPECT_NE(local.name(), InstanceFromDevice(c, "n2", device, false).name());
}

TEST(DiffDeviceReport, FirstReportSeesEveryDeviceAndSetsTheStatus) {
  pb::Configuration c = Config();
  std::vector<pb::Event> events = DiffDeviceReport(c, {}, Report("n1", {"foo0", "foo1"}));
  ASSERT_THAT(events, SizeIs(3));
  EXPECT_EQ(events[0].instance_node_seen().node(), "n1");
  EXPECT_EQ(events[0].instance_node_seen().instance().name(),
            InstanceName("echo", "foo0", "n1", false));
  EXPECT_EQ(events[1].instance_node_seen().instance().name(),
            InstanceName("echo", "foo1", "n1", false));
  // The name order of the map, not the report order, is fine: both are Seen events.
  ASSERT_TRUE(events[2].has_configuration_status_updated());
  EXPECT_EQ(events[2].configuration_status_updated().configuration_name(), "echo");
  EXPECT_EQ(events[2].configuration_status_updated().node(), "n1");
  EXPECT_EQ(events[2].configuration_status_updated().error(), "");
}

TEST(DiffDeviceReport, RepeatedReportPublishesNothing) {
  pb::Configuration c = Config();
  AddStatus(c, "n1", "");
  std::vector<pb::Instance> viewed = {Viewed(c, "n1", "foo0"), Viewed(c, "n1", "foo1")};
  EXPECT_THAT(DiffDeviceReport(c, viewed, Report("n1", {"foo1", "foo0"})), IsEmpty());
}

TEST(DiffDeviceReport, VanishedDeviceIsLostAndNewOneSeen) {
  pb::Configuration c = Config();
  AddStatus(c, "n1", "");
  std::vector<pb::Instance> viewed = {Viewed(c, "n1", "foo0"), Viewed(c, "n1", "foo1")};
  std::vector<pb::Event> events = DiffDeviceReport(c, viewed, Report("n1", {"foo1", "foo2"}));
  ASSERT_THAT(events, SizeIs(2));
  EXPECT_EQ(events[0].instance_node_seen().instance().device_id(), "foo2");
  EXPECT_EQ(events[1].instance_node_lost().instance_name(), viewed[0].name());
  EXPECT_EQ(events[1].instance_node_lost().node(), "n1");
}

TEST(DiffDeviceReport, EmptyReportLosesEverythingOfTheNode) {
  pb::Configuration c = Config();
  AddStatus(c, "n1", "");
  std::vector<pb::Instance> viewed = {Viewed(c, "n1", "foo0"), Viewed(c, "n1", "shared", true)};
  std::vector<pb::Event> events = DiffDeviceReport(c, viewed, Report("n1", {}));
  ASSERT_THAT(events, SizeIs(2));
  EXPECT_TRUE(events[0].has_instance_node_lost());
  EXPECT_TRUE(events[1].has_instance_node_lost());
}

TEST(DiffDeviceReport, ChangedDeviceFieldsOrCapacityAreSeenAgain) {
  pb::Configuration c = Config();
  AddStatus(c, "n1", "");
  std::vector<pb::Instance> viewed = {Viewed(c, "n1", "foo0")};
  pb::ReportDevicesRequest changed = Report("n1", {"foo0"});
  (*changed.mutable_devices(0)->mutable_device()->mutable_properties())["NEW"] = "1";
  std::vector<pb::Event> events = DiffDeviceReport(c, viewed, changed);
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(events[0].instance_node_seen().instance().properties().at("NEW"), "1");

  pb::Configuration bigger = Config(/*capacity=*/4);
  AddStatus(bigger, "n1", "");
  events = DiffDeviceReport(bigger, viewed, Report("n1", {"foo0"}));
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(events[0].instance_node_seen().instance().capacity(), 4);
}

TEST(DiffDeviceReport, SharedDeviceSeenByAnotherNodeIsSeenByThisOneToo) {
  pb::Configuration c = Config();
  AddStatus(c, "n2", "");
  // The views list the shared Instance for n1 only; n2's report adds n2.
  std::vector<pb::Event> events = DiffDeviceReport(c, {}, Report("n2", {"cam"}, true));
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(events[0].instance_node_seen().node(), "n2");
  EXPECT_EQ(events[0].instance_node_seen().instance().name(), Viewed(c, "n1", "cam", true).name());
}

TEST(DiffDeviceReport, StatusUpdatedOnlyWhenTheErrorChanges) {
  pb::Configuration c = Config();
  AddStatus(c, "n1", "");
  AddStatus(c, "n2", "no discovery handler named 'x'");
  pb::ReportDevicesRequest failing = Report("n1", {});
  failing.set_error("no discovery handler named 'x'");
  std::vector<pb::Event> events = DiffDeviceReport(c, {}, failing);
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(events[0].configuration_status_updated().error(), "no discovery handler named 'x'");

  failing.set_node_id("n2");
  EXPECT_THAT(DiffDeviceReport(c, {}, failing), IsEmpty());
  events = DiffDeviceReport(c, {}, Report("n2", {}));
  ASSERT_THAT(events, SizeIs(1));
  EXPECT_EQ(events[0].configuration_status_updated().error(), "");
}

TEST(NodeLostEvents, OneLostPerInstance) {
  pb::Configuration c = Config();
  std::vector<pb::Event> events =
      NodeLostEvents({Viewed(c, "n1", "a"), Viewed(c, "n1", "b", true)}, "n1");
  ASSERT_THAT(events, SizeIs(2));
  EXPECT_EQ(events[1].instance_node_lost().instance_name(), Viewed(c, "n1", "b", true).name());
  EXPECT_EQ(events[1].instance_node_lost().node(), "n1");
}

TEST(ValidateDeviceReport, AcceptsAGoodReport) {
  EXPECT_TRUE(ValidateDeviceReport(Report("n1", {"a", "b"})).ok());
  // One id both local and shared names two Instances.
  pb::ReportDevicesRequest both = Report("n1", {"a"});
  pb::ReportedDevice* d = both.add_devices();
  d->mutable_device()->set_id("a");
  d->set_shared(true);
  EXPECT_TRUE(ValidateDeviceReport(both).ok());
}

void ExpectInvalid(const pb::ReportDevicesRequest& r, const std::string& field) {
  absl::Status s = ValidateDeviceReport(r);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr(field)) << s;
}

TEST(ValidateDeviceReport, NamesTheBadField) {
  pb::ReportDevicesRequest r = Report("n1", {"a"});
  r.clear_node_id();
  ExpectInvalid(r, "node_id: must not be empty");
  r = Report("n1", {"a"});
  r.clear_executor_id();
  ExpectInvalid(r, "executor_id:");
  r = Report("n1", {"a"});
  r.clear_configuration();
  ExpectInvalid(r, "configuration:");
  ExpectInvalid(Report("n1", {"a", ""}), "devices[1].device.id: must not be empty");
  ExpectInvalid(Report("n1", {"a", "b", "a"}), "devices[2].device.id: 'a' is also devices[0]");
  ExpectInvalid(Report("n1", {std::string(kMaxDeviceIdBytes + 1, 'x')}), "devices[0].device.id:");
  r = Report("n1", {"a"});
  r.set_error(std::string(kMaxDiscoveryErrorBytes + 1, 'e'));
  ExpectInvalid(r, "error: longer than");
  r = Report("n1", {"a"});
  (*r.mutable_devices(0)->mutable_device()->mutable_properties())["P"] =
      std::string(kMaxDeviceFieldBytes + 1, 'v');
  ExpectInvalid(r, "devices[0].device.properties[P]");
  r = Report("n1", {"a"});
  for (int i = 0; i <= kMaxDeviceEntries; ++i) r.mutable_devices(0)->mutable_device()->add_mounts();
  ExpectInvalid(r, "devices[0].device.mounts: more than");
  r = Report("n1", {"a"});
  r.mutable_devices(0)->mutable_device()->add_device_specs()->set_permissions(
      std::string(kMaxDeviceFieldBytes + 1, 'r'));
  ExpectInvalid(r, "devices[0].device.deviceSpecs[0].permissions");
}

}  // namespace
}  // namespace regatta::devices
