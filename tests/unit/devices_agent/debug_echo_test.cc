// debugEcho's details parsing and availability file, without gRPC.

#include "src/devices/handlers/debug_echo/debug_echo.h"

#include <cstdlib>
#include <memory>

#include "gtest/gtest.h"
#include "src/devices/handlers/debug_echo/file_watcher.h"
#include "tests/unit/devices_agent/test_util.h"

namespace regatta::devices::debug_echo {
namespace {

using devices::testing::ScratchDir;
using devices::testing::WriteFile;

TEST(DebugEchoDetailsTest, AcceptsAkrisFormat) {
  auto descriptions = ParseDetails("descriptions:\n  - \"foo1\"\n  - foo2\n");
  ASSERT_TRUE(descriptions.ok()) << descriptions.status();
  EXPECT_EQ(*descriptions, (std::vector<std::string>{"foo1", "foo2"}));
  descriptions = ParseDetails("descriptions: []");
  ASSERT_TRUE(descriptions.ok());
  EXPECT_TRUE(descriptions->empty());
}

TEST(DebugEchoDetailsTest, RejectsBadDetailsNamingTheField) {
  struct Case {
    const char* details;
    const char* message;
  };
  for (const Case& c : {
           Case{"", "discoveryDetails: must be a map"},
           Case{"descriptions:", "discoveryDetails.descriptions: required"},
           Case{"other: 1", "discoveryDetails.other: unknown field"},
           Case{"descriptions: foo", "discoveryDetails.descriptions: must be a list"},
           Case{"descriptions: [a, [b]]", "discoveryDetails.descriptions[1]"},
           Case{"descriptions: ['']", "discoveryDetails.descriptions[0]"},
           Case{"descriptions: [a", "discoveryDetails: not valid YAML"},
       }) {
    auto parsed = ParseDetails(c.details);
    ASSERT_FALSE(parsed.ok()) << c.details;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.status().message().find(c.message), std::string::npos)
        << c.details << " -> " << parsed.status().message();
  }
}

TEST(DebugEchoFinderTest, ListsOneDevicePerDescriptionUnlessOffline) {
  ScratchDir dir;
  const std::string availability = dir.File("availability");
  DebugEchoFinder finder(availability);
  v0::DiscoverRequest request;
  request.set_discovery_details("descriptions: [foo0]");
  auto query = finder.Prepare(request);
  ASSERT_TRUE(query.ok());
  auto devices = (*query)->ListDevices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].id(), "foo0");
  EXPECT_EQ((*devices)[0].properties().at(kDescriptionProperty), "foo0");

  WriteFile(availability, "devices are OFFLINE now");
  // The watcher notices within tens of milliseconds and wakes the query.
  EXPECT_TRUE((*query)->WaitForPossibleChange(absl::Seconds(2)));
  EXPECT_TRUE(finder.Offline());
  EXPECT_TRUE((*query)->ListDevices()->empty());
}

TEST(DebugEchoFinderTest, TheDefaultAvailabilityFileFollowsAkrisVariable) {
  unsetenv(kAvailabilityEnv);
  EXPECT_EQ(DefaultAvailabilityFile(), "/tmp/debug-echo-availability.txt");
  setenv(kAvailabilityEnv, "/run/x.txt", 1);
  EXPECT_EQ(DefaultAvailabilityFile(), "/run/x.txt");
  unsetenv(kAvailabilityEnv);
}

TEST(FileWatcherTest, SeesCreateReplaceAndRemoveAndFallsBackToPolling) {
  ScratchDir dir;
  for (const std::string& parent : {dir.path(), dir.path() + "/not-yet"}) {
    const std::string path = parent + "/watched";
    std::atomic<int> calls = 0;
    FileWatcher watcher(path, [&] { ++calls; });
    EXPECT_EQ(watcher.using_inotify(), parent == dir.path());
    if (parent != dir.path()) std::filesystem::create_directories(parent);
    int before = calls;
    WriteFile(path, "a");
    EXPECT_TRUE(devices::testing::Eventually([&] { return calls > before; }, absl::Seconds(2)))
        << parent << " calls " << calls;
    before = calls;
    WriteFile(path + ".tmp", "b");
    std::filesystem::rename(path + ".tmp", path);
    EXPECT_TRUE(devices::testing::Eventually([&] { return calls > before; }, absl::Seconds(2)))
        << parent << " calls " << calls;
    before = calls;
    std::filesystem::remove(path);
    EXPECT_TRUE(devices::testing::Eventually([&] { return calls > before; }, absl::Seconds(2)))
        << parent << " calls " << calls;
  }
}

}  // namespace
}  // namespace regatta::devices::debug_echo
