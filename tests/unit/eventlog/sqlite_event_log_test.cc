// SQLite-specific behaviour of SqliteEventLog; the EventLog contract itself is covered by
// tests/conformance/sqlite_event_log_conformance_test.cc.
#include "src/eventlog/sqlite/sqlite_event_log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace regatta::eventlog {
namespace {

using ::testing::HasSubstr;

regatta::v1::EventSequence Seq(absl::string_view queue, absl::string_view job_set,
                               absl::string_view tag) {
  regatta::v1::EventSequence seq;
  seq.set_queue(std::string(queue));
  seq.set_job_set(std::string(job_set));
  seq.set_user_id(std::string(tag));
  regatta::v1::Event* event = seq.add_events();
  event->mutable_submit_job()->mutable_job()->set_id(absl::StrCat("job-", tag));
  return seq;
}

// Runs SQL on the log's file through a separate connection, as an operator or a bug might.
void ExecRaw(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 10000);
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, &err);
  EXPECT_EQ(rc, SQLITE_OK) << (err != nullptr ? err : "") << " running " << sql;
  sqlite3_free(err);
  sqlite3_close(db);
}

std::string QueryRaw(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  std::string out;
  if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
      sqlite3_step(stmt) == SQLITE_ROW && sqlite3_column_text(stmt, 0) != nullptr) {
    out = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
  }
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return out;
}

class SqliteEventLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    dir_ = (std::filesystem::path(::testing::TempDir()) /
            absl::StrCat("regatta_sqlite_event_log_test_", getpid(), "_", counter++))
               .string();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    path_ = dir_ + "/events.db";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::unique_ptr<SqliteEventLog> MustOpen(SqliteEventLog::Options options = {}) {
    absl::StatusOr<std::unique_ptr<SqliteEventLog>> log =
        SqliteEventLog::Open(path_, std::move(options));
    EXPECT_TRUE(log.ok()) << log.status();
    return log.ok() ? std::move(*log) : nullptr;
  }

  std::string dir_;
  std::string path_;
};

TEST_F(SqliteEventLogTest, CreatesVersionedSchemaInWalMode) {
  auto log = MustOpen();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(QueryRaw(path_, "PRAGMA user_version"), absl::StrCat(SqliteEventLog::kSchemaVersion));
  EXPECT_EQ(QueryRaw(path_, "PRAGMA journal_mode"), "wal");
  EXPECT_EQ(QueryRaw(path_,
                     "SELECT count(*) FROM sqlite_master WHERE type = 'index' AND "
                     "name = 'event_log_by_job_set'"),
            "1");
  // Reopening an up-to-date file migrates nothing and keeps the version.
  log.reset();
  log = MustOpen();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(QueryRaw(path_, "PRAGMA user_version"), absl::StrCat(SqliteEventLog::kSchemaVersion));
}

TEST_F(SqliteEventLogTest, RefusesSchemaFromTheFuture) {
  ExecRaw(path_, absl::StrCat("PRAGMA user_version = ", SqliteEventLog::kSchemaVersion + 1));
  absl::StatusOr<std::unique_ptr<SqliteEventLog>> log = SqliteEventLog::Open(path_);
  EXPECT_EQ(log.status().code(), absl::StatusCode::kFailedPrecondition) << log.status();
  EXPECT_THAT(log.status().message(), HasSubstr("schema version"));
}

TEST_F(SqliteEventLogTest, OpenFailsCleanlyOnAFileThatIsNotADatabase) {
  std::ofstream(path_) << std::string(8192, 'z');
  absl::StatusOr<std::unique_ptr<SqliteEventLog>> log = SqliteEventLog::Open(path_);
  EXPECT_FALSE(log.ok());
  EXPECT_THAT(log.status().message(), HasSubstr(path_));
}

TEST_F(SqliteEventLogTest, OpenFailsCleanlyInAMissingDirectory) {
  absl::StatusOr<std::unique_ptr<SqliteEventLog>> log =
      SqliteEventLog::Open(dir_ + "/no/such/dir/events.db");
  EXPECT_FALSE(log.ok());
}

