#ifndef REGATTA_SRC_DEVICES_HANDLERS_UDEV_RULE_H_
#define REGATTA_SRC_DEVICES_HANDLERS_UDEV_RULE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace regatta::devices::udev {

// A udev match value: `|`-separated alternatives, each a shell glob (*, ?, [a-z], [!x]) matched
// with fnmatch(3) as udev does; an empty alternative (or an empty value) matches the empty string.
class UdevPattern {
 public:
  static UdevPattern Parse(absl::string_view value);

  bool Matches(absl::string_view text) const;
  // The value as written in the rule (after unquoting).
  const std::string& text() const { return text_; }
  // The non-empty alternatives.
  const std::vector<std::string>& alternatives() const { return alternatives_; }
  bool matches_empty() const { return matches_empty_; }

 private:
  std::string text_;
  std::vector<std::string> alternatives_;
  bool matches_empty_ = false;
};

// The match keys discovery understands. The plural forms walk up the device's parents.
enum class RuleKey {
  kKernel,
  kSubsystem,
  kDriver,
  kDevpath,
  kTag,
  kAttr,
  kEnv,
  kKernels,
  kSubsystems,
  kDrivers,
  kTags,
  kAttrs,
};

enum class MatchOp { kEqual, kNotEqual };

// One `KEY op "value"` of a rule.
struct RuleMatch {
  RuleKey key;
  // The attribute or property name of ATTR{name}, ATTRS{name} and ENV{name}; empty otherwise.
  std::string name;
  MatchOp op;
  UdevPattern pattern;

  // True for KERNELS, SUBSYSTEMS, DRIVERS, TAGS and ATTRS.
  bool WalksParents() const;
};

// A device matches a rule when every match holds (see match.h for the exact semantics).
struct UdevRule {
  std::string text;
  std::vector<RuleMatch> matches;
};

// Parses one udev rule made of match keys only, e.g.
//   KERNEL=="video[0-9]*", SUBSYSTEM=="video4linux", ATTRS{idVendor}=="05a9"
// Errors say what is wrong and where ("at column N", 1-based): unsupported keys (PROGRAM, NAME,
// ...), assignment operators, unquoted or unterminated values, missing commas, an empty rule.
absl::StatusOr<UdevRule> ParseUdevRule(absl::string_view text);

// "KERNEL", "ATTRS{idVendor}", ... as written in rules.
std::string RuleKeyName(RuleKey key, absl::string_view name = "");

}  // namespace regatta::devices::udev

#endif  // REGATTA_SRC_DEVICES_HANDLERS_UDEV_RULE_H_
