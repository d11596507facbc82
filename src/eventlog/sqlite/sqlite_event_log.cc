#include "src/eventlog/sqlite/sqlite_event_log.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/common/logging.h"
#include "src/common/status_macros.h"
#include "src/common/thread_name.h"

namespace regatta::eventlog {
namespace {

// Numbered schema migrations; PRAGMA user_version holds the last one applied. Append new steps
// at the end and bump kSchemaVersion; never edit a released step.
struct Migration {
  int version;
  const char* sql;
};
constexpr Migration kMigrations[] = {
    {1, R"sql(
CREATE TABLE event_log (
  "offset" INTEGER PRIMARY KEY,
  queue    TEXT NOT NULL,
  job_set  TEXT NOT NULL,
  payload  BLOB NOT NULL
);
CREATE INDEX event_log_by_job_set ON event_log (queue, job_set, "offset");
)sql"},
};
static_assert(sizeof(kMigrations) / sizeof(kMigrations[0]) == SqliteEventLog::kSchemaVersion,
              "one migration per schema version");

constexpr char kInsertSql[] =
    R"sql(INSERT INTO event_log ("offset", queue, job_set, payload) VALUES (?, ?, ?, ?))sql";
// Reads stop at the published offset: a read connection can see a commit before the writer
// has published it, and nothing may be read that LastOffset() does not cover yet.
constexpr char kReadSql[] = R"sql(SELECT "offset", payload FROM event_log
WHERE "offset" > ? AND "offset" <= ? ORDER BY "offset" LIMIT ?)sql";
constexpr char kReadJobSetSql[] = R"sql(SELECT "offset", payload FROM event_log
WHERE queue = ? AND job_set = ? AND "offset" > ? AND "offset" <= ? ORDER BY "offset" LIMIT ?)sql";

absl::StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {  // primary result code
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
      return absl::StatusCode::kUnavailable;
    case SQLITE_CORRUPT:
      return absl::StatusCode::kDataLoss;
    case SQLITE_FULL:
    case SQLITE_NOMEM:
      return absl::StatusCode::kResourceExhausted;
    case SQLITE_NOTADB:
    case SQLITE_CANTOPEN:
    case SQLITE_PERM:
    case SQLITE_READONLY:
    case SQLITE_CONSTRAINT:
      return absl::StatusCode::kFailedPrecondition;
    default:
      return absl::StatusCode::kInternal;
  }
}

absl::Status SqliteError(sqlite3* db, int rc, absl::string_view what, absl::string_view path) {
  const char* msg = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return absl::Status(CodeFor(rc), absl::StrCat("event log ", path, ": ", what, ": ", msg, " (",
                                                sqlite3_errstr(rc), ")"));
}

absl::Status Exec(sqlite3* db, const char* sql, absl::string_view path) {
  char* err = nullptr;
  int rc = sqlite3_exec(db, sql, nullptr, nullptr, &err);
  if (rc == SQLITE_OK) return absl::OkStatus();
  std::string msg = err != nullptr ? err : sqlite3_errstr(rc);
  sqlite3_free(err);
  return absl::Status(CodeFor(rc), absl::StrCat("event log ", path, ": ", msg, " (",
                                                sqlite3_errstr(rc), ") running: ", sql));
}

// Runs a statement returning one integer (or text for journal_mode) row.
absl::StatusOr<std::string> QueryOne(sqlite3* db, const char* sql, absl::string_view path) {
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, sql, path);
  std::string value;
  rc = sqlite3_step(stmt);
  if (rc == SQLITE_ROW) {
    const unsigned char* text = sqlite3_column_text(stmt, 0);
    if (text != nullptr) value = reinterpret_cast<const char*>(text);
    rc = sqlite3_step(stmt);
  }
  if (rc != SQLITE_DONE) {
    absl::Status status = SqliteError(db, rc, sql, path);
    sqlite3_finalize(stmt);
    return status;
  }
  sqlite3_finalize(stmt);
  return value;
}