TEST_F(SqliteEventLogTest, RejectsInvalidOptions) {
  SqliteEventLog::Options options;
  options.max_read_connections = 0;
  EXPECT_EQ(SqliteEventLog::Open(path_, options).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(SqliteEventLogTest, UnparseablePayloadIsDataLossNamingTheOffset) {
  {
    auto log = MustOpen();
    ASSERT_NE(log, nullptr);
    ASSERT_TRUE(log->Append({Seq("q", "js", "a"), Seq("q", "js", "b"), Seq("q", "js", "c")}).ok());
  }
  // 0xFF... is a truncated varint tag: no EventSequence parses from it.
  ExecRaw(path_, R"(UPDATE event_log SET payload = X'FFFFFFFFFF' WHERE "offset" = 2)");
  auto log = MustOpen();
  ASSERT_NE(log, nullptr);

  absl::StatusOr<std::vector<LogRecord>> records = log->Read(0, 10);
  EXPECT_EQ(records.status().code(), absl::StatusCode::kDataLoss) << records.status();
  EXPECT_THAT(records.status().message(), HasSubstr("offset 2"));
  records = log->ReadJobSet("q", "js", 0, 10);
  EXPECT_EQ(records.status().code(), absl::StatusCode::kDataLoss) << records.status();
  EXPECT_THAT(records.status().message(), HasSubstr("offset 2"));

  // Records before and after the bad one stay readable, so a consumer can skip it.
  records = log->Read(0, 1);
  ASSERT_TRUE(records.ok()) << records.status();
  EXPECT_EQ((*records)[0].sequence.user_id(), "a");
  records = log->Read(2, 10);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), 1u);
  EXPECT_EQ((*records)[0].sequence.user_id(), "c");
  // The failed read gave its connection back; the log still works.
  EXPECT_TRUE(log->Append({Seq("q", "js", "d")}).ok());
}

TEST_F(SqliteEventLogTest, PayloadOfTheWrongTypeIsDataLoss) {
  {
    auto log = MustOpen();
    ASSERT_NE(log, nullptr);
    ASSERT_TRUE(log->Append({Seq("q", "js", "a")}).ok());
  }
  ExecRaw(path_, R"(UPDATE event_log SET payload = 'not a blob' WHERE "offset" = 1)");
  auto log = MustOpen();
  ASSERT_NE(log, nullptr);
  absl::StatusOr<std::vector<LogRecord>> records = log->Read(0, 10);
  EXPECT_EQ(records.status().code(), absl::StatusCode::kDataLoss) << records.status();
  EXPECT_THAT(records.status().message(), HasSubstr("offset 1"));
}

TEST_F(SqliteEventLogTest, DefaultRecordLimitIs64MiB) {
  EXPECT_EQ(SqliteEventLog::Options().max_record_bytes, 64 * 1024 * 1024);
}

TEST_F(SqliteEventLogTest, OversizeRecordIsInvalidArgumentNamingIndexAndSize) {
  SqliteEventLog::Options options;
  options.max_record_bytes = 1000;
  auto log = MustOpen(options);
  ASSERT_NE(log, nullptr);

  regatta::v1::EventSequence big = Seq("q", "js", "big");
  big.set_user_id(std::string(2000, 'u'));
  const size_t big_size = big.ByteSizeLong();
  absl::StatusOr<std::vector<int64_t>> offsets = log->Append({Seq("q", "js", "ok"), big});
  EXPECT_EQ(offsets.status().code(), absl::StatusCode::kInvalidArgument) << offsets.status();
  EXPECT_THAT(offsets.status().message(), HasSubstr("event sequence 1 "));
  EXPECT_THAT(offsets.status().message(), HasSubstr(absl::StrCat(big_size, " bytes")));
  EXPECT_THAT(offsets.status().message(), HasSubstr("1000"));
  EXPECT_EQ(log->LastOffset(), 0);
  EXPECT_EQ(log->GetStats().commits, 0);

  // Exactly at the limit is fine.
  regatta::v1::EventSequence exact = Seq("q", "js", "");
  exact.set_user_id(std::string(1000 - exact.ByteSizeLong() - 3, 'u'));
  ASSERT_EQ(exact.ByteSizeLong(), 1000u);
  offsets = log->Append({exact});
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  EXPECT_THAT(*offsets, ::testing::ElementsAre(1));
}

