#ifndef REGATTA_SRC_STORE_SQLITE_SQLITE_INTERNAL_H_
#define REGATTA_SRC_STORE_SQLITE_SQLITE_INTERNAL_H_

// Shared by the SQLite backend's files (sqlite_store.cc, sqlite_pipeline_views.cc); not part of
// the store's interface.

#include <sqlite3.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/message.h"
#include "google/protobuf/message_lite.h"
#include "google/protobuf/timestamp.pb.h"
#include "src/common/status_macros.h"
#include "src/store/sqlite/sqlite_store.h"

namespace regatta::store {

namespace sqlite_internal {

inline absl::StatusCode CodeFor(int rc) {
  switch (rc & 0xff) {
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_IOERR:
    case SQLITE_FULL:
    case SQLITE_CANTOPEN:
    case SQLITE_PROTOCOL:
      return absl::StatusCode::kUnavailable;  // worth a retry
    case SQLITE_CORRUPT:
    case SQLITE_NOTADB:
      return absl::StatusCode::kDataLoss;
    default:
      return absl::StatusCode::kInternal;
  }
}

inline absl::Status SqliteError(sqlite3* db, int rc, absl::string_view context) {
  const char* message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
  return absl::Status(CodeFor(rc),
                      absl::StrCat("sqlite store: ", context, ": ", message, " (code ", rc, ")"));
}

// A prepared statement borrowed from a Connection's cache; reset on destruction so the cached
// statement is ready for the next use. Bind indices start at 1, column indices at 0.
class Stmt {
 public:
  Stmt(sqlite3* db, sqlite3_stmt* stmt, bool owned) : db_(db), stmt_(stmt), owned_(owned) {}
  Stmt(Stmt&& other) noexcept
      : db_(other.db_),
        stmt_(std::exchange(other.stmt_, nullptr)),
        owned_(other.owned_),
        bind_rc_(other.bind_rc_),
        rc_(other.rc_) {}
  Stmt& operator=(Stmt&&) = delete;
  ~Stmt() {
    if (stmt_ == nullptr) return;
    if (owned_) {
      sqlite3_finalize(stmt_);
    } else {
      sqlite3_reset(stmt_);
      sqlite3_clear_bindings(stmt_);
    }
  }

  Stmt& Bind(int i, int64_t v) { return Check(sqlite3_bind_int64(stmt_, i, v)); }
  Stmt& BindText(int i, absl::string_view v) {
    return Check(
        sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Stmt& BindBlob(int i, absl::string_view v) {
    return Check(
        sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT));
  }
  Stmt& BindNull(int i) { return Check(sqlite3_bind_null(stmt_, i)); }
  // Without a copy: `v` must stay alive and unchanged until the statement is reset.
  Stmt& BindTextRef(int i, absl::string_view v) {
    return Check(sqlite3_bind_text(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC));
  }
  Stmt& BindBlobRef(int i, absl::string_view v) {
    return Check(sqlite3_bind_blob(stmt_, i, v.data(), static_cast<int>(v.size()), SQLITE_STATIC));
  }

  // Makes the statement ready to run again with new bindings.
  void Reset() {
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
    bind_rc_ = SQLITE_OK;
  }

  // True if a row is available.
  absl::StatusOr<bool> Step() {
    if (bind_rc_ != SQLITE_OK) return SqliteError(db_, bind_rc_, Context("bind"));
    rc_ = sqlite3_step(stmt_);
    if (rc_ == SQLITE_ROW) return true;
    if (rc_ == SQLITE_DONE) return false;
    return SqliteError(db_, rc_, Context("step"));
  }
  // The extended result code of the last Step.
  int rc() const { return rc_; }
  // Runs a statement that returns no rows.
  absl::Status Run() {
    ASSIGN_OR_RETURN(bool row, Step());
    (void)row;
    return absl::OkStatus();
  }

  bool IsNull(int col) const { return sqlite3_column_type(stmt_, col) == SQLITE_NULL; }
  int64_t Int(int col) const { return sqlite3_column_int64(stmt_, col); }
  // Valid until the next Step.
  absl::string_view Text(int col) const {
    const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, col));
    if (p == nullptr) return {};
    return absl::string_view(p, sqlite3_column_bytes(stmt_, col));
  }
  absl::string_view Blob(int col) const {
    const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, col));
    if (p == nullptr) return {};
    return absl::string_view(p, sqlite3_column_bytes(stmt_, col));
  }
  int ColumnCount() const { return sqlite3_column_count(stmt_); }
  int ColumnType(int col) const { return sqlite3_column_type(stmt_, col); }
  absl::string_view ColumnName(int col) const { return sqlite3_column_name(stmt_, col); }

 private:
  Stmt& Check(int rc) {
    if (rc != SQLITE_OK && bind_rc_ == SQLITE_OK) bind_rc_ = rc;
    return *this;
  }
  std::string Context(absl::string_view what) const {
    absl::string_view sql = sqlite3_sql(stmt_);
    if (sql.size() > 120) sql = sql.substr(0, 120);
    return absl::StrCat(what, " [", absl::StripAsciiWhitespace(sql), "]");
  }

  sqlite3* db_;
  sqlite3_stmt* stmt_;
  bool owned_;
  int bind_rc_ = SQLITE_OK;
  int rc_ = SQLITE_OK;
};

