// Runs the EventLog conformance suite against the embedded SQLite backend.
#include <memory>
#include <string>

#include "src/eventlog/sqlite/sqlite_event_log.h"
#include "tests/conformance/event_log_conformance.h"

namespace regatta::eventlog::testing {
namespace {

constexpr int64_t kRecordLimit = 1 << 20;

std::unique_ptr<EventLog> OpenSqlite(const std::string& dir) {
  SqliteEventLog::Options options;
  options.max_record_bytes = kRecordLimit;
  absl::StatusOr<std::unique_ptr<SqliteEventLog>> log =
      SqliteEventLog::Open(dir + "/events.db", std::move(options));
  if (!log.ok()) {
    ADD_FAILURE() << log.status();
    return nullptr;
  }
  return std::move(*log);
}

INSTANTIATE_TEST_SUITE_P(Sqlite, EventLogConformanceTest,
                         ::testing::Values(EventLogBackend{.name = "sqlite",
                                                           .create = OpenSqlite,
                                                           .reopen = OpenSqlite,
                                                           .record_limit_bytes = kRecordLimit}),
                         EventLogBackendName);

}  // namespace
}  // namespace regatta::eventlog::testing
