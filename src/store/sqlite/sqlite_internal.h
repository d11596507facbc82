#ifndef REGATTA_SRC_STORE_SQLITE_SQLITE_INTERNAL_H_
#define REGATTA_SRC_STORE_SQLITE_SQLITE_INTERNAL_H_

// Shared by the SQLite backend's files (sqlite_store.cc, sqlite_pipeline_views.cc,
// sqlite_device_views.cc); not part of the store's interface.

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
#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/message_lite.h"
#include "google/protobuf/timestamp.pb.h"
#include "src/common/logging.h"
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
    if (bind_rc_ != SQLITE_OK) return Failed("bind", bind_rc_);
    rc_ = sqlite3_step(stmt_);
    if (rc_ == SQLITE_ROW) return true;
    if (rc_ == SQLITE_DONE) return false;
    return Failed("step", rc_);
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
  // The statement goes to the log only: status messages may reach clients.
  absl::Status Failed(absl::string_view what, int rc) const {
    absl::Status error = SqliteError(db_, rc, what);
    absl::string_view sql = absl::StripAsciiWhitespace(sqlite3_sql(stmt_));
    sql = sql.substr(0, 500);
    // A constraint failure is an answer some callers expect (a duplicate), not a fault.
    if ((rc & 0xff) == SQLITE_CONSTRAINT) {
      LOG_DEBUG("sqlite statement failed", "error", error.message(), "sql", sql);
    } else {
      LOG_WARN("sqlite statement failed", "error", error.message(), "sql", sql);
    }
    return error;
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
      // The statement goes to the log only: status messages may reach clients.
      absl::Status error = SqliteError(db_, rc, "prepare");
      LOG_ERROR("sqlite prepare failed", "error", error.message(), "sql", sql.substr(0, 500));
      return error;
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
      LOG_ERROR("sqlite exec failed", "error", message, "code", rc, "sql", sql.substr(0, 500));
      return absl::Status(CodeFor(rc),
                          absl::StrCat("sqlite store: exec: ", message, " (code ", rc, ")"));
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

// ---- Pages and single rows (pipeline and device views) ----

inline constexpr int kDefaultPageSize = 100;
inline constexpr int kMaxPageSize = 10'000;

// ---- Page tokens ---------------------------------------------------------------------------
// A page token is the last row's sort key: (a number, a text, the row's seq), tagged with the
// listing it belongs to, in web-safe base64 so that it is opaque and URL-clean.

struct PageKey {
  int64_t seq = 0;
  int64_t number = 0;
  std::string text;
};

inline std::string EncodePageToken(absl::string_view listing, const PageKey& key) {
  return absl::WebSafeBase64Escape(
      absl::StrCat(listing, ":", key.seq, ":", key.number, ":", key.text));
}

inline absl::StatusOr<PageKey> DecodePageToken(absl::string_view listing, absl::string_view token) {
  auto invalid = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat("page_token: not a page token of the ", listing, " listing"));
  };
  std::string raw;
  if (!absl::WebSafeBase64Unescape(token, &raw)) return invalid();
  std::vector<std::string> parts = absl::StrSplit(raw, absl::MaxSplits(':', 3));
  PageKey key;
  if (parts.size() != 4 || parts[0] != listing || !absl::SimpleAtoi(parts[1], &key.seq) ||
      !absl::SimpleAtoi(parts[2], &key.number)) {
    return invalid();
  }
  key.text = std::move(parts[3]);
  return key;
}

inline int PageSize(int limit) {
  if (limit <= 0) return kDefaultPageSize;
  return std::min(limit, kMaxPageSize);
}

// Keeps `size` rows of the `size + 1` a query read; the token continues after the last kept.
template <typename T>
void FinishPage(Page<T>& page, std::vector<PageKey>& keys, int size, absl::string_view listing) {
  if (static_cast<int>(page.rows.size()) <= size) return;
  page.rows.resize(size);
  page.next_page_token = EncodePageToken(listing, keys[size - 1]);
}

