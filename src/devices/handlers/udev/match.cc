#include "src/devices/handlers/udev/match.h"

#include <optional>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/string_view.h"

namespace regatta::devices::udev {
namespace {

bool StringMatches(const RuleMatch& match, absl::string_view value) {
  return match.pattern.Matches(value) == (match.op == MatchOp::kEqual);
}

bool AttributeMatches(const RuleMatch& match, const UdevDevice& device) {
  const std::optional<std::string> value = device.SysAttr(match.name);
  if (!value.has_value()) return false;  // udev: an unreadable attribute matches nothing
  const std::string& pattern = match.pattern.text();
  const bool wants_trailing_space =
      !pattern.empty() && absl::ascii_isspace(static_cast<unsigned char>(pattern.back()));
  return StringMatches(match, wants_trailing_space ? absl::string_view(*value)
                                                   : absl::StripTrailingAsciiWhitespace(*value));
}

bool TagMatches(const RuleMatch& match, const UdevDevice& device) {
  bool any = false;
  for (const std::string& tag : device.Tags()) {
    if (match.pattern.Matches(tag)) {
      any = true;
      break;
    }
  }
  return any == (match.op == MatchOp::kEqual);
}

}  // namespace

bool MatchHolds(const RuleMatch& match, const UdevDevice& device) {
  switch (match.key) {
    case RuleKey::kKernel:
    case RuleKey::kKernels:
      return StringMatches(match, device.SysName());
    case RuleKey::kSubsystem:
    case RuleKey::kSubsystems:
      return StringMatches(match, device.Subsystem());
    case RuleKey::kDriver:
    case RuleKey::kDrivers:
      return StringMatches(match, device.Driver());
    case RuleKey::kDevpath:
      return StringMatches(match, device.DevPath());
    case RuleKey::kTag:
    case RuleKey::kTags:
      return TagMatches(match, device);
    case RuleKey::kAttr:
    case RuleKey::kAttrs:
      return AttributeMatches(match, device);
    case RuleKey::kEnv:
      return StringMatches(match, device.Property(match.name).value_or(""));
  }
  return false;
}

bool RuleMatches(const UdevRule& rule, const UdevDevice& device) {
  bool has_parent_matches = false;
  for (const RuleMatch& match : rule.matches) {
    if (match.WalksParents()) {
      has_parent_matches = true;
    } else if (!MatchHolds(match, device)) {
      return false;
    }
  }
  if (!has_parent_matches) return true;
  for (const UdevDevice* candidate = &device; candidate != nullptr;
       candidate = candidate->Parent()) {
    bool all_hold = true;
    for (const RuleMatch& match : rule.matches) {
      if (match.WalksParents() && !MatchHolds(match, *candidate)) {
        all_hold = false;
        break;
      }
    }
    if (all_hold) return true;
  }
  return false;
}

}  // namespace regatta::devices::udev
