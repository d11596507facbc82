#ifndef REGATTA_SRC_EVENTLOG_SQLITE_SQLITE_EVENT_LOG_H_
#define REGATTA_SRC_EVENTLOG_SQLITE_SQLITE_EVENT_LOG_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/eventlog/event_log.h"

struct sqlite3;
struct sqlite3_stmt;

namespace regatta::eventlog {

// The embedded EventLog: one SQLite database file in WAL mode.
//
// Appends are group-committed: each caller serializes its batch on its own thread. A caller
// that finds the log idle commits its batch itself (no thread switch on the path of a lone
// append); otherwise it enqueues the batch and blocks, and one writer thread drains everything
// pending into a single transaction once the current commit is done, commits it, assigns
// offsets and wakes the callers. Reads run on a small pool of separate read-only connections,
// which WAL lets proceed alongside the writer.
//
// Commit and durability are separate steps. A commit (synchronous=NORMAL) writes the WAL and
// makes the records visible; durability is an fdatasync of the WAL file, group-synced apart
// from commits: a waiter that finds no sync running runs one covering everything visible, the
// others wait for it (one fsync for all). So an append that needs durability (Append) does not
// hold up appends that do not (AppendVisible), and readers in this process see a record as
// soon as it is committed. WAL frames are written in commit order, so a synced record implies
// every earlier one; checkpoints sync the WAL and the database file (SQLite's NORMAL rules)
// before the WAL starts over.
//
// One SqliteEventLog per database file: offsets are assigned by this process's committer,
// so a second writer on the same file would make appends fail (primary-key conflicts), never
// silently reorder the log.
//
// Thread-safe.
class SqliteEventLog final : public EventLog {
 public:
  struct Options {
    // Largest serialized EventSequence accepted by Append.
    int64_t max_record_bytes = int64_t{64} << 20;
    // How long a connection waits for a lock held by another connection (e.g. a checkpoint).
    absl::Duration busy_timeout = absl::Seconds(10);
    // Read connections opened on demand; readers beyond this many wait for a free one.
    int max_read_connections = 4;
    // WAL size after which a background thread checkpoints it into the database file. This
    // replaces SQLite's auto-checkpoint, which runs inside COMMIT and would stall appends. If
    // the WAL still reaches 4x this (sustained load, long reads), the writer checkpoints it
    // itself so it cannot grow without bound.
    int64_t checkpoint_wal_bytes = int64_t{16} << 20;
    // Page size of a newly created file (ignored for an existing one). Bigger pages mean fewer
    // WAL frames for a large record (a 650 KB batch: 4 KiB pages cost ~10 ms CPU, 16 KiB ~7,
    // 64 KiB ~6), smaller ones less written per small commit (a lone small append rewrites a
    // table and an index page: 4 KiB ~10 KB, 16 KiB ~33 KB, 64 KiB ~130 KB).
    int page_size = 16384;
    // Called after every Append (kDurable) and AppendVisible (kVisible) with how long the
    // caller waited and whether it succeeded (metrics); must be quick.
    std::function<void(AppendWait wait, absl::Duration elapsed, bool ok)> on_append;
    // Test hook: called on the committing thread before each transaction begins.
    std::function<void()> before_commit_for_testing;
    // Test hook: called on the committing thread after each commit, before it is published.
    std::function<void()> before_publish_for_testing;
    // Test hook: called on the syncing thread before each fdatasync of the WAL.
    std::function<void()> before_sync_for_testing;
  };

  // Counters for tests, benchmarks and metrics.
  struct Stats {
    int64_t commits = 0;         // transactions committed
    int64_t appends = 0;         // Append calls whose records were committed
    int64_t records = 0;         // sequences committed
    int64_t queued_appends = 0;  // Append calls waiting for the writer right now
    int64_t checkpoints = 0;     // WAL checkpoints run (background and forced)
    int64_t syncs = 0;           // fdatasyncs of the WAL that made records durable
  };

  static constexpr int kSchemaVersion = 1;
  // Appends up to this many serialized bytes may commit on the caller's thread.
  static constexpr size_t kInlineCommitBytes = 256 << 10;

  // Opens (creating if needed) the log at `path` and migrates its schema to kSchemaVersion.
  // FAILED_PRECONDITION if the file was written by a newer schema version.
  static absl::StatusOr<std::unique_ptr<SqliteEventLog>> Open(const std::string& path,
                                                              Options options);
  static absl::StatusOr<std::unique_ptr<SqliteEventLog>> Open(const std::string& path) {
    return Open(path, Options());
  }

  SqliteEventLog(const SqliteEventLog&) = delete;
  SqliteEventLog& operator=(const SqliteEventLog&) = delete;
  ~SqliteEventLog() override;

  // Stops accepting appends, lets the writer commit what is already queued, stops the writer
  // thread and closes every connection (waiting for in-flight reads). Afterwards Append and
  // Read return UNAVAILABLE and WaitForAppend returns at once. Idempotent.
  void Close();

  absl::StatusOr<std::vector<int64_t>> Append(
      std::vector<regatta::v1::EventSequence> sequences) override;
  absl::StatusOr<std::vector<int64_t>> AppendVisible(
      std::vector<regatta::v1::EventSequence> sequences) override;
  absl::Status WaitDurable(int64_t offset) override;
  absl::StatusOr<std::vector<LogRecord>> Read(int64_t after, int max_records) override;
  absl::StatusOr<std::vector<LogRecord>> ReadJobSet(absl::string_view queue,
                                                    absl::string_view job_set, int64_t after,
                                                    int max_records) override;
  int64_t LastOffset() override;
  // Also returns early once the log is closed.
  int64_t WaitForAppend(int64_t after, absl::Time deadline) override;