absl::StatusOr<sqlite3*> OpenConnection(const std::string& path, absl::Duration busy_timeout,
                                        bool create) {
  sqlite3* db = nullptr;
  // NOMUTEX: each connection is used by one thread at a time, guarded by our own locks.
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | (create ? SQLITE_OPEN_CREATE : 0);
  int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  if (rc != SQLITE_OK) {
    absl::Status status = SqliteError(db, rc, "open", path);
    sqlite3_close_v2(db);
    return status;
  }
  sqlite3_extended_result_codes(db, 1);
  sqlite3_busy_timeout(db, static_cast<int>(absl::ToInt64Milliseconds(busy_timeout)));
  return db;
}

absl::Status Prepare(sqlite3* db, const char* sql, sqlite3_stmt** stmt, absl::string_view path) {
  int rc = sqlite3_prepare_v3(db, sql, -1, SQLITE_PREPARE_PERSISTENT, stmt, nullptr);
  if (rc != SQLITE_OK) return SqliteError(db, rc, absl::StrCat("prepare ", sql), path);
  return absl::OkStatus();
}

// Brings the schema to kSchemaVersion, one transaction per step.
absl::Status Migrate(sqlite3* db, absl::string_view path) {
  ASSIGN_OR_RETURN(std::string text, QueryOne(db, "PRAGMA user_version", path));
  int version = 0;
  if (!text.empty()) version = std::stoi(text);
  if (version > SqliteEventLog::kSchemaVersion) {
    return absl::FailedPreconditionError(
        absl::StrFormat("event log %s has schema version %d, newer than this binary's %d", path,
                        version, SqliteEventLog::kSchemaVersion));
  }
  for (const Migration& m : kMigrations) {
    if (m.version <= version) continue;
    RETURN_IF_ERROR(Exec(db, "BEGIN IMMEDIATE", path));
    absl::Status status = Exec(db, m.sql, path);
    if (status.ok()) {
      status = Exec(db, absl::StrCat("PRAGMA user_version = ", m.version).c_str(), path);
    }
    if (status.ok()) status = Exec(db, "COMMIT", path);
    if (!status.ok()) {
      sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
      return absl::Status(status.code(),
                          absl::StrCat("migration ", m.version, ": ", status.message()));
    }
    // A fresh file is not news; upgrading an existing log is.
    if (version > 0) LOG_INFO("event log migrated", "path", path, "version", m.version);
  }
  return absl::OkStatus();
}

}  // namespace

struct SqliteEventLog::ReadConnection {
  sqlite3* db = nullptr;
  sqlite3_stmt* read = nullptr;
  sqlite3_stmt* read_job_set = nullptr;

  ~ReadConnection() {
    sqlite3_finalize(read);
    sqlite3_finalize(read_job_set);
    sqlite3_close_v2(db);
  }
};

