#include "src/pipelines/cache/fingerprint.h"

#include <functional>
#include <limits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::pipelines::cache {
namespace {

using ::nlohmann::json;
using ::testing::HasSubstr;

std::string Canonical(const json& value) {
  absl::StatusOr<std::string> out = CanonicalJson(value);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : "";
}

std::string FingerprintOf(const FingerprintInputs& inputs) {
  absl::StatusOr<std::string> out = Fingerprint(inputs);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : "";
}

FingerprintInputs Typical() {
  FingerprintInputs inputs;
  inputs.parameter_values = {{"n", 3}, {"name", "alice"}, {"opts", {{"b", 1}, {"a", {1, 2}}}}};
  inputs.input_artifacts = {{"data", {{"file:///store/p/r/t/u/data", "sha256:abc", "7"}}}};
  inputs.output_parameters = {{"Output", "STRING"}};
  inputs.output_artifacts = {{"model", "system.Model@0.0.1"}};
  inputs.image = "python:3.11";
  inputs.command = {"sh", "-c"};
  inputs.args = {"echo {{$.inputs.parameters['name']}}"};
  return inputs;
}

TEST(CanonicalJsonTest, SortsKeysDropsWhitespaceAndNormalisesNumbers) {
  EXPECT_EQ(Canonical(json::parse(
                R"({ "b": 1, "a": [ 2.0, -0.0, 1.5, "x" ], "c": {"z": null, "y": true} })")),
            R"({"a":[2,0,1.5,"x"],"b":1,"c":{"y":true,"z":null}})");
  EXPECT_EQ(Canonical(3.0), Canonical(3));
  EXPECT_EQ(Canonical(9007199254740992.0), "9007199254740992");
  EXPECT_EQ(Canonical(1e300), "1e+300");
  EXPECT_EQ(Canonical(0.1), "0.1");
  EXPECT_EQ(Canonical(18446744073709551615ull), "18446744073709551615");
  EXPECT_EQ(Canonical("a\"\n\u00e9"), "\"a\\\"\\n\u00e9\"");
}

TEST(CanonicalJsonTest, RejectsValuesWithoutACanonicalForm) {
  EXPECT_THAT(CanonicalJson(std::numeric_limits<double>::quiet_NaN()).status().message(),
              HasSubstr("NaN"));
  EXPECT_THAT(
      CanonicalJson(json::array({std::numeric_limits<double>::infinity()})).status().message(),
      HasSubstr("infinity"));
  EXPECT_THAT(CanonicalJson(std::string("\xff\xfe")).status().message(), HasSubstr("UTF-8"));
}

TEST(FingerprintTest, PinnedValues) {
  // SHA-256 of {"args":[],"command":[],"image":"","inputArtifacts":{},"inputParameters":{},
  // "outputArtifacts":{},"outputParameters":{}} and of {"customCacheKey":"my-key"}.
  EXPECT_EQ(FingerprintOf(FingerprintInputs{}),
            "4bb82757ff127f90d6d9c6252c77ffb747fe01176ceb991e30ac2ffb8fecf006");
  FingerprintInputs custom;
  custom.custom_cache_key = "my-key";
  EXPECT_EQ(FingerprintOf(custom),
            "cb1e410463846d31c0c8df2054fd0c43987dabff05d2fd80731397b2ff1644d4");
}

TEST(FingerprintTest, EqualInputsGiveEqualFingerprintsWhateverTheKeyOrder) {
  FingerprintInputs a = Typical();
  FingerprintInputs b = Typical();
  b.parameter_values["opts"] = json::parse(R"({"a": [1.0, 2], "b": 1.0})");
  b.parameter_values["n"] = 3.0;  // kfp carries integers as doubles
  EXPECT_EQ(FingerprintOf(a), FingerprintOf(b));
  EXPECT_EQ(FingerprintOf(a).size(), 64u);
}

TEST(FingerprintTest, EveryFieldChangesIt) {
  const std::string base = FingerprintOf(Typical());
  std::vector<std::pair<std::string, std::function<void(FingerprintInputs&)>>> changes = {
      {"parameter value", [](FingerprintInputs& i) { i.parameter_values["n"] = 4; }},
      {"parameter type", [](FingerprintInputs& i) { i.parameter_values["n"] = "3"; }},
      {"nested value", [](FingerprintInputs& i) { i.parameter_values["opts"]["a"][1] = 3; }},
      {"extra parameter", [](FingerprintInputs& i) { i.parameter_values["m"] = nullptr; }},
      {"artifact uri", [](FingerprintInputs& i) { i.input_artifacts["data"][0].uri += "2"; }},
      {"artifact digest", [](FingerprintInputs& i) { i.input_artifacts["data"][0].digest = "d"; }},
      {"artifact id without digest",
       [](FingerprintInputs& i) { i.input_artifacts["data"][0].digest.clear(); }},
      {"artifact input name",
       [](FingerprintInputs& i) {
         i.input_artifacts["data2"] = i.input_artifacts["data"];
         i.input_artifacts.erase("data");
       }},
      {"output parameter type",
       [](FingerprintInputs& i) { i.output_parameters["Output"] = "NUMBER_INTEGER"; }},
      {"output parameter name",
       [](FingerprintInputs& i) {
         i.output_parameters = {{"Output2", "STRING"}};
       }},
      {"output artifact",
       [](FingerprintInputs& i) { i.output_artifacts["model"] = "system.Dataset@0.0.1"; }},
      {"image", [](FingerprintInputs& i) { i.image = "python:3.12"; }},
      {"command", [](FingerprintInputs& i) { i.command.push_back("-x"); }},
      {"args", [](FingerprintInputs& i) { i.args[0] += " "; }},
      {"args split differently",
       [](FingerprintInputs& i) {
         i.args = {"echo", "{{$.inputs.parameters['name']}}"};
       }},
  };
  std::set<std::string> seen = {base};
  for (auto& [what, change] : changes) {
    FingerprintInputs inputs = Typical();
    change(inputs);
    std::string fingerprint = FingerprintOf(inputs);
    EXPECT_NE(fingerprint, base) << what;
    EXPECT_TRUE(seen.insert(fingerprint).second) << what << " collides with another change";
  }
}

TEST(FingerprintTest, ArtifactIdCountsOnlyWithoutDigest) {
  FingerprintInputs a = Typical();
  FingerprintInputs b = Typical();
  b.input_artifacts["data"][0].id = "8";  // same content digest, other record
  EXPECT_EQ(FingerprintOf(a), FingerprintOf(b));
  a.input_artifacts["data"][0].digest.clear();
  b.input_artifacts["data"][0].digest.clear();
  EXPECT_NE(FingerprintOf(a), FingerprintOf(b));
}

TEST(FingerprintTest, CustomCacheKeyReplacesEverything) {
  FingerprintInputs a = Typical();
  a.custom_cache_key = "k1";
  FingerprintInputs b;
  b.image = "other";
  b.custom_cache_key = "k1";
  EXPECT_EQ(FingerprintOf(a), FingerprintOf(b));
  b.custom_cache_key = "k2";
  EXPECT_NE(FingerprintOf(a), FingerprintOf(b));
  EXPECT_NE(FingerprintOf(a), FingerprintOf(Typical()));
}

TEST(FingerprintTest, InvalidParameterValueIsAnError) {
  FingerprintInputs inputs = Typical();
  inputs.parameter_values["x"] = std::numeric_limits<double>::infinity();
  EXPECT_THAT(Fingerprint(inputs).status().message(), HasSubstr("cache fingerprint: NaN"));
}

}  // namespace
}  // namespace regatta::pipelines::cache
