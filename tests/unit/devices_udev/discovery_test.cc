#include "src/devices/handlers/udev/discovery.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/unit/devices_udev/fake_udev.h"

namespace regatta::devices::udev {
namespace {

using testing::DeviceIds;
using ::testing::ElementsAre;
using testing::FakeUdevDevice;
using testing::FakeUdevSystem;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

std::string DetailsError(absl::string_view yaml) {
  absl::StatusOr<UdevDiscoveryDetails> details = ParseUdevDiscoveryDetails(yaml);
  EXPECT_FALSE(details.ok()) << "parsed: " << yaml;
  EXPECT_EQ(details.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(details.status().message());
}

TEST(ParseUdevDiscoveryDetailsTest, ReadsRulesAndGroupRecursive) {
  absl::StatusOr<UdevDiscoveryDetails> details = ParseUdevDiscoveryDetails(R"(
udevRules:
- 'KERNEL=="video[0-9]*"'
- SUBSYSTEM=="sound", ATTRS{idVendor}=="05a9"
groupRecursive: true
)");
  ASSERT_TRUE(details.ok()) << details.status();
  ASSERT_EQ(details->rules.size(), 2u);
  EXPECT_EQ(details->rules[0].text, R"(KERNEL=="video[0-9]*")");
  EXPECT_EQ(details->rules[1].matches.size(), 2u);
  EXPECT_TRUE(details->group_recursive);
}

TEST(ParseUdevDiscoveryDetailsTest, AcceptsJsonAndDefaultsGroupRecursiveToFalse) {
  absl::StatusOr<UdevDiscoveryDetails> details =
      ParseUdevDiscoveryDetails(R"({"udevRules": ["KERNEL==\"null\""]})");
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_EQ(details->rules.size(), 1u);
  EXPECT_FALSE(details->group_recursive);
}

// Akri's Helm chart writes permissions: rwm into every udev Configuration.
TEST(ParseUdevDiscoveryDetailsTest, ReadsAkrisPermissions) {
  absl::StatusOr<UdevDiscoveryDetails> details =
      ParseUdevDiscoveryDetails("udevRules: ['KERNEL==\"null\"']\npermissions: rwm");
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_EQ(details->permissions, "rwm");
  details = ParseUdevDiscoveryDetails("udevRules: []\npermissions: r");
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_EQ(details->permissions, "r");
  EXPECT_EQ(ParseUdevDiscoveryDetails("udevRules: []")->permissions, "rwm");
  EXPECT_EQ(DetailsError("udevRules: []\npermissions: rwx"),
            "permissions: 'x' is not one of r, w, m");
  EXPECT_EQ(DetailsError("udevRules: []\npermissions: rr"), "permissions: 'r' repeated");
  EXPECT_THAT(DetailsError("udevRules: []\npermissions: ''"), HasSubstr("expected a combination"));
}

TEST(ParseUdevDiscoveryDetailsTest, AnEmptyRuleListIsValid) {
  absl::StatusOr<UdevDiscoveryDetails> details = ParseUdevDiscoveryDetails("udevRules: []");
  ASSERT_TRUE(details.ok()) << details.status();
  EXPECT_THAT(details->rules, IsEmpty());
}

TEST(ParseUdevDiscoveryDetailsTest, RuleErrorsNameTheRule) {
  EXPECT_THAT(DetailsError(R"(udevRules: ['KERNEL=="a"', 'PROGRAM=="x"'])"),
              HasSubstr("udevRules[1]: key 'PROGRAM' is not supported; supported: KERNEL, "));
  EXPECT_EQ(DetailsError(R"(udevRules: ['KERNEL~"a"'])"),
            "udevRules[0]: expected '==' or '!=' after KERNEL at column 7");
  EXPECT_EQ(DetailsError("udevRules: ['']"),
            "udevRules[0]: empty rule; write at least one match such as KERNEL==\"video0\"");
  EXPECT_EQ(DetailsError("udevRules: [[a]]"), "udevRules[0]: expected a rule as a string");
}

TEST(ParseUdevDiscoveryDetailsTest, ShapeErrors) {
  EXPECT_THAT(DetailsError(""), HasSubstr("discovery details are empty"));
  EXPECT_THAT(DetailsError("udevRules: [unclosed"), HasSubstr("not valid YAML"));
  EXPECT_THAT(DetailsError("- a"), HasSubstr("expected a mapping with udevRules"));
  EXPECT_THAT(DetailsError("groupRecursive: true"), HasSubstr("udevRules: required"));
  EXPECT_THAT(DetailsError("udevRules: 'KERNEL==\"a\"'"),
              HasSubstr("udevRules: expected a list of udev rules"));
  EXPECT_THAT(DetailsError("udevRules:"), HasSubstr("udevRules: expected a list"));
  EXPECT_EQ(DetailsError("udevRules: []\ngroupRecursive: maybe"),
            "groupRecursive: expected true or false");
  EXPECT_EQ(DetailsError("udevRules: []\nudevRule: []"),
            "udevRule: unknown field (want udevRules, groupRecursive, permissions)");
}

class FindUdevDevicesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Add("/devices/virtual/mem/null", "mem", "/dev/null");
    Add("/devices/virtual/mem/zero", "mem", "/dev/zero");
    Add("/devices/pci0000:00/0000:00:14.0", "pci", "");
    Add("/devices/pci0000:00/0000:00:14.0/usb1/1-1", "usb", "/dev/bus/usb/001/002");
    Add("/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0", "usb", "");
    Add("/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/video4linux/video0", "video4linux",
        "/dev/video0");
    Add("/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/video4linux/video1", "video4linux",
        "/dev/video1");
    Add("/devices/pci0000:00/0000:00:14.0/usb1/1-2", "usb", "/dev/bus/usb/001/003");
  }

  void Add(const std::string& devpath, const std::string& subsystem, const std::string& devnode) {
    FakeUdevDevice device;
    device.devpath = devpath;
    device.subsystem = subsystem;
    device.devnode = devnode;
    system_.Add(device);
  }

  std::vector<v0::Device> Find(absl::string_view yaml) {
    absl::StatusOr<UdevDiscoveryDetails> details = ParseUdevDiscoveryDetails(yaml);
    EXPECT_TRUE(details.ok()) << details.status();
    if (!details.ok()) return {};
    absl::StatusOr<std::vector<v0::Device>> devices = FindUdevDevices(*details, system_);
    EXPECT_TRUE(devices.ok()) << devices.status();
    return devices.ok() ? *devices : std::vector<v0::Device>{};
  }

  FakeUdevSystem system_;
};

