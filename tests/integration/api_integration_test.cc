// The API server in-process on port 0, driven by real gRPC clients.
#include <sqlite3.h>

#include <set>
#include <thread>

#include "gmock/gmock.h"
#include "grpcpp/generic/generic_stub.h"
#include "gtest/gtest.h"
#include "src/api/submit_service.h"
#include "src/eventlog/event_log.h"
#include "src/store/store.h"
#include "tests/integration/platform_fixture.h"

namespace regatta::testing {
namespace {

using regatta::v1::JobState;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class ApiTest : public PlatformTest {};

std::vector<regatta::v1::JobSummary> ListAll(regatta::v1::JobService::Stub& stub,
                                             regatta::v1::ListJobsRequest req) {
  std::vector<regatta::v1::JobSummary> all;
  req.set_page_size(2000);
  while (true) {
    regatta::v1::ListJobsResponse resp;
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", PlatformTest::Basic("alice", "alice-pw"));
    grpc::Status s = stub.ListJobs(&ctx, req, &resp);
    EXPECT_TRUE(s.ok()) << s.error_message();
    if (!s.ok()) break;
    for (const auto& j : resp.jobs()) all.push_back(j);
    if (resp.next_page_token().empty()) break;
    req.set_page_token(resp.next_page_token());
  }
  return all;
}

TEST_F(ApiTest, QueueLifecycle) {
  regatta::v1::Queue created;
  ASSERT_TRUE(CreateQueue("q1", &created).ok());
  EXPECT_EQ(created.name(), "q1");
  EXPECT_EQ(created.priority_factor(), 1);
  // The creator got every verb.
  ASSERT_EQ(created.permissions_size(), 1);
  EXPECT_EQ(created.permissions(0).subjects(0).name(), "alice");
  EXPECT_TRUE(created.has_create_time());

  EXPECT_EQ(CreateQueue("q1").error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_EQ(CreateQueue("bad name").error_code(), grpc::StatusCode::INVALID_ARGUMENT);

  regatta::v1::UpdateQueueRequest update;
  update.mutable_queue()->set_name("q1");
  update.mutable_queue()->set_priority_factor(2);
  regatta::v1::Queue updated;
  ASSERT_TRUE(queues_->UpdateQueue(Alice().get(), update, &updated).ok());
  EXPECT_EQ(updated.priority_factor(), 2);
  EXPECT_EQ(updated.create_time().seconds(), created.create_time().seconds());

  regatta::v1::CordonQueueRequest cordon;
  cordon.set_name("q1");
  regatta::v1::Queue cordoned;
  ASSERT_TRUE(queues_->CordonQueue(Alice().get(), cordon, &cordoned).ok());
  EXPECT_TRUE(cordoned.cordoned());
  regatta::v1::SubmitJobsResponse resp;
  grpc::Status s = submit_->SubmitJobs(Alice().get(), Jobs("q1", "s", 1), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("cordoned"));
  ASSERT_TRUE(queues_->UncordonQueue(Alice().get(), cordon, &cordoned).ok());
  EXPECT_FALSE(cordoned.cordoned());
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("q1", "s", 1), &resp).ok());

  ASSERT_TRUE(CreateQueue("q2").ok());
  regatta::v1::ListQueuesRequest list;
  list.set_page_size(1);
  regatta::v1::ListQueuesResponse page;
  ASSERT_TRUE(queues_->ListQueues(Bob().get(), list, &page).ok());
  ASSERT_EQ(page.queues_size(), 1);
  EXPECT_EQ(page.queues(0).name(), "q1");
  list.set_page_token(page.next_page_token());
  ASSERT_TRUE(queues_->ListQueues(Bob().get(), list, &page).ok());
  EXPECT_EQ(page.queues(0).name(), "q2");
  EXPECT_TRUE(page.next_page_token().empty());