// One row's body by a key column; NOT_FOUND naming `what`.
template <typename Message>
absl::StatusOr<Message> GetBody(Connection* conn, absl::string_view table,
                                absl::string_view key_column, absl::string_view key,
                                absl::string_view what) {
  ASSIGN_OR_RETURN(Stmt stmt, conn->Prepare(absl::StrCat("SELECT body FROM ", table, " WHERE ",
                                                         key_column, " = ?1")));
  stmt.BindText(1, key);
  ASSIGN_OR_RETURN(bool found, stmt.Step());
  if (!found) return absl::NotFoundError(absl::StrCat(what, " not found"));
  Message message;
  RETURN_IF_ERROR(ParseBlob(stmt.Blob(0), &message, table, key_column, key, "body"));
  return message;
}

// A page of rows in the order of a unique text column (names, fingerprints).
// `extra_where` may use parameters ?4, ?5, ... bound to `extra_params` in order.
template <typename Message>
absl::StatusOr<Page<Message>> ListByText(Connection* conn, absl::string_view table,
                                         absl::string_view column, absl::string_view extra_where,
                                         const PageRequest& request,
                                         const SqlParams& extra_params = {}) {
  PageKey after;
  if (!request.page_token.empty()) {
    ASSIGN_OR_RETURN(after, DecodePageToken(table, request.page_token));
  }
  const int size = PageSize(request.limit);
  ASSIGN_OR_RETURN(Stmt stmt,
                   conn->Prepare(absl::StrCat("SELECT ", column, ", body FROM ", table,
                                              " WHERE (?1 = 0 OR ", column, " > ?2)", extra_where,
                                              " ORDER BY ", column, " LIMIT ?3")));
  stmt.Bind(1, request.page_token.empty() ? 0 : 1).BindText(2, after.text).Bind(3, size + 1);
  for (size_t i = 0; i < extra_params.size(); ++i) {
    const int index = static_cast<int>(i) + 4;
    if (const auto* v = std::get_if<int64_t>(&extra_params[i])) {
      stmt.Bind(index, *v);
    } else {
      stmt.BindText(index, std::get<std::string>(extra_params[i]));
    }
  }
  Page<Message> page;
  std::vector<PageKey> keys;
  while (true) {
    ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (!row) break;
    PageKey& key = keys.emplace_back();
    key.text = std::string(stmt.Text(0));
    RETURN_IF_ERROR(
        ParseBlob(stmt.Blob(1), &page.rows.emplace_back(), table, column, key.text, "body"));
  }
  FinishPage(page, keys, size, table);
  return page;
}

// ---- Applying events that are their own mutation (pipeline and device views) ----

// Records in `result` why an event could not be applied: "offset N: <Kind> <row>: <why>", Kind
// being the event's message name ("PipelineTaskUpdated"), or "<mutation>(case N)" for a case
// without one.
inline void SkipEvent(const regatta::v1::Event& event, absl::string_view mutation, int64_t offset,
                      absl::string_view row, absl::string_view why, IngestResult* result) {
  const google::protobuf::FieldDescriptor* field =
      regatta::v1::Event::descriptor()->FindFieldByNumber(event.event_case());
  const std::string kind =
      field == nullptr || field->message_type() == nullptr
          ? absl::StrCat(mutation, "(case ", static_cast<int>(event.event_case()), ")")
          : std::string(field->message_type()->name());
  result->skipped.push_back(absl::StrCat("offset ", offset, ": ", kind, " ", row, ": ", why));
}

inline absl::Status DeleteRowsWhere(Connection* conn, absl::string_view table,
                                    absl::string_view column, absl::string_view value) {
  ASSIGN_OR_RETURN(Stmt stmt,
                   conn->Prepare(absl::StrCat("DELETE FROM ", table, " WHERE ", column, " = ?1")));
  stmt.BindText(1, value);
  return stmt.Run();
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

// ---- Device views (sqlite_device_views.cc) ----

// Applies one device event inside the writer's ingest transaction; what cannot be applied goes
// to result->skipped.
absl::Status ApplyDeviceChange(Connection* conn, int64_t offset, const DeviceChange& change,
                               IngestResult* result);
// DumpViews' (table, query) pairs for the device tables.
const std::vector<std::pair<absl::string_view, absl::string_view>>& DeviceDumpQueries();
// The message a device table's blob column holds (nullptr: not a device blob).
std::unique_ptr<google::protobuf::Message> DeviceBlobMessage(absl::string_view table,
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
