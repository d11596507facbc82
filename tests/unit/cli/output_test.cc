// Table rendering, names and times of the human output, and the watch tracker.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/cli/render.h"
#include "src/cli/table.h"
#include "src/cli/watch_tracker.h"

namespace regatta::cli {
namespace {

namespace v1 = regatta::v1;
using ::testing::HasSubstr;

RenderContext FixedContext() {
  RenderContext ctx;
  ctx.now = absl::FromUnixSeconds(1'700'000'000);
  ctx.zone = absl::UTCTimeZone();
  return ctx;
}

google::protobuf::Timestamp Ago(absl::Duration d) {
  google::protobuf::Timestamp ts;
  ts.set_seconds(1'700'000'000 - absl::ToInt64Seconds(d));
  return ts;
}

TEST(TableTest, AlignsColumnsWithoutTrailingSpaces) {
  Table table({"NAME", "STATE", "X"});
  table.AddRow({"a", "QUEUED", ""});
  table.AddRow({"longer-name", "RUNNING"});  // missing cells are empty
  EXPECT_EQ(table.Render(),
            "NAME          STATE     X\n"
            "a             QUEUED\n"
            "longer-name   RUNNING\n");
}

TEST(TableTest, HeaderOnlyWhenEmpty) { EXPECT_EQ(Table({"A", "B"}).Render(), "A   B\n"); }

TEST(DetailsTest, AlignsValues) {
  Details d;
  d.Add("Name", "q");
  d.Add("Priority factor", "1");
  d.Add("", "continued");
  EXPECT_EQ(d.Render(),
            "Name:             q\n"
            "Priority factor:  1\n"
            "                  continued\n");
}

TEST(NamesTest, StripEnumPrefixes) {
  EXPECT_EQ(JobStateName(v1::JOB_STATE_QUEUED), "QUEUED");
  EXPECT_EQ(RunStateName(v1::RUN_STATE_LEASE_EXPIRED), "LEASE_EXPIRED");
  EXPECT_EQ(EventTypeName(v1::JOB_EVENT_TYPE_CANCEL_JOB_SET), "CANCEL_JOB_SET");
  EXPECT_EQ(ErrorReasonName(v1::ERROR_REASON_OUT_OF_MEMORY), "OUT_OF_MEMORY");
}

TEST(TimeTest, FormatsAgeAndRfc3339) {
  auto ctx = FixedContext();
  EXPECT_EQ(FormatAge(Ago(absl::Seconds(45)), ctx), "45s");
  EXPECT_EQ(FormatAge(Ago(absl::Minutes(12)), ctx), "12m");
  EXPECT_EQ(FormatAge(Ago(absl::Hours(5)), ctx), "5h");
  EXPECT_EQ(FormatAge(Ago(absl::Hours(24 * 9)), ctx), "9d");
  EXPECT_EQ(FormatAge(google::protobuf::Timestamp(), ctx), "");
  EXPECT_EQ(FormatTime(Ago(absl::ZeroDuration()), ctx), "2023-11-14T22:13:20+00:00");
  EXPECT_EQ(FormatTimeWithAge(Ago(absl::Minutes(3)), ctx), "2023-11-14T22:10:20+00:00 (3m ago)");
}

TEST(RenderTest, JobTable) {
  v1::JobSummary job;
  job.set_job_id("01HZZZZZZZZZZZZZZZZZZZZZZZ");
  job.set_queue("team-a");
  job.set_job_set("nightly");
  job.set_state(v1::JOB_STATE_QUEUED);
  job.set_priority(2);
  job.set_owner("alice");
  (*job.mutable_requests())["memory"] = "1Gi";
  (*job.mutable_requests())["cpu"] = "1";
  *job.mutable_submit_time() = Ago(absl::Minutes(5));
  EXPECT_EQ(RenderJobTable({job}, FixedContext()),
            "JOB ID                       QUEUE    JOB SET   STATE    PRIORITY   OWNER   "
            "REQUESTS           AGE\n"
            "01HZZZZZZZZZZZZZZZZZZZZZZZ   team-a   nightly   QUEUED   2          alice   "
            "cpu=1,memory=1Gi   5m\n");

  // A NAMESPACE column once a job has one (Armada's job files set it).
  v1::JobSummary other = job;
  other.set_namespace_("research");
  EXPECT_EQ(
      RenderJobTable({job, other}, FixedContext()),
      "JOB ID                       QUEUE    JOB SET   STATE    PRIORITY   OWNER   "
      "NAMESPACE   REQUESTS           AGE\n"
      "01HZZZZZZZZZZZZZZZZZZZZZZZ   team-a   nightly   QUEUED   2          alice               "
      "cpu=1,memory=1Gi   5m\n"
      "01HZZZZZZZZZZZZZZZZZZZZZZZ   team-a   nightly   QUEUED   2          alice   research    "
      "cpu=1,memory=1Gi   5m\n");
}

TEST(RenderTest, SubmitResults) {
  v1::SubmitJobsResponse response;
  auto* a = response.add_items();
  a->set_job_id("J1");
  a->set_client_id("c-0");
  auto* b = response.add_items();
  b->set_job_id("J0");
  b->set_duplicate(true);
  EXPECT_EQ(RenderSubmitResults(response),
            "JOB ID   CLIENT ID   DUPLICATE\n"
            "J1       c-0         no\n"
            "J0                   yes\n");
}

TEST(RenderTest, QueueTableAndDetails) {
  v1::Queue q;
  q.set_name("team-a");
  auto* p = q.add_permissions();
  auto* s = p->add_subjects();
  s->set_kind("group");
  s->set_name("team-a");
  p->add_verbs("submit");
  p->add_verbs("cancel");
  (*(*q.mutable_resource_limits_by_priority_class())["pc"]
        .mutable_maximum_resource_fraction())["cpu"] = 0.5;
  auto ctx = FixedContext();
  EXPECT_EQ(RenderQueueTable({q}, ctx),
            "NAME     PRIORITY FACTOR   CORDONED   PERMISSIONS                  LABELS   AGE\n"
            "team-a   1                 no         group:team-a=submit,cancel\n");
  std::string details = RenderQueueDetails(q, ctx);
  EXPECT_THAT(details, HasSubstr("Permissions:      group:team-a=submit,cancel\n"));
  EXPECT_THAT(details, HasSubstr("Resource limits:  pc:cpu=0.5\n"));
}

TEST(RenderTest, JobDetailsWithRunsAndError) {
  v1::JobDetails d;
  d.mutable_summary()->set_job_id("J");
  d.mutable_summary()->set_state(v1::JOB_STATE_FAILED);
  d.mutable_error()->set_reason(v1::ERROR_REASON_CONTAINER_ERROR);
  d.mutable_error()->set_exit_code(3);
  d.mutable_error()->set_terminal(true);
  d.mutable_error()->set_message("boom");
  auto* run = d.add_runs();
  run->set_run_id("R1");
  run->set_state(v1::RUN_STATE_FAILED);
  run->set_node_id("n1");
  d.mutable_job()->set_id("J");
  d.mutable_job()->mutable_task()->add_command("false");
  std::string out = RenderJobDetails(d, FixedContext());
  EXPECT_THAT(out, HasSubstr("State:            FAILED\n"));
  EXPECT_THAT(out, HasSubstr("Error:            CONTAINER_ERROR (exit code 3): boom\n"));
  EXPECT_THAT(out, HasSubstr("\nRuns:\n  RUN ID   STATE    EXECUTOR   NODE"));
  EXPECT_THAT(out, HasSubstr("  R1       FAILED              n1"));
  EXPECT_THAT(out, HasSubstr("\nSpec:\n  id: J\n  task:\n    command:\n      - \"false\"\n"));
}

TEST(RenderTest, EventLine) {
  v1::JobSetEvent e;
  *e.mutable_created() = Ago(absl::ZeroDuration());
  e.set_job_id("01HZZZZZZZZZZZZZZZZZZZZZZZ");
  e.set_type(v1::JOB_EVENT_TYPE_FAILED);
  e.set_run_id("R1");
  e.mutable_error()->set_reason(v1::ERROR_REASON_CONTAINER_ERROR);
  e.mutable_error()->set_exit_code(1);
  e.mutable_error()->set_terminal(true);
  EXPECT_EQ(RenderEventLine(e, FixedContext()),
            "2023-11-14T22:13:20.000+00:00  01HZZZZZZZZZZZZZZZZZZZZZZZ  FAILED          run=R1 "
            "CONTAINER_ERROR (exit code 1)");
  v1::JobSetEvent cancel;
  cancel.set_type(v1::JOB_EVENT_TYPE_CANCEL_JOB_SET);
  cancel.add_states(v1::JOB_STATE_QUEUED);
  cancel.set_user_id("bob");
  cancel.set_reason("too slow");
  EXPECT_THAT(RenderEventLine(cancel, FixedContext()),
              HasSubstr("CANCEL_JOB_SET  states=QUEUED by=bob reason=\"too slow\""));
}

v1::JobSetEvent Event(const std::string& job, v1::JobEventType type) {
  v1::JobSetEvent e;
  e.set_job_id(job);
  e.set_type(type);
  return e;
}

TEST(WatchTrackerTest, FinishesWhenEverySeenJobIsTerminal) {
  WatchTracker t;
  EXPECT_FALSE(t.Finished());  // nothing seen yet
  t.Observe(Event("a", v1::JOB_EVENT_TYPE_SUBMITTED));
  t.Observe(Event("b", v1::JOB_EVENT_TYPE_SUBMITTED));
  t.Observe(Event("a", v1::JOB_EVENT_TYPE_QUEUED));
  t.Observe(Event("a", v1::JOB_EVENT_TYPE_SUCCEEDED));
  EXPECT_FALSE(t.Finished());
  EXPECT_EQ(t.open(), 1);
  t.Observe(Event("b", v1::JOB_EVENT_TYPE_RUN_SUCCEEDED));  // a run outcome is not the job's
  EXPECT_FALSE(t.Finished());
  t.Observe(Event("b", v1::JOB_EVENT_TYPE_SUCCEEDED));
  EXPECT_TRUE(t.Finished());
  EXPECT_EQ(t.ExitCode(), WatchTracker::kAllSucceeded);
  EXPECT_EQ(t.Summary(), "2 jobs: 2 succeeded, 0 unsuccessful, 0 unfinished");
}

TEST(WatchTrackerTest, AnyUnsuccessfulEndGivesExitCodeOne) {
  for (auto type : {v1::JOB_EVENT_TYPE_FAILED, v1::JOB_EVENT_TYPE_CANCELLED,
                    v1::JOB_EVENT_TYPE_PREEMPTED, v1::JOB_EVENT_TYPE_REJECTED}) {
    WatchTracker t;
    t.Observe(Event("a", v1::JOB_EVENT_TYPE_SUBMITTED));
    t.Observe(Event("b", v1::JOB_EVENT_TYPE_SUBMITTED));
    t.Observe(Event("a", v1::JOB_EVENT_TYPE_SUCCEEDED));
    t.Observe(Event("b", type));
    EXPECT_TRUE(t.Finished());
    EXPECT_EQ(t.ExitCode(), WatchTracker::kSomeUnsuccessful) << v1::JobEventType_Name(type);
  }
}

TEST(WatchTrackerTest, IgnoresEventsAfterTerminalAndJobSetEvents) {
  WatchTracker t;
  t.Observe(Event("", v1::JOB_EVENT_TYPE_CANCEL_JOB_SET));
  EXPECT_EQ(t.seen(), 0);
  t.Observe(Event("a", v1::JOB_EVENT_TYPE_SUBMITTED));
  t.Observe(Event("a", v1::JOB_EVENT_TYPE_SUCCEEDED));
  t.Observe(Event("a", v1::JOB_EVENT_TYPE_FAILED));  // ignored, like the views do
  EXPECT_TRUE(t.Finished());
  EXPECT_EQ(t.ExitCode(), 0);
  EXPECT_EQ(t.succeeded(), 1);
  EXPECT_EQ(t.unsuccessful(), 0);
}

TEST(WatchTrackerTest, QueuedJobsKeepItOpen) {
  WatchTracker t;
  t.Observe(Event("a", v1::JOB_EVENT_TYPE_SUBMITTED));
  t.Observe(Event("a", v1::JOB_EVENT_TYPE_QUEUED));
  t.Observe(Event("a", v1::JOB_EVENT_TYPE_CANCELLING));
  EXPECT_FALSE(t.Finished());
}

}  // namespace
}  // namespace regatta::cli