// One SQLite connection with a cache of prepared statements. Not thread-safe: the writer is
// guarded by a mutex, a reader is leased to one caller at a time.
class Connection {
 public:
  static absl::StatusOr<std::unique_ptr<Connection>> Open(const std::string& path, bool writer,
                                                          absl::Duration busy_timeout) {
    sqlite3* db = nullptr;
    int flags = SQLITE_OPEN_NOMUTEX |
                (writer ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY);
    int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
    auto conn = std::unique_ptr<Connection>(new Connection(db));
    if (rc != SQLITE_OK) return SqliteError(db, rc, absl::StrCat("open ", path));
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, static_cast<int>(absl::ToInt64Milliseconds(busy_timeout)));
    if (writer) {
      // WAL lets readers run alongside the writer. NORMAL: a commit is atomic and survives a
      // crash of the process, but not necessarily a power loss; the views are a cache of the
      // log (each batch commits with its consumer offset, so a lost tail is ingested again), so
      // an fsync per ingest batch would only add latency to every hop between components.
      // What the log cannot rebuild (client ids) commits with FULL (see StoreClientIds).
      RETURN_IF_ERROR(
          conn->Exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=OFF;"
                     "PRAGMA temp_store=MEMORY; PRAGMA cache_size=-65536;"));
    } else {
      RETURN_IF_ERROR(conn->Exec("PRAGMA temp_store=MEMORY; PRAGMA cache_size=-16384;"));
    }
    return conn;
  }

  ~Connection() {
    for (auto& [sql, stmt] : cache_) sqlite3_finalize(stmt);
    sqlite3_close_v2(db_);
  }

  sqlite3* db() const { return db_; }

  // Prepares `sql` once per connection; statements beyond the cache bound are one-shot.
  absl::StatusOr<Stmt> Prepare(absl::string_view sql) {
    auto it = cache_.find(sql);
    if (it != cache_.end()) return Stmt(db_, it->second, /*owned=*/false);
    bool cache = cache_.size() < kMaxCachedStatements;
    sqlite3_stmt* stmt = nullptr;
    int rc = sqlite3_prepare_v3(db_, sql.data(), static_cast<int>(sql.size()),
                                cache ? SQLITE_PREPARE_PERSISTENT : 0, &stmt, nullptr);
    if (rc != SQLITE_OK) {
      return SqliteError(db_, rc, absl::StrCat("prepare [", sql.substr(0, 120), "]"));
    }
    if (cache) cache_.emplace(std::string(sql), stmt);
    return Stmt(db_, stmt, /*owned=*/!cache);
  }

  // Runs one or more statements that return no rows.
  absl::Status Exec(absl::string_view sql) {
    std::string text(sql);
    char* error = nullptr;
    int rc = sqlite3_exec(db_, text.c_str(), nullptr, nullptr, &error);
    if (rc != SQLITE_OK) {
      std::string message = error != nullptr ? error : sqlite3_errstr(rc);
      sqlite3_free(error);
      return absl::Status(CodeFor(rc), absl::StrCat("sqlite store: ", message, " (code ", rc,
                                                    ") in [", sql.substr(0, 120), "]"));
    }
    return absl::OkStatus();
  }

 private:
  static constexpr size_t kMaxCachedStatements = 256;
  explicit Connection(sqlite3* db) : db_(db) {}

  sqlite3* db_;
  absl::flat_hash_map<std::string, sqlite3_stmt*> cache_;
};

// BEGIN ... COMMIT; rolls back unless committed.
class Transaction {
 public:
  static absl::StatusOr<Transaction> Begin(Connection* conn, bool immediate) {
    RETURN_IF_ERROR(conn->Exec(immediate ? "BEGIN IMMEDIATE" : "BEGIN"));
    return Transaction(conn);
  }
  Transaction(Transaction&& other) noexcept : conn_(std::exchange(other.conn_, nullptr)) {}
  Transaction& operator=(Transaction&&) = delete;
  ~Transaction() {
    if (conn_ != nullptr) conn_->Exec("ROLLBACK").IgnoreError();
  }
  absl::Status Commit() {
    Connection* conn = std::exchange(conn_, nullptr);
    absl::Status status = conn->Exec("COMMIT");
    if (!status.ok()) conn->Exec("ROLLBACK").IgnoreError();
    return status;
  }