TEST_F(FindUdevDevicesTest, DeviceHasAkriIdPropertiesAndDeviceSpec) {
  std::vector<v0::Device> devices = Find(R"(udevRules: ['KERNEL=="null"'])");
  ASSERT_EQ(devices.size(), 1u);
  const v0::Device& null = devices[0];
  EXPECT_EQ(null.id(), "/devices/virtual/mem/null");
  EXPECT_THAT(null.properties(),
              UnorderedElementsAre(Pair("UDEV_DEVPATH", "/devices/virtual/mem/null"),
                                   Pair("UDEV_DEVNODE", "/dev/null")));
  EXPECT_THAT(null.mounts(), IsEmpty());
  ASSERT_EQ(null.device_specs_size(), 1);
  EXPECT_EQ(null.device_specs(0).host_path(), "/dev/null");
  EXPECT_EQ(null.device_specs(0).container_path(), "/dev/null");
  EXPECT_EQ(null.device_specs(0).permissions(), "rwm");

  devices = Find("udevRules: ['KERNEL==\"null\"']\npermissions: rw");
  ASSERT_EQ(devices.size(), 1u);
  ASSERT_EQ(devices[0].device_specs_size(), 1);
  EXPECT_EQ(devices[0].device_specs(0).permissions(), "rw");
}

TEST_F(FindUdevDevicesTest, DeviceWithoutNodeHasNoSpecAndNoDevnode) {
  std::vector<v0::Device> devices = Find(R"(udevRules: ['SUBSYSTEM=="pci"'])");
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_THAT(devices[0].properties(),
              UnorderedElementsAre(Pair("UDEV_DEVPATH", "/devices/pci0000:00/0000:00:14.0")));
  EXPECT_THAT(devices[0].device_specs(), IsEmpty());
}

TEST_F(FindUdevDevicesTest, StableOrderAndNoDuplicatesAcrossRules) {
  std::vector<v0::Device> devices =
      Find(R"(udevRules: ['KERNEL=="zero|null"', 'SUBSYSTEM=="mem"', 'KERNEL=="null"'])");
  EXPECT_THAT(DeviceIds(devices),
              ElementsAre("/devices/virtual/mem/null", "/devices/virtual/mem/zero"));
}

TEST_F(FindUdevDevicesTest, RuleMatchingNothingGivesAnEmptyList) {
  EXPECT_THAT(Find(R"(udevRules: ['KERNEL=="nosuchdevice"'])"), IsEmpty());
  EXPECT_THAT(Find("udevRules: []"), IsEmpty());
}