  // A queue with active jobs cannot be deleted; an empty one can, by an admin only.
  regatta::v1::DeleteQueueRequest del;
  regatta::v1::DeleteQueueResponse del_resp;
  del.set_name("q1");
  EXPECT_EQ(queues_->DeleteQueue(Alice().get(), del, &del_resp).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  del.set_name("q2");
  s = queues_->DeleteQueue(Bob().get(), del, &del_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("delete_queue"));
  ASSERT_TRUE(queues_->DeleteQueue(Alice().get(), del, &del_resp).ok());
  regatta::v1::GetQueueRequest get;
  get.set_name("q2");
  regatta::v1::Queue got;
  EXPECT_EQ(queues_->GetQueue(Alice().get(), get, &got).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(ApiTest, TenThousandJobsInBatchesAreAllQueuedAndCancelledAsAQueue) {
  ASSERT_TRUE(CreateQueue("big").ok());
  std::set<std::string> ids;
  for (int batch = 0; batch < 10; ++batch) {
    regatta::v1::SubmitJobsResponse resp;
    grpc::Status s = submit_->SubmitJobs(Alice().get(), Jobs("big", "set", 1000), &resp);
    ASSERT_TRUE(s.ok()) << s.error_message();
    ASSERT_EQ(resp.items_size(), 1000);
    for (const auto& item : resp.items()) ids.insert(item.job_id());
  }
  ASSERT_EQ(ids.size(), 10000u);
  SyncViews();
  regatta::v1::ListJobsRequest req;
  req.set_queue("big");
  req.add_states(regatta::v1::JOB_STATE_QUEUED);
  std::vector<regatta::v1::JobSummary> listed = ListAll(*jobs_, req);
  ASSERT_EQ(listed.size(), 10000u);
  std::set<std::string> listed_ids;
  for (const auto& j : listed) {
    EXPECT_EQ(j.state(), regatta::v1::JOB_STATE_QUEUED);
    listed_ids.insert(j.job_id());
  }
  EXPECT_EQ(listed_ids, ids);
  // Pages come in submit order.
  EXPECT_TRUE(std::is_sorted(listed.begin(), listed.end(),
                             [](const auto& a, const auto& b) { return a.job_id() < b.job_id(); }));

  // Cancelling the whole queue (10 001 jobs of one job set) publishes one request per job, in
  // sequences of at most 10 000 events, acknowledged once all are in the log.
  regatta::v1::SubmitJobsResponse one_more;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("big", "set", 1), &one_more).ok());
  const int64_t before = platform_->log()->LastOffset();
  regatta::v1::CancelQueueRequest cancel;
  cancel.set_queue("big");
  regatta::v1::CancelQueueResponse cancelled;
  grpc::Status s = submit_->CancelQueue(Alice().get(), cancel, &cancelled);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(cancelled.cancel_requested_count(), 10001);
  absl::StatusOr<std::vector<eventlog::LogRecord>> records =
      platform_->log()->ReadJobSet("big", "set", before, 10);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 2u);
  EXPECT_EQ((*records)[0].sequence.events_size() + (*records)[1].sequence.events_size(), 10001);
  EXPECT_EQ((*records)[0].sequence.events_size(), 10000);
  SyncViews();
  req.clear_states();
  int cancel_requested = 0;
  for (const auto& j : ListAll(*jobs_, req)) cancel_requested += j.cancel_requested() ? 1 : 0;
  EXPECT_EQ(cancel_requested, 10001);
}

// Small submits reach the scheduler in process as well; big ones only through the views (the
// copies would cost a 1000-job submit 30 % of its throughput).
TEST_F(ApiTest, OnlySubmitsOfUpTo64JobsAreHandedToTheSchedulerInProcess) {
  ASSERT_TRUE(CreateQueue("q").ok());
  absl::Mutex mu;
  std::vector<size_t> handed;
  platform_->submit_service()->set_on_submitted(
      [&](int64_t offset, std::vector<std::shared_ptr<const regatta::v1::Job>> jobs) {
        absl::MutexLock lock(&mu);
        EXPECT_GT(offset, 0);
        handed.push_back(jobs.size());
      });
  regatta::v1::SubmitJobsResponse submitted;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("q", "small", 64), &submitted).ok());
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("q", "big", 65), &submitted).ok());
  absl::MutexLock lock(&mu);
  EXPECT_THAT(handed, ::testing::ElementsAre(64u));
}