absl::StatusOr<std::unique_ptr<SqliteEventLog>> SqliteEventLog::Open(const std::string& path,
                                                                     Options options) {
  if (options.max_record_bytes <= 0 || options.max_read_connections <= 0) {
    return absl::InvalidArgumentError(
        "event log options: max_record_bytes and max_read_connections must be positive");
  }
  ASSIGN_OR_RETURN(sqlite3 * db, OpenConnection(path, options.busy_timeout, /*create=*/true));
  // Until the constructor owns `db`, close it on every error path.
  auto fail = [db](absl::Status status) {
    sqlite3_close_v2(db);
    return status;
  };
  // Must precede the first write (journal_mode = WAL writes the header); no-op afterwards.
  absl::Status page_status =
      Exec(db, absl::StrCat("PRAGMA page_size = ", options.page_size).c_str(), path);
  if (!page_status.ok()) return fail(page_status);
  absl::StatusOr<std::string> mode = QueryOne(db, "PRAGMA journal_mode = WAL", path);
  if (!mode.ok()) return fail(mode.status());
  if (*mode != "wal") {
    return fail(absl::FailedPreconditionError(absl::StrCat(
        "event log ", path, ": cannot enable WAL mode (journal_mode is ", *mode, ")")));
  }
  // NORMAL: a commit writes the WAL without syncing it; WaitDurable syncs it (see the class
  // comment), and checkpoints sync both files before the WAL starts over.
  absl::Status status = Exec(db, "PRAGMA synchronous = NORMAL", path);
  // Truncate the WAL file back to this size after checkpoints reset it.
  if (status.ok()) status = Exec(db, "PRAGMA journal_size_limit = 67108864", path);
  if (status.ok()) status = Migrate(db, path);
  if (!status.ok()) return fail(status);
  absl::StatusOr<std::string> last = QueryOne(db, R"(SELECT MAX("offset") FROM event_log)", path);
  if (!last.ok()) return fail(last.status());
  int64_t last_offset = last->empty() ? 0 : std::stoll(*last);

  std::unique_ptr<SqliteEventLog> log(
      new SqliteEventLog(path, std::move(options), db, last_offset));
  RETURN_IF_ERROR(log->PrepareWriter());
  RETURN_IF_ERROR(log->OpenWalForSync());
  ASSIGN_OR_RETURN(log->checkpoint_db_,
                   OpenConnection(path, log->options_.busy_timeout, /*create=*/false));
  // A checkpoint syncs the WAL before copying it and the database file after.
  RETURN_IF_ERROR(Exec(log->checkpoint_db_, "PRAGMA synchronous = FULL", path));
  log->writer_thread_ = std::thread([raw = log.get()] {
    SetThreadName("rg-log-writer");
    raw->WriterLoop();
  });
  log->checkpointer_thread_ = std::thread([raw = log.get()] {
    SetThreadName("rg-log-ckpt");
    raw->CheckpointerLoop();
  });
  return log;
}

SqliteEventLog::SqliteEventLog(std::string path, Options options, sqlite3* writer,
                               int64_t last_offset)
    : path_(std::move(path)),
      options_(std::move(options)),
      published_offset_(last_offset),
      // What an earlier process committed is made durable by OpenWalForSync.
      durable_offset_(0),
      last_offset_(last_offset),
      writer_db_(writer),
      next_offset_(last_offset + 1) {}

SqliteEventLog::~SqliteEventLog() { Close(); }

namespace {
// Called by SQLite after each commit with the WAL size in pages; records it for the writer.
int OnWalCommit(void* arg, sqlite3*, const char*, int pages) {
  *static_cast<int*>(arg) = pages;
  return SQLITE_OK;
}
}  // namespace

absl::Status SqliteEventLog::PrepareWriter() {
  RETURN_IF_ERROR(Prepare(writer_db_, kInsertSql, &insert_stmt_, path_));
  RETURN_IF_ERROR(Prepare(writer_db_, "BEGIN IMMEDIATE", &begin_stmt_, path_));
  RETURN_IF_ERROR(Prepare(writer_db_, "COMMIT", &commit_stmt_, path_));
  // Replaces SQLite's auto-checkpoint, which would run inside COMMIT and delay the callers
  // being acknowledged; see MaybeCheckpoint().
  sqlite3_wal_hook(writer_db_, &OnWalCommit, &wal_pages_);
  ASSIGN_OR_RETURN(std::string page_size, QueryOne(writer_db_, "PRAGMA page_size", path_));
  page_size_ = std::stoll(page_size);
  return absl::OkStatus();
}

absl::Status SqliteEventLog::OpenWalForSync() {
  // Reading the last offset has created the WAL file (SQLite opens it with the first read).
  const std::string wal_path = path_ + "-wal";
  const int fd = open(wal_path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    return absl::InternalError(
        absl::StrCat("event log ", path_, ": cannot open ", wal_path, ": ", strerror(errno)));
  }
  {
    absl::MutexLock lock(&mu_);
    wal_fd_ = fd;
  }
  // What an earlier process committed may still be only in the page cache; and the WAL's
  // directory entry must be durable for its content to be.
  const std::string dir = path_.find('/') == std::string::npos
                              ? std::string(".")
                              : path_.substr(0, std::max<size_t>(path_.rfind('/'), 1));
  const int dir_fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    if (fsync(dir_fd) != 0) LOG_WARN("event log: fsync of its directory failed", "dir", dir);
    close(dir_fd);
  }
  return WaitDurable(LastOffset());
}