TEST_F(SqliteEventLogTest, NegativeMaxRecordsIsInvalidArgument) {
  auto log = MustOpen();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->Read(0, -1).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(log->ReadJobSet("q", "js", 0, -1).status().code(), absl::StatusCode::kInvalidArgument);
}

// A lone append commits on the caller's thread (no hand-off to the writer thread and back); an
// append that finds a commit in progress is group-committed by the writer thread.
TEST_F(SqliteEventLogTest, LoneAppendCommitsOnTheCallersThread) {
  absl::Mutex mu;
  std::vector<std::thread::id> committers;
  absl::Notification first_commit_started;
  absl::Notification release_first;
  SqliteEventLog::Options options;
  options.before_commit_for_testing = [&] {
    bool first;
    {
      absl::MutexLock lock(&mu);
      first = committers.empty();
      committers.push_back(std::this_thread::get_id());
    }
    if (first) {
      first_commit_started.Notify();
      release_first.WaitForNotification();
    }
  };
  auto log = MustOpen(options);
  ASSERT_NE(log, nullptr);
  std::thread::id first_caller;
  std::thread first([&] {
    first_caller = std::this_thread::get_id();
    ASSERT_TRUE(log->Append({Seq("q", "js", "1")}).ok());
  });
  first_commit_started.WaitForNotification();
  std::thread::id second_caller;
  std::thread second([&] {
    second_caller = std::this_thread::get_id();
    ASSERT_TRUE(log->Append({Seq("q", "js", "2")}).ok());
  });
  while (log->GetStats().queued_appends < 1) absl::SleepFor(absl::Milliseconds(1));
  release_first.Notify();
  first.join();
  second.join();
  absl::MutexLock lock(&mu);
  ASSERT_EQ(committers.size(), 2u);
  EXPECT_EQ(committers[0], first_caller);
  EXPECT_NE(committers[1], second_caller);  // queued behind the first: the writer thread's
  EXPECT_NE(committers[1], first_caller);
  EXPECT_EQ(log->LastOffset(), 2);
}

// Holds the writer in its first transaction until every other appender has queued, so the
// outcome is deterministic: one commit for the first append, one for all the rest.
TEST_F(SqliteEventLogTest, GroupCommitWritesQueuedAppendsInOneTransaction) {
  constexpr int kAppenders = 10;
  absl::Notification first_commit_started;
  absl::Notification release_writer;
  std::atomic<int> hook_calls{0};
  SqliteEventLog::Options options;
  options.before_commit_for_testing = [&] {
    if (hook_calls++ == 0) {
      first_commit_started.Notify();
      release_writer.WaitForNotification();
    }
  };
  auto log = MustOpen(options);
  ASSERT_NE(log, nullptr);

  std::vector<std::vector<int64_t>> offsets(kAppenders);
  std::vector<std::thread> threads;
  auto append = [&](int i) {
    absl::StatusOr<std::vector<int64_t>> result =
        log->Append({Seq("q", "js", absl::StrCat(i, "a")), Seq("q", "js", absl::StrCat(i, "b"))});
    ASSERT_TRUE(result.ok()) << result.status();
    offsets[i] = *result;
  };
  threads.emplace_back(append, 0);
  first_commit_started.WaitForNotification();
  for (int i = 1; i < kAppenders; ++i) threads.emplace_back(append, i);
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (log->GetStats().queued_appends < kAppenders - 1 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_EQ(log->GetStats().queued_appends, kAppenders - 1);
  release_writer.Notify();
  for (std::thread& t : threads) t.join();

  SqliteEventLog::Stats stats = log->GetStats();
  EXPECT_EQ(stats.commits, 2);  // N appenders, fewer than N commits
  EXPECT_EQ(stats.appends, kAppenders);
  EXPECT_EQ(stats.records, 2 * kAppenders);
  EXPECT_EQ(stats.queued_appends, 0);
  EXPECT_EQ(log->LastOffset(), 2 * kAppenders);
  std::vector<int64_t> all;
  for (const auto& o : offsets) {
    ASSERT_EQ(o.size(), 2u);
    EXPECT_EQ(o[1], o[0] + 1);
    all.insert(all.end(), o.begin(), o.end());
  }
  std::sort(all.begin(), all.end());
  for (int i = 0; i < 2 * kAppenders; ++i) EXPECT_EQ(all[i], i + 1);
}

TEST_F(SqliteEventLogTest, GroupCommitBatchesUnderLoad) {
  auto log = MustOpen();
  ASSERT_NE(log, nullptr);
  constexpr int kThreads = 8;
  constexpr int kAppendsPerThread = 30;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kAppendsPerThread; ++i) {
        ASSERT_TRUE(log->Append({Seq("q", absl::StrCat(t), absl::StrCat(i))}).ok());
      }
    });
  }
  for (std::thread& t : threads) t.join();
  SqliteEventLog::Stats stats = log->GetStats();
  EXPECT_EQ(stats.appends, kThreads * kAppendsPerThread);
  // Each sync of the WAL takes a while; the threads that commit meanwhile share the next one.
  EXPECT_LT(stats.syncs, stats.appends);
  EXPECT_GE(stats.syncs, 1);
  EXPECT_GE(stats.commits, 1);
}

