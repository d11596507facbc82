#include "src/pipelines/ir/parameters.h"

#include <map>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/pipelines/ir/parse.h"
#include "tests/unit/pipelines_ir/testdata.h"

namespace regatta::pipelines::ir {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

TEST(ParseParameterValueTest, TypesTextByParameterType) {
  EXPECT_EQ(*ParseParameterValue("42", ParameterType::kString), json("42"));
  EXPECT_EQ(*ParseParameterValue("42", ParameterType::kNumberInteger), json(42));
  EXPECT_EQ(*ParseParameterValue("0.25", ParameterType::kNumberDouble), json(0.25));
  EXPECT_EQ(*ParseParameterValue("true", ParameterType::kBoolean), json(true));
  EXPECT_EQ(*ParseParameterValue("[1, 2]", ParameterType::kList), json::parse("[1,2]"));
  EXPECT_EQ(*ParseParameterValue(R"({"a": "b"})", ParameterType::kStruct),
            json::parse(R"({"a":"b"})"));
}

TEST(ParseParameterValueTest, RejectsTextOfTheWrongType) {
  EXPECT_EQ(ParseParameterValue("4.5", ParameterType::kNumberInteger).status().message(),
            "'4.5' is not a NUMBER_INTEGER");
  EXPECT_FALSE(ParseParameterValue("nan", ParameterType::kNumberDouble).ok());
  EXPECT_FALSE(ParseParameterValue("yes", ParameterType::kBoolean).ok());
  EXPECT_FALSE(ParseParameterValue("{}", ParameterType::kList).ok());
  EXPECT_FALSE(ParseParameterValue("[1", ParameterType::kList).ok());
  EXPECT_FALSE(ParseParameterValue("x", ParameterType::kTaskFinalStatus).ok());
}

class ResolvePipelineParametersTest : public ::testing::Test {
 protected:
  void SetUp() override {
    absl::StatusOr<PipelineSpec> spec =
        LoadPipelineSpec(ReadPipelineFile("producer_consumer.yaml"));
    ASSERT_TRUE(spec.ok()) << spec.status();
    spec_ = *std::move(spec);
  }
  PipelineSpec spec_;
};

TEST_F(ResolvePipelineParametersTest, FillsDefaultsAndNormalisesIntegers) {
  absl::StatusOr<std::map<std::string, json>> values =
      ResolvePipelineParameters(spec_, {{"ratio", json(0.75)}});
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(values->at("ratio"), json(0.75));
  // The default is written `3.0`; an integer parameter's value is the JSON integer 3.
  EXPECT_TRUE(values->at("count").is_number_integer());
  EXPECT_EQ(values->at("count"), json(3));
  EXPECT_EQ(values->at("words"), json::parse(R"(["a","b"])"));
  EXPECT_EQ(values->size(), 5u);
}

TEST_F(ResolvePipelineParametersTest, RejectsUnknownAndMistypedParameters) {
  EXPECT_EQ(ResolvePipelineParameters(spec_, {{"colour", json("red")}}).status().message(),
            "parameter 'colour' is not an input of pipeline 'producer-consumer'");
  EXPECT_EQ(ResolvePipelineParameters(spec_, {{"count", json(2.5)}}).status().message(),
            "parameter 'count': 2.5 is not a NUMBER_INTEGER");
}

TEST(ResolvePipelineParametersRequiredTest, RequiredParameterWithoutDefault) {
  absl::StatusOr<PipelineSpec> spec = LoadPipelineSpec(ReadPipelineFile("artifact_passing.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(ResolvePipelineParameters(*spec, {}).status().message(),
            "parameter 'rows' is required");
  absl::StatusOr<std::map<std::string, json>> values =
      ResolvePipelineParameters(*spec, {{"rows", json(10)}});
  ASSERT_TRUE(values.ok());
  EXPECT_EQ(values->at("rows"), json(10));
}

}  // namespace
}  // namespace regatta::pipelines::ir