TEST_F(ApiTest, AnInternalSubmitAppendsItsCompanionRecordsWithTheJobs) {
  ASSERT_TRUE(CreateQueue("q").ok());
  auth::Principal alice;
  alice.name = "alice";
  auto note = [](const std::string& marker) {
    regatta::v1::EventSequence sequence;
    sequence.set_queue("q");
    sequence.set_job_set("progress");
    sequence.set_user_id("pipeline-engine");
    sequence.add_events()->mutable_partition_marker()->set_group_id(marker);
    std::vector<regatta::v1::EventSequence> also;
    also.push_back(std::move(sequence));
    return also;
  };
  auto read_after = [&](int64_t offset) {
    absl::StatusOr<std::vector<eventlog::LogRecord>> records = platform_->log()->Read(offset, 100);
    EXPECT_TRUE(records.ok()) << records.status();
    return records.ok() ? *records : std::vector<eventlog::LogRecord>();
  };
  // New jobs: the jobs' record, then the companion, in one append.
  int64_t before = platform_->log()->LastOffset();
  absl::StatusOr<regatta::v1::SubmitJobsResponse> submitted = platform_->submit_service()->Submit(
      alice, Jobs("q", "s", 2, "c"), eventlog::AppendWait::kVisible, note("first"));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  std::vector<eventlog::LogRecord> records = read_after(before);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].sequence.events_size(), 2);
  EXPECT_TRUE(records[0].sequence.events(0).has_submit_job());
  EXPECT_EQ(records[1].offset, records[0].offset + 1);
  EXPECT_EQ(records[1].sequence.events(0).partition_marker().group_id(), "first");
  // Every item a duplicate (once the ingest recorded the client ids of a visible submit): no
  // jobs, but the companion is still appended.
  SyncViews();
  before = platform_->log()->LastOffset();
  submitted = platform_->submit_service()->Submit(alice, Jobs("q", "s", 2, "c"),
                                                  eventlog::AppendWait::kVisible, note("second"));
  ASSERT_TRUE(submitted.ok()) << submitted.status();
  EXPECT_TRUE(submitted->items(0).duplicate());
  records = read_after(before);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].sequence.events(0).partition_marker().group_id(), "second");
  // A rejected submit appends neither.
  before = platform_->log()->LastOffset();
  submitted = platform_->submit_service()->Submit(alice, Jobs("nope", "s", 1),
                                                  eventlog::AppendWait::kVisible, note("third"));
  EXPECT_FALSE(submitted.ok());
  EXPECT_EQ(platform_->log()->LastOffset(), before);
}

TEST_F(ApiTest, ClientIdSubmittedTwiceGivesOneJob) {
  ASSERT_TRUE(CreateQueue("dedup").ok());
  regatta::v1::SubmitJobsResponse first, second;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("dedup", "s", 3, "c"), &first).ok());
  const int64_t offset_after_first = platform_->log()->LastOffset();
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("dedup", "s", 3, "c"), &second).ok());
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(first.items(i).duplicate());
    EXPECT_TRUE(second.items(i).duplicate());
    EXPECT_EQ(first.items(i).job_id(), second.items(i).job_id());
  }
  // A fully duplicate request logs nothing.
  EXPECT_EQ(platform_->log()->LastOffset(), offset_after_first);

  // Within one request, the second use of a client id is the first's job.
  auto req = Jobs("dedup", "s", 2);
  req.mutable_items(0)->set_client_id("same");
  req.mutable_items(1)->set_client_id("same");
  regatta::v1::SubmitJobsResponse within;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), req, &within).ok());
  EXPECT_EQ(within.items(0).job_id(), within.items(1).job_id());
  EXPECT_TRUE(within.items(1).duplicate());

  // Dedup survives a restart (the ids are stored durably).
  Restart();
  regatta::v1::SubmitJobsResponse third;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("dedup", "s", 3, "c"), &third).ok());
  EXPECT_EQ(third.items(0).job_id(), first.items(0).job_id());
  SyncViews();
  regatta::v1::ListJobsRequest list;
  list.set_queue("dedup");
  EXPECT_EQ(ListAll(*jobs_, list).size(), 4u);
}

