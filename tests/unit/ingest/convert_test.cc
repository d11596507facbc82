// ConvertSequence: the mapping from every log event to store mutations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <variant>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/message_differencer.h"
#include "src/ingest/ingester.h"
#include "tests/unit/ingest/test_events.h"

namespace regatta::ingest {
namespace {

using namespace ::regatta::ingest::testing;  // NOLINT: test builders
using ::testing::ElementsAre;

constexpr int64_t kOffset = 17;

std::vector<store::OffsetMutation> Convert(std::vector<regatta::v1::Event> events,
                                           std::string queue = "q", std::string job_set = "s",
                                           std::string user = "alice") {
  eventlog::LogRecord record;
  record.offset = kOffset;
  record.sequence =
      Sequence(std::move(queue), std::move(job_set), std::move(events), std::move(user));
  return ConvertSequence(record);
}

// The only mutation of a conversion, as type T.
template <typename T>
T Only(const std::vector<store::OffsetMutation>& mutations) {
  EXPECT_EQ(mutations.size(), 1u);
  if (mutations.size() != 1) return T{};
  EXPECT_EQ(mutations[0].offset, kOffset);
  const T* m = std::get_if<T>(&mutations[0].mutation);
  EXPECT_NE(m, nullptr) << "mutation index " << mutations[0].mutation.index();
  return m ? *m : T{};
}

template <typename T>
T Nth(const std::vector<store::OffsetMutation>& mutations, size_t n) {
  EXPECT_GT(mutations.size(), n);
  if (mutations.size() <= n) return T{};
  const T* m = std::get_if<T>(&mutations[n].mutation);
  EXPECT_NE(m, nullptr) << "mutation " << n << " has index " << mutations[n].mutation.index();
  return m ? *m : T{};
}

absl::Time TimeAt(int64_t ms) { return absl::FromUnixMillis(1'700'000'000'000 + ms); }

TEST(ConvertSequenceTest, SubmitJob) {
  regatta::v1::Job job = MakeJob(1, "q", "s", 4);
  store::JobInsert m = Only<store::JobInsert>(Convert({Submit(5, job)}));
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(m.job, job))
      << m.job.ShortDebugString();
}

TEST(ConvertSequenceTest, SubmitJobFillsRoutingFromTheSequence) {
  regatta::v1::Job job;
  job.set_id(JobId(1));
  store::JobInsert m = Only<store::JobInsert>(Convert({Submit(5, job)}, "q", "s", "bob"));
  EXPECT_EQ(m.job.queue(), "q");
  EXPECT_EQ(m.job.job_set(), "s");
  EXPECT_EQ(m.job.owner(), "bob");
  EXPECT_EQ(m.job.submit_time().seconds(), 1'700'000'000);
  EXPECT_EQ(m.job.submit_time().nanos(), 5'000'000);
}

TEST(ConvertSequenceTest, CancelJobCarriesTheUser) {
  auto m = Only<store::JobCancelRequested>(Convert({CancelJob(1, 3, "oops")}, "q", "s", "bob"));
  EXPECT_EQ(m.job_id, JobId(3));
  EXPECT_EQ(m.reason, "oops");
  EXPECT_EQ(m.user, "bob");
}

TEST(ConvertSequenceTest, CancelJobSetUsesTheSequencesJobSet) {
  auto m = Only<store::JobSetCancelRequested>(Convert(
      {CancelJobSet(1, {regatta::v1::JOB_STATE_QUEUED, regatta::v1::JOB_STATE_RUNNING}, "stop")},
      "q", "s", "bob"));
  EXPECT_EQ(m.queue, "q");
  EXPECT_EQ(m.job_set, "s");
  EXPECT_THAT(m.states, ElementsAre(regatta::v1::JOB_STATE_QUEUED, regatta::v1::JOB_STATE_RUNNING));
  EXPECT_EQ(m.reason, "stop");
  EXPECT_EQ(m.user, "bob");
}

TEST(ConvertSequenceTest, ReprioritizeRequestAppliesAtOnce) {
  auto m = Only<store::JobSetPriority>(Convert({ReprioritizeJob(1, 3, 9)}));
  EXPECT_EQ(m.job_id, JobId(3));
  EXPECT_EQ(m.priority, 9u);
}

TEST(ConvertSequenceTest, PreemptJob) {
  auto m = Only<store::JobPreemptRequested>(Convert({PreemptJob(1, 3, "room")}));
  EXPECT_EQ(m.job_id, JobId(3));
  EXPECT_EQ(m.reason, "room");
}

TEST(ConvertSequenceTest, QueueCreatedAndUpdatedStampTimes) {
  for (bool update : {false, true}) {
    regatta::v1::Queue queue = MakeQueue("alpha", 2.0);
    auto m = Only<store::QueueUpsert>(
        Convert({update ? QueueUpdated(1500, queue) : QueueCreated(1500, queue)}, "alpha", ""));
    EXPECT_EQ(m.queue.name(), "alpha");
    EXPECT_EQ(m.queue.priority_factor(), 2.0);
    EXPECT_EQ(m.queue.create_time().seconds(), 1'700'000'001);
    EXPECT_EQ(m.queue.create_time().nanos(), 500'000'000);
    EXPECT_EQ(m.queue.update_time().seconds(), 1'700'000'001);
  }
}

TEST(ConvertSequenceTest, QueueDeletedAndCordoned) {
  EXPECT_EQ(Only<store::QueueDelete>(Convert({QueueDeleted(1, "alpha")}, "alpha", "")).name,
            "alpha");
  auto m = Only<store::QueueSetCordoned>(Convert({QueueCordoned(7, "alpha", true)}, "alpha", ""));
  EXPECT_EQ(m.name, "alpha");
  EXPECT_TRUE(m.cordoned);
  EXPECT_EQ(m.time, TimeAt(7));
  // The queue name falls back to the sequence's.
  EXPECT_EQ(Only<store::QueueDelete>(Convert({QueueDeleted(1, "")}, "beta", "")).name, "beta");
}

TEST(ConvertSequenceTest, JobRunLeasedInsertsTheRunAndLeasesTheJob) {
  auto mutations = Convert({Leased(9, 3, 4, "node-7")});
  ASSERT_EQ(mutations.size(), 2u);
  auto run = Nth<store::RunInsert>(mutations, 0).run;
  EXPECT_EQ(run.run_id(), RunId(4));
  EXPECT_EQ(run.job_id(), JobId(3));
  EXPECT_EQ(run.executor_id(), "exec");
  EXPECT_EQ(run.node_id(), "node-7");
  EXPECT_EQ(run.pool(), "default");
  EXPECT_EQ(run.state(), regatta::v1::RUN_STATE_LEASED);
  EXPECT_EQ(run.leased_time().nanos(), 9'000'000);
  auto state = Nth<store::JobSetState>(mutations, 1);
  EXPECT_EQ(state.job_id, JobId(3));
  EXPECT_EQ(state.state, regatta::v1::JOB_STATE_LEASED);
  EXPECT_EQ(state.run_id, RunId(4));
  EXPECT_EQ(state.time, TimeAt(9));
}

TEST(ConvertSequenceTest, PendingAndRunningMoveRunAndJob) {
  struct Case {
    regatta::v1::Event event;
    regatta::v1::RunState run_state;
    regatta::v1::JobState job_state;
  };
  for (const Case& c :
       {Case{Pending(3, 1, 2), regatta::v1::RUN_STATE_PENDING, regatta::v1::JOB_STATE_PENDING},
        Case{Running(3, 1, 2), regatta::v1::RUN_STATE_RUNNING, regatta::v1::JOB_STATE_RUNNING}}) {
    auto mutations = Convert({c.event});
    ASSERT_EQ(mutations.size(), 2u);
    auto run = Nth<store::RunSetState>(mutations, 0);
    EXPECT_EQ(run.run_id, RunId(2));
    EXPECT_EQ(run.state, c.run_state);
    EXPECT_EQ(run.time, TimeAt(3));
    auto job = Nth<store::JobSetState>(mutations, 1);
    EXPECT_EQ(job.job_id, JobId(1));
    EXPECT_EQ(job.state, c.job_state);
    EXPECT_EQ(job.run_id, RunId(2));  // only while it is the latest run
  }
}

TEST(ConvertSequenceTest, RunOutcomesMoveOnlyTheRun) {
  struct Case {
    regatta::v1::Event event;
    regatta::v1::RunState state;
    regatta::v1::ErrorReason error;  // UNSPECIFIED: no error
  };
  for (const Case& c :
       {Case{RunSucceeded(4, 1, 2), regatta::v1::RUN_STATE_SUCCEEDED,
             regatta::v1::ERROR_REASON_UNSPECIFIED},
        Case{RunFailed(4, 1, 2, 3, true), regatta::v1::RUN_STATE_FAILED,
             regatta::v1::ERROR_REASON_CONTAINER_ERROR},
        Case{RunCancelled(4, 1, 2), regatta::v1::RUN_STATE_CANCELLED,
             regatta::v1::ERROR_REASON_UNSPECIFIED},
        Case{RunPreempted(4, 1, 2), regatta::v1::RUN_STATE_PREEMPTED,
             regatta::v1::ERROR_REASON_UNSPECIFIED},
        Case{LeaseReturned(4, 1, 2, "no image"), regatta::v1::RUN_STATE_LEASE_RETURNED,
             regatta::v1::ERROR_REASON_LEASE_RETURNED},
        Case{LeaseExpired(4, 1, 2), regatta::v1::RUN_STATE_LEASE_EXPIRED,
             regatta::v1::ERROR_REASON_LEASE_EXPIRED}}) {
    auto m = Only<store::RunSetState>(Convert({c.event}));
    EXPECT_EQ(m.run_id, RunId(2));
    EXPECT_EQ(m.state, c.state);
    EXPECT_EQ(m.time, TimeAt(4));
    if (c.error == regatta::v1::ERROR_REASON_UNSPECIFIED) {
      EXPECT_FALSE(m.error.has_value()) << m.state;
    } else {
      ASSERT_TRUE(m.error.has_value()) << m.state;
      EXPECT_EQ(m.error->reason(), c.error);
    }
  }
  auto failed = Only<store::RunSetState>(Convert({RunFailed(4, 1, 2, 3, true)}));
  EXPECT_EQ(failed.error->exit_code(), 3);
  auto returned = Only<store::RunSetState>(Convert({LeaseReturned(4, 1, 2, "no image")}));
  EXPECT_EQ(returned.error->message(), "no image");
}

TEST(ConvertSequenceTest, JobOutcomesSetTheJobState) {
  auto requeued = Only<store::JobSetState>(Convert({Requeued(2, 1)}));
  EXPECT_EQ(requeued.state, regatta::v1::JOB_STATE_QUEUED);
  EXPECT_EQ(requeued.run_id, "");

  auto succeeded = Only<store::JobSetState>(Convert({Succeeded(2, 1)}));
  EXPECT_EQ(succeeded.state, regatta::v1::JOB_STATE_SUCCEEDED);
  EXPECT_EQ(succeeded.time, TimeAt(2));

  auto failed = Only<store::JobSetState>(Convert({Failed(2, 1, 5)}));
  EXPECT_EQ(failed.state, regatta::v1::JOB_STATE_FAILED);
  ASSERT_TRUE(failed.error.has_value());
  EXPECT_EQ(failed.error->exit_code(), 5);

  auto cancelled = Only<store::JobSetState>(Convert({Cancelled(2, 1, "by user")}));
  EXPECT_EQ(cancelled.state, regatta::v1::JOB_STATE_CANCELLED);
  EXPECT_EQ(cancelled.reason, "by user");
  EXPECT_FALSE(cancelled.error.has_value());

  auto preempted = Only<store::JobSetState>(Convert({Preempted(2, 1, 7, 8)}));
  EXPECT_EQ(preempted.state, regatta::v1::JOB_STATE_PREEMPTED);
  EXPECT_EQ(preempted.reason, "fair share");
  ASSERT_TRUE(preempted.error.has_value());
  EXPECT_EQ(preempted.error->reason(), regatta::v1::ERROR_REASON_PREEMPTED);
  EXPECT_THAT(preempted.error->message(), ::testing::HasSubstr(JobId(8)));

  auto rejected = Only<store::JobSetState>(Convert({Rejected(2, 1)}));
  EXPECT_EQ(rejected.state, regatta::v1::JOB_STATE_REJECTED);
  ASSERT_TRUE(rejected.error.has_value());
  EXPECT_EQ(rejected.error->reason(), regatta::v1::ERROR_REASON_UNSCHEDULABLE);
  // Pools in name order, so the same event always gives the same error.
  EXPECT_EQ(rejected.error->message(),
            "too big; pool cpu: needs 1000 cpus; pool gpu: no gpu nodes");
}

TEST(ConvertSequenceTest, JobReprioritized) {
  auto m = Only<store::JobSetPriority>(Convert({Reprioritized(1, 3, 2)}));
  EXPECT_EQ(m.job_id, JobId(3));
  EXPECT_EQ(m.priority, 2u);
}

TEST(ConvertSequenceTest, PartitionMarkerAndEmptyEventsGiveNothing) {
  EXPECT_TRUE(Convert({Marker(1, "leader-2")}).empty());
  EXPECT_TRUE(Convert({At(1)}).empty());
}

TEST(ConvertSequenceTest, EventsWithoutIdsAreDropped) {
  regatta::v1::Event no_id = At(1);
  no_id.mutable_job_succeeded();
  regatta::v1::Event no_run = At(1);
  no_run.mutable_job_run_running()->set_job_id(JobId(1));
  regatta::v1::Event submit_no_id = At(1);
  submit_no_id.mutable_submit_job();
  EXPECT_TRUE(Convert({no_id, no_run, submit_no_id}).empty());
}

TEST(ConvertSequenceTest, ManyEventsKeepOrderAndOffset) {
  auto mutations = Convert({Submit(1, MakeJob(1, "q", "s")), Leased(2, 1, 1), Running(3, 1, 1),
                            RunSucceeded(4, 1, 1), Succeeded(4, 1)});
  ASSERT_EQ(mutations.size(), 7u);
  for (const auto& m : mutations) EXPECT_EQ(m.offset, kOffset);
  EXPECT_TRUE(std::holds_alternative<store::JobInsert>(mutations[0].mutation));
  EXPECT_TRUE(std::holds_alternative<store::RunInsert>(mutations[1].mutation));
  EXPECT_TRUE(std::holds_alternative<store::JobSetState>(mutations[6].mutation));
}

TEST(ConvertSequenceTest, MovingOverloadGivesTheSameMutations) {
  eventlog::LogRecord record;
  record.offset = 3;
  record.sequence = Sequence("q", "s", {Submit(1, MakeJob(1, "q", "s")), Leased(2, 1, 1)});
  std::vector<store::OffsetMutation> copied = ConvertSequence(record);
  std::vector<store::OffsetMutation> moved = ConvertSequence(eventlog::LogRecord(record));
  ASSERT_EQ(copied.size(), moved.size());
  EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(
      std::get<store::JobInsert>(copied[0].mutation).job,
      std::get<store::JobInsert>(moved[0].mutation).job));
  EXPECT_EQ(std::get<store::JobInsert>(moved[0].mutation).job.id(), JobId(1));
}

TEST(ConvertSequenceTest, IsDeterministic) {
  eventlog::LogRecord record;
  record.offset = 3;
  record.sequence = Sequence("q", "s", {Submit(1, MakeJob(1, "q", "s")), Rejected(2, 1)});
  auto a = ConvertSequence(record);
  auto b = ConvertSequence(record);
  ASSERT_EQ(a.size(), b.size());
  EXPECT_EQ(std::get<store::JobSetState>(a[1].mutation).error->message(),
            std::get<store::JobSetState>(b[1].mutation).error->message());
}

// Converts every case of the event oneof declared in `proto_file` (found by reflection, so that
// a new event is covered too) and expects each to be one `Change` carrying the event; returns
// how many cases there were.
template <typename Change>
int ExpectEveryEventIsOneChange(absl::string_view proto_file) {
  const google::protobuf::OneofDescriptor* oneof =
      regatta::v1::Event::descriptor()->FindOneofByName("event");
  EXPECT_NE(oneof, nullptr);
  if (oneof == nullptr) return 0;
  int cases = 0;
  for (int i = 0; i < oneof->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = oneof->field(i);
    if (field->message_type()->file()->name() != proto_file) continue;
    ++cases;
    regatta::v1::Event event;
    event.mutable_created()->set_seconds(1'700'000'123);
    google::protobuf::Message* payload = event.GetReflection()->MutableMessage(&event, field);
    // A non-empty payload: its first string field, or just presence.
    for (int f = 0; f < payload->GetDescriptor()->field_count(); ++f) {
      const google::protobuf::FieldDescriptor* first = payload->GetDescriptor()->field(f);
      if (first->type() == google::protobuf::FieldDescriptor::TYPE_STRING &&
          !first->is_repeated()) {
        payload->GetReflection()->SetString(payload, first, "id-1");
        break;
      }
    }
    for (bool moved : {false, true}) {
      eventlog::LogRecord record;
      record.offset = kOffset;
      record.sequence = Sequence("", "", {event});
      std::vector<store::OffsetMutation> mutations =
          moved ? ConvertSequence(std::move(record)) : ConvertSequence(record);
      Change change = Only<Change>(mutations);
      EXPECT_TRUE(google::protobuf::util::MessageDifferencer::Equals(change.event, event))
          << field->name() << ": " << change.event.ShortDebugString();
    }
  }
  return cases;
}

TEST(ConvertSequenceTest, EveryPipelineEventIsOnePipelineChange) {
  EXPECT_EQ(ExpectEveryEventIsOneChange<store::PipelineChange>("regatta/v1/pipelines.proto"), 15);
}

TEST(ConvertSequenceTest, EveryDeviceEventIsOneDeviceChange) {
  EXPECT_EQ(ExpectEveryEventIsOneChange<store::DeviceChange>("regatta/v1/devices.proto"), 11);
}

}  // namespace
}  // namespace regatta::ingest
