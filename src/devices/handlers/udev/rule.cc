#include "src/devices/handlers/udev/rule.h"

#include <fnmatch.h>

#include <cctype>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/common/status_macros.h"

namespace regatta::devices::udev {
namespace {

struct KeyInfo {
  absl::string_view word;
  RuleKey key;
  bool takes_name;
};

constexpr KeyInfo kKeys[] = {
    {"KERNEL", RuleKey::kKernel, false},
    {"SUBSYSTEM", RuleKey::kSubsystem, false},
    {"DRIVER", RuleKey::kDriver, false},
    {"DEVPATH", RuleKey::kDevpath, false},
    {"TAG", RuleKey::kTag, false},
    {"ATTR", RuleKey::kAttr, true},
    {"ENV", RuleKey::kEnv, true},
    {"KERNELS", RuleKey::kKernels, false},
    {"SUBSYSTEMS", RuleKey::kSubsystems, false},
    {"DRIVERS", RuleKey::kDrivers, false},
    {"TAGS", RuleKey::kTags, false},
    {"ATTRS", RuleKey::kAttrs, true},
};

constexpr absl::string_view kSupportedKeys =
    "KERNEL, SUBSYSTEM, DRIVER, DEVPATH, TAG, ATTR{name}, ENV{name}, KERNELS, SUBSYSTEMS, "
    "DRIVERS, TAGS, ATTRS{name}";

const KeyInfo* FindKey(absl::string_view word) {
  for (const KeyInfo& info : kKeys) {
    if (info.word == word) return &info;
  }
  return nullptr;
}

// Attribute names are paths below the device's sysfs folder ("device/vendor" is fine); one that
// climbs out could make the handler read any file.
bool AttributeNameStaysInside(absl::string_view name) {
  if (absl::StartsWith(name, "/")) return false;
  for (absl::string_view part : absl::StrSplit(name, '/')) {
    if (part == "..") return false;
  }
  return true;
}

class RuleParser {
 public:
  explicit RuleParser(absl::string_view text) : text_(text) {}

