// The shapes the kfp SDK writes that Regatta once refused (issue 23), and what stays refused:
// each rule on the project's kfp-shaped test files of tests/testdata/kfp/.
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/pipelines/ir/parameters.h"
#include "src/pipelines/ir/parse.h"
#include "src/pipelines/ir/platform.h"
#include "src/pipelines/ir/validate.h"

namespace regatta::pipelines::ir {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;

std::string ReadKfpFile(const std::string& name) {
  std::ifstream in(std::string(REGATTA_KFP_TESTDATA_DIR) + "/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// `file` with `from` replaced by `to` (which must occur), loaded and validated.
absl::Status LoadEdited(const std::string& file, const std::string& from, const std::string& to) {
  std::string text = ReadKfpFile(file);
  EXPECT_NE(text.find(from), std::string::npos) << from;
  return LoadPipelineSpec(absl::StrReplaceAll(text, {{from, to}})).status();
}

TEST(KfpShapesTest, PrimitiveTypesReadAsParameterTypes) {
  absl::StatusOr<PipelineSpec> spec = LoadPipelineSpec(ReadKfpFile("primitive_types.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  const auto& params = spec->components.at("comp-add").input_definitions.parameters;
  EXPECT_EQ(params.at("a").parameter_type, ParameterType::kNumberInteger);
  EXPECT_EQ(params.at("scale").parameter_type, ParameterType::kNumberDouble);
  EXPECT_EQ(params.at("label").parameter_type, ParameterType::kString);
  const auto& inputs = spec->root.dag->tasks.at("add").input_parameters;
  EXPECT_EQ(inputs.at("b").constant, json(4));
  EXPECT_EQ(inputs.at("scale").constant, json(1.5));
  EXPECT_EQ(inputs.at("label").constant, json("total"));
}

TEST(KfpShapesTest, UnknownPrimitiveTypeNamesItsField) {
  absl::Status status = LoadEdited("primitive_types.yaml", "scale:\n          type: DOUBLE",
                                   "scale:\n          type: FLOAT");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("components.comp-add.inputDefinitions.parameters.scale."
                                          "type: unknown primitive type 'FLOAT'"));
}

TEST(KfpShapesTest, DefaultSpellingsAreNormalised) {
  EXPECT_EQ(NormalizeDefaultValue(json("5"), ParameterType::kNumberInteger), json(5));
  EXPECT_EQ(NormalizeDefaultValue(json(200.0), ParameterType::kNumberInteger), json(200));
  EXPECT_EQ(NormalizeDefaultValue(json("200.0"), ParameterType::kNumberInteger), json(200));
  EXPECT_EQ(NormalizeDefaultValue(json("0.25"), ParameterType::kNumberDouble), json(0.25));
  EXPECT_EQ(NormalizeDefaultValue(json("True"), ParameterType::kBoolean), json(true));
  EXPECT_EQ(NormalizeDefaultValue(json("false"), ParameterType::kBoolean), json(false));
  EXPECT_EQ(NormalizeDefaultValue(json("[1, 2]"), ParameterType::kList), json::parse("[1,2]"));
  EXPECT_EQ(NormalizeDefaultValue(json("{\"a\": 1}"), ParameterType::kStruct),
            json::parse("{\"a\":1}"));
  EXPECT_EQ(NormalizeDefaultValue(json("5"), ParameterType::kString), json("5"));
}

TEST(KfpShapesTest, ADefaultThatIsNotOfItsTypeIsStillRefused) {
  absl::Status status =
      LoadEdited("default_spellings.yaml", "defaultValue: '5'", "defaultValue: 'five'");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "root.inputDefinitions.parameters.n.defaultValue: \"five\" is not a NUMBER_INTEGER");
  status = LoadEdited("default_spellings.yaml", "defaultValue: '5'", "defaultValue: '5.5'");
  EXPECT_THAT(status.message(), HasSubstr("\"5.5\" is not a NUMBER_INTEGER"));
}

TEST(KfpShapesTest, UndeclaredChannelsAreAccepted) {
  EXPECT_TRUE(LoadPipelineSpec(ReadKfpFile("undeclared_channels.yaml")).ok());
  EXPECT_TRUE(LoadPipelineSpec(ReadKfpFile("machine_fields.yaml")).ok());
}

TEST(KfpShapesTest, AnUndeclaredInputThatIsNoChannelIsRefused) {
  absl::Status status =
      LoadEdited("undeclared_channels.yaml",
                 "              pipelinechannel--enabled:\n"
                 "                componentInputParameter: pipelinechannel--enabled\n",
                 "              enabled:\n"
                 "                componentInputParameter: pipelinechannel--enabled\n");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "components.comp-exit-handler-1.dag.tasks.condition-2.inputs.parameters.enabled: "
            "'enabled' is not an input parameter of component 'comp-condition-2'");
}

TEST(KfpShapesTest, AChannelNoCallerPassesIsRefused) {
  // The loop no longer receives the greeting, so the step inside cannot read it.
  absl::Status status =
      LoadEdited("undeclared_channels.yaml",
                 "              pipelinechannel--greeting:\n"
                 "                componentInputParameter: pipelinechannel--greeting\n"
                 "          parameterIterator:",
                 "          parameterIterator:");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "components.comp-for-loop-3.dag.tasks.say.inputs.parameters.text: component input "
            "parameter 'pipelinechannel--greeting' is not an input of the enclosing component "
            "'comp-for-loop-3'");
}

TEST(KfpShapesTest, AnArtifactChannelNoCallerPassesIsRefused) {
  absl::Status status =
      LoadEdited("undeclared_channels.yaml", "componentInputArtifact: pipelinechannel--make-data",
                 "componentInputArtifact: pipelinechannel--other-data");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(),
            "components.comp-condition-2.dag.tasks.read.inputs.artifacts.data: component input "
            "artifact 'pipelinechannel--other-data' is not an input of the enclosing component "
            "'comp-condition-2'");
}

