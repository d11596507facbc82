#include "src/devices/handlers/udev/match.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/unit/devices_udev/fake_udev.h"

namespace regatta::devices::udev {
namespace {

using testing::FakeUdevDevice;
using testing::FakeUdevSystem;

// A USB webcam as sysfs shows it: controller -> usb device -> interface -> video4linux node.
class MatchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    FakeUdevDevice controller;
    controller.devpath = "/devices/pci0000:00/0000:00:14.0";
    controller.subsystem = "pci";
    controller.driver = "xhci_hcd";
    controller.sysattrs = {{"vendor", "0x8086\n"}};
    system_.Add(controller);

    FakeUdevDevice usb;
    usb.devpath = "/devices/pci0000:00/0000:00:14.0/usb1/1-1";
    usb.subsystem = "usb";
    usb.driver = "usb";
    usb.sysattrs = {{"idVendor", "05a9\n"}, {"idProduct", "4519\n"}, {"product", "Cam  "}};
    usb.tags = {"seat", "uaccess"};
    system_.Add(usb);

    FakeUdevDevice interface;
    interface.devpath = "/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0";
    interface.subsystem = "usb";
    interface.driver = "uvcvideo";
    interface.sysattrs = {{"bInterfaceClass", "0e\n"}};
    system_.Add(interface);

    FakeUdevDevice video;
    video.devpath = "/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/video4linux/video0";
    video.subsystem = "video4linux";
    video.devnode = "/dev/video0";
    video.sysattrs = {{"name", "USB Camera\n"}, {"index", "0\n"}};
    video.properties = {{"ID_BUS", "usb"}, {"ID_MODEL", "Cam"}};
    video.tags = {"uaccess"};
    system_.Add(video);
  }

  const FakeUdevDevice& Video() {
    return system_.Get("/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/video4linux/video0");
  }

  bool Matches(absl::string_view rule_text) {
    absl::StatusOr<UdevRule> rule = ParseUdevRule(rule_text);
    EXPECT_TRUE(rule.ok()) << rule.status();
    return rule.ok() && RuleMatches(*rule, Video());
  }

  FakeUdevSystem system_;
};

TEST_F(MatchTest, OwnKeysMatchTheDeviceItself) {
  EXPECT_TRUE(Matches(R"(KERNEL=="video0")"));
  EXPECT_TRUE(Matches(R"(SUBSYSTEM=="video4linux")"));
  EXPECT_TRUE(Matches(
      R"(DEVPATH=="/devices/pci0000:00/0000:00:14.0/usb1/1-1/1-1:1.0/video4linux/video0")"));
  EXPECT_TRUE(Matches(R"(ATTR{name}=="USB Camera")"));
  EXPECT_TRUE(Matches(R"(ENV{ID_BUS}=="usb")"));
  EXPECT_TRUE(Matches(R"(TAG=="uaccess")"));
  EXPECT_TRUE(Matches(R"(DRIVER=="")"));  // a device node has no driver; its interface has
  // Own keys never look at parents: these values belong to ancestors.
  EXPECT_FALSE(Matches(R"(SUBSYSTEM=="usb")"));
  EXPECT_FALSE(Matches(R"(DRIVER=="uvcvideo")"));
  EXPECT_FALSE(Matches(R"(ATTR{idVendor}=="05a9")"));
  EXPECT_FALSE(Matches(R"(TAG=="seat")"));
  EXPECT_FALSE(Matches(R"(KERNEL=="1-1")"));
}

TEST_F(MatchTest, AllMatchesOfARuleMustHold) {
  EXPECT_TRUE(Matches(R"(KERNEL=="video0", SUBSYSTEM=="video4linux", ENV{ID_MODEL}=="Cam")"));
  EXPECT_FALSE(Matches(R"(KERNEL=="video0", SUBSYSTEM=="video4linux", ENV{ID_MODEL}=="Other")"));
}

TEST_F(MatchTest, ParentWalkingKeysFindAnAncestor) {
  EXPECT_TRUE(Matches(R"(KERNEL=="video0", ATTRS{idVendor}=="05a9")"));
  EXPECT_TRUE(Matches(R"(SUBSYSTEMS=="pci")"));
  EXPECT_TRUE(Matches(R"(DRIVERS=="uvcvideo")"));
  EXPECT_TRUE(Matches(R"(KERNELS=="1-1")"));
  EXPECT_TRUE(Matches(R"(TAGS=="seat")"));
  // The device itself is the first of the chain.
  EXPECT_TRUE(Matches(R"(KERNELS=="video0")"));
  EXPECT_TRUE(Matches(R"(ATTRS{name}=="USB Camera")"));
  EXPECT_FALSE(Matches(R"(ATTRS{idVendor}=="dead")"));
  EXPECT_FALSE(Matches(R"(DRIVERS=="e1000e")"));
}

