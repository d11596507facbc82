// `regatta pipeline validate`: what it prints for a kfp-compiled pipeline, and errors that name
// the file and the path inside the document.
#include "src/cli/pipeline.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

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

}  // namespace
}  // namespace regatta::cli