  absl::StatusOr<UdevRule> Parse() {
    UdevRule rule;
    rule.text = std::string(text_);
    SkipSpaces();
    if (AtEnd()) {
      return absl::InvalidArgumentError(
          "empty rule; write at least one match such as KERNEL==\"video0\"");
    }
    while (true) {
      ASSIGN_OR_RETURN(RuleMatch match, ParseMatch());
      rule.matches.push_back(std::move(match));
      SkipSpaces();
      if (AtEnd()) break;
      if (text_[pos_] != ',') return ErrorAt(pos_, "expected ',' between matches");
      ++pos_;
      SkipSpaces();
      if (AtEnd()) break;  // udev accepts a trailing comma
    }
    return rule;
  }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  bool LookingAt(absl::string_view s) const { return absl::StartsWith(text_.substr(pos_), s); }
  void SkipSpaces() {
    while (!AtEnd() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  static absl::Status ErrorAt(size_t pos, absl::string_view message) {
    return absl::InvalidArgumentError(absl::StrCat(message, " at column ", pos + 1));
  }

  absl::StatusOr<RuleMatch> ParseMatch() {
    const size_t key_start = pos_;
    while (!AtEnd() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    const absl::string_view word = text_.substr(key_start, pos_ - key_start);
    if (word.empty()) return ErrorAt(key_start, "expected a key such as KERNEL");

    std::string name;
    bool has_name = false;
    const size_t brace = pos_;
    if (LookingAt("{")) {
      const size_t close = text_.find('}', brace + 1);
      if (close == absl::string_view::npos) {
        return ErrorAt(brace, absl::StrCat("missing '}' after ", word, "{"));
      }
      name = std::string(text_.substr(brace + 1, close - brace - 1));
      has_name = true;
      pos_ = close + 1;
    }

    const KeyInfo* info = FindKey(word);
    if (info == nullptr) {
      const std::string upper = absl::AsciiStrToUpper(word);
      const std::string hint =
          FindKey(upper) != nullptr ? absl::StrCat(" (keys are upper case: ", upper, ")") : "";
      return absl::InvalidArgumentError(
          absl::StrCat("key '", word, "' is not supported", hint, "; supported: ", kSupportedKeys));
    }
    if (info->takes_name && !has_name) {
      return ErrorAt(pos_, absl::StrCat(word, " needs a name in braces, e.g. ", word,
                                        info->key == RuleKey::kEnv ? "{ID_MODEL}" : "{idVendor}"));
    }
    if (!info->takes_name && has_name)
      return ErrorAt(brace, absl::StrCat(word, " takes no {name}"));
    if (has_name && name.empty()) return ErrorAt(brace, absl::StrCat("empty name in ", word, "{}"));
    if ((info->key == RuleKey::kAttr || info->key == RuleKey::kAttrs) &&
        !AttributeNameStaysInside(name)) {
      return ErrorAt(brace + 1, absl::StrCat("attribute name '", name,
                                             "' must stay inside the device's sysfs folder (no "
                                             "leading '/', no '..')"));
    }
    const std::string display = RuleKeyName(info->key, name);

    SkipSpaces();
    MatchOp op;
    if (LookingAt("==")) {
      op = MatchOp::kEqual;
    } else if (LookingAt("!=")) {
      op = MatchOp::kNotEqual;
    } else {
      for (absl::string_view assignment : {"+=", "-=", ":=", "="}) {
        if (LookingAt(assignment)) {
          return ErrorAt(pos_, absl::StrCat(display, " uses the assignment operator '", assignment,
                                            "'; discovery rules only match: use '==' or '!='"));
        }
      }
      return ErrorAt(pos_, absl::StrCat("expected '==' or '!=' after ", display));
    }
    const absl::string_view op_text = text_.substr(pos_, 2);
    pos_ += 2;

    SkipSpaces();
    if (!LookingAt("\"")) {
      return ErrorAt(pos_, absl::StrCat("expected a double-quoted value after ", display, op_text));
    }
    const size_t value_start = pos_;
    ++pos_;
    std::string value;
    while (true) {
      if (AtEnd()) {
        return ErrorAt(value_start,
                       absl::StrCat("unterminated value of ", display, " (no closing '\"')"));
      }
      if (LookingAt("\\\"")) {  // as in udev, \" is a quote inside the value
        value.push_back('"');
        pos_ += 2;
        continue;
      }
      const char c = text_[pos_];
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
        return ErrorAt(pos_, absl::StrCat("control character in the value of ", display));
      }
      ++pos_;
      if (c == '"') break;
      value.push_back(c);
    }
    return RuleMatch{info->key, std::move(name), op, UdevPattern::Parse(value)};
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

UdevPattern UdevPattern::Parse(absl::string_view value) {
  UdevPattern pattern;
  pattern.text_ = std::string(value);
  if (value.empty()) pattern.matches_empty_ = true;
  for (absl::string_view alternative : absl::StrSplit(value, '|', absl::SkipEmpty())) {
    pattern.alternatives_.emplace_back(alternative);
  }
  // "a|" or "|a" or "a||b": udev reads an empty alternative as "or the empty string".
  if (!value.empty() && (absl::StartsWith(value, "|") || absl::EndsWith(value, "|") ||
                         absl::StrContains(value, "||"))) {
    pattern.matches_empty_ = true;
  }
  return pattern;
}

bool UdevPattern::Matches(absl::string_view text) const {
  if (text.empty() && matches_empty_) return true;
  const std::string subject(text);
  for (const std::string& alternative : alternatives_) {
    if (fnmatch(alternative.c_str(), subject.c_str(), 0) == 0) return true;
  }
  return false;
}

bool RuleMatch::WalksParents() const {
  switch (key) {
    case RuleKey::kKernels:
    case RuleKey::kSubsystems:
    case RuleKey::kDrivers:
    case RuleKey::kTags:
    case RuleKey::kAttrs:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<UdevRule> ParseUdevRule(absl::string_view text) { return RuleParser(text).Parse(); }

std::string RuleKeyName(RuleKey key, absl::string_view name) {
  for (const KeyInfo& info : kKeys) {
    if (info.key != key) continue;
    if (!info.takes_name) return std::string(info.word);
    return absl::StrCat(info.word, "{", name, "}");
  }
  return "?";
}

}  // namespace regatta::devices::udev
