// Runs the Store conformance suite against the embedded SQLite backend.
#include <memory>
#include <string>

#include "src/store/sqlite/sqlite_store.h"
#include "tests/conformance/store_conformance.h"

namespace regatta::store::testing {
namespace {

std::unique_ptr<Store> OpenSqlite(const std::string& dir) {
  absl::StatusOr<std::unique_ptr<SqliteStore>> store = SqliteStore::Open(dir + "/store.db");
  if (!store.ok()) {
    ADD_FAILURE() << store.status();
    return nullptr;
  }
  return std::move(*store);
}

INSTANTIATE_TEST_SUITE_P(Sqlite, StoreConformanceTest,
                         ::testing::Values(StoreBackend{.name = "sqlite", .create = OpenSqlite}),
                         StoreBackendName);

}  // namespace
}  // namespace regatta::store::testing
