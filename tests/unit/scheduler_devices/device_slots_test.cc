#include "src/scheduler/devices/device_slots.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace regatta::scheduler {
namespace {

using ::testing::ElementsAre;

regatta::v1::Instance MakeInstance(const std::string& name, const std::string& configuration,
                                   int capacity, std::vector<std::string> nodes) {
  regatta::v1::Instance instance;
  instance.set_name(name);
  instance.set_configuration_name(configuration);
  instance.set_capacity(capacity);
  for (const std::string& node : nodes) instance.add_nodes(node);
  return instance;
}

ResourceList Requests(std::vector<std::pair<std::string, std::string>> entries) {
  absl::StatusOr<ResourceList> list = ResourceList::FromStrings(entries);
  EXPECT_TRUE(list.ok()) << list.status();
  return list.value_or(ResourceList());
}

Node MakeNode(const std::string& id) {
  Node node;
  node.id = id;
  node.allocatable = Requests({{"cpu", "4"}});
  return node;
}

std::string Quantity(const Node& node, const std::string& resource) {
  return node.allocatable.Get(ResourceNames::Global().Intern(resource)).ToString();
}

TEST(DeviceResourceTest, PrefixNamesDevices) {
  EXPECT_TRUE(IsDeviceResource("regatta.dev/cam"));
  EXPECT_FALSE(IsDeviceResource("regatta.dev/"));
  EXPECT_FALSE(IsDeviceResource("cpu"));
  EXPECT_FALSE(IsDeviceResource("nvidia.com/gpu"));
  EXPECT_TRUE(
      RequestsDevices(Requests({{"cpu", "1"}, {"regatta.dev/cam", "1"}}), ResourceNames::Global()));
  EXPECT_FALSE(RequestsDevices(Requests({{"cpu", "1"}}), ResourceNames::Global()));
}

TEST(DeviceSlotsTest, NodesOfferTheirInstancesAndConfigurations) {
  DeviceSlots slots({MakeInstance("cam-aaaaaa", "cam", 2, {"n1"}),
                     MakeInstance("cam-bbbbbb", "cam", 2, {"n2"}),
                     MakeInstance("cam-cccccc", "cam", 1, {"n1", "n2"})});
  std::vector<Node> nodes = {MakeNode("n1"), MakeNode("n2"), MakeNode("n3")};
  slots.AddAllocatable(nodes, ResourceNames::Global());
  EXPECT_EQ(Quantity(nodes[0], "regatta.dev/cam-aaaaaa"), "2");
  EXPECT_EQ(Quantity(nodes[0], "regatta.dev/cam-bbbbbb"), "0");
  EXPECT_EQ(Quantity(nodes[0], "regatta.dev/cam-cccccc"), "1");
  EXPECT_EQ(Quantity(nodes[0], "regatta.dev/cam"), "3");
  EXPECT_EQ(Quantity(nodes[1], "regatta.dev/cam"), "3");
  EXPECT_EQ(Quantity(nodes[2], "regatta.dev/cam"), "0");
  EXPECT_EQ(Quantity(nodes[0], "cpu"), "4");
}

TEST(DeviceSlotsTest, ClaimsFreeSlotsOfTheNodeAndHonoursHolders) {
  DeviceSlots slots({MakeInstance("cam-aaaaaa", "cam", 2, {"n1"}),
                     MakeInstance("cam-cccccc", "cam", 1, {"n1", "n2"})});
  slots.Hold("cam-aaaaaa-0", "run-old");
  std::optional<std::vector<DeviceClaim>> claim = slots.Claim(
      Requests({{"regatta.dev/cam-aaaaaa", "1"}}), "n1", "run-1", ResourceNames::Global());
  ASSERT_TRUE(claim.has_value());
  EXPECT_THAT(*claim, ElementsAre(DeviceClaim{"cam-aaaaaa", "cam-aaaaaa-1"}));
  // Both slots of cam-aaaaaa are taken now.
  EXPECT_FALSE(slots
                   .Claim(Requests({{"regatta.dev/cam-aaaaaa", "1"}}), "n1", "run-2",
                          ResourceNames::Global())
                   .has_value());
  // The configuration finds the shared one, also from n2; then nothing is left.
  claim = slots.Claim(Requests({{"regatta.dev/cam", "1"}}), "n2", "run-3", ResourceNames::Global());
  ASSERT_TRUE(claim.has_value());
  EXPECT_THAT(*claim, ElementsAre(DeviceClaim{"cam-cccccc", "cam-cccccc-0"}));
  EXPECT_FALSE(
      slots.Claim(Requests({{"regatta.dev/cam", "1"}}), "n1", "run-4", ResourceNames::Global())
          .has_value());
  EXPECT_EQ(slots.holders().at("cam-cccccc-0"), "run-3");
}

TEST(DeviceSlotsTest, ClaimIsAllOrNothingAndUnclaimFrees) {
  DeviceSlots slots(
      {MakeInstance("cam-aaaaaa", "cam", 1, {"n1"}), MakeInstance("usb-dddddd", "usb", 1, {"n1"})});
  // Two cameras asked, one exists: nothing is taken.
  EXPECT_FALSE(slots
                   .Claim(Requests({{"regatta.dev/cam", "2"}, {"regatta.dev/usb", "1"}}), "n1",
                          "run-1", ResourceNames::Global())
                   .has_value());
  EXPECT_TRUE(slots.holders().empty());
  std::optional<std::vector<DeviceClaim>> claim =
      slots.Claim(Requests({{"regatta.dev/cam", "1"}, {"regatta.dev/usb", "1"}}), "n1", "run-2",
                  ResourceNames::Global());
  ASSERT_TRUE(claim.has_value());
  EXPECT_EQ(claim->size(), 2u);
  slots.Unclaim(*claim);
  EXPECT_TRUE(slots.holders().empty());
  // Not seen by n2; unknown names and unknown slots ask for nothing that exists.
  EXPECT_FALSE(
      slots.Claim(Requests({{"regatta.dev/cam", "1"}}), "n2", "run-3", ResourceNames::Global())
          .has_value());
  EXPECT_FALSE(
      slots.Claim(Requests({{"regatta.dev/nothing", "1"}}), "n1", "run-3", ResourceNames::Global())
          .has_value());
  slots.Hold("gone-000000-0", "run-9");
  EXPECT_TRUE(slots.holders().empty());
}

TEST(DeviceSlotsTest, AnInstanceNameWinsOverAConfigurationOfThatName) {
  DeviceSlots slots({MakeInstance("a-111111", "a", 1, {"n1"}),
                     MakeInstance("a-111111-222222", "a-111111", 1, {"n1"})});
  std::optional<std::vector<DeviceClaim>> claim = slots.Claim(
      Requests({{"regatta.dev/a-111111", "1"}}), "n1", "run-1", ResourceNames::Global());
  ASSERT_TRUE(claim.has_value());
  EXPECT_THAT(*claim, ElementsAre(DeviceClaim{"a-111111", "a-111111-0"}));
}

}  // namespace
}  // namespace regatta::scheduler
