#include "src/common/bounded_parse.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// Nine levels of nine aliases: 9^9 (387 million) scalars from a few hundred bytes.
std::string BillionLaughs() {
  std::string text = "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (char c = 'b'; c <= 'i'; ++c) {
    const char prev = static_cast<char>(c - 1);
    absl::StrAppend(&text, std::string(1, c), ": &", std::string(1, c), " [");
    for (int i = 0; i < 9; ++i) absl::StrAppend(&text, i ? ", " : "", "*", std::string(1, prev));
    absl::StrAppend(&text, "]\n");
  }
  return text;
}

std::string Msg(const absl::Status& status) { return std::string(status.message()); }

ParseLimits Limits(size_t nodes) {
  ParseLimits limits;
  limits.max_expanded_nodes = nodes;
  return limits;
}

TEST(BoundedYamlTest, RefusesBillionLaughsNamingTheLimitAndPlace) {
  // g's first alias (*f, 597871 nodes) is the one that goes over.
  absl::StatusOr<YAML::Node> node = LoadYaml(BillionLaughs());
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(node.status()),
              AllOf(StartsWith("line 7, column 8: "),
                    HasSubstr("YAML aliases expand to more than 1000000 nodes (limit: 1000000 "
                              "expanded nodes)")));
  EXPECT_TRUE(IsParseLimitError(node.status()));
}

TEST(BoundedYamlTest, ExpandedNodesJustUnderTheLimitAreAccepted) {
  // The map, key a, the list and its 3 items, key b, and the alias to the 4-node list: 11.
  const std::string text = "a: &l [x, y, z]\nb: *l\n";
  EXPECT_TRUE(LoadYaml(text, Limits(11)).ok());
  absl::StatusOr<YAML::Node> over = LoadYaml(text, Limits(10));
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(Msg(over.status()),
              AllOf(StartsWith("line 2, column 4: "),
                    HasSubstr("aliases expand to more than 10 nodes (limit: 10 expanded nodes)")));
}

TEST(BoundedYamlTest, NodesWithoutAliasesCountToo) {
  absl::StatusOr<YAML::Node> over = LoadYaml("[1, 2, 3, 4]", Limits(4));
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(Msg(over.status()), HasSubstr("YAML has more than 4 nodes"));
  EXPECT_TRUE(LoadYaml("[1, 2, 3, 4]", Limits(5)).ok());
}

TEST(BoundedYamlTest, AliasCount) {
  ParseLimits limits;
  limits.max_aliases = 3;
  EXPECT_TRUE(LoadYaml("a: &a 1\nb: [*a, *a, *a]\n", limits).ok());
  absl::StatusOr<YAML::Node> over = LoadYaml("a: &a 1\nb: [*a, *a, *a, *a]\n", limits);
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(Msg(over.status()),
              AllOf(StartsWith("line 2, column 17: "),
                    HasSubstr("YAML has more than 3 aliases (limit: 3 aliases)")));
}

TEST(BoundedYamlTest, DepthCountsThroughAliases) {
  ParseLimits limits;
  limits.max_depth = 5;
  // The anchored list is 3 levels; used 2 levels down it reaches 5.
  EXPECT_TRUE(LoadYaml("a: &a [[[1]]]\nb: [*a]\n", limits).ok());
  absl::StatusOr<YAML::Node> over = LoadYaml("a: &a [[[1]]]\nb: [[*a]]\n", limits);
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(Msg(over.status()),
              AllOf(StartsWith("line 2, column 6: "),
                    HasSubstr("YAML nests more than 5 levels deep through aliases (limit: 5 "
                              "levels)")));
}

TEST(BoundedYamlTest, PlainDepth) {
  ParseLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(LoadYaml("[[[x]]]", limits).ok());
  absl::StatusOr<YAML::Node> over = LoadYaml("[[[[x]]]]", limits);
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(Msg(over.status()),
              AllOf(StartsWith("line 1, column 4: "), HasSubstr("YAML nests more than 3 levels")));
}

TEST(BoundedYamlTest, ExpandedScalarBytes) {
  ParseLimits limits;
  limits.max_expanded_scalar_bytes = 30;
  EXPECT_TRUE(LoadYaml("a: &a 0123456789\nb: *a\n", limits).ok());  // 1 + 10 + 1 + 10 bytes
  absl::StatusOr<YAML::Node> over = LoadYaml("a: &a 0123456789\nb: [*a, *a]\n", limits);
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(Msg(over.status()),
              HasSubstr("aliases expand to more than 30 bytes of scalars (limit: 30 expanded "
                        "scalar bytes)"));
}