 private:
  explicit Transaction(Connection* conn) : conn_(conn) {}
  Connection* conn_;
};

// Plain serialization: map order in the bytes is unspecified, so DumpViews compares parsed
// messages, not bytes (deterministic serialization costs a fifth of an ingest).
inline std::string Serialize(const google::protobuf::MessageLite& message) {
  return message.SerializeAsString();
}

inline int64_t ToMicros(const google::protobuf::Timestamp& ts) {
  return ts.seconds() * 1'000'000 + ts.nanos() / 1000;
}
inline int64_t ToMicros(absl::Time t) { return absl::ToUnixMicros(t); }
inline void SetMicros(int64_t us, google::protobuf::Timestamp* ts) {
  int64_t seconds = us / 1'000'000;
  int64_t rem = us % 1'000'000;
  if (rem < 0) {
    rem += 1'000'000;
    --seconds;
  }
  ts->set_seconds(seconds);
  ts->set_nanos(static_cast<int32_t>(rem * 1000));
}

template <typename Message>
absl::Status ParseBlob(absl::string_view blob, Message* out, absl::string_view table,
                       absl::string_view key_column, absl::string_view key,
                       absl::string_view column) {
  if (out->ParseFromArray(blob.data(), static_cast<int>(blob.size()))) return absl::OkStatus();
  return absl::DataLossError(absl::StrCat("sqlite store: ", table, " row ", key_column, "=", key,
                                          ": column ", column, " does not parse as ",
                                          out->GetTypeName()));
}

using SqlParams = std::vector<std::variant<int64_t, std::string>>;

// Binds params to ?1, ?2, ... in order.
inline void BindAll(Stmt& stmt, const SqlParams& params) {
  for (size_t i = 0; i < params.size(); ++i) {
    int index = static_cast<int>(i) + 1;
    if (const auto* v = std::get_if<int64_t>(&params[i])) {
      stmt.Bind(index, *v);
    } else {
      stmt.BindText(index, std::get<std::string>(params[i]));
    }
  }
}

// Appends " AND column IN (?, ?...)" for the distinct values (nothing if there are none).
template <typename T>
void AppendInList(absl::string_view column, std::vector<T> values, std::string& sql,
                  SqlParams& params) {
  if (values.empty()) return;
  std::sort(values.begin(), values.end());
  values.erase(std::unique(values.begin(), values.end()), values.end());
  absl::StrAppend(&sql, " AND ", column, " IN (");
  for (size_t i = 0; i < values.size(); ++i) {
    absl::StrAppend(&sql, i == 0 ? "?" : ", ?");
    if constexpr (std::is_same_v<T, std::string>) {
      params.emplace_back(values[i]);
    } else {
      params.emplace_back(int64_t{values[i]});
    }
  }
  absl::StrAppend(&sql, ")");
}

// ---- Pipeline views (sqlite_pipeline_views.cc) ----

// Applies one pipeline event inside the writer's ingest transaction; what cannot be applied
// goes to result->skipped.
absl::Status ApplyPipelineChange(Connection* conn, int64_t offset, const PipelineChange& change,
                                 IngestResult* result);
// DumpViews' (table, query) pairs for the pipeline tables.
const std::vector<std::pair<absl::string_view, absl::string_view>>& PipelineDumpQueries();
// The message a pipeline table's blob column holds (nullptr: not a pipeline blob).
std::unique_ptr<google::protobuf::Message> PipelineBlobMessage(absl::string_view table,
                                                               absl::string_view column);

}  // namespace sqlite_internal

// A reader connection borrowed from the pool for one call.
class SqliteStore::ReaderLease {
 public:
  ReaderLease(SqliteStore* store, std::unique_ptr<sqlite_internal::Connection> conn)
      : store_(store), conn_(std::move(conn)) {}
  ReaderLease(ReaderLease&& other) noexcept = default;
  ReaderLease& operator=(ReaderLease&&) = delete;
  ~ReaderLease() {
    if (conn_ != nullptr) store_->ReleaseReader(std::move(conn_));
  }
  sqlite_internal::Connection* get() const { return conn_.get(); }
  sqlite_internal::Connection* operator->() const { return conn_.get(); }

 private:
  SqliteStore* store_;
  std::unique_ptr<sqlite_internal::Connection> conn_;
};

}  // namespace regatta::store

#endif  // REGATTA_SRC_STORE_SQLITE_SQLITE_INTERNAL_H_