TEST_F(ApiTest, ValidationErrorsNameTheField) {
  ASSERT_TRUE(CreateQueue("v").ok());
  struct Case {
    std::function<void(regatta::v1::SubmitJobsRequest&)> mutate;
    std::string field;
  };
  std::vector<Case> cases = {
      {[](auto& r) { r.set_queue("nope"); }, "queue"},
      {[](auto& r) { r.mutable_items(1)->mutable_task()->clear_command(); },
       "items[1].task.command"},
      {[](auto& r) {
         (*r.mutable_items(0)->mutable_task()->mutable_resources()->mutable_requests())["cpu"] =
             "1.x";
       },
       "items[0].task.resources.requests[cpu]"},
      {[](auto& r) {
         (*r.mutable_items(0)->mutable_task()->mutable_resources()->mutable_limits())["cpu"] = "2";
       },
       "items[0].task.resources"},
      {[](auto& r) { r.mutable_items(1)->set_priority_class("platinum"); },
       "items[1].priority_class"},
      {[](auto& r) {
         r.mutable_items(0)->mutable_gang()->set_id("g");
         r.mutable_items(0)->mutable_gang()->set_cardinality(2);
       },
       "items[0].gang.cardinality"},
      {[](auto& r) {
         (*r.mutable_items(0)->mutable_annotations())["big"] = std::string(300 * 1024, 'x');
       },
       "items[0]"},
  };
  const int64_t before = platform_->log()->LastOffset();
  for (const Case& c : cases) {
    auto req = Jobs("v", "s", 2);
    c.mutate(req);
    regatta::v1::SubmitJobsResponse resp;
    grpc::Status s = submit_->SubmitJobs(Alice().get(), req, &resp);
    EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_THAT(s.error_message(), StartsWith(c.field + ": "));
  }
  EXPECT_EQ(platform_->log()->LastOffset(), before) << "a rejected submit logged something";
}