TEST_F(SqliteEventLogTest, AppendVisibleIsReadableBeforeItIsDurable) {
  absl::Notification sync_started;
  absl::Notification release_sync;
  std::atomic<bool> hold{false};
  SqliteEventLog::Options options;
  options.before_sync_for_testing = [&] {
    if (!hold.exchange(false)) return;
    sync_started.Notify();
    release_sync.WaitForNotification();
  };
  auto log = MustOpen(options);
  ASSERT_NE(log, nullptr);
  ASSERT_TRUE(log->Append({Seq("q", "js", "1")}).ok());
  EXPECT_EQ(log->DurableOffset(), 1);

  absl::StatusOr<std::vector<int64_t>> offsets = log->AppendVisible({Seq("q", "js", "2")});
  ASSERT_TRUE(offsets.ok()) << offsets.status();
  ASSERT_EQ(*offsets, std::vector<int64_t>{2});
  // Committed: visible to readers and waiters, though no sync has run for it.
  EXPECT_EQ(log->LastOffset(), 2);
  EXPECT_EQ(log->WaitForAppend(1, absl::Now()), 2);
  absl::StatusOr<std::vector<LogRecord>> read = log->Read(1, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 1u);
  EXPECT_EQ(read->front().sequence.user_id(), "2");
  EXPECT_EQ(log->DurableOffset(), 1);

  // A waiter syncs it; while that sync runs, the offset is not yet durable.
  hold = true;
  std::thread waiter([&] { EXPECT_TRUE(log->WaitDurable(2).ok()); });
  sync_started.WaitForNotification();
  EXPECT_EQ(log->DurableOffset(), 1);
  release_sync.Notify();
  waiter.join();
  EXPECT_EQ(log->DurableOffset(), 2);
  EXPECT_EQ(log->GetStats().syncs, 2);  // one for each durable point asked for
  // Durable already: no further sync.
  EXPECT_TRUE(log->WaitDurable(2).ok());
  EXPECT_EQ(log->GetStats().syncs, 2);
}

TEST_F(SqliteEventLogTest, DurableAppendsWaitingTogetherShareOneSync) {
  constexpr int kAppenders = 8;
  absl::Notification first_sync_started;
  absl::Notification release_sync;
  std::atomic<int> sync_calls{0};
  SqliteEventLog::Options options;
  options.before_sync_for_testing = [&] {
    if (sync_calls++ != 0) return;
    first_sync_started.Notify();
    release_sync.WaitForNotification();
  };
  auto log = MustOpen(options);  // an empty log: opening syncs nothing
  ASSERT_NE(log, nullptr);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { EXPECT_TRUE(log->Append({Seq("q", "js", "0")}).ok()); });
  first_sync_started.WaitForNotification();
  // The others commit while the first sync is held, then wait for a sync of their own.
  for (int i = 1; i < kAppenders; ++i) {
    threads.emplace_back(
        [&, i] { EXPECT_TRUE(log->Append({Seq("q", "js", absl::StrCat(i))}).ok()); });
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (log->GetStats().appends < kAppenders && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(1));
  }
  ASSERT_EQ(log->GetStats().appends, kAppenders);
  EXPECT_EQ(log->DurableOffset(), 0);
  release_sync.Notify();
  for (std::thread& t : threads) t.join();
  // The first sync covered only the first append; the one after it covered all the rest.
  EXPECT_EQ(log->GetStats().syncs, 2);
  EXPECT_EQ(log->DurableOffset(), kAppenders);
}