TEST_F(FindUdevDevicesTest, EnumerationIsNarrowedToAPinnedSubsystem) {
  Find(R"(udevRules: ['KERNEL=="video*", SUBSYSTEM=="video4linux|sound"'])");
  EXPECT_THAT(system_.last_subsystems(), ElementsAre("video4linux", "sound"));
  Find(R"(udevRules: ['KERNEL=="video*", SUBSYSTEM!="usb"'])");
  EXPECT_THAT(system_.last_subsystems(), IsEmpty());
  // "" would also accept devices without a subsystem, which a subsystem filter drops.
  Find(R"(udevRules: ['KERNEL=="video*", SUBSYSTEM=="video4linux|"'])");
  EXPECT_THAT(system_.last_subsystems(), IsEmpty());
}

TEST_F(FindUdevDevicesTest, WithoutGroupingEveryMatchIsItsOwnDevice) {
  std::vector<v0::Device> devices = Find(R"(udevRules: ['SUBSYSTEMS=="usb", DEVPATH=="*/1-1*"'])");
  EXPECT_THAT(DeviceIds(devices),
              ElementsAre("/devices/pci0000:00/0000:00:14.0/usb1/1-1",
                          "/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0",
                          "/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/video4linux/video0",
                          "/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/video4linux/video1"));
}

TEST_F(FindUdevDevicesTest, GroupRecursiveJoinsDescendantsToTheTopmostMatch) {
  std::vector<v0::Device> devices = Find(R"(
udevRules: ['SUBSYSTEM=="usb", KERNEL=="1-1|1-2"', 'SUBSYSTEM=="video4linux"']
groupRecursive: true
)");
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0].id(), "/devices/pci0000:00/0000:00:14.0/usb1/1-1");
  // Members with a node, in devpath order: the usb device, video0, video1.
  EXPECT_THAT(devices[0].properties(),
              UnorderedElementsAre(
                  Pair("UDEV_DEVPATH", "/devices/pci0000:00/0000:00:14.0/usb1/1-1"),
                  Pair("UDEV_DEVNODE_0", "/dev/bus/usb/001/002"),
                  Pair("UDEV_DEVNODE_1", "/dev/video0"), Pair("UDEV_DEVNODE_2", "/dev/video1")));
  ASSERT_EQ(devices[0].device_specs_size(), 3);
  EXPECT_EQ(devices[0].device_specs(1).host_path(), "/dev/video0");
  EXPECT_EQ(devices[0].device_specs(2).permissions(), "rwm");
  EXPECT_EQ(devices[1].id(), "/devices/pci0000:00/0000:00:14.0/usb1/1-2");
  EXPECT_THAT(
      devices[1].properties(),
      UnorderedElementsAre(Pair("UDEV_DEVPATH", "/devices/pci0000:00/0000:00:14.0/usb1/1-2"),
                           Pair("UDEV_DEVNODE_0", "/dev/bus/usb/001/003")));
}

TEST_F(FindUdevDevicesTest, GroupRecursiveUsesPathComponentsNotStringPrefixes) {
  // "/devices/x/a1" is not below "/devices/x/a".
  Add("/devices/x/a", "misc", "/dev/a");
  Add("/devices/x/a1", "misc", "/dev/a1");
  std::vector<v0::Device> devices = Find(R"(
udevRules: ['SUBSYSTEM=="misc"']
groupRecursive: true
)");
  EXPECT_THAT(DeviceIds(devices), ElementsAre("/devices/x/a", "/devices/x/a1"));
}

TEST_F(FindUdevDevicesTest, EnumerationErrorsAreReturned) {
  system_.set_enumerate_error(absl::UnavailableError("udev: cannot list devices"));
  absl::StatusOr<UdevDiscoveryDetails> details =
      ParseUdevDiscoveryDetails(R"(udevRules: ['KERNEL=="null"'])");
  ASSERT_TRUE(details.ok());
  absl::StatusOr<std::vector<v0::Device>> devices = FindUdevDevices(*details, system_);
  EXPECT_EQ(devices.status().code(), absl::StatusCode::kUnavailable);
}

TEST(SameDevicesTest, ComparesIdsPropertiesAndSpecs) {
  v0::Device a;
  a.set_id("x");
  (*a.mutable_properties())["UDEV_DEVNODE"] = "/dev/x";
  v0::Device b = a;
  EXPECT_TRUE(SameDevices({a}, {b}));
  (*b.mutable_properties())["UDEV_DEVNODE"] = "/dev/y";
  EXPECT_FALSE(SameDevices({a}, {b}));
  EXPECT_FALSE(SameDevices({a}, {a, a}));
  EXPECT_TRUE(SameDevices({}, {}));
}

}  // namespace
}  // namespace regatta::devices::udev
