#include "src/devices/naming/naming.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/status/status.h"

namespace regatta::devices {
namespace {

using ::testing::HasSubstr;

// The test vectors of DESIGN.md §2 (Akri's own).
TEST(InstanceNameTest, LocalDeviceHashesIdFollowedByNode) {
  EXPECT_EQ(InstanceDigest("my_local_device", "my_node", /*shared=*/false), "e77db4");
  EXPECT_EQ(InstanceName("config-a", "my_local_device", "my_node", false), "config-a-e77db4");
}

TEST(InstanceNameTest, SharedDeviceHashesIdOnly) {
  EXPECT_EQ(InstanceDigest("my_shared_device", "my_node", /*shared=*/true), "4294ea");
  EXPECT_EQ(InstanceName("config-a", "my_shared_device", "any_node", true), "config-a-4294ea");
}

TEST(InstanceNameTest, NodeMattersOnlyForLocalDevices) {
  EXPECT_NE(InstanceDigest("usb-1", "node-a", false), InstanceDigest("usb-1", "node-b", false));
  EXPECT_EQ(InstanceDigest("cam-1", "node-a", true), InstanceDigest("cam-1", "node-b", true));
  // The id followed directly by the node: no separator between them.
  EXPECT_EQ(InstanceDigest("my_local_device", "my_node", false),
            InstanceDigest("my_local_devicemy_n", "ode", false));
}

TEST(InstanceNameTest, CdiNameUsesTheSameDigest) {
  EXPECT_EQ(CdiName("config-a", "my_local_device", "my_node", false), "akri.sh/config-a=e77db4");
  EXPECT_EQ(CdiName("config-a", "my_shared_device", "my_node", true), "akri.sh/config-a=4294ea");
}

TEST(SlotTest, NamesAndIndices) {
  EXPECT_EQ(SlotName("config-a-4294ea", 0), "config-a-4294ea-0");
  EXPECT_EQ(SlotName("config-a-4294ea", 12), "config-a-4294ea-12");
  EXPECT_EQ(SlotIndex("config-a-4294ea", "config-a-4294ea-12").value_or(-1), 12);
  EXPECT_EQ(SlotIndex("config-a-4294ea", "config-a-4294ea-0").value_or(-1), 0);
}

TEST(SlotTest, RejectsWhatIsNotASlotOfTheInstance) {
  for (const char* bad : {"config-a-4294ea", "config-a-4294ea-", "config-a-4294ea-x",
                          "config-a-4294ea--1", "config-a-4294ea-01", "other-4294ea-0",
                          "config-a-4294eb-0", "config-a-4294ea-99999999999"}) {
    absl::StatusOr<int> index = SlotIndex("config-a-4294ea", bad);
    EXPECT_EQ(index.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(index.status().message(), HasSubstr("is not a slot of instance")) << bad;
  }
}

}  // namespace
}  // namespace regatta::devices
