// Against this host's real devices through libudev.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/common/clock.h"
#include "src/devices/handlers/udev/discovery.h"
#include "src/devices/handlers/udev/host_watch.h"
#include "src/devices/handlers/udev/libudev_system.h"
#include "src/devices/handlers/udev/match.h"
#include "src/devices/handlers/udev/watch.h"

namespace regatta::devices::udev {
namespace {

using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

absl::StatusOr<std::vector<v0::Device>> Find(absl::string_view yaml) {
  absl::StatusOr<UdevDiscoveryDetails> details = ParseUdevDiscoveryDetails(yaml);
  if (!details.ok()) return details.status();
  std::unique_ptr<UdevSystem> udev = NewLibudevSystem();
  return FindUdevDevices(*details, *udev);
}

TEST(LibudevTest, KernelNullFindsDevNull) {
  absl::StatusOr<std::vector<v0::Device>> devices = Find(R"(udevRules: ['KERNEL=="null"'])");
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  const v0::Device& null = (*devices)[0];
  EXPECT_EQ(null.id(), "/devices/virtual/mem/null");
  EXPECT_THAT(null.properties(),
              UnorderedElementsAre(Pair("UDEV_DEVPATH", "/devices/virtual/mem/null"),
                                   Pair("UDEV_DEVNODE", "/dev/null")));
  ASSERT_EQ(null.device_specs_size(), 1);
  EXPECT_EQ(null.device_specs(0).host_path(), "/dev/null");
  EXPECT_EQ(null.device_specs(0).container_path(), "/dev/null");
  EXPECT_EQ(null.device_specs(0).permissions(), "rwm");
}

TEST(LibudevTest, SubsystemMemAndKernelPatternsNarrowTheSameWay) {
  absl::StatusOr<std::vector<v0::Device>> devices =
      Find(R"(udevRules: ['SUBSYSTEM=="mem", KERNEL=="nul?|zero"'])");
  ASSERT_TRUE(devices.ok()) << devices.status();
  std::vector<std::string> ids;
  for (const v0::Device& device : *devices) ids.push_back(device.id());
  EXPECT_THAT(ids,
              ::testing::ElementsAre("/devices/virtual/mem/null", "/devices/virtual/mem/zero"));

  // A pinned subsystem may be a pattern with alternatives; libudev narrows with fnmatch too.
  devices = Find(R"(udevRules: ['SUBSYSTEM=="m[e]m|regatta-none", KERNEL=="null"'])");
  ASSERT_TRUE(devices.ok()) << devices.status();
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].id(), "/devices/virtual/mem/null");

  devices = Find(R"(udevRules: ['SUBSYSTEM=="mem", KERNEL!="null"'])");
  ASSERT_TRUE(devices.ok()) << devices.status();
  for (const v0::Device& device : *devices) EXPECT_NE(device.id(), "/devices/virtual/mem/null");
  EXPECT_FALSE(devices->empty());  // zero, full, random, ...
}

TEST(LibudevTest, RuleMatchingNothingGivesAnEmptyList) {
  absl::StatusOr<std::vector<v0::Device>> devices =
      Find(R"(udevRules: ['KERNEL=="regatta-no-such-device"'])");
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_THAT(*devices, IsEmpty());
  devices = Find(R"(udevRules: ['SUBSYSTEM=="regatta-no-such-subsystem"'])");
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_THAT(*devices, IsEmpty());
}

TEST(LibudevTest, DeviceViewReadsAttributesAndParents) {
  std::unique_ptr<UdevSystem> udev = NewLibudevSystem();
  absl::StatusOr<std::vector<std::unique_ptr<UdevDevice>>> all = udev->Enumerate({});
  ASSERT_TRUE(all.ok()) << all.status();
  ASSERT_FALSE(all->empty());
  // Any device with a parent: a rule on its parent's kernel name through KERNELS finds it.
  const UdevDevice* child = nullptr;
  for (const auto& device : *all) {
    if (device->Parent() != nullptr && !device->Subsystem().empty()) {
      child = device.get();
      break;
    }
  }
  if (child == nullptr) GTEST_SKIP() << "no device with a parent on this host";
  absl::StatusOr<UdevRule> rule = ParseUdevRule(
      absl::StrCat("DEVPATH==\"", child->DevPath(), "\", KERNELS==\"", child->Parent()->SysName(),
                   "\", SUBSYSTEMS==\"", child->Parent()->Subsystem(), "\""));
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_TRUE(RuleMatches(*rule, *child)) << rule->text;
}

