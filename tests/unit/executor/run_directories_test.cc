// The local executor creates the directories a run names before it starts the process.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/common/annotations.h"
#include "src/executor/local_executor.h"

namespace regatta::executor {
namespace {

using ::testing::HasSubstr;

class RunDirectoriesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::path(::testing::TempDir()) /
           ("regatta-run-dirs-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  regatta::v1::Job JobNaming(const std::string& directories) {
    regatta::v1::Job job;
    (*job.mutable_annotations())[kCreateDirectoriesAnnotation] = directories;
    return job;
  }

  std::filesystem::path dir_;
};

TEST_F(RunDirectoriesTest, CreatesEveryNamedDirectoryWithItsParents) {
  const std::string a = (dir_ / "run/task/1/outputs").string();
  const std::string b = (dir_ / "artifacts/model").string();
  ASSERT_TRUE(CreateRunDirectories(JobNaming(a + "\n" + b + "\n")).ok());
  EXPECT_TRUE(std::filesystem::is_directory(a));
  EXPECT_TRUE(std::filesystem::is_directory(b));
  // Again: the directories exist already, which is fine.
  EXPECT_TRUE(CreateRunDirectories(JobNaming(a)).ok());
}

TEST_F(RunDirectoriesTest, NoAnnotationCreatesNothing) {
  EXPECT_TRUE(CreateRunDirectories(regatta::v1::Job()).ok());
  EXPECT_TRUE(std::filesystem::is_empty(dir_));
}

TEST_F(RunDirectoriesTest, ARelativePathIsRefusedNamingTheAnnotation) {
  absl::Status status = CreateRunDirectories(JobNaming("outputs"));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr(kCreateDirectoriesAnnotation));
  EXPECT_THAT(status.message(), HasSubstr("\"outputs\" is not an absolute path"));
}

TEST_F(RunDirectoriesTest, ADirectoryThatCannotBeCreatedIsAnErrorNamingIt) {
  const std::string file = (dir_ / "a-file").string();
  ASSERT_TRUE(std::ofstream(file).good());
  const std::string below = file + "/outputs";
  absl::Status status = CreateRunDirectories(JobNaming(below));
  EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(status.message(), HasSubstr(below));
}

}  // namespace
}  // namespace regatta::executor
