#include "src/executor/local/command.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::executor::local {
namespace {

using ::testing::HasSubstr;

TEST(RunCommandTest, CapturesOutputAndExitCode) {
  absl::StatusOr<CommandOutput> out =
      RunCommand({"/bin/sh", "-c", "echo out; echo err >&2; exit 4"}, absl::Seconds(10));
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(out->exit_code, 4);
  EXPECT_EQ(out->output, "out\nerr\n");
}

TEST(RunCommandTest, BoundsTheOutput) {
  absl::StatusOr<CommandOutput> out =
      RunCommand({"/bin/sh", "-c", "head -c 100000 /dev/zero"}, absl::Seconds(10), 1000);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ(out->output.size(), 1000u);
  EXPECT_EQ(out->exit_code, 0);
}

TEST(RunCommandTest, KillsTheCommandsGroupAfterTheTimeout) {
  const absl::Time start = absl::Now();
  absl::StatusOr<CommandOutput> out =
      RunCommand({"/bin/sh", "-c", "sleep 30 & sleep 30"}, absl::Milliseconds(300));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST(RunCommandTest, AProgramThatCannotRunIsAFailedPrecondition) {
  absl::StatusOr<CommandOutput> out = RunCommand({"/no/such/program"}, absl::Seconds(5));
  EXPECT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(out.status().message(), HasSubstr("/no/such/program"));
  EXPECT_THAT(FindInPath("sh"), ::testing::EndsWith("/sh"));
  EXPECT_EQ(FindInPath("no-such-program-anywhere"), "");
}

}  // namespace
}  // namespace regatta::executor::local
