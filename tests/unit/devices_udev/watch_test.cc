#include "src/devices/handlers/udev/watch.h"

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/common/clock.h"
#include "tests/unit/devices_udev/fake_udev.h"

namespace regatta::devices::udev {
namespace {

using testing::DeviceIds;
using testing::FakeEventSource;
using testing::FakeUdevDevice;
using testing::FakeUdevSystem;

constexpr absl::Duration kRescan = absl::Seconds(5);

class DeviceWatchTest : public ::testing::Test {
 protected:
  DeviceWatchTest() : events_(&clock_) {
    AddVideo("video0");
    absl::StatusOr<UdevDiscoveryDetails> details =
        ParseUdevDiscoveryDetails(R"(udevRules: ['SUBSYSTEM=="video4linux"'])");
    EXPECT_TRUE(details.ok()) << details.status();
    watch_.emplace(*details, &system_, &events_, &clock_,
                   DeviceWatch::Options{.rescan_interval = kRescan});
  }

  void AddVideo(const std::string& name) {
    FakeUdevDevice video;
    video.devpath = "/devices/virtual/video4linux/" + name;
    video.subsystem = "video4linux";
    video.devnode = "/dev/" + name;
    system_.Add(video);
  }

  FakeClock clock_;
  FakeUdevSystem system_;
  FakeEventSource events_;
  std::optional<DeviceWatch> watch_;
};

TEST_F(DeviceWatchTest, FirstCallReturnsTheCurrentListAtOnce) {
  const absl::Time start = clock_.Now();
  auto first = watch_->Next(absl::Seconds(30));
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(first->has_value());
  EXPECT_EQ(DeviceIds(**first), std::vector<std::string>{"/devices/virtual/video4linux/video0"});
  EXPECT_EQ(clock_.Now(), start);
  EXPECT_EQ(events_.waits(), 0);
}

TEST_F(DeviceWatchTest, UdevEventBringsTheNewListBeforeTheRescan) {
  ASSERT_TRUE(watch_->Next(absl::Seconds(30)).ok());
  const absl::Time start = clock_.Now();
  events_.At(start + absl::Seconds(1), /*with_event=*/true, [&] { AddVideo("video1"); });
  auto next = watch_->Next(absl::Seconds(30));
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_TRUE(next->has_value());
  EXPECT_EQ(DeviceIds(**next), (std::vector<std::string>{"/devices/virtual/video4linux/video0",
                                                         "/devices/virtual/video4linux/video1"}));
  EXPECT_EQ(clock_.Now(), start + absl::Seconds(1));
}

TEST_F(DeviceWatchTest, ChangeWithoutEventIsFoundByTheRescan) {
  ASSERT_TRUE(watch_->Next(absl::Seconds(30)).ok());
  const absl::Time start = clock_.Now();
  // A container sees no udev event for the removal.
  events_.At(start + absl::Seconds(1), /*with_event=*/false,
             [&] { system_.Remove("/devices/virtual/video4linux/video0"); });
  auto next = watch_->Next(absl::Seconds(30));
  ASSERT_TRUE(next.ok()) << next.status();
  ASSERT_TRUE(next->has_value());
  EXPECT_TRUE((*next)->empty());
  EXPECT_EQ(clock_.Now(), start + kRescan);
}

TEST_F(DeviceWatchTest, EventsThatChangeNothingDoNotEndTheWait) {
  ASSERT_TRUE(watch_->Next(absl::Seconds(30)).ok());
  const absl::Time start = clock_.Now();
  // An unrelated device appears with an event; the list for this rule stays the same.
  events_.At(start + absl::Seconds(1), /*with_event=*/true, [&] {
    FakeUdevDevice disk;
    disk.devpath = "/devices/virtual/block/loop9";
    disk.subsystem = "block";
    system_.Add(disk);
  });
  const int enumerations_before = system_.enumerations();
  auto next = watch_->Next(absl::Seconds(12));
  ASSERT_TRUE(next.ok()) << next.status();
  EXPECT_FALSE(next->has_value());
  EXPECT_EQ(clock_.Now(), start + absl::Seconds(12));
  // The event at +1 s, then rescans at +6 s and +11 s.
  EXPECT_EQ(system_.enumerations() - enumerations_before, 3);
}

TEST_F(DeviceWatchTest, WaitForPossibleChangeTimesOutBeforeTheRescan) {
  const absl::Time start = clock_.Now();
  EXPECT_FALSE(watch_->WaitForPossibleChange(absl::Seconds(2)));
  EXPECT_EQ(clock_.Now(), start + absl::Seconds(2));
  EXPECT_TRUE(watch_->WaitForPossibleChange(absl::Seconds(10)));
  EXPECT_EQ(clock_.Now(), start + kRescan);
  // The next rescan is counted from the last one.
  EXPECT_TRUE(watch_->WaitForPossibleChange(absl::Seconds(10)));
  EXPECT_EQ(clock_.Now(), start + 2 * kRescan);
}

TEST_F(DeviceWatchTest, EventRestartsTheRescanInterval) {
  const absl::Time start = clock_.Now();
  events_.At(start + absl::Seconds(3), /*with_event=*/true, [] {});
  EXPECT_TRUE(watch_->WaitForPossibleChange(absl::Seconds(10)));
  EXPECT_EQ(clock_.Now(), start + absl::Seconds(3));
  EXPECT_TRUE(watch_->WaitForPossibleChange(absl::Seconds(10)));
  EXPECT_EQ(clock_.Now(), start + absl::Seconds(3) + kRescan);
}

TEST_F(DeviceWatchTest, EnumerationErrorIsReturned) {
  ASSERT_TRUE(watch_->Next(absl::Seconds(30)).ok());
  system_.set_enumerate_error(absl::UnavailableError("udev: cannot list devices"));
  auto next = watch_->Next(absl::Seconds(30));
  EXPECT_EQ(next.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace regatta::devices::udev