TEST(BoundedYamlTest, InputBytes) {
  ParseLimits limits;
  limits.max_input_bytes = 8;
  EXPECT_TRUE(LoadYaml("a: 12345", limits).ok());
  absl::StatusOr<YAML::Node> over = LoadYaml("a: 123456", limits);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(Msg(over.status()), "YAML input is 9 bytes, more than the limit of 8 bytes");
  EXPECT_TRUE(IsParseLimitError(over.status()));
}

TEST(BoundedYamlTest, RefusesAnAliasInsideItsOwnAnchor) {
  // yaml-cpp builds a cycle for these; walking it would recurse until the stack runs out.
  for (const char* text : {"&a [*a]", "a: &a {b: *a}", "base: &a {<<: *a, x: 1}"}) {
    absl::StatusOr<YAML::Node> node = LoadYaml(text);
    ASSERT_FALSE(node.ok()) << text;
    EXPECT_THAT(Msg(node.status()),
                HasSubstr("YAML alias *a refers to a node that contains it (a cycle)"));
  }
}

TEST(BoundedYamlTest, SyntaxErrorsKeepYamlCppsPlace) {
  absl::StatusOr<YAML::Node> node = LoadYaml("a: 1\nb: [\n");
  ASSERT_FALSE(node.ok());
  EXPECT_EQ(node.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(Msg(node.status()), StartsWith("line 3, column 1: "));
  EXPECT_FALSE(IsParseLimitError(node.status()));
  EXPECT_THAT(Msg(LoadYaml("a: *nope").status()), HasSubstr("line 1, column 4: "));
}

TEST(BoundedYamlTest, RefusesScalarsThatAreNotUtf8) {
  // Raw bytes that are not UTF-8: a lone 0xff, an overlong NUL, an encoded surrogate.
  for (const char* text : {"a: \xff\n", "\xc0\x80: x\n", "a: [\xed\xa0\x80]\n"}) {
    absl::StatusOr<YAML::Node> node = LoadYaml(text);
    ASSERT_FALSE(node.ok()) << text;
    EXPECT_THAT(Msg(node.status()), HasSubstr("YAML scalar is not valid UTF-8"));
    EXPECT_FALSE(IsParseLimitError(node.status()));
  }
  // yaml-cpp itself refuses a surrogate written as an escape.
  EXPECT_FALSE(LoadYaml("a: \"\\ud800\"\n").ok());
  absl::StatusOr<YAML::Node> node = LoadYaml("a: \"\\u00e9\"\nb: \xc3\xa9 \xf0\x9f\x98\x80\n");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ((*node)["a"].as<std::string>(), "\xc3\xa9");
}

TEST(BoundedYamlTest, LoadsWhatYamlCppLoads) {
  absl::StatusOr<YAML::Node> node = LoadYaml("base: &b {x: 1}\nuse: *b\nlist: [a, b]\n");
  ASSERT_TRUE(node.ok()) << node.status();
  EXPECT_EQ((*node)["use"]["x"].as<int>(), 1);
  EXPECT_EQ((*node)["list"][1].as<std::string>(), "b");
  absl::StatusOr<YAML::Node> empty = LoadYaml("");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->IsNull());
}

TEST(BoundedYamlTest, AllDocumentsShareTheLimitsButNotTheAnchors) {
  absl::StatusOr<std::vector<YAML::Node>> docs = LoadAllYaml("a: &x 1\n---\nb: &x [2]\nc: *x\n");
  ASSERT_TRUE(docs.ok()) << docs.status();
  ASSERT_EQ(docs->size(), 2u);
  EXPECT_EQ((*docs)[1]["c"][0].as<int>(), 2);
  // 3 nodes in each of the two documents; the 6th (the 4) is one too many for a limit of 5.
  EXPECT_TRUE(LoadAllYaml("[1, 2]\n---\n[3, 4]\n", Limits(6)).ok());
  absl::StatusOr<std::vector<YAML::Node>> over = LoadAllYaml("[1, 2]\n---\n[3, 4]\n", Limits(5));
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(Msg(over.status()), StartsWith("line 3, column 5: "));
}