TEST_F(ApiTest, SubmitWithoutTheQueueVerbIsDeniedAndLogsNothing) {
  ASSERT_TRUE(CreateQueue("private").ok());
  const int64_t before = platform_->log()->LastOffset();
  regatta::v1::SubmitJobsResponse resp;
  grpc::Status s = submit_->SubmitJobs(Bob().get(), Jobs("private", "s", 5), &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("submit"));
  EXPECT_THAT(s.error_message(), HasSubstr("\"private\""));
  EXPECT_EQ(platform_->log()->LastOffset(), before);

  // A queue granting group team-ci the submit verb lets the token's principal in, not bob.
  regatta::v1::CreateQueueRequest req;
  req.mutable_queue()->set_name("shared");
  auto* perm = req.mutable_queue()->add_permissions();
  perm->add_subjects()->set_kind("group");
  perm->mutable_subjects(0)->set_name("team-ci");
  perm->add_verbs("submit");
  regatta::v1::Queue q;
  ASSERT_TRUE(queues_->CreateQueue(Alice().get(), req, &q).ok());
  EXPECT_TRUE(submit_->SubmitJobs(As("Bearer ci-token").get(), Jobs("shared", "s", 1), &resp).ok());
  EXPECT_EQ(submit_->SubmitJobs(Bob().get(), Jobs("shared", "s", 1), &resp).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Cancelling needs the cancel verb, which team-ci lacks.
  regatta::v1::CancelJobsRequest cancel;
  cancel.add_job_ids(resp.items(0).job_id());
  regatta::v1::CancelJobsResponse cancel_resp;
  s = submit_->CancelJobs(As("Bearer ci-token").get(), cancel, &cancel_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("cancel"));
}

TEST_F(ApiTest, CredentialsAreChecked) {
  regatta::v1::ListQueuesResponse resp;
  EXPECT_EQ(queues_->ListQueues(As("").get(), {}, &resp).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(queues_->ListQueues(As(Basic("alice", "wrong")).get(), {}, &resp).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(queues_->ListQueues(As("Bearer nope").get(), {}, &resp).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_TRUE(queues_->ListQueues(As("Bearer ci-token").get(), {}, &resp).ok());
}

TEST_F(ApiTest, CancelReprioritizePreemptAndDetails) {
  ASSERT_TRUE(CreateQueue("ops").ok());
  regatta::v1::SubmitJobsResponse resp;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("ops", "a", 3), &resp).ok());
  const std::string j0 = resp.items(0).job_id(), j1 = resp.items(1).job_id();

  // Cancel right after submit finds the job (the API waits for the views if needed).
  regatta::v1::CancelJobsRequest cancel;
  cancel.add_job_ids(j0);
  cancel.set_reason("not needed");
  regatta::v1::CancelJobsResponse cancel_resp;
  ASSERT_TRUE(submit_->CancelJobs(Alice().get(), cancel, &cancel_resp).ok());
  EXPECT_THAT(cancel_resp.cancel_requested_ids(), ::testing::ElementsAre(j0));

  regatta::v1::ReprioritizeJobsRequest rep;
  rep.add_job_ids(j1);
  rep.set_new_priority(7);
  regatta::v1::ReprioritizeJobsResponse rep_resp;
  ASSERT_TRUE(submit_->ReprioritizeJobs(Alice().get(), rep, &rep_resp).ok());

  regatta::v1::PreemptJobsRequest pre;
  pre.add_job_ids(j1);
  regatta::v1::PreemptJobsResponse pre_resp;
  ASSERT_TRUE(submit_->PreemptJobs(Alice().get(), pre, &pre_resp).ok());

  regatta::v1::CancelJobsRequest missing;
  missing.add_job_ids("01NOTAJOB0000000000000000");
  grpc::Status s = submit_->CancelJobs(Alice().get(), missing, &cancel_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("01NOTAJOB"));
  regatta::v1::CancelJobsRequest wrong_queue;
  wrong_queue.set_queue("other");
  wrong_queue.add_job_ids(j1);
  EXPECT_EQ(submit_->CancelJobs(Alice().get(), wrong_queue, &cancel_resp).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  SyncViews();
  regatta::v1::GetJobDetailsRequest details_req;
  details_req.add_job_ids(j0);
  details_req.add_job_ids(j1);
  details_req.set_expand_spec(true);
  regatta::v1::GetJobDetailsResponse details;
  // Reading jobs needs the queue's watch verb (or watch_all_events), which bob lacks.
  EXPECT_EQ(jobs_->GetJobDetails(Bob().get(), details_req, &details).error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  ASSERT_TRUE(jobs_->GetJobDetails(Alice().get(), details_req, &details).ok());
  ASSERT_EQ(details.jobs_size(), 2);
  const auto& d0 = details.jobs().at(j0);
  EXPECT_TRUE(d0.summary().cancel_requested());
  EXPECT_EQ(d0.cancel_reason(), "not needed");
  EXPECT_EQ(d0.cancel_user(), "alice");
  EXPECT_EQ(d0.job().task().command(0), "/bin/true");
  const auto& d1 = details.jobs().at(j1);
  EXPECT_EQ(d1.summary().priority(), 7u);
  EXPECT_TRUE(d1.summary().preempt_requested());
  EXPECT_EQ(d1.summary().owner(), "alice");

  regatta::v1::GetJobStatusRequest status_req;
  status_req.add_job_ids(j1);
  status_req.add_job_ids("unknown");
  regatta::v1::GetJobStatusResponse status;
  ASSERT_TRUE(jobs_->GetJobStatus(Alice().get(), status_req, &status).ok());
  EXPECT_EQ(status.states().at(j1), regatta::v1::JOB_STATE_QUEUED);
  EXPECT_EQ(status.states().at("unknown"), regatta::v1::JOB_STATE_UNSPECIFIED);

  // Job-set cancel with a state filter marks only jobs in those states.
  regatta::v1::CancelJobSetRequest set_cancel;
  set_cancel.set_queue("ops");
  set_cancel.set_job_set("a");
  set_cancel.add_states(regatta::v1::JOB_STATE_RUNNING);
  regatta::v1::CancelJobSetResponse set_resp;
  ASSERT_TRUE(submit_->CancelJobSet(Alice().get(), set_cancel, &set_resp).ok());
  SyncViews();
  details_req.clear_job_ids();
  details_req.add_job_ids(resp.items(2).job_id());
  ASSERT_TRUE(jobs_->GetJobDetails(Alice().get(), details_req, &details).ok());
  EXPECT_FALSE(details.jobs().at(resp.items(2).job_id()).summary().cancel_requested());
  set_cancel.clear_states();
  set_cancel.add_states(regatta::v1::JOB_STATE_QUEUED);
  ASSERT_TRUE(submit_->CancelJobSet(Alice().get(), set_cancel, &set_resp).ok());
  SyncViews();
  ASSERT_TRUE(jobs_->GetJobDetails(Alice().get(), details_req, &details).ok());
  EXPECT_TRUE(details.jobs().at(resp.items(2).job_id()).summary().cancel_requested());
  set_cancel.add_states(regatta::v1::JOB_STATE_SUCCEEDED);
  s = submit_->CancelJobSet(Alice().get(), set_cancel, &set_resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), StartsWith("states[1]: "));
}

TEST_F(ApiTest, ListJobsFilters) {
  ASSERT_TRUE(CreateQueue("f1").ok());
  ASSERT_TRUE(CreateQueue("f2").ok());
  regatta::v1::SubmitJobsResponse resp;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("f1", "x", 3), &resp).ok());
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("f1", "y", 2), &resp).ok());
  auto labelled = Jobs("f2", "x", 4);
  (*labelled.mutable_items(0)->mutable_labels())["team"] = "red";
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), labelled, &resp).ok());
  SyncViews();
  regatta::v1::ListJobsRequest req;
  req.set_queue("f1");
  EXPECT_EQ(ListAll(*jobs_, req).size(), 5u);
  req.set_job_set("y");
  EXPECT_EQ(ListAll(*jobs_, req).size(), 2u);
  req.Clear();
  (*req.mutable_labels())["team"] = "red";
  EXPECT_EQ(ListAll(*jobs_, req).size(), 1u);
  req.Clear();
  req.set_owner("bob");
  EXPECT_EQ(ListAll(*jobs_, req).size(), 0u);
  req.Clear();
  req.set_order_by("-submit_time");
  req.set_page_size(2);
  regatta::v1::ListJobsResponse page;
  ASSERT_TRUE(jobs_->ListJobs(Alice().get(), req, &page).ok());
  ASSERT_EQ(page.jobs_size(), 2);
  EXPECT_GT(page.jobs(0).job_id(), page.jobs(1).job_id());
  req.set_page_token(page.next_page_token());
  regatta::v1::ListJobsResponse next;
  ASSERT_TRUE(jobs_->ListJobs(Alice().get(), req, &next).ok());
  EXPECT_LT(next.jobs(0).job_id(), page.jobs(1).job_id());
  req.set_order_by("priority");
  EXPECT_EQ(jobs_->ListJobs(Alice().get(), req, &page).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ApiTest, EventStreamFromOffsetAndWatch) {
  ASSERT_TRUE(CreateQueue("ev").ok());
  regatta::v1::SubmitJobsResponse resp;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("ev", "s", 2), &resp).ok());
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("ev", "other", 1), &resp).ok());

  regatta::v1::JobSetEventsRequest req;
  req.set_queue("ev");
  req.set_job_set("s");
  std::vector<regatta::v1::JobSetEvent> seen;
  {
    auto ctx = Alice();
    auto reader = events_->GetJobSetEvents(ctx.get(), req);
    regatta::v1::JobSetEvent ev;
    while (reader->Read(&ev)) seen.push_back(ev);
    ASSERT_TRUE(reader->Finish().ok());
  }
  ASSERT_EQ(seen.size(), 4u);  // SUBMITTED + QUEUED for each of the two jobs
  EXPECT_EQ(seen[0].type(), regatta::v1::JOB_EVENT_TYPE_SUBMITTED);
  EXPECT_EQ(seen[1].type(), regatta::v1::JOB_EVENT_TYPE_QUEUED);

  // Resume after the second event; then watch for a cancel published while streaming.
  req.set_from_id(seen[1].id());
  req.set_watch(true);
  auto ctx = Alice();
  auto reader = events_->GetJobSetEvents(ctx.get(), req);
  std::vector<regatta::v1::JobSetEvent> resumed;
  regatta::v1::JobSetEvent ev;
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(reader->Read(&ev));
    resumed.push_back(ev);
  }
  EXPECT_EQ(resumed[0].id(), seen[2].id());
  regatta::v1::CancelJobsRequest cancel;
  cancel.add_job_ids(seen[0].job_id());
  regatta::v1::CancelJobsResponse cancel_resp;
  ASSERT_TRUE(submit_->CancelJobs(Alice().get(), cancel, &cancel_resp).ok());
  ASSERT_TRUE(reader->Read(&ev));
  EXPECT_EQ(ev.type(), regatta::v1::JOB_EVENT_TYPE_CANCELLING);
  EXPECT_EQ(ev.job_id(), seen[0].job_id());
  ctx->TryCancel();
  reader->Finish();

  // Bob has no watch verb on the queue.
  req.set_watch(false);
  auto bob = Bob();
  auto denied = events_->GetJobSetEvents(bob.get(), req);
  while (denied->Read(&ev)) {
  }
  EXPECT_EQ(denied->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  req.set_from_id("garbage");
  auto alice = Alice();
  auto bad = events_->GetJobSetEvents(alice.get(), req);
  while (bad->Read(&ev)) {
  }
  EXPECT_EQ(bad->Finish().error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ApiTest, MalformedAndOversizedRequestsNeverCrashTheServer) {
  ASSERT_TRUE(CreateQueue("m").ok());
  grpc::GenericStub generic(channel_);
  for (const std::string& junk : {std::string("\xff\xff\xff\xff garbage"), std::string(1, '\x0a'),
                                  std::string("\x12\x80\x80\x80\x80\x10", 6)}) {
    grpc::ClientContext ctx;
    ctx.AddMetadata("authorization", Basic("alice", "alice-pw"));
    grpc::Slice slice(junk);
    grpc::ByteBuffer request(&slice, 1), response;
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    grpc::Status status;
    generic.UnaryCall(&ctx, "/regatta.v1.SubmitService/SubmitJobs", grpc::StubOptions(), &request,
                      &response, [&](grpc::Status s) {
                        std::lock_guard<std::mutex> lock(mu);
                        status = s;
                        done = true;
                        cv.notify_one();
                      });
    std::unique_lock<std::mutex> lock(mu);
    cv.wait(lock, [&] { return done; });
    EXPECT_FALSE(status.ok());
  }
  // Larger than api.maxRequestBytes (4 MiB here): refused by gRPC itself.
  auto huge = Jobs("m", "s", 1);
  (*huge.mutable_items(0)->mutable_annotations())["x"] = std::string(5 << 20, 'x');
  regatta::v1::SubmitJobsResponse resp;
  EXPECT_EQ(submit_->SubmitJobs(Alice().get(), huge, &resp).error_code(),
            grpc::StatusCode::RESOURCE_EXHAUSTED);
  // Still serving.
  EXPECT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("m", "s", 1), &resp).ok());
}

