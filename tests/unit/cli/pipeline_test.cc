// `regatta pipeline validate` and `compile`: what they print for kfp-compiled and authoring
// pipelines, and errors that name the file and the path inside the document.
#include "src/cli/pipeline.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "src/cli/app.h"
#include "src/pipelines/ir/parse.h"

namespace regatta::cli {
namespace {

using ::testing::HasSubstr;

const std::string kTestdata = REGATTA_PIPELINE_TESTDATA_DIR;

class PipelineValidateTest : public ::testing::Test {
 protected:
  PipelineValidateTest() {
    env_.out = &out_;
    env_.err = &err_;
  }
  CommandEnv env_;
  std::ostringstream out_, err_;
};

TEST_F(PipelineValidateTest, ShowsParametersAndTasksInRunOrder) {
  absl::Status status = ValidatePipeline(env_, kTestdata + "/producer_consumer.yaml");
  ASSERT_TRUE(status.ok()) << status;
  const std::string out = out_.str();
  EXPECT_THAT(out, HasSubstr("pipeline    producer-consumer\n"));
  EXPECT_THAT(out, HasSubstr("schema      2.1.0"));
  // The SDK writes the integer default as 3.0; it is shown as the integer it is.
  EXPECT_THAT(out, HasSubstr("count (NUMBER_INTEGER, default 3)"));
  EXPECT_THAT(out, HasSubstr("ratio (NUMBER_DOUBLE, default 0.5)"));
  // The consumer reads the producer's output: it comes second, though it sorts first by name.
  EXPECT_THAT(out, HasSubstr("root tasks  2: producer, consumer\n"));
  EXPECT_THAT(out, HasSubstr("valid\n"));
}

TEST_F(PipelineValidateTest, JsonOutputIsADocument) {
  env_.output = OutputFormat::kJson;
  absl::Status status = ValidatePipeline(env_, kTestdata + "/hello_world.yaml");
  ASSERT_TRUE(status.ok()) << status;
  nlohmann::json doc = nlohmann::json::parse(out_.str());
  EXPECT_EQ(doc["schemaVersion"], "2.1.0");
  EXPECT_TRUE(doc["platformSpec"].get<bool>());
  EXPECT_FALSE(doc["rootTasks"].empty());
}

TEST_F(PipelineValidateTest, ErrorsNameTheFileAndThePath) {
  std::ifstream in(kTestdata + "/producer_consumer.yaml");
  std::stringstream text;
  text << in.rdbuf();
  std::string broken = text.str();
  // The consumer now reads from a task that does not exist.
  const std::string from = "producerTask: producer";
  ASSERT_NE(broken.find(from), std::string::npos);
  broken.replace(broken.find(from), from.size(), "producerTask: prod");
  const std::string path = ::testing::TempDir() + "/broken.yaml";
  std::ofstream(path) << broken;
  absl::Status status = ValidatePipeline(env_, path);
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_THAT(std::string(status.message()), HasSubstr(path + ": root.dag.tasks.consumer."));
  EXPECT_THAT(std::string(status.message()), HasSubstr("'prod'"));

  EXPECT_FALSE(ValidatePipeline(env_, ::testing::TempDir() + "/missing.yaml").ok());
}

const char kAuthoring[] = R"(
name: hello
params: {who: {default: world}}
tasks:
  greet:
    command: [echo, 'hello {{params.who}}', '{{outputs.line}}']
    outputs: {line: str}
  shout:
    inputs: {line: greet.line}
    command: [echo, '{{inputs.line}}']
)";

std::string WriteTemp(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST_F(PipelineValidateTest, AcceptsAnAuthoringFile) {
  absl::Status status = ValidatePipeline(env_, WriteTemp("hello.yaml", kAuthoring));
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_THAT(out_.str(), HasSubstr("pipeline    hello\n"));
  EXPECT_THAT(out_.str(), HasSubstr("who (STRING, default \"world\")"));
  EXPECT_THAT(out_.str(), HasSubstr("root tasks  2: greet, shout\n"));
}

TEST_F(PipelineValidateTest, CompilePrintsTheIrAsYamlThatLoadsBack) {
  absl::Status status = CompilePipeline(env_, WriteTemp("hello.yaml", kAuthoring), "");
  ASSERT_TRUE(status.ok()) << status;
  const std::string out = out_.str();
  EXPECT_THAT(out, ::testing::StartsWith("# PIPELINE DEFINITION\n# Name: hello\n"));
  absl::StatusOr<pipelines::ir::PipelineSpec> spec = pipelines::ir::LoadPipelineSpec(out);
  ASSERT_TRUE(spec.ok()) << spec.status() << "\n" << out;
  EXPECT_EQ(spec->root.dag->tasks.at("shout").dependent_tasks, std::vector<std::string>{"greet"});
  EXPECT_EQ(spec->executors.at("exec-greet").container.command.at(1),
            "hello {{$.inputs.parameters['who']}}");
}

TEST_F(PipelineValidateTest, CompileWritesJsonToAFile) {
  env_.output = OutputFormat::kJson;
  const std::string target = ::testing::TempDir() + "/hello.ir.json";
  absl::Status status = CompilePipeline(env_, WriteTemp("hello.yaml", kAuthoring), target);
  ASSERT_TRUE(status.ok()) << status;
  EXPECT_THAT(out_.str(), HasSubstr("wrote " + target));
  nlohmann::json doc = nlohmann::json::parse(ReadFile(target));
  EXPECT_EQ(doc["schemaVersion"], "2.1.0");
  EXPECT_EQ(doc["root"]["dag"]["tasks"]["shout"]["inputs"]["parameters"]["line"]
               ["taskOutputParameter"]["producerTask"],
            "greet");
}

TEST_F(PipelineValidateTest, CompileRewritesAKfpFileWithItsPlatformSpec) {
  absl::Status status = CompilePipeline(env_, kTestdata + "/hello_world.yaml", "");
  ASSERT_TRUE(status.ok()) << status;
  absl::StatusOr<pipelines::ir::PipelineSpec> spec = pipelines::ir::LoadPipelineSpec(out_.str());
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_TRUE(spec->platform_spec.has_value());
}

TEST_F(PipelineValidateTest, CompileErrorsNameTheFileAndTheAuthoringPath) {
  std::string broken = kAuthoring;
  broken.replace(broken.find("greet.line"), 10, "greet.lin");
  const std::string path = WriteTemp("broken_authoring.yaml", broken);
  absl::Status status = CompilePipeline(env_, path, "");
  EXPECT_TRUE(absl::IsInvalidArgument(status)) << status;
  EXPECT_EQ(status.message(), path + ": tasks.shout.inputs.line: task 'greet' has no output 'lin'");
  EXPECT_TRUE(out_.str().empty());
}

TEST(PipelineCompileCliTest, ReadsStandardInputAndTakesTheFormatAndOutFileFlags) {
  std::istringstream in(kAuthoring);
  std::ostringstream out, err;
  ASSERT_EQ(RunCli({"pipeline", "compile", "-", "-o", "json"}, in, out, err), 0) << err.str();
  EXPECT_EQ(nlohmann::json::parse(out.str())["pipelineInfo"]["name"], "hello");

  const std::string target = ::testing::TempDir() + "/stdin.ir.yaml";
  std::istringstream again(kAuthoring);
  std::ostringstream out2, err2;
  ASSERT_EQ(RunCli({"pipeline", "compile", "-", "--out-file", target}, again, out2, err2), 0)
      << err2.str();
  EXPECT_TRUE(pipelines::ir::LoadPipelineSpec(ReadFile(target)).ok());

  // A document error fails the command (1) and names the path; a missing FILE is a usage error.
  std::istringstream broken("name: p\ntasks: {a: {command: [a], after: zz}}\n");
  std::ostringstream out3, err3;
  EXPECT_EQ(RunCli({"pipeline", "compile", "-"}, broken, out3, err3), 1);
  EXPECT_THAT(err3.str(), HasSubstr("-: tasks.a.after: no task 'zz'"));
  std::ostringstream out4, err4;
  EXPECT_EQ(RunCli({"pipeline", "compile"}, in, out4, err4), 2);
}

}  // namespace
}  // namespace regatta::cli
