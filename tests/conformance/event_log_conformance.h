#ifndef REGATTA_TESTS_CONFORMANCE_EVENT_LOG_CONFORMANCE_H_
#define REGATTA_TESTS_CONFORMANCE_EVENT_LOG_CONFORMANCE_H_

// The EventLog conformance suite: every backend must pass it. A backend's test binary includes
// this header once and instantiates the suite with its factories:
//
//   INSTANTIATE_TEST_SUITE_P(
//       Sqlite, EventLogConformanceTest,
//       ::testing::Values(EventLogBackend{.name = "sqlite", .create = ..., .reopen = ...}),
//       EventLogBackendName);
//
// The TEST_Ps below are defined in this header, so include it from exactly one .cc per binary.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"
#include "regatta/v1/events.pb.h"
#include "src/eventlog/event_log.h"

namespace regatta::eventlog::testing {

struct EventLogBackend {
  std::string name;
  // Creates a new, empty log keeping its state under `dir` (a fresh, empty directory per test).
  // Returns nullptr on failure (after reporting why, e.g. with ADD_FAILURE).
  std::function<std::unique_ptr<EventLog>(const std::string& dir)> create;
  // Opens the log created earlier for `dir`, after that instance was destroyed. Unset: the
  // durability-across-reopen tests are skipped.
  std::function<std::unique_ptr<EventLog>(const std::string& dir)> reopen;
  // The record limit `create` configured (serialized bytes of one EventSequence); 0 skips the
  // oversize tests. Keep it small (e.g. 1 MiB) so the tests stay fast.
  int64_t record_limit_bytes = 0;
};

inline void PrintTo(const EventLogBackend& backend, std::ostream* os) { *os << backend.name; }

inline std::string EventLogBackendName(const ::testing::TestParamInfo<EventLogBackend>& info) {
  return info.param.name;
}

// ---- Test data ------------------------------------------------------------------------------

// A realistic SubmitJob event: command, args, env, resources, labels.
inline regatta::v1::Event MakeSubmitJobEvent(absl::string_view queue, absl::string_view job_set,
                                             int index) {
  regatta::v1::Event event;
  event.mutable_created()->set_seconds(1'700'000'000 + index);
  regatta::v1::Job* job = event.mutable_submit_job()->mutable_job();
  job->set_id(absl::StrCat("01HZX3J9Q8R7K6M5N4P3", 100000 + index));
  job->set_queue(std::string(queue));
  job->set_job_set(std::string(job_set));
  job->set_owner("alice");
  job->add_groups("ml-team");
  job->set_client_id(absl::StrCat("client-", index));
  job->set_priority(static_cast<uint32_t>(index % 10));
  job->set_priority_class("default");
  (*job->mutable_labels())["app"] = "trainer";
  (*job->mutable_labels())["shard"] = absl::StrCat(index % 16);
  (*job->mutable_annotations())["regatta.io/origin"] = "conformance";
  regatta::v1::TaskSpec* task = job->mutable_task();
  task->set_image("busybox:1.36");
  task->add_command("/bin/sh");
  task->add_command("-c");
  task->add_args(absl::StrCat("echo job ", index, " && sleep 1"));
  (*task->mutable_env())["JOB_INDEX"] = absl::StrCat(index);
  (*task->mutable_env())["LOG_LEVEL"] = "info";
  (*task->mutable_resources()->mutable_requests())["cpu"] = "100m";
  (*task->mutable_resources()->mutable_requests())["memory"] = "64Mi";
  (*task->mutable_resources()->mutable_limits())["cpu"] = "100m";
  (*task->mutable_resources()->mutable_limits())["memory"] = "64Mi";
  job->mutable_submit_time()->set_seconds(1'700'000'000 + index);
  return event;
}

// A sequence of `jobs` SubmitJob events for (queue, job_set); `tag` lands in user_id so each
// sequence of a test is distinguishable.
inline regatta::v1::EventSequence MakeSequence(absl::string_view queue, absl::string_view job_set,
                                               absl::string_view tag, int jobs = 1) {
  regatta::v1::EventSequence seq;
  seq.set_queue(std::string(queue));
  seq.set_job_set(std::string(job_set));
  seq.set_user_id(std::string(tag));
  seq.add_groups("ml-team");
  for (int i = 0; i < jobs; ++i) *seq.add_events() = MakeSubmitJobEvent(queue, job_set, i);
  return seq;
}

// Deterministic bytes (map entries sorted), so equal messages compare byte-identical.
inline std::string CanonicalBytes(const google::protobuf::Message& message) {
  std::string out;
  {
    google::protobuf::io::StringOutputStream stream(&out);
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  return out;
}

// ---- Fixture --------------------------------------------------------------------------------

class EventLogConformanceTest : public ::testing::TestWithParam<EventLogBackend> {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = absl::StrCat(info->test_suite_name(), "_", info->name());
    std::replace(name.begin(), name.end(), '/', '_');
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("regatta_eventlog_", getpid(), "_", counter++, "_", name))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    log_ = GetParam().create(dir_);
    ASSERT_NE(log_, nullptr) << "backend " << GetParam().name << " failed to create a log";
  }

  void TearDown() override {
    log_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  // Destroys the log and opens it again from `dir_`.
  void Reopen() {
    log_.reset();
    log_ = GetParam().reopen(dir_);
    ASSERT_NE(log_, nullptr) << "backend " << GetParam().name << " failed to reopen the log";
  }

  std::vector<int64_t> MustAppend(std::vector<regatta::v1::EventSequence> sequences) {
    absl::StatusOr<std::vector<int64_t>> offsets = log_->Append(std::move(sequences));
    EXPECT_TRUE(offsets.ok()) << offsets.status();
    return offsets.ok() ? *offsets : std::vector<int64_t>();
  }

  std::vector<LogRecord> MustRead(int64_t after, int max_records) {
    absl::StatusOr<std::vector<LogRecord>> records = log_->Read(after, max_records);
    EXPECT_TRUE(records.ok()) << records.status();
    return records.ok() ? std::move(*records) : std::vector<LogRecord>();
  }

  std::vector<LogRecord> MustReadJobSet(absl::string_view queue, absl::string_view job_set,
                                        int64_t after, int max_records) {
    absl::StatusOr<std::vector<LogRecord>> records =
        log_->ReadJobSet(queue, job_set, after, max_records);
    EXPECT_TRUE(records.ok()) << records.status();
    return records.ok() ? std::move(*records) : std::vector<LogRecord>();
  }

  static std::vector<int64_t> Offsets(const std::vector<LogRecord>& records) {
    std::vector<int64_t> out;
    for (const LogRecord& r : records) out.push_back(r.offset);
    return out;
  }

  static std::vector<int64_t> Range(int64_t first, int64_t last) {
    std::vector<int64_t> out;
    for (int64_t i = first; i <= last; ++i) out.push_back(i);
    return out;
  }

  std::string dir_;
  std::unique_ptr<EventLog> log_;
};

// ---- Tests ----------------------------------------------------------------------------------

TEST_P(EventLogConformanceTest, EmptyLog) {
  EXPECT_EQ(log_->LastOffset(), 0);
  EXPECT_THAT(MustRead(0, 10), ::testing::IsEmpty());
  EXPECT_THAT(MustReadJobSet("q", "js", 0, 10), ::testing::IsEmpty());
}

TEST_P(EventLogConformanceTest, AppendReturnsIncreasingOffsetsStartingAtOne) {
  EXPECT_THAT(MustAppend({MakeSequence("q", "js", "a")}), ::testing::ElementsAre(1));
  EXPECT_EQ(log_->LastOffset(), 1);
  EXPECT_THAT(MustAppend({MakeSequence("q", "js", "b"), MakeSequence("q", "js", "c"),
                          MakeSequence("q", "js", "d")}),
              ::testing::ElementsAre(2, 3, 4));
  EXPECT_EQ(log_->LastOffset(), 4);
  EXPECT_THAT(MustAppend({MakeSequence("q", "js", "e")}), ::testing::ElementsAre(5));
  EXPECT_EQ(log_->LastOffset(), 5);
}

TEST_P(EventLogConformanceTest, BatchIsStoredInOrderWithContent) {
  std::vector<regatta::v1::EventSequence> batch;
  for (int i = 0; i < 5; ++i) batch.push_back(MakeSequence("q", "js", absl::StrCat("s", i), i));
  std::vector<regatta::v1::EventSequence> expected = batch;
  EXPECT_THAT(MustAppend(std::move(batch)), ::testing::ElementsAre(1, 2, 3, 4, 5));

  std::vector<LogRecord> records = MustRead(0, 100);
  ASSERT_EQ(records.size(), 5u);
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(records[i].offset, i + 1);
    EXPECT_EQ(CanonicalBytes(records[i].sequence), CanonicalBytes(expected[i])) << "index " << i;
  }
}

TEST_P(EventLogConformanceTest, EmptyBatchAppendsNothing) {
  absl::StatusOr<std::vector<int64_t>> offsets = log_->Append({});
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  EXPECT_THAT(*offsets, ::testing::IsEmpty());
  EXPECT_EQ(log_->LastOffset(), 0);
  EXPECT_THAT(MustAppend({MakeSequence("q", "js", "a")}), ::testing::ElementsAre(1));
  ASSERT_TRUE(log_->Append({}).ok());
  EXPECT_EQ(log_->LastOffset(), 1);
  EXPECT_THAT(MustAppend({MakeSequence("q", "js", "b")}), ::testing::ElementsAre(2));
}

TEST_P(EventLogConformanceTest, EmptySequenceRoundTrips) {
  // A sequence with no fields set serializes to zero bytes; it must still be a record.
  EXPECT_THAT(MustAppend({regatta::v1::EventSequence(), MakeSequence("q", "js", "a")}),
              ::testing::ElementsAre(1, 2));
  std::vector<LogRecord> records = MustRead(0, 10);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].sequence.ByteSizeLong(), 0u);
  EXPECT_EQ(records[1].sequence.user_id(), "a");
  EXPECT_THAT(Offsets(MustReadJobSet("", "", 0, 10)), ::testing::ElementsAre(1));
}