TEST_F(ApiTest, RestartKeepsEveryAcknowledgedJob) {
  ASSERT_TRUE(CreateQueue("durable").ok());
  std::set<std::string> acked;
  for (int i = 0; i < 5; ++i) {
    regatta::v1::SubmitJobsResponse resp;
    ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("durable", "s", 200), &resp).ok());
    for (const auto& item : resp.items()) acked.insert(item.job_id());
  }
  Restart();
  SyncViews();
  regatta::v1::ListJobsRequest req;
  req.set_queue("durable");
  std::set<std::string> listed;
  for (const auto& j : ListAll(*jobs_, req)) listed.insert(j.job_id());
  EXPECT_EQ(listed, acked);
}

// A machine crash can lose the log's unsynced tail after the ingester applied it (see
// EventLog::AppendVisible): the next start finds the views ahead of the log and rebuilds them.
TEST_F(ApiTest, ViewsAheadOfTheLogAreRebuiltFromIt) {
  ASSERT_TRUE(CreateQueue("ahead").ok());
  std::set<std::string> acked;
  regatta::v1::SubmitJobsResponse resp;
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("ahead", "s", 3), &resp).ok());
  for (const auto& item : resp.items()) acked.insert(item.job_id());
  SyncViews();
  platform_.reset();
  // As after the crash: the views hold an offset the log never reached, and lack a job the
  // log has (an ingester that trusted them would skip the log's next records).
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open((dir_ / "data" / "views.db").string().c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  ASSERT_EQ(sqlite3_exec(db,
                         "UPDATE consumer_offsets SET log_offset = log_offset + 1000; "
                         "DELETE FROM jobs WHERE seq = (SELECT MIN(seq) FROM jobs)",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  Start();
  ASSERT_TRUE(submit_->SubmitJobs(Alice().get(), Jobs("ahead", "s", 1), &resp).ok());
  acked.insert(resp.items(0).job_id());
  SyncViews();
  regatta::v1::ListJobsRequest req;
  req.set_queue("ahead");
  std::set<std::string> listed;
  for (const auto& j : ListAll(*jobs_, req)) listed.insert(j.job_id());
  EXPECT_EQ(listed, acked);
}

}  // namespace
}  // namespace regatta::testing