TEST(KfpShapesTest, FinalStatusPassesIntoASubDagButNotIntoAString) {
  EXPECT_TRUE(LoadPipelineSpec(ReadKfpFile("final_status_subdag.yaml")).ok());
  absl::Status status =
      LoadEdited("final_status_subdag.yaml", "        status:\n          parameterType: STRUCT",
                 "        status:\n          parameterType: STRING");
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(),
              HasSubstr("components.comp-notify.dag.tasks.state-of.inputs.parameters.status: a "
                        "TASK_FINAL_STATUS input takes exactly a taskFinalStatus source"));
}

TEST(KfpShapesTest, PlatformSpecMapsWhatOneMachineHonours) {
  absl::StatusOr<PipelineSpec> spec = LoadPipelineSpec(ReadKfpFile("platform_env.yaml"));
  ASSERT_TRUE(spec.ok()) << spec.status();
  ASSERT_TRUE(spec->platform_spec.has_value());
  absl::StatusOr<std::map<std::string, KubernetesExecutorConfig>> configs =
      ParsePlatformSpec(*spec->platform_spec, *spec);
  ASSERT_TRUE(configs.ok()) << configs.status();
  const KubernetesExecutorConfig& config = configs->at("exec-show-env");
  EXPECT_EQ(config.pod_labels.at("stage"), "test");
  EXPECT_EQ(config.pod_annotations.at("team.example.com/owner"), "data");
  ASSERT_EQ(config.secret_as_env.size(), 1u);
  EXPECT_EQ(config.secret_as_env[0].name, "kfp-db-creds");
  EXPECT_EQ(config.secret_as_env[0].key_to_env[0],
            std::make_pair(std::string("password"), std::string("DB_PASSWORD")));
  ASSERT_EQ(config.config_map_as_env.size(), 2u);
  EXPECT_TRUE(config.config_map_as_env[1].optional);
  ASSERT_EQ(config.tolerations.size(), 1u);
  EXPECT_EQ(config.tolerations[0].op, "Exists");
}

struct RefusedCase {
  std::string name;
  std::string from;
  std::string to;
  std::string error;
  friend void PrintTo(const RefusedCase& c, std::ostream* os) { *os << c.name; }
};

class PlatformRefusedTest : public ::testing::TestWithParam<RefusedCase> {};

TEST_P(PlatformRefusedTest, NamesTheField) {
  const RefusedCase& c = GetParam();
  absl::Status status = LoadEdited("platform_env.yaml", c.from, c.to);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr(c.error));
}

constexpr char kExec[] = "platforms.kubernetes.deploymentSpec.executors.exec-show-env";

INSTANTIATE_TEST_SUITE_P(
    Cases, PlatformRefusedTest,
    ::testing::Values(
        RefusedCase{"SecretAsVolume", "          podMetadata:",
                    "          secretAsVolume:\n          - {secretName: s, mountPath: /s}\n"
                    "          podMetadata:",
                    absl::StrCat(kExec, ".secretAsVolume: cannot be honoured")},
        RefusedCase{"ImagePullSecret", "          podMetadata:",
                    "          imagePullSecret:\n          - {secretName: s}\n"
                    "          podMetadata:",
                    absl::StrCat(kExec, ".imagePullSecret: cannot be honoured")},
        RefusedCase{"UnknownField",
                    "          podMetadata:", "          podMagic: {}\n          podMetadata:",
                    absl::StrCat(kExec, ".podMagic: unknown field")},
        RefusedCase{"UnknownExecutor", "        exec-show-env:", "        exec-other:",
                    "executors.exec-other: executor 'exec-other' does not exist"},
        RefusedCase{"OtherPlatform",
                    "platforms:\n  kubernetes:", "platforms:\n  vertex: {}\n  kubernetes:",
                    "platforms.vertex: only the kubernetes platform"},
        RefusedCase{"TolerationSeconds", "            operator: Exists",
                    "            operator: Exists\n            tolerationSeconds: 30",
                    absl::StrCat(kExec, ".tolerations[0].tolerationSeconds: cannot be honoured")},
        RefusedCase{"SecretNameFromAParameter",
                    "              runtimeValue:\n                constant: kfp-db-creds",
                    "              componentInputParameter: secret_name",
                    absl::StrCat(kExec,
                                 ".secretAsEnv[0].secretNameParameter: only a constant "
                                 "name")},
        RefusedCase{"KeyToEnvWithoutEnvVar", "            - envVar: DB_PASSWORD\n",
                    "            - envVar: ''\n",
                    absl::StrCat(kExec, ".secretAsEnv[0].keyToEnv[0].envVar: missing")}));

}  // namespace
}  // namespace regatta::pipelines::ir