absl::Status SqliteEventLog::WaitDurable(int64_t offset) {
  mu_.Lock();
  absl::Status status;
  for (;;) {
    if (durable_offset_ >= offset) break;
    if (offset > published_offset_) {
      status = absl::InvalidArgumentError(absl::StrCat(
          "offset ", offset, " is past the event log's last record ", published_offset_));
      break;
    }
    if (!sync_error_.ok()) {
      status = sync_error_;
      break;
    }
    if (wal_fd_ < 0) {
      status = absl::UnavailableError(absl::StrCat("event log ", path_, " is closed"));
      break;
    }
    if (syncing_) {
      // Another waiter's sync may cover `offset`; if not, the next round runs one.
      auto settled = [this, offset]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return durable_offset_ >= offset || !syncing_;
      };
      mu_.Await(absl::Condition(&settled));
      continue;
    }
    // Lead a sync covering everything committed so far: those frames are in the WAL already.
    syncing_ = true;
    const int64_t target = published_offset_;
    const int fd = wal_fd_;
    mu_.Unlock();
    if (options_.before_sync_for_testing) options_.before_sync_for_testing();
    int rc;
    do {
      rc = fdatasync(fd);
    } while (rc != 0 && errno == EINTR);
    const int error = rc == 0 ? 0 : errno;
    mu_.Lock();
    syncing_ = false;
    if (rc != 0) {
      sync_error_ =
          absl::InternalError(absl::StrCat("event log ", path_, ": fdatasync of the WAL failed (",
                                           strerror(error), "); restart the server to recover"));
      LOG_ERROR("event log sync failed; appends fail from now on", "path", path_, "error",
                strerror(error));
    } else {
      durable_offset_ = std::max(durable_offset_, target);
      ++stats_.syncs;
    }
  }
  mu_.Unlock();
  return status;
}

int64_t SqliteEventLog::DurableOffset() {
  absl::MutexLock lock(&mu_);
  return durable_offset_;
}

void SqliteEventLog::Close() {
  absl::MutexLock close_lock(&close_mu_);
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  // The writer commits what was queued before closed_ was set, then exits.
  if (writer_thread_.joinable()) writer_thread_.join();
  // Everything committed is made durable before the file is let go.
  if (absl::Status synced = WaitDurable(LastOffset());
      !synced.ok() && !absl::IsUnavailable(synced)) {
    LOG_WARN("event log: the last sync before closing failed", "path", path_, "error",
             synced.ToString());
  }
  {
    absl::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return !syncing_; };
    mu_.Await(absl::Condition(&idle));
    if (wal_fd_ >= 0) close(wal_fd_);
    wal_fd_ = -1;
  }
  if (checkpointer_thread_.joinable()) checkpointer_thread_.join();
  sqlite3_close_v2(checkpoint_db_);
  checkpoint_db_ = nullptr;
  {
    absl::MutexLock lock(&pool_mu_);
    pool_closed_ = true;
    auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pool_mu_) { return readers_in_use_ == 0; };
    pool_mu_.Await(absl::Condition(&idle));
    free_readers_.clear();
    readers_.clear();
  }
  // Closed last, so SQLite checkpoints and removes the WAL file as the last connection.
  if (writer_db_ != nullptr) {
    sqlite3_finalize(insert_stmt_);
    sqlite3_finalize(begin_stmt_);
    sqlite3_finalize(commit_stmt_);
    insert_stmt_ = begin_stmt_ = commit_stmt_ = nullptr;
    int rc = sqlite3_close_v2(writer_db_);
    if (rc != SQLITE_OK) LOG_WARN("event log close failed", "path", path_, "rc", rc);
    writer_db_ = nullptr;
  }
}

