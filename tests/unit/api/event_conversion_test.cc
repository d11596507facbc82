#include "src/api/event_conversion.h"

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace regatta::api {
namespace {

using regatta::v1::JobSetEvent;
using T = regatta::v1::JobEventType;

eventlog::LogRecord Record(int64_t offset, const std::string& text) {
  eventlog::LogRecord r;
  r.offset = offset;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &r.sequence)) << text;
  return r;
}

TEST(EventIdTest, RoundTripAndOrder) {
  EventPosition p{12, 3, 1};
  EXPECT_EQ(FormatEventId(p), "12-3-1");
  EXPECT_EQ(*ParseEventId("12-3-1"), p);
  EXPECT_FALSE(ParseEventId("12-3").has_value());
  EXPECT_FALSE(ParseEventId("a-b-c").has_value());
  EXPECT_FALSE(ParseEventId("-1-0-0").has_value());
  EXPECT_LT((EventPosition{12, 3, 1}), (EventPosition{12, 4, 0}));
  EXPECT_LT((EventPosition{12, 9, 9}), (EventPosition{13, 0, 0}));
}

TEST(ConvertRecordTest, SubmitYieldsSubmittedThenQueued) {
  std::vector<JobSetEvent> out;
  ConvertRecord(Record(7,
                       "queue: 'q' job_set: 's' user_id: 'u' events { submit_job { job { "
                       "id: 'J1' } } } events { cancel_job { job_id: 'J1' reason: 'r' } }"),
                &out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].type(), T::JOB_EVENT_TYPE_SUBMITTED);
  EXPECT_EQ(out[0].id(), "7-0-0");
  EXPECT_EQ(out[1].type(), T::JOB_EVENT_TYPE_QUEUED);
  EXPECT_EQ(out[1].id(), "7-0-1");
  EXPECT_EQ(out[2].type(), T::JOB_EVENT_TYPE_CANCELLING);
  EXPECT_EQ(out[2].id(), "7-1-0");
  EXPECT_EQ(out[2].reason(), "r");
  for (const auto& e : out) {
    EXPECT_EQ(e.job_id(), "J1");
    EXPECT_EQ(e.queue(), "q");
    EXPECT_EQ(e.user_id(), "u");
  }
}

TEST(ConvertRecordTest, PipelineEventsAreNotJobEvents) {
  std::vector<JobSetEvent> out;
  ConvertRecord(Record(9,
                       "queue: 'q' job_set: 'pipeline-run-r1' events { pipeline_run_created { "
                       "run { id: 'r1' } } } events { pipeline_task_updated { run_id: 'r1' "
                       "task { path: 't' } } } events { cancel_job { job_id: 'J1' } }"),
                &out);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].type(), T::JOB_EVENT_TYPE_CANCELLING);
  EXPECT_EQ(out[0].id(), "9-2-0");  // positions count the skipped events
}

TEST(ConvertRecordTest, OutcomesCarryTheirDetails) {
  std::vector<JobSetEvent> out;
  ConvertRecord(Record(1, R"(queue: 'q' job_set: 's'
      events { job_run_leased { job_id: 'J' run_id: 'R' node_id: 'n1' executor_id: 'e' } }
      events { job_run_running { job_id: 'J' run_id: 'R' } }
      events { job_run_failed { job_id: 'J' run_id: 'R' error { exit_code: 3 } } }
      events { job_failed { job_id: 'J' error { exit_code: 3 terminal: true } } }
      events { job_run_cancelled { job_id: 'J' run_id: 'R' } }
      events { queue_created { queue { name: 'q' } } })"),
                &out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].type(), T::JOB_EVENT_TYPE_LEASED);
  EXPECT_EQ(out[0].node_id(), "n1");
  EXPECT_EQ(out[1].type(), T::JOB_EVENT_TYPE_RUNNING);
  EXPECT_EQ(out[2].type(), T::JOB_EVENT_TYPE_RUN_FAILED);
  EXPECT_EQ(out[3].type(), T::JOB_EVENT_TYPE_FAILED);
  EXPECT_EQ(out[3].error().exit_code(), 3);
}

}  // namespace
}  // namespace regatta::api
