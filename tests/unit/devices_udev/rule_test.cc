#include "src/devices/handlers/udev/rule.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::devices::udev {
namespace {

using ::testing::HasSubstr;

std::string ErrorOf(absl::string_view rule) {
  absl::StatusOr<UdevRule> parsed = ParseUdevRule(rule);
  EXPECT_FALSE(parsed.ok()) << "parsed: " << rule;
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST(ParseUdevRuleTest, ReadsKeysOperatorsNamesAndValues) {
  absl::StatusOr<UdevRule> rule = ParseUdevRule(
      R"(KERNEL=="video[0-9]*",SUBSYSTEM=="video4linux", ATTRS{idVendor}!="05a9" ,  ENV{ID_BUS}=="usb")");
  ASSERT_TRUE(rule.ok()) << rule.status();
  ASSERT_EQ(rule->matches.size(), 4u);
  EXPECT_EQ(rule->matches[0].key, RuleKey::kKernel);
  EXPECT_EQ(rule->matches[0].op, MatchOp::kEqual);
  EXPECT_EQ(rule->matches[0].pattern.text(), "video[0-9]*");
  EXPECT_EQ(rule->matches[1].key, RuleKey::kSubsystem);
  EXPECT_EQ(rule->matches[2].key, RuleKey::kAttrs);
  EXPECT_EQ(rule->matches[2].name, "idVendor");
  EXPECT_EQ(rule->matches[2].op, MatchOp::kNotEqual);
  EXPECT_TRUE(rule->matches[2].WalksParents());
  EXPECT_FALSE(rule->matches[0].WalksParents());
  EXPECT_EQ(rule->matches[3].key, RuleKey::kEnv);
  EXPECT_EQ(rule->matches[3].name, "ID_BUS");
}

TEST(ParseUdevRuleTest, EveryKeyIsUnderstood) {
  absl::StatusOr<UdevRule> rule = ParseUdevRule(
      R"(KERNEL=="a", SUBSYSTEM=="b", DRIVER=="c", DEVPATH=="d", TAG=="e", ATTR{f}=="g", )"
      R"(ENV{h}=="i", KERNELS=="j", SUBSYSTEMS=="k", DRIVERS=="l", TAGS=="m", ATTRS{n}=="o")");
  ASSERT_TRUE(rule.ok()) << rule.status();
  ASSERT_EQ(rule->matches.size(), 12u);
  const RuleKey expected[] = {RuleKey::kKernel,  RuleKey::kSubsystem, RuleKey::kDriver,
                              RuleKey::kDevpath, RuleKey::kTag,       RuleKey::kAttr,
                              RuleKey::kEnv,     RuleKey::kKernels,   RuleKey::kSubsystems,
                              RuleKey::kDrivers, RuleKey::kTags,      RuleKey::kAttrs};
  for (size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(rule->matches[i].key, expected[i]) << i;
    EXPECT_EQ(rule->matches[i].WalksParents(), i >= 7) << i;
  }
}

TEST(ParseUdevRuleTest, AcceptsSpacesAroundOperatorsTrailingCommaAndEscapedQuotes) {
  absl::StatusOr<UdevRule> rule = ParseUdevRule(R"(  ATTR{name} == "say \"hi\"" ,)");
  ASSERT_TRUE(rule.ok()) << rule.status();
  ASSERT_EQ(rule->matches.size(), 1u);
  EXPECT_EQ(rule->matches[0].pattern.text(), R"(say "hi")");
}

TEST(ParseUdevRuleTest, EmptyValueIsAllowed) {
  absl::StatusOr<UdevRule> rule = ParseUdevRule(R"(DRIVER=="")");
  ASSERT_TRUE(rule.ok()) << rule.status();
  EXPECT_TRUE(rule->matches[0].pattern.Matches(""));
  EXPECT_FALSE(rule->matches[0].pattern.Matches("usb"));
}

TEST(ParseUdevRuleTest, UnsupportedKeyListsTheSupportedOnes) {
  EXPECT_EQ(ErrorOf(R"(KERNEL=="video0", PROGRAM=="/bin/true")"),
            "key 'PROGRAM' is not supported; supported: KERNEL, SUBSYSTEM, DRIVER, DEVPATH, TAG, "
            "ATTR{name}, ENV{name}, KERNELS, SUBSYSTEMS, DRIVERS, TAGS, ATTRS{name}");
  EXPECT_THAT(ErrorOf(R"(NAME=="x")"), HasSubstr("key 'NAME' is not supported"));
  EXPECT_THAT(ErrorOf(R"(kernel=="x")"),
              HasSubstr("key 'kernel' is not supported (keys are upper case: KERNEL); supported:"));
  EXPECT_THAT(ErrorOf(R"(TEST{0644}=="x")"), HasSubstr("key 'TEST' is not supported"));
}

TEST(ParseUdevRuleTest, MissingOperatorNamesKeyAndColumn) {
  EXPECT_EQ(ErrorOf(R"(KERNEL~"video0")"), "expected '==' or '!=' after KERNEL at column 7");
  EXPECT_EQ(ErrorOf(R"(KERNEL)"), "expected '==' or '!=' after KERNEL at column 7");
  EXPECT_EQ(ErrorOf(R"(KERNEL=="a", ATTRS{idVendor} "05a9")"),
            "expected '==' or '!=' after ATTRS{idVendor} at column 30");
}

TEST(ParseUdevRuleTest, AssignmentOperatorsAreRefused) {
  EXPECT_EQ(ErrorOf(R"(KERNEL="video0")"),
            "KERNEL uses the assignment operator '='; discovery rules only match: use '==' or "
            "'!=' at column 7");
  EXPECT_THAT(ErrorOf(R"(TAG+="x")"), HasSubstr("TAG uses the assignment operator '+='"));
  EXPECT_THAT(ErrorOf(R"(TAG-="x")"), HasSubstr("'-='"));
  EXPECT_THAT(ErrorOf(R"(ENV{A}:="x")"), HasSubstr("ENV{A} uses the assignment operator ':='"));
}

TEST(ParseUdevRuleTest, ValueErrors) {
  EXPECT_EQ(ErrorOf(R"(KERNEL==video0)"),
            "expected a double-quoted value after KERNEL== at column 9");
  EXPECT_EQ(ErrorOf(R"(KERNEL=='video0')"),
            "expected a double-quoted value after KERNEL== at column 9");
  EXPECT_EQ(ErrorOf(R"(KERNEL=="video0)"),
            "unterminated value of KERNEL (no closing '\"') at column 9");
}

TEST(ParseUdevRuleTest, ControlCharactersInValuesAreRefused) {
  EXPECT_EQ(ErrorOf(std::string("KERNEL==\"nu\0ll\"", 15)),
            "control character in the value of KERNEL at column 12");
  EXPECT_EQ(ErrorOf("ENV{A}==\"a\nb\""), "control character in the value of ENV{A} at column 11");
  // Whitespace around matches, newlines included (a YAML block scalar ends with one), is fine.
  EXPECT_TRUE(ParseUdevRule("KERNEL==\"null\",\n\tSUBSYSTEM==\"mem\"\n").ok());
}

TEST(ParseUdevRuleTest, SeparatorErrors) {
  EXPECT_EQ(ErrorOf(R"(KERNEL=="a" SUBSYSTEM=="b")"), "expected ',' between matches at column 13");
  EXPECT_EQ(ErrorOf(R"(KERNEL=="a",, SUBSYSTEM=="b")"),
            "expected a key such as KERNEL at column 13");
  EXPECT_EQ(ErrorOf(R"(=="a")"), "expected a key such as KERNEL at column 1");
}

TEST(ParseUdevRuleTest, EmptyRuleIsAnError) {
  EXPECT_THAT(ErrorOf(""), HasSubstr("empty rule"));
  EXPECT_THAT(ErrorOf("   "), HasSubstr("empty rule"));
}

TEST(ParseUdevRuleTest, NameErrors) {
  EXPECT_EQ(ErrorOf(R"(ATTR=="x")"),
            "ATTR needs a name in braces, e.g. ATTR{idVendor} at column 5");
  EXPECT_EQ(ErrorOf(R"(ENV=="x")"), "ENV needs a name in braces, e.g. ENV{ID_MODEL} at column 4");
  EXPECT_EQ(ErrorOf(R"(KERNEL{x}=="x")"), "KERNEL takes no {name} at column 7");
  EXPECT_EQ(ErrorOf(R"(ATTRS{}=="x")"), "empty name in ATTRS{} at column 6");
  EXPECT_EQ(ErrorOf(R"(ATTRS{idVendor=="x")"), "missing '}' after ATTRS{ at column 6");
  EXPECT_THAT(ErrorOf(R"(ATTR{../../etc/shadow}=="x")"),
              HasSubstr("must stay inside the device's sysfs folder"));
  EXPECT_THAT(ErrorOf(R"(ATTRS{/etc/shadow}=="x")"),
              HasSubstr("must stay inside the device's sysfs folder"));
  EXPECT_TRUE(ParseUdevRule(R"(ATTRS{device/vendor}=="0x8086")").ok());
}

TEST(UdevPatternTest, GlobsLikeUdev) {
  const UdevPattern pattern = UdevPattern::Parse("video[0-9]*");
  EXPECT_TRUE(pattern.Matches("video0"));
  EXPECT_TRUE(pattern.Matches("video10"));
  EXPECT_FALSE(pattern.Matches("video"));
  EXPECT_FALSE(pattern.Matches("xvideo0"));
  EXPECT_FALSE(pattern.Matches("Video0"));

  EXPECT_TRUE(UdevPattern::Parse("tty?").Matches("tty1"));
  EXPECT_FALSE(UdevPattern::Parse("tty?").Matches("tty10"));
  EXPECT_TRUE(UdevPattern::Parse("sd[!a]").Matches("sdb"));
  EXPECT_FALSE(UdevPattern::Parse("sd[!a]").Matches("sda"));
  EXPECT_TRUE(UdevPattern::Parse("sd[a-c]").Matches("sdc"));
  EXPECT_FALSE(UdevPattern::Parse("sd[a-c]").Matches("sdd"));
  // As fnmatch without FNM_PATHNAME: * crosses slashes (DEVPATH=="/devices/*/usb1").
  EXPECT_TRUE(UdevPattern::Parse("/devices/*/null").Matches("/devices/virtual/mem/null"));
  EXPECT_TRUE(UdevPattern::Parse("*").Matches(""));
  EXPECT_FALSE(UdevPattern::Parse("?*").Matches(""));
  EXPECT_TRUE(UdevPattern::Parse(R"(a\*)").Matches("a*"));
  EXPECT_FALSE(UdevPattern::Parse(R"(a\*)").Matches("ab"));
}

TEST(UdevPatternTest, AlternativesAndEmptyAlternatives) {
  const UdevPattern pattern = UdevPattern::Parse("usb|video*");
  EXPECT_TRUE(pattern.Matches("usb"));
  EXPECT_TRUE(pattern.Matches("video4linux"));
  EXPECT_FALSE(pattern.Matches("usbmisc"));
  EXPECT_FALSE(pattern.Matches(""));
  EXPECT_EQ(pattern.alternatives(), (std::vector<std::string>{"usb", "video*"}));

  EXPECT_TRUE(UdevPattern::Parse("usb|").Matches(""));
  EXPECT_TRUE(UdevPattern::Parse("|usb").Matches(""));
  EXPECT_TRUE(UdevPattern::Parse("a||b").Matches(""));
  EXPECT_TRUE(UdevPattern::Parse("").Matches(""));
  EXPECT_FALSE(UdevPattern::Parse("").Matches("x"));
}

}  // namespace
}  // namespace regatta::devices::udev