absl::StatusOr<std::vector<int64_t>> SqliteEventLog::Append(
    std::vector<regatta::v1::EventSequence> sequences) {
  const absl::Time start = options_.on_append ? absl::Now() : absl::InfinitePast();
  absl::StatusOr<std::vector<int64_t>> offsets = Commit(std::move(sequences));
  if (offsets.ok() && !offsets->empty()) {
    if (absl::Status durable = WaitDurable(offsets->back()); !durable.ok()) offsets = durable;
  }
  if (options_.on_append) {
    options_.on_append(AppendWait::kDurable, absl::Now() - start, offsets.ok());
  }
  return offsets;
}

absl::StatusOr<std::vector<int64_t>> SqliteEventLog::AppendVisible(
    std::vector<regatta::v1::EventSequence> sequences) {
  if (!options_.on_append) return Commit(std::move(sequences));
  const absl::Time start = absl::Now();
  absl::StatusOr<std::vector<int64_t>> offsets = Commit(std::move(sequences));
  options_.on_append(AppendWait::kVisible, absl::Now() - start, offsets.ok());
  return offsets;
}

absl::StatusOr<std::vector<int64_t>> SqliteEventLog::Commit(
    std::vector<regatta::v1::EventSequence> sequences) {
  // Serialize on the caller's thread, outside every lock. The limit is checked on the bytes
  // (a separate ByteSizeLong pass would walk a 1000-job tree once more).
  PendingAppend pending;
  pending.rows.resize(sequences.size());
  for (size_t i = 0; i < sequences.size(); ++i) {
    Row& row = pending.rows[i];
    const bool serialized = sequences[i].SerializeToString(&row.payload);
    const size_t size = serialized ? row.payload.size() : sequences[i].ByteSizeLong();
    if (!serialized || size > static_cast<size_t>(options_.max_record_bytes)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "event sequence %d of the batch (queue %s, job set %s) is %d bytes serialized, over "
          "the event log's record limit of %d bytes",
          i, sequences[i].queue(), sequences[i].job_set(), size, options_.max_record_bytes));
    }
    row.queue = std::move(*sequences[i].mutable_queue());
    row.job_set = std::move(*sequences[i].mutable_job_set());
  }

  size_t bytes = 0;
  for (const Row& row : pending.rows) bytes += row.payload.size();
  bool inline_commit = false;
  {
    absl::MutexLock lock(&mu_);
    if (closed_) return absl::UnavailableError(absl::StrCat("event log ", path_, " is closed"));
    if (!sync_error_.ok()) return sync_error_;
    if (pending.rows.empty()) return std::vector<int64_t>();
    // An append that finds the log idle commits on its own thread: two thread switches less
    // on every hop of a pipeline chain. Under contention (or for a big batch, whose message
    // tree is best freed while the writer writes) the writer thread group-commits the queue.
    inline_commit = !writing_ && queue_.empty() && bytes <= kInlineCommitBytes;
    if (inline_commit) {
      writing_ = true;
    } else {
      queue_.push_back(&pending);
    }
  }
  if (inline_commit) {
    std::vector<PendingAppend*> batch = {&pending};
    CommitAndPublish(batch);
    MaybeCheckpoint();
    absl::MutexLock lock(&mu_);
    writing_ = false;
  } else {
    // Freeing a large message tree costs about as much as serializing it; do it while the
    // writer writes and syncs rather than before or after.
    std::vector<regatta::v1::EventSequence>().swap(sequences);
    absl::MutexLock lock(&mu_);
    mu_.Await(absl::Condition(&pending.done));
  }
  RETURN_IF_ERROR(pending.status);
  std::vector<int64_t> offsets(pending.rows.size());
  for (size_t i = 0; i < offsets.size(); ++i) offsets[i] = pending.first_offset + i;
  return offsets;
}