TEST_F(MatchTest, ParentWalkingKeysMustAllHoldOnOneDevice) {
  // idVendor and idProduct both live on the usb device.
  EXPECT_TRUE(Matches(R"(ATTRS{idVendor}=="05a9", ATTRS{idProduct}=="4519", SUBSYSTEMS=="usb")"));
  // idVendor is on the usb device, bInterfaceClass on the interface: no single device has both.
  EXPECT_FALSE(Matches(R"(ATTRS{idVendor}=="05a9", ATTRS{bInterfaceClass}=="0e")"));
  // DRIVERS=="uvcvideo" is the interface; KERNELS=="1-1" is its parent.
  EXPECT_FALSE(Matches(R"(DRIVERS=="uvcvideo", KERNELS=="1-1")"));
  EXPECT_TRUE(Matches(R"(DRIVERS=="uvcvideo", KERNELS=="1-1:1.0")"));
  // Subsystem of the controller, attribute of the usb device.
  EXPECT_FALSE(Matches(R"(SUBSYSTEMS=="pci", ATTRS{idVendor}=="05a9")"));
  EXPECT_TRUE(Matches(R"(SUBSYSTEMS=="pci", ATTRS{vendor}=="0x8086")"));
}

TEST_F(MatchTest, NotEqual) {
  EXPECT_TRUE(Matches(R"(KERNEL!="video1")"));
  EXPECT_FALSE(Matches(R"(KERNEL!="video0")"));
  EXPECT_TRUE(Matches(R"(SUBSYSTEM!="usb")"));
  // An unset property reads as "", so != anything non-empty holds.
  EXPECT_TRUE(Matches(R"(ENV{ID_SERIAL}!="abc")"));
  EXPECT_FALSE(Matches(R"(ENV{ID_SERIAL}!="")"));
  EXPECT_TRUE(Matches(R"(ENV{ID_BUS}!="")"));
  // TAG!= holds only when no tag matches.
  EXPECT_TRUE(Matches(R"(TAG!="seat")"));
  EXPECT_FALSE(Matches(R"(TAG!="uacc*")"));
  // A parent-walking != holds on the first device of the chain where it holds (udev's rule):
  // video0 itself has no driver other than "".
  EXPECT_TRUE(Matches(R"(DRIVERS!="uvcvideo")"));
  // ...and all walking matches still need one device: the interface is uvcvideo and its
  // subsystem is usb, not pci.
  EXPECT_TRUE(Matches(R"(DRIVERS=="uvcvideo", SUBSYSTEMS!="pci")"));
  EXPECT_FALSE(Matches(R"(DRIVERS=="uvcvideo", SUBSYSTEMS!="usb")"));
}

TEST_F(MatchTest, MissingAttributeFailsBothOperators) {
  EXPECT_FALSE(Matches(R"(ATTR{nosuch}=="x")"));
  EXPECT_FALSE(Matches(R"(ATTR{nosuch}!="x")"));
  EXPECT_FALSE(Matches(R"(ATTRS{nosuch}!="x")"));
}

TEST_F(MatchTest, AttributeTrailingWhitespaceIsIgnoredUnlessAskedFor) {
  EXPECT_TRUE(Matches(R"(ATTRS{product}=="Cam")"));
  EXPECT_TRUE(Matches(R"(ATTRS{product}=="Cam  ")"));
  EXPECT_FALSE(Matches(R"(ATTRS{product}=="Cam ")"));
  EXPECT_TRUE(Matches(R"(ATTRS{product}=="C*m")"));
}

TEST_F(MatchTest, PatternsAndAlternatives) {
  EXPECT_TRUE(Matches(R"(KERNEL=="video[0-9]*")"));
  EXPECT_TRUE(Matches(R"(KERNEL=="vid?o0")"));
  EXPECT_FALSE(Matches(R"(KERNEL=="video[!0]")"));
  EXPECT_TRUE(Matches(R"(SUBSYSTEM=="sound|video4linux")"));
  EXPECT_FALSE(Matches(R"(SUBSYSTEM=="sound|usb")"));
  EXPECT_FALSE(Matches(R"(SUBSYSTEM!="sound|video*")"));
  EXPECT_TRUE(Matches(R"(ATTRS{idVendor}=="046d|05a9", ATTRS{idProduct}=="45*")"));
  EXPECT_TRUE(Matches(R"(DRIVER=="usb|")"));  // the empty alternative accepts "no driver"
}

}  // namespace
}  // namespace regatta::devices::udev
