#ifndef REGATTA_SRC_DEVICES_HANDLERS_UDEV_MATCH_H_
#define REGATTA_SRC_DEVICES_HANDLERS_UDEV_MATCH_H_

#include "src/devices/handlers/udev/rule.h"
#include "src/devices/handlers/udev/udev_device.h"

namespace regatta::devices::udev {

// Whether `device` matches `rule`, with udev's semantics:
// - KERNEL, SUBSYSTEM, DRIVER, DEVPATH, TAG, ATTR{}, ENV{} match the device itself;
// - KERNELS, SUBSYSTEMS, DRIVERS, TAGS, ATTRS{} must all hold on ONE device of the chain made of
//   the device and its ancestors (not each on a different one);
// - a missing subsystem, driver or property reads as "", so ENV{X}!="a" holds when X is unset;
//   a missing attribute fails both == and !=; TAG=="t" holds when some tag matches and TAG!="t"
//   when none does; trailing whitespace of attribute values is ignored unless the value ends
//   with whitespace.
bool RuleMatches(const UdevRule& rule, const UdevDevice& device);

bool MatchHolds(const RuleMatch& match, const UdevDevice& device);

}  // namespace regatta::devices::udev

#endif  // REGATTA_SRC_DEVICES_HANDLERS_UDEV_MATCH_H_