void SqliteEventLog::WriterLoop() {
  std::vector<PendingAppend*> batch;
  for (;;) {
    batch.clear();
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return !writing_ && (!queue_.empty() || closed_);
      };
      mu_.Await(absl::Condition(&ready));
      if (queue_.empty()) return;  // closed and drained, and no append commits inline
      batch.assign(queue_.begin(), queue_.end());
      queue_.clear();
      writing_ = true;
    }
    CommitAndPublish(batch);
    MaybeCheckpoint();
    absl::MutexLock lock(&mu_);
    writing_ = false;
  }
}

void SqliteEventLog::CommitAndPublish(const std::vector<PendingAppend*>& batch) {
  if (options_.before_commit_for_testing) options_.before_commit_for_testing();
  int64_t commits = 0;
  absl::Status status = CommitBatch(batch);
  if (status.ok()) {
    commits = 1;
  } else if (batch.size() == 1) {
    batch[0]->status = status;
  } else {
    // Retry one append per transaction so a failure reaches only the append that caused it.
    LOG_WARN("event log group commit failed; retrying appends one by one", "path", path_, "appends",
             batch.size(), "error", status.ToString());
    for (PendingAppend* p : batch) {
      p->status = CommitBatch({p});
      if (p->status.ok()) ++commits;
    }
  }
  if (options_.before_publish_for_testing) options_.before_publish_for_testing();
  absl::MutexLock lock(&mu_);
  for (PendingAppend* p : batch) {
    if (p->status.ok()) {
      ++stats_.appends;
      stats_.records += static_cast<int64_t>(p->rows.size());
    }
    p->done = true;
  }
  stats_.commits += commits;
  published_offset_ = next_offset_ - 1;
  last_offset_.store(published_offset_, std::memory_order_release);
}

// WAL upkeep, run by whoever committed (the writer thread or an inline append) after it has
// woken the callers of a commit. The bulk of each
// checkpoint runs on the checkpointer thread (PASSIVE: alongside the writer and readers). But
// the WAL only starts over from its beginning if a checkpoint has copied all of it when the
// next transaction begins, which a busy writer never lets the background catch; so once the
// background has done most of the work, the writer copies the small remainder itself
// (RESTART) and the next commit rewinds the WAL.
void SqliteEventLog::MaybeCheckpoint() {
  const int64_t threshold = options_.checkpoint_wal_bytes;
  {
    absl::MutexLock lock(&mu_);
    if (wal_pages_ < checkpointed_pages_) checkpointed_pages_ = 0;  // the WAL started over
    const int64_t total = wal_pages_ * page_size_;
    const int64_t unchecked = (wal_pages_ - checkpointed_pages_) * page_size_;
    const bool remainder_small = !checkpoint_running_ && unchecked <= threshold / 4;
    if (total < threshold) return;
    // Until the remainder is small the background keeps chasing the WAL's tail, unless it
    // cannot keep up (or readers pin the WAL): at 4x the writer blocks on it.
    if (!remainder_small && total < 4 * threshold) {
      checkpoint_requested_ = true;
      return;
    }
  }
  int log_frames = -1;
  int checkpointed_frames = -1;
  int rc = sqlite3_wal_checkpoint_v2(writer_db_, nullptr, SQLITE_CHECKPOINT_RESTART, &log_frames,
                                     &checkpointed_frames);
  if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
    LOG_WARN("event log checkpoint failed", "path", path_, "error", sqlite3_errmsg(writer_db_));
  }
  absl::MutexLock lock(&mu_);
  ++stats_.checkpoints;
  if (rc == SQLITE_OK) {
    wal_pages_ = 0;  // the next commit rewinds the WAL
    checkpointed_pages_ = 0;
  } else if (checkpointed_frames >= 0) {
    checkpointed_pages_ = checkpointed_frames;
  }
}