  // Offset of the last durable record.
  int64_t DurableOffset();
  // OK while the log takes appends; UNAVAILABLE once closed, or the fsync error that stopped it.
  absl::Status Health();
  Stats GetStats();
  const std::string& path() const { return path_; }

 private:
  // One serialized sequence waiting to be written.
  struct Row {
    std::string queue;
    std::string job_set;
    std::string payload;
  };
  // One Append call waiting for the writer. Lives on the caller's stack.
  struct PendingAppend {
    std::vector<Row> rows;
    bool done = false;
    absl::Status status;
    int64_t first_offset = 0;
  };
  // A read connection with its prepared statements.
  struct ReadConnection;

  SqliteEventLog(std::string path, Options options, sqlite3* writer, int64_t last_offset);
  // Commits (Append without the durability wait).
  absl::StatusOr<std::vector<int64_t>> Commit(std::vector<regatta::v1::EventSequence> sequences);

  absl::Status PrepareWriter();
  // Opens the WAL file for syncing and makes it and what it holds durable.
  absl::Status OpenWalForSync();
  // Syncs the WAL (covering everything published so far) and advances durable_offset_. Only
  // the holder of syncing_ calls it, without mu_.
  absl::Status SyncWal(int64_t target);
  void WriterLoop();
  // Commits `batch` (one transaction; one per append if that fails), then marks each append
  // done and publishes the new last offset. Only the holder of writing_ calls it.
  void CommitAndPublish(const std::vector<PendingAppend*>& batch);
  // Checkpoints (or asks the checkpointer to) when the WAL has grown past the threshold.
  void MaybeCheckpoint();
  void CheckpointerLoop();
  // Writes `batch` in one transaction; on success assigns each append its first offset.
  absl::Status CommitBatch(const std::vector<PendingAppend*>& batch);
  absl::Status ExecWriter(const char* sql);

  absl::StatusOr<ReadConnection*> AcquireReader();
  void ReleaseReader(ReadConnection* conn);
  absl::StatusOr<std::vector<LogRecord>> RunRead(bool job_set_only, absl::string_view queue,
                                                 absl::string_view job_set, int64_t after,
                                                 int max_records);

  const std::string path_;
  const Options options_;

  // Guards the append queue, the published offset and the closed flag.
  absl::Mutex mu_;
  std::deque<PendingAppend*> queue_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  // Someone (the writer thread or an appender committing inline) holds the writer connection.
  bool writing_ ABSL_GUARDED_BY(mu_) = false;
  bool checkpoint_requested_ ABSL_GUARDED_BY(mu_) = false;
  bool checkpoint_running_ ABSL_GUARDED_BY(mu_) = false;
  // WAL frames the last checkpoint copied into the database file.
  int checkpointed_pages_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t published_offset_ ABSL_GUARDED_BY(mu_) = 0;
  // Records up to here are durable. Never ahead of published_offset_.
  int64_t durable_offset_ ABSL_GUARDED_BY(mu_) = 0;
  // Someone is running SyncWal.
  bool syncing_ ABSL_GUARDED_BY(mu_) = false;
  // Set once an fdatasync failed: after that the log cannot tell what is on disk, so every
  // later append and WaitDurable fails with it (restart to recover, as PostgreSQL does).
  absl::Status sync_error_ ABSL_GUARDED_BY(mu_);
  // The WAL file, opened for fdatasync only; -1 once closed.
  int wal_fd_ ABSL_GUARDED_BY(mu_) = -1;
  Stats stats_ ABSL_GUARDED_BY(mu_);
  // Mirrors published_offset_ for lock-free LastOffset().
  std::atomic<int64_t> last_offset_{0};

  // Only the holder of writing_ touches these after construction.
  sqlite3* writer_db_ = nullptr;
  sqlite3_stmt* insert_stmt_ = nullptr;
  sqlite3_stmt* begin_stmt_ = nullptr;
  sqlite3_stmt* commit_stmt_ = nullptr;
  int64_t next_offset_ = 1;
  // WAL size in frames, set by SQLite's WAL hook after each commit (holder of writing_ only).
  int wal_pages_ = 0;
  int64_t page_size_ = 4096;
  std::thread writer_thread_;

  // Only the checkpointer thread touches this after construction.
  sqlite3* checkpoint_db_ = nullptr;
  std::thread checkpointer_thread_;

  // Read connection pool.
  absl::Mutex pool_mu_;
  std::vector<std::unique_ptr<ReadConnection>> readers_ ABSL_GUARDED_BY(pool_mu_);
  std::vector<ReadConnection*> free_readers_ ABSL_GUARDED_BY(pool_mu_);
  int readers_in_use_ ABSL_GUARDED_BY(pool_mu_) = 0;
  bool pool_closed_ ABSL_GUARDED_BY(pool_mu_) = false;

  absl::Mutex close_mu_;  // serializes Close()
};

}  // namespace regatta::eventlog

#endif  // REGATTA_SRC_EVENTLOG_SQLITE_SQLITE_EVENT_LOG_H_