TEST_P(EventLogConformanceTest, ReadPagesInOffsetOrder) {
  for (int i = 0; i < 25; ++i) MustAppend({MakeSequence("q", "js", absl::StrCat(i))});
  EXPECT_THAT(Offsets(MustRead(0, 10)), ::testing::ElementsAreArray(Range(1, 10)));
  EXPECT_THAT(Offsets(MustRead(10, 10)), ::testing::ElementsAreArray(Range(11, 20)));
  EXPECT_THAT(Offsets(MustRead(20, 10)), ::testing::ElementsAreArray(Range(21, 25)));
  EXPECT_THAT(MustRead(25, 10), ::testing::IsEmpty());
  EXPECT_THAT(MustRead(1000, 10), ::testing::IsEmpty());
  EXPECT_THAT(Offsets(MustRead(7, 1)), ::testing::ElementsAre(8));
  EXPECT_THAT(MustRead(0, 0), ::testing::IsEmpty());

  // Paging through the whole log visits every record once, with its content.
  int64_t after = 0;
  int pages = 0;
  for (;;) {
    std::vector<LogRecord> page = MustRead(after, 4);
    if (page.empty()) break;
    ++pages;
    for (const LogRecord& r : page) {
      EXPECT_EQ(r.offset, after + 1);
      EXPECT_EQ(r.sequence.user_id(), absl::StrCat(r.offset - 1));
      after = r.offset;
    }
  }
  EXPECT_EQ(after, 25);
  EXPECT_EQ(pages, 7);
}