void SqliteEventLog::CheckpointerLoop() {
  for (;;) {
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
        return checkpoint_requested_ || closed_;
      };
      mu_.Await(absl::Condition(&ready));
      if (closed_) return;  // closing the last connection checkpoints anyway
      checkpoint_requested_ = false;
      checkpoint_running_ = true;
    }
    int log_frames = -1;
    int checkpointed_frames = -1;
    int rc = sqlite3_wal_checkpoint_v2(checkpoint_db_, nullptr, SQLITE_CHECKPOINT_PASSIVE,
                                       &log_frames, &checkpointed_frames);
    if (rc != SQLITE_OK && rc != SQLITE_BUSY) {
      LOG_WARN("event log checkpoint failed", "path", path_, "error",
               sqlite3_errmsg(checkpoint_db_));
    }
    absl::MutexLock lock(&mu_);
    checkpoint_running_ = false;
    ++stats_.checkpoints;
    if (checkpointed_frames >= 0) checkpointed_pages_ = checkpointed_frames;
  }
}

absl::Status SqliteEventLog::CommitBatch(const std::vector<PendingAppend*>& batch) {
  auto step = [this](sqlite3_stmt* stmt, absl::string_view what) -> absl::Status {
    int rc = sqlite3_step(stmt);
    sqlite3_reset(stmt);
    if (rc != SQLITE_DONE) return SqliteError(writer_db_, rc, what, path_);
    return absl::OkStatus();
  };
  auto rollback = [this](absl::Status status) {
    if (sqlite3_get_autocommit(writer_db_) == 0) {
      sqlite3_exec(writer_db_, "ROLLBACK", nullptr, nullptr, nullptr);
    }
    return status;
  };

  RETURN_IF_ERROR(step(begin_stmt_, "begin"));
  int64_t offset = next_offset_;
  for (PendingAppend* p : batch) {
    p->first_offset = offset;
    for (const Row& row : p->rows) {
      // SQLITE_STATIC: the rows outlive the statement step; no copies.
      sqlite3_bind_int64(insert_stmt_, 1, offset);
      sqlite3_bind_text(insert_stmt_, 2, row.queue.data(), static_cast<int>(row.queue.size()),
                        SQLITE_STATIC);
      sqlite3_bind_text(insert_stmt_, 3, row.job_set.data(), static_cast<int>(row.job_set.size()),
                        SQLITE_STATIC);
      // data() is never null, so an empty payload is stored as an empty blob, not NULL.
      sqlite3_bind_blob(insert_stmt_, 4, row.payload.data(), static_cast<int>(row.payload.size()),
                        SQLITE_STATIC);
      absl::Status status = step(insert_stmt_, absl::StrCat("insert offset ", offset));
      sqlite3_clear_bindings(insert_stmt_);
      if (!status.ok()) return rollback(status);
      ++offset;
    }
  }
  absl::Status status = step(commit_stmt_, "commit");
  if (!status.ok()) return rollback(status);
  next_offset_ = offset;
  return absl::OkStatus();
}

absl::StatusOr<SqliteEventLog::ReadConnection*> SqliteEventLog::AcquireReader() {
  absl::MutexLock lock(&pool_mu_);
  auto ready = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(pool_mu_) {
    return pool_closed_ || !free_readers_.empty() ||
           static_cast<int>(readers_.size()) < options_.max_read_connections;
  };
  pool_mu_.Await(absl::Condition(&ready));
  if (pool_closed_) return absl::UnavailableError(absl::StrCat("event log ", path_, " is closed"));
  if (free_readers_.empty()) {
    auto conn = std::make_unique<ReadConnection>();
    ASSIGN_OR_RETURN(conn->db, OpenConnection(path_, options_.busy_timeout, /*create=*/false));
    // Readers never write; make that a guarantee rather than a convention.
    RETURN_IF_ERROR(Exec(conn->db, "PRAGMA query_only = 1", path_));
    RETURN_IF_ERROR(Prepare(conn->db, kReadSql, &conn->read, path_));
    RETURN_IF_ERROR(Prepare(conn->db, kReadJobSetSql, &conn->read_job_set, path_));
    free_readers_.push_back(conn.get());
    readers_.push_back(std::move(conn));
  }
  ReadConnection* conn = free_readers_.back();
  free_readers_.pop_back();
  ++readers_in_use_;
  return conn;
}