TEST_F(SqliteEventLogTest, WaitDurablePastTheEndIsInvalidArgument) {
  auto log = MustOpen();
  ASSERT_NE(log, nullptr);
  ASSERT_TRUE(log->Append({Seq("q", "js", "1")}).ok());
  absl::Status status = log->WaitDurable(5);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  EXPECT_TRUE(log->WaitDurable(0).ok());
}

// A process that dies right after an unsynced commit loses nothing: the commit is in the
// operating system's cache, and the next open makes it durable.
TEST_F(SqliteEventLogTest, VisibleAppendsSurviveTheProcessDying) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    absl::StatusOr<std::unique_ptr<SqliteEventLog>> log = SqliteEventLog::Open(path_);
    if (!log.ok()) _exit(2);
    for (int i = 0; i < 5; ++i) {
      if (!(*log)->AppendVisible({Seq("q", "js", absl::StrCat(i))}).ok()) _exit(3);
    }
    _exit(0);  // no Close, no destructors, no sync
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  auto log = MustOpen();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->LastOffset(), 5);
  EXPECT_EQ(log->DurableOffset(), 5);
  absl::StatusOr<std::vector<LogRecord>> read = log->Read(0, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->size(), 5u);
  EXPECT_EQ(read->back().sequence.user_id(), "4");
}

// A read connection sees a commit before the writer publishes it; reads must not get ahead of
// LastOffset() (a reader would then wait for the durability of an offset not yet published).
TEST_F(SqliteEventLogTest, ReadsStopAtThePublishedOffset) {
  absl::Notification committed;
  absl::Notification release;
  std::atomic<bool> hold{false};
  SqliteEventLog::Options options;
  options.before_publish_for_testing = [&] {
    if (!hold.exchange(false)) return;
    committed.Notify();
    release.WaitForNotification();
  };
  auto log = MustOpen(options);
  ASSERT_NE(log, nullptr);
  ASSERT_TRUE(log->Append({Seq("q", "js", "1")}).ok());
  hold = true;
  std::thread appender([&] { EXPECT_TRUE(log->Append({Seq("q", "js", "2")}).ok()); });
  committed.WaitForNotification();
  EXPECT_EQ(log->LastOffset(), 1);
  absl::StatusOr<std::vector<LogRecord>> read = log->Read(0, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->size(), 1u);
  read = log->ReadJobSet("q", "js", 0, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->size(), 1u);
  release.Notify();
  appender.join();
  read = log->Read(0, 10);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->size(), 2u);
}

