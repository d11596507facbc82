// `regatta submit` of a whole file against the real server in-process: all or nothing.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cli/app.h"
#include "tests/integration/platform_fixture.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;

class SubmitFileTest : public PlatformTest {
 protected:
  struct Result {
    int code;
    std::string out;
    std::string err;
  };

  // `regatta ARGS` as alice against the platform.
  Result Cli(std::vector<std::string> args) {
    args.insert(args.begin(), {"--server", platform_->grpc_address(), "--user", "alice",
                               "--password", "alice-pw", "--timeout", "60s"});
    std::istringstream in;
    std::ostringstream out, err;
    int code = cli::RunCli(args, in, out, err);
    return {code, out.str(), err.str()};
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }

  // How many jobs the views hold for `queue`, once they caught up with the log.
  int JobsIn(const std::string& queue) {
    SyncViews();
    int count = 0;
    regatta::v1::ListJobsRequest request;
    request.set_queue(queue);
    request.set_page_size(10000);
    do {
      regatta::v1::ListJobsResponse response;
      grpc::Status s = jobs_->ListJobs(Alice().get(), request, &response);
      EXPECT_TRUE(s.ok()) << s.error_message();
      if (!s.ok()) return -1;
      count += response.jobs_size();
      request.set_page_token(response.next_page_token());
    } while (!request.page_token().empty());
    return count;
  }

  // A job file for `queue` of `n` jobs, one per line from line 4 on; job `bad` (if any) names an
  // unknown priority class, which only the server knows.
  static std::string JobFile(const std::string& queue, int n, int bad = -1) {
    std::string text = absl::StrCat("queue: ", queue, "\njobSet: s\njobs:\n");
    for (int i = 0; i < n; ++i) {
      absl::StrAppend(&text, i == bad ? "  - {priorityClass: no-such-class, command: [/bin/true]}\n"
                                      : "  - {command: [/bin/true]}\n");
    }
    return text;
  }
};

TEST_F(SubmitFileTest, FileWhose1500thJobIsInvalidSubmitsNothing) {
  ASSERT_TRUE(CreateQueue("team-a").ok());
  // 2000 jobs: requests of 1000; the bad one is in the second. The old CLI submitted the first
  // 1000 before the server refused the second request.
  const std::string path = WriteFile("jobs.yaml", JobFile("team-a", 2000, 1499));
  Result r = Cli({"submit", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_THAT(r.err,
              HasSubstr(absl::StrCat("regatta: submit: INVALID_ARGUMENT: ", path,
                                     ":1503:6: jobs[1499].priority_class: unknown priority class "
                                     "\"no-such-class\"")));
  EXPECT_THAT(r.err, HasSubstr("(nothing was submitted)"));
  EXPECT_EQ(JobsIn("team-a"), 0);

  // The dry run asks the server too, and says the same.
  r = Cli({"submit", "--dry-run", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_THAT(r.err, HasSubstr(":1503:6: jobs[1499].priority_class: unknown priority class"));

  // Fixed, the whole file goes in.
  const std::string fixed = WriteFile("fixed.yaml", JobFile("team-a", 2000));
  r = Cli({"submit", "--dry-run", fixed});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("dry run: 2000 jobs valid (checked by the server)"));
  EXPECT_EQ(JobsIn("team-a"), 0);
  r = Cli({"submit", fixed, "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(JobsIn("team-a"), 2000);
}

TEST_F(SubmitFileTest, UnknownQueueInTheSecondDocumentSubmitsNothingFromTheFirst) {
  ASSERT_TRUE(CreateQueue("team-a").ok());
  const std::string path =
      WriteFile("two.yaml", JobFile("team-a", 3) + "---\n" + JobFile("no-such-queue", 2));
  Result r = Cli({"submit", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, absl::StrCat("regatta: submit: INVALID_ARGUMENT: ", path,
                                ":8:1: document 2: queue: queue \"no-such-queue\" does not exist "
                                "(nothing was submitted)\n"));
  EXPECT_EQ(JobsIn("team-a"), 0);
}

TEST_F(SubmitFileTest, ValidateSubmitChecksPermissionsAndPublishesNothing) {
  ASSERT_TRUE(CreateQueue("team-a").ok());
  const int64_t before = platform_->log()->LastOffset();
  regatta::v1::SubmitJobsRequest request = Jobs("team-a", "s", 3, "c");
  regatta::v1::ValidateSubmitResponse response;
  // bob has no permission on team-a.
  grpc::Status s = submit_->ValidateSubmit(Bob().get(), request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  s = submit_->ValidateSubmit(Alice().get(), request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.new_jobs(), 3);
  EXPECT_EQ(response.duplicates(), 0);
  EXPECT_EQ(platform_->log()->LastOffset(), before);

  // Once submitted, the same client ids are duplicates.
  regatta::v1::SubmitJobsResponse submitted;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), request, &submitted).ok());
  SyncViews();
  request.mutable_items(2)->set_client_id("new");
  s = submit_->ValidateSubmit(Alice().get(), request, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.new_jobs(), 1);
  EXPECT_EQ(response.duplicates(), 2);
  EXPECT_EQ(JobsIn("team-a"), 3);
}

}  // namespace
}  // namespace regatta::testing