void SqliteEventLog::ReleaseReader(ReadConnection* conn) {
  absl::MutexLock lock(&pool_mu_);
  free_readers_.push_back(conn);
  --readers_in_use_;
}

absl::StatusOr<std::vector<LogRecord>> SqliteEventLog::Read(int64_t after, int max_records) {
  return RunRead(/*job_set_only=*/false, "", "", after, max_records);
}

absl::StatusOr<std::vector<LogRecord>> SqliteEventLog::ReadJobSet(absl::string_view queue,
                                                                  absl::string_view job_set,
                                                                  int64_t after, int max_records) {
  return RunRead(/*job_set_only=*/true, queue, job_set, after, max_records);
}

absl::StatusOr<std::vector<LogRecord>> SqliteEventLog::RunRead(bool job_set_only,
                                                               absl::string_view queue,
                                                               absl::string_view job_set,
                                                               int64_t after, int max_records) {
  if (max_records < 0) {
    return absl::InvalidArgumentError(absl::StrCat("max_records is negative: ", max_records));
  }
  std::vector<LogRecord> records;
  if (max_records == 0) return records;
  ASSIGN_OR_RETURN(ReadConnection * conn, AcquireReader());
  sqlite3_stmt* stmt = job_set_only ? conn->read_job_set : conn->read;
  int arg = 1;
  if (job_set_only) {
    sqlite3_bind_text(stmt, arg++, queue.data(), static_cast<int>(queue.size()), SQLITE_STATIC);
    sqlite3_bind_text(stmt, arg++, job_set.data(), static_cast<int>(job_set.size()), SQLITE_STATIC);
  }
  sqlite3_bind_int64(stmt, arg++, after);
  sqlite3_bind_int64(stmt, arg++, LastOffset());
  sqlite3_bind_int64(stmt, arg++, max_records);

  absl::Status status;
  for (;;) {
    int rc = sqlite3_step(stmt);
    if (rc == SQLITE_DONE) break;
    if (rc != SQLITE_ROW) {
      status = SqliteError(conn->db, rc, "read", path_);
      break;
    }
    LogRecord& record = records.emplace_back();
    record.offset = sqlite3_column_int64(stmt, 0);
    // A row this process did not write (or a damaged file) must give an error, never a crash.
    int type = sqlite3_column_type(stmt, 1);
    if (type != SQLITE_BLOB) {
      status = absl::DataLossError(absl::StrFormat(
          "event log %s: record at offset %d has a payload of SQLite type %d, not a blob", path_,
          record.offset, type));
      break;
    }
    const void* data = sqlite3_column_blob(stmt, 1);
    int size = sqlite3_column_bytes(stmt, 1);
    if (!record.sequence.ParseFromArray(data, size)) {
      status = absl::DataLossError(
          absl::StrFormat("event log %s: record at offset %d (%d bytes) does not parse as a "
                          "regatta.v1.EventSequence",
                          path_, record.offset, size));
      break;
    }
  }
  sqlite3_reset(stmt);  // ends the read transaction so checkpoints can progress
  sqlite3_clear_bindings(stmt);
  ReleaseReader(conn);
  if (!status.ok()) return status;
  return records;
}

int64_t SqliteEventLog::LastOffset() { return last_offset_.load(std::memory_order_acquire); }

int64_t SqliteEventLog::WaitForAppend(int64_t after, absl::Time deadline) {
  absl::MutexLock lock(&mu_);
  auto ready = [this, after]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return published_offset_ > after || closed_;
  };
  mu_.AwaitWithDeadline(absl::Condition(&ready), deadline);
  return published_offset_;
}

absl::Status SqliteEventLog::Health() {
  absl::MutexLock lock(&mu_);
  if (closed_) return absl::UnavailableError(absl::StrCat("event log ", path_, " is closed"));
  return sync_error_;
}

SqliteEventLog::Stats SqliteEventLog::GetStats() {
  absl::MutexLock lock(&mu_);
  Stats stats = stats_;
  stats.queued_appends = static_cast<int64_t>(queue_.size());
  return stats;
}

}  // namespace regatta::eventlog