TEST_F(SqliteEventLogTest, AfterCloseAppendAndReadAreUnavailableAndWaitReturns) {
  auto log = MustOpen();
  ASSERT_NE(log, nullptr);
  ASSERT_TRUE(log->Append({Seq("q", "js", "a")}).ok());
  log->Close();
  log->Close();  // idempotent
  EXPECT_EQ(log->Append({Seq("q", "js", "b")}).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(log->Append({}).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(log->Read(0, 10).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(log->ReadJobSet("q", "js", 0, 10).status().code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(log->LastOffset(), 1);
  absl::Time start = absl::Now();
  EXPECT_EQ(log->WaitForAppend(1, absl::InfiniteFuture()), 1);
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
}

TEST_F(SqliteEventLogTest, CloseWakesWaiters) {
  auto log = MustOpen();
  ASSERT_NE(log, nullptr);
  std::thread waiter([&] { EXPECT_EQ(log->WaitForAppend(0, absl::InfiniteFuture()), 0); });
  absl::SleepFor(absl::Milliseconds(20));
  log->Close();
  waiter.join();
}

TEST_F(SqliteEventLogTest, CloseCommitsAppendsAlreadyQueued) {
  absl::Notification first_commit_started;
  absl::Notification release_writer;
  std::atomic<int> hook_calls{0};
  SqliteEventLog::Options options;
  options.before_commit_for_testing = [&] {
    if (hook_calls++ == 0) {
      first_commit_started.Notify();
      release_writer.WaitForNotification();
    }
  };
  auto log = MustOpen(options);
  ASSERT_NE(log, nullptr);
  std::vector<absl::Status> results(4);
  std::vector<std::thread> threads;
  threads.emplace_back([&] { results[0] = log->Append({Seq("q", "js", "0")}).status(); });
  first_commit_started.WaitForNotification();
  for (int i = 1; i < 4; ++i) {
    threads.emplace_back([&, i] { results[i] = log->Append({Seq("q", "js", "x")}).status(); });
  }
  while (log->GetStats().queued_appends < 3) absl::SleepFor(absl::Milliseconds(1));
  std::thread closer([&] { log->Close(); });
  absl::SleepFor(absl::Milliseconds(50));
  release_writer.Notify();
  closer.join();
  for (std::thread& t : threads) t.join();
  for (const absl::Status& s : results) EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(log->LastOffset(), 4);
  EXPECT_EQ(log->Append({Seq("q", "js", "late")}).status().code(), absl::StatusCode::kUnavailable);
}

TEST_F(SqliteEventLogTest, AppendsRacingCloseNeverHang) {
  auto log = MustOpen();
  ASSERT_NE(log, nullptr);
  std::atomic<int64_t> committed{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0;; ++i) {
        absl::StatusOr<std::vector<int64_t>> r =
            log->Append({Seq("q", absl::StrCat(t), absl::StrCat(i))});
        if (!r.ok()) {
          EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
          return;
        }
        committed += static_cast<int64_t>(r->size());
      }
    });
  }
  absl::SleepFor(absl::Milliseconds(100));
  log->Close();
  for (std::thread& t : threads) t.join();
  // Everything acknowledged is durable, and nothing else was written.
  log = MustOpen();
  ASSERT_NE(log, nullptr);
  EXPECT_EQ(log->LastOffset(), committed.load());
}

TEST_F(SqliteEventLogTest, ConcurrentReadersShareASmallPool) {
  SqliteEventLog::Options options;
  options.max_read_connections = 2;
  auto log = MustOpen(options);
  ASSERT_NE(log, nullptr);
  std::atomic<bool> stop{false};
  std::vector<std::thread> readers;
  for (int r = 0; r < 6; ++r) {
    readers.emplace_back([&, r] {
      int64_t seen = 0;
      while (!stop.load()) {
        absl::StatusOr<std::vector<LogRecord>> records =
            r % 2 == 0 ? log->Read(seen, 50) : log->ReadJobSet("q", "js", seen, 50);
        ASSERT_TRUE(records.ok()) << records.status();
        for (const LogRecord& rec : *records) {
          ASSERT_GT(rec.offset, seen);
          seen = rec.offset;
        }
      }
    });
  }
  for (int i = 0; i < 100; ++i) ASSERT_TRUE(log->Append({Seq("q", "js", absl::StrCat(i))}).ok());
  stop = true;
  for (std::thread& t : readers) t.join();
  absl::StatusOr<std::vector<LogRecord>> all = log->Read(0, 1000);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 100u);
}

TEST_F(SqliteEventLogTest, WriterCheckpointsKeepTheWalBounded) {
  // SQLite's own auto-checkpoint is replaced by the writer's; without it the WAL would grow
  // by every record ever appended.
  SqliteEventLog::Options options;
  options.checkpoint_wal_bytes = 256 << 10;
  auto log = MustOpen(options);
  ASSERT_NE(log, nullptr);
  for (int i = 0; i < 200; ++i) {
    regatta::v1::EventSequence seq = Seq("q", "js", absl::StrCat(i));
    seq.add_groups(std::string(4000, 'g'));
    ASSERT_TRUE(log->Append({std::move(seq)}).ok());
  }
  // Each commit adds at least two pages (table and index leaf) to the WAL.
  std::uintmax_t wal_bytes = std::filesystem::file_size(path_ + "-wal");
  EXPECT_LT(wal_bytes, std::uintmax_t{200} * 2 * options.page_size / 4)
      << "most of 200 commits should have been checkpointed out of the WAL";
  absl::StatusOr<std::vector<LogRecord>> all = log->Read(0, 1000);
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), 200u);
}

}  // namespace
}  // namespace regatta::eventlog
