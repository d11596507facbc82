// Hostile files given to the CLI: `regatta pipeline validate` on a billion-laughs spec and
// `regatta submit --dry-run` on a merge-key chain are refused at once, naming the limit.
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cli/app.h"

namespace regatta::cli {
namespace {

using ::testing::HasSubstr;

struct Result {
  int code;
  std::string out;
  std::string err;
  absl::Duration took;
};

Result RunCommand(const std::vector<std::string>& args) {
  std::istringstream in;
  std::ostringstream out, err;
  const absl::Time start = absl::Now();
  const int code = RunCli(args, in, out, err);
  return {code, out.str(), err.str(), absl::Now() - start};
}

std::string WriteFile(const std::string& name, const std::string& text) {
  const std::string path = absl::StrCat(::testing::TempDir(), "/", name);
  std::ofstream(path) << text;
  return path;
}

// Nine levels of nine aliases in a parameter default: 387 million nodes once expanded.
std::string BillionLaughsSpec() {
  std::string text =
      "pipelineInfo: {name: laughs}\nroot:\n  inputDefinitions:\n    parameters:\n"
      "      laughs:\n        parameterType: STRUCT\n        defaultValue:\n"
      "          a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const std::string prev(1, static_cast<char>(c - 1));
    absl::StrAppend(&text, "          ", std::string(1, c), ": &", std::string(1, c), " [");
    for (int i = 0; i < 9; ++i) absl::StrAppend(&text, i ? ", " : "", "*", prev);
    absl::StrAppend(&text, "]\n");
  }
  return absl::StrCat(text, "  dag: {tasks: {}}\n");
}

TEST(CliParseLimitsTest, PipelineValidateRefusesABillionLaughsQuickly) {
  const std::string path = WriteFile("laughs.yaml", BillionLaughsSpec());
  Result r = RunCommand({"pipeline", "validate", path});
  EXPECT_EQ(r.code, kExitFailed);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, HasSubstr(path));
  EXPECT_THAT(r.err, HasSubstr("YAML aliases expand to more than 1000000 nodes (limit: 1000000 "
                               "expanded nodes)"));
  EXPECT_LT(r.took, absl::Seconds(2));
}

TEST(CliParseLimitsTest, SubmitDryRunRefusesAMergeKeyChainQuickly) {
  // 25 jobs, each merging the previous one twice: the last expands 2^24-fold (this took 15 s
  // of merge-key walking before the expansion was counted).
  std::string text = "queue: q\njobSet: s\njobs:\n  - &j0 {command: [/bin/true], labels: {a: b}}\n";
  for (int i = 1; i < 25; ++i) {
    absl::StrAppend(&text, "  - &j", i, " {<<: [*j", i - 1, ", *j", i - 1, "]}\n");
  }
  const std::string path = WriteFile("merge_chain.yaml", text);
  Result r = RunCommand({"submit", "--dry-run", "--local", path});
  EXPECT_EQ(r.code, kExitFailed) << r.out;
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
  EXPECT_THAT(r.err, HasSubstr("YAML aliases expand to more than 1000000 nodes"));
  EXPECT_LT(r.took, absl::Seconds(2));
}

TEST(CliParseLimitsTest, SubmitDryRunRefusesAMergeKeyCycle) {
  // An alias inside its own anchor is a cycle in yaml-cpp's graph; walking it never ends.
  const std::string path =
      WriteFile("merge_cycle.yaml", "queue: q\njobSet: s\njobs:\n  - &j {<<: *j, command: [a]}\n");
  Result r = RunCommand({"submit", "--dry-run", "--local", path});
  EXPECT_EQ(r.code, kExitFailed) << r.out;
  EXPECT_THAT(r.err, HasSubstr("YAML alias *j refers to a node that contains it (a cycle)"));
}

TEST(CliParseLimitsTest, ModestMergeKeysStillWork) {
  const std::string path =
      WriteFile("merge_ok.yaml",
                "queue: q\njobSet: s\njobs:\n  - &b {command: [a], labels: {x: y}}\n"
                "  - {<<: *b, count: 2}\n  - {<<: [*b], priority: 1}\n");
  Result r = RunCommand({"submit", "--dry-run", "--local", path});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("dry run: 4 jobs valid (checked here only), nothing submitted"));
}

}  // namespace
}  // namespace regatta::cli