TEST(LibudevTest, NullHasItsDevAttribute) {
  std::unique_ptr<UdevSystem> udev = NewLibudevSystem();
  const std::vector<std::string> mem = {"mem"};
  absl::StatusOr<std::vector<std::unique_ptr<UdevDevice>>> devices = udev->Enumerate(mem);
  ASSERT_TRUE(devices.ok()) << devices.status();
  bool seen = false;
  for (const auto& device : *devices) {
    EXPECT_EQ(device->Subsystem(), "mem");
    if (device->SysName() != "null") continue;
    seen = true;
    EXPECT_EQ(device->SysAttr("dev").value_or("?"), "1:3");
    EXPECT_FALSE(device->SysAttr("no_such_attribute").has_value());
    EXPECT_EQ(device->DevNode(), "/dev/null");
  }
  EXPECT_TRUE(seen);
}

TEST(LibudevTest, WatchOverRealDevicesWithTheTimerFallback) {
  absl::StatusOr<UdevDiscoveryDetails> details =
      ParseUdevDiscoveryDetails(R"(udevRules: ['KERNEL=="null"'])");
  ASSERT_TRUE(details.ok());
  std::unique_ptr<UdevSystem> udev = NewLibudevSystem();
  std::unique_ptr<UdevEventSource> events = NewTimerOnlyEventSource();
  DeviceWatch watch(*details, udev.get(), events.get(), RealClock::Get(),
                    DeviceWatch::Options{.rescan_interval = absl::Milliseconds(20)});
  auto first = watch.Next(absl::Seconds(5));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ((*first)->size(), 1u);
  // Several rescans find the same /dev/null: no new list within the timeout.
  auto next = watch.Next(absl::Milliseconds(100));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_FALSE(next->has_value());
}

TEST(LibudevTest, MonitorOpensOrSaysWhyNot) {
  absl::StatusOr<std::unique_ptr<UdevEventSource>> monitor = NewUdevMonitor();
  if (!monitor.ok()) {
    EXPECT_EQ(monitor.status().code(), absl::StatusCode::kUnavailable);
    EXPECT_THAT(std::string(monitor.status().message()), ::testing::HasSubstr("udev monitor"));
    return;
  }
  // Nothing is plugged during the test; the wait ends by its timeout (an event would be fine too).
  const absl::Time start = absl::Now();
  (*monitor)->WaitForEvents(absl::Milliseconds(50));
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST(HostDeviceWatchTest, FindsDevNullThenWaitsForAChange) {
  absl::StatusOr<std::unique_ptr<HostDeviceWatch>> host = HostDeviceWatch::Create(
      R"(udevRules: ['KERNEL=="null", SUBSYSTEM=="mem"'])", RealClock::Get());
  ASSERT_TRUE(host.ok()) << host.status();
  auto first = (*host)->watch().Next(absl::Seconds(5));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  ASSERT_EQ((*first)->size(), 1u);
  EXPECT_EQ((**first)[0].properties().at("UDEV_DEVNODE"), "/dev/null");
  auto next = (*host)->watch().Next(absl::Milliseconds(50));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_FALSE(next->has_value());
}

TEST(HostDeviceWatchTest, BadDetailsAreInvalidArgumentNamingTheRule) {
  absl::StatusOr<std::unique_ptr<HostDeviceWatch>> host = HostDeviceWatch::Create(
      R"(udevRules: ['KERNEL=="null"', 'RUN+="/bin/sh"'])", RealClock::Get());
  EXPECT_EQ(host.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(host.status().message()),
              ::testing::StartsWith("udevRules[1]: key 'RUN' is not supported"));
}

}  // namespace
}  // namespace regatta::devices::udev