TEST_P(EventLogConformanceTest, ReadJobSetFiltersByQueueAndJobSet) {
  // Offsets 1..30 cycle through three (queue, job set) pairs; "js" exists in both queues.
  const std::pair<std::string, std::string> pairs[] = {{"q1", "js"}, {"q2", "js"}, {"q1", "other"}};
  std::vector<int64_t> expected[3];
  for (int i = 0; i < 30; ++i) {
    const auto& [queue, job_set] = pairs[i % 3];
    std::vector<int64_t> offsets = MustAppend({MakeSequence(queue, job_set, absl::StrCat(i))});
    ASSERT_EQ(offsets.size(), 1u);
    expected[i % 3].push_back(offsets[0]);
  }
  for (int p = 0; p < 3; ++p) {
    const auto& [queue, job_set] = pairs[p];
    // Page through in steps of 3.
    std::vector<int64_t> seen;
    int64_t after = 0;
    for (;;) {
      std::vector<LogRecord> page = MustReadJobSet(queue, job_set, after, 3);
      if (page.empty()) break;
      EXPECT_LE(page.size(), 3u);
      for (const LogRecord& r : page) {
        EXPECT_EQ(r.sequence.queue(), queue);
        EXPECT_EQ(r.sequence.job_set(), job_set);
        seen.push_back(r.offset);
        after = r.offset;
      }
    }
    EXPECT_THAT(seen, ::testing::ElementsAreArray(expected[p])) << queue << "/" << job_set;
  }
  // `after` is a log offset, not a position within the job set.
  EXPECT_THAT(Offsets(MustReadJobSet("q1", "js", 10, 2)), ::testing::ElementsAre(13, 16));
  EXPECT_THAT(MustReadJobSet("q1", "missing", 0, 10), ::testing::IsEmpty());
  EXPECT_THAT(MustReadJobSet("q3", "js", 0, 10), ::testing::IsEmpty());
  EXPECT_THAT(MustReadJobSet("q1", "js", 30, 10), ::testing::IsEmpty());
}