TEST(BoundedYamlTest, AnchorRedefinitionUsesTheLatest) {
  // *x is the 1-node scalar, not the 1000-item list defined first under the same name.
  std::string big = "a: &x [";
  for (int i = 0; i < 1000; ++i) absl::StrAppend(&big, i ? "," : "", "1");
  absl::StrAppend(&big, "]\nb: &x 1\nc: [*x, *x, *x]\n");
  EXPECT_TRUE(LoadYaml(big, Limits(1010)).ok());
}

TEST(BoundedYamlTest, MergeKeyChainsAreCountedAsTheyExpand) {
  // Every job merges the previous one twice: 2^n nodes for the last of n jobs.
  std::string text = "j0: &j0 {x: 1}\n";
  for (int i = 1; i < 30; ++i) {
    absl::StrAppend(&text, "j", i, ": &j", i, " {<<: [*j", i - 1, ", *j", i - 1, "]}\n");
  }
  absl::StatusOr<YAML::Node> node = LoadYaml(text);
  ASSERT_FALSE(node.ok());
  EXPECT_THAT(Msg(node.status()), HasSubstr("aliases expand to more than 1000000 nodes"));
}

TEST(BoundedJsonTest, ParsesJson) {
  absl::StatusOr<nlohmann::json> j = ParseJson(R"({"a": [1, "x]", {"b": null}], "c": "\"{"})");
  ASSERT_TRUE(j.ok()) << j.status();
  EXPECT_EQ((*j)["a"][1], "x]");
  EXPECT_EQ((*j)["c"], "\"{");
  absl::StatusOr<nlohmann::ordered_json> ordered = ParseOrderedJson(R"({"z": 1, "a": 2})");
  ASSERT_TRUE(ordered.ok());
  EXPECT_EQ(ordered->begin().key(), "z");
}

TEST(BoundedJsonTest, DepthWithPlace) {
  ParseLimits limits;
  limits.max_depth = 3;
  EXPECT_TRUE(ParseJson("[[[1]]]", limits).ok());
  // Brackets inside strings are not nesting.
  EXPECT_TRUE(ParseJson(R"([[["[[[[\"[["]]])", limits).ok());
  absl::StatusOr<nlohmann::json> over = ParseJson("{\"a\":\n  [[[1]]]}", limits);
  ASSERT_FALSE(over.ok());
  EXPECT_EQ(Msg(over.status()),
            "line 2, column 5: JSON nests more than 3 levels deep (limit: 3 levels)");
  EXPECT_TRUE(IsParseLimitError(over.status()));
}

TEST(BoundedJsonTest, ValuesJustUnderTheLimit) {
  // The array, its 3 items, the object member and the empty containers.
  const std::string text = R"([1, {"a": []}, {}])";  // [, 1, {..}, a's member, {} = 5 values
  EXPECT_TRUE(ParseJson(text, Limits(5)).ok());
  absl::StatusOr<nlohmann::json> over = ParseJson(text, Limits(4));
  ASSERT_FALSE(over.ok());
  EXPECT_THAT(Msg(over.status()), HasSubstr("JSON has more than 4 values (limit: 4 values)"));
}

TEST(BoundedJsonTest, InputBytesAndSyntax) {
  ParseLimits limits;
  limits.max_input_bytes = 4;
  EXPECT_THAT(Msg(ParseJson("[1,2]", limits).status()),
              HasSubstr("JSON input is 5 bytes, more than the limit of 4 bytes"));
  absl::StatusOr<nlohmann::json> bad = ParseJson("{\"a\":\n tru}");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(Msg(bad.status()), StartsWith("line 2, column "));
  EXPECT_FALSE(IsParseLimitError(bad.status()));
  EXPECT_EQ(ParseErrorText(bad.status(), "not JSON").substr(0, 16), "not JSON: line 2");
}

TEST(BoundedJsonTest, CheckJsonLimitsLeavesSyntaxToTheParser) {
  ParseLimits limits;
  limits.max_depth = 2;
  EXPECT_TRUE(CheckJsonLimits("[[not json", limits).ok());
  EXPECT_FALSE(CheckJsonLimits("[[[", limits).ok());
  // A deep array that nlohmann would parse (iteratively) and then dump recursively.
  EXPECT_THAT(Msg(CheckJsonLimits(std::string(100000, '['))),
              HasSubstr("JSON nests more than 128 levels deep"));
}

}  // namespace
}  // namespace regatta