TEST_P(EventLogConformanceTest, WaitForAppendReturnsAtOnceWhenAlreadyPast) {
  MustAppend({MakeSequence("q", "js", "a"), MakeSequence("q", "js", "b")});
  absl::Time start = absl::Now();
  EXPECT_EQ(log_->WaitForAppend(0, absl::Now() + absl::Seconds(30)), 2);
  EXPECT_EQ(log_->WaitForAppend(1, absl::Now() + absl::Seconds(30)), 2);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_P(EventLogConformanceTest, WaitForAppendTimesOutAtDeadline) {
  MustAppend({MakeSequence("q", "js", "a")});
  absl::Time start = absl::Now();
  EXPECT_EQ(log_->WaitForAppend(1, start + absl::Milliseconds(100)), 1);
  absl::Duration waited = absl::Now() - start;
  EXPECT_GE(waited, absl::Milliseconds(90));
  EXPECT_LT(waited, absl::Seconds(10));
  // A deadline already passed returns at once.
  start = absl::Now();
  EXPECT_EQ(log_->WaitForAppend(1, absl::InfinitePast()), 1);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_P(EventLogConformanceTest, WaitForAppendWakesOnAppend) {
  MustAppend({MakeSequence("q", "js", "a")});
  constexpr int kWaiters = 3;
  std::atomic<int> woke{0};
  std::vector<int64_t> results(kWaiters, -1);
  std::vector<std::thread> waiters;
  for (int i = 0; i < kWaiters; ++i) {
    waiters.emplace_back([&, i] {
      results[i] = log_->WaitForAppend(1, absl::Now() + absl::Seconds(60));
      ++woke;
    });
  }
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_EQ(woke.load(), 0) << "WaitForAppend returned before anything was appended";
  absl::Time appended = absl::Now();
  MustAppend({MakeSequence("q", "js", "b")});
  for (std::thread& t : waiters) t.join();
  EXPECT_LT(absl::Now() - appended, absl::Seconds(10));
  for (int64_t r : results) EXPECT_EQ(r, 2);
}

TEST_P(EventLogConformanceTest, ConcurrentAppendersGetUniqueContiguousOffsets) {
  constexpr int kThreads = 8;
  constexpr int kAppendsPerThread = 40;
  struct Appended {
    int64_t offset;
    std::string bytes;
  };
  std::vector<std::vector<Appended>> appended(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAppendsPerThread; ++i) {
        // Batches of 1-3 sequences; each sequence is unique to (thread, append, index).
        int n = 1 + (t + i) % 3;
        std::vector<regatta::v1::EventSequence> batch;
        std::vector<std::string> bytes;
        for (int k = 0; k < n; ++k) {
          batch.push_back(MakeSequence(absl::StrCat("q", t % 2), absl::StrCat("js", t),
                                       absl::StrCat(t, "/", i, "/", k), 1 + k));
          bytes.push_back(CanonicalBytes(batch.back()));
        }
        absl::StatusOr<std::vector<int64_t>> offsets = log_->Append(std::move(batch));
        ASSERT_TRUE(offsets.ok()) << offsets.status();
        ASSERT_EQ(offsets->size(), static_cast<size_t>(n));
        for (int k = 0; k < n; ++k) {
          // A batch occupies consecutive offsets, in order.
          if (k > 0) {
            EXPECT_EQ((*offsets)[k], (*offsets)[k - 1] + 1);
          }
          appended[t].push_back({(*offsets)[k], bytes[k]});
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();

  std::vector<int64_t> all;
  std::vector<std::string> by_offset;
  for (const auto& per_thread : appended) {
    int64_t previous = 0;
    for (const Appended& a : per_thread) {
      EXPECT_GT(a.offset, previous) << "one thread's appends must get increasing offsets";
      previous = a.offset;
      all.push_back(a.offset);
    }
  }
  std::sort(all.begin(), all.end());
  ASSERT_THAT(all, ::testing::ElementsAreArray(Range(1, static_cast<int64_t>(all.size()))));
  EXPECT_EQ(log_->LastOffset(), static_cast<int64_t>(all.size()));

  by_offset.resize(all.size() + 1);
  for (const auto& per_thread : appended) {
    for (const Appended& a : per_thread) by_offset[a.offset] = a.bytes;
  }
  std::vector<LogRecord> records = MustRead(0, static_cast<int>(all.size()) + 10);
  ASSERT_EQ(records.size(), all.size());
  for (const LogRecord& r : records) {
    EXPECT_EQ(CanonicalBytes(r.sequence), by_offset[r.offset]) << "offset " << r.offset;
  }
}

TEST_P(EventLogConformanceTest, ReadersNeverSeePartialBatches) {
  // Writers append batches of 4 whose user_ids end in /0../3; a reader checks that the log,
  // whenever it looks, ends on a batch boundary and holds each batch whole and in order.
  constexpr int kWriters = 4;
  constexpr int kBatchesPerWriter = 25;
  std::atomic<bool> stop{false};
  std::atomic<int> checks{0};
  std::thread reader([&] {
    int64_t after = 0;
    while (!stop.load()) {
      int64_t last = log_->WaitForAppend(after, absl::Now() + absl::Milliseconds(20));
      if (last <= after) continue;
      std::vector<LogRecord> records = MustRead(after, static_cast<int>(last - after));
      ASSERT_EQ(records.size(), static_cast<size_t>(last - after));
      for (size_t i = 0; i < records.size(); ++i) {
        // Offset o holds index (o - 1) % 4 of its batch.
        ASSERT_TRUE(absl::EndsWith(records[i].sequence.user_id(),
                                   absl::StrCat("/", (records[i].offset - 1) % 4)))
            << "offset " << records[i].offset << " holds " << records[i].sequence.user_id();
      }
      after = last;
      ++checks;
    }
  });
  std::vector<std::thread> writers;
  for (int w = 0; w < kWriters; ++w) {
    writers.emplace_back([&, w] {
      for (int b = 0; b < kBatchesPerWriter; ++b) {
        std::vector<regatta::v1::EventSequence> batch;
        for (int k = 0; k < 4; ++k) {
          batch.push_back(MakeSequence("q", "js", absl::StrCat(w, "/", b, "/", k)));
        }
        absl::StatusOr<std::vector<int64_t>> offsets = log_->Append(std::move(batch));
        ASSERT_TRUE(offsets.ok()) << offsets.status();
      }
    });
  }
  for (std::thread& t : writers) t.join();
  stop = true;
  reader.join();
  EXPECT_EQ(log_->LastOffset(), kWriters * kBatchesPerWriter * 4);
  EXPECT_GT(checks.load(), 0);
}

TEST_P(EventLogConformanceTest, LargeSequenceRoundTrips) {
  regatta::v1::EventSequence seq = MakeSequence("big-queue", "big-set", "bulk", 1000);
  std::string expected = CanonicalBytes(seq);
  EXPECT_THAT(MustAppend({std::move(seq)}), ::testing::ElementsAre(1));
  std::vector<LogRecord> records = MustRead(0, 1);
  ASSERT_EQ(records.size(), 1u);
  ASSERT_EQ(records[0].sequence.events_size(), 1000);
  EXPECT_EQ(records[0].sequence.events(999).submit_job().job().task().args(0),
            "echo job 999 && sleep 1");
  EXPECT_EQ(CanonicalBytes(records[0].sequence), expected);
  records = MustReadJobSet("big-queue", "big-set", 0, 10);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(CanonicalBytes(records[0].sequence), expected);
}

TEST_P(EventLogConformanceTest, OversizeSequenceRejectsWholeBatch) {
  const int64_t limit = GetParam().record_limit_bytes;
  if (limit <= 0) GTEST_SKIP() << "backend declares no record limit";
  MustAppend({MakeSequence("q", "js", "before")});

  regatta::v1::EventSequence big = MakeSequence("q", "js", "big");
  big.mutable_events(0)->mutable_submit_job()->mutable_job()->mutable_annotations()->insert(
      {"blob", std::string(limit, 'x')});
  ASSERT_GT(static_cast<int64_t>(big.ByteSizeLong()), limit);
  absl::StatusOr<std::vector<int64_t>> offsets =
      log_->Append({MakeSequence("q", "js", "ok"), std::move(big)});
  EXPECT_EQ(offsets.status().code(), absl::StatusCode::kInvalidArgument) << offsets.status();

  // Nothing of the rejected batch is visible, and offsets continue without a gap.
  EXPECT_EQ(log_->LastOffset(), 1);
  EXPECT_THAT(Offsets(MustRead(0, 10)), ::testing::ElementsAre(1));
  EXPECT_THAT(MustAppend({MakeSequence("q", "js", "after")}), ::testing::ElementsAre(2));
}

TEST_P(EventLogConformanceTest, DataSurvivesReopen) {
  if (!GetParam().reopen) GTEST_SKIP() << "backend has no reopen factory";
  std::vector<std::string> expected;
  for (int i = 0; i < 10; ++i) {
    regatta::v1::EventSequence seq =
        MakeSequence(absl::StrCat("q", i % 2), "js", absl::StrCat(i), i % 3 + 1);
    expected.push_back(CanonicalBytes(seq));
    MustAppend({std::move(seq)});
  }
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(log_->LastOffset(), 10);
  std::vector<LogRecord> records = MustRead(0, 100);
  ASSERT_EQ(records.size(), 10u);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(records[i].offset, i + 1);
    EXPECT_EQ(CanonicalBytes(records[i].sequence), expected[i]);
  }
  EXPECT_THAT(Offsets(MustReadJobSet("q1", "js", 0, 100)), ::testing::ElementsAre(2, 4, 6, 8, 10));
  // Appends continue after the last durable offset.
  EXPECT_THAT(MustAppend({MakeSequence("q", "js", "next")}), ::testing::ElementsAre(11));
  EXPECT_EQ(log_->WaitForAppend(10, absl::Now() + absl::Seconds(10)), 11);

  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(log_->LastOffset(), 11);
  EXPECT_THAT(Offsets(MustRead(10, 100)), ::testing::ElementsAre(11));
}

TEST_P(EventLogConformanceTest, EmptyLogSurvivesReopen) {
  if (!GetParam().reopen) GTEST_SKIP() << "backend has no reopen factory";
  ASSERT_NO_FATAL_FAILURE(Reopen());
  EXPECT_EQ(log_->LastOffset(), 0);
  EXPECT_THAT(MustAppend({MakeSequence("q", "js", "a")}), ::testing::ElementsAre(1));
}

}  // namespace regatta::eventlog::testing

#endif  // REGATTA_TESTS_CONFORMANCE_EVENT_LOG_CONFORMANCE_H_
