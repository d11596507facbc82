// PlatformPipelineBackend's cache lookups against a real log, ingester and SQLite views: an entry
// the engine published is found before the views ingest it, and after.
#include "src/server/pipeline_backend.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>

#include "src/common/clock.h"
#include "src/common/ids.h"
#include "src/ingest/ingester.h"
#include "src/store/sqlite/sqlite_store.h"
#include "tests/testing/in_memory_event_log.h"
#include "tests/testing/test_dir.h"

namespace regatta::server {
namespace {

namespace pb = regatta::v1;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

class PipelineBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = testing::MakeTestDir("regatta_pipeline_backend_");
    ASSERT_FALSE(dir_.empty());
    absl::StatusOr<std::unique_ptr<store::SqliteStore>> opened =
        store::SqliteStore::Open(dir_ + "/store.db");
    ASSERT_TRUE(opened.ok()) << opened.status();
    store_ = *std::move(opened);
    // Not started until a test says so: the views stay behind the log.
    ingester_ = std::make_unique<ingest::Ingester>(&log_, store_.get(), RealClock::Get());
    ctx_.log = &log_;
    ctx_.store = store_.get();
    ctx_.clock = RealClock::Get();
    ctx_.ids = &ids_;
    ctx_.view_wait_timeout = absl::Milliseconds(100);
    ctx_.wait_for_views = [this](int64_t offset, absl::Time deadline) {
      return ingester_->WaitForOffset(offset, deadline);
    };
    backend_ = std::make_unique<PlatformPipelineBackend>(&ctx_, /*submit=*/nullptr);
  }

  void TearDown() override {
    ingester_.reset();
    store_.reset();
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  static pb::EventSequence EntryCreated(const std::string& fingerprint, const std::string& run,
                                        absl::Time expires = absl::InfiniteFuture()) {
    pb::EventSequence sequence;
    sequence.set_queue("pipelines");
    pb::CacheEntry* entry = sequence.add_events()->mutable_cache_entry_created()->mutable_entry();
    entry->set_fingerprint(fingerprint);
    entry->set_run_id(run);
    entry->set_task_path("step");
    (*entry->mutable_output_parameters())["Output"] = "\"value\"";
    if (expires != absl::InfiniteFuture()) api::SetTimestamp(expires, entry->mutable_expire_time());
    return sequence;
  }

  absl::flat_hash_map<std::string, pb::CacheEntry> Lookup(std::vector<std::string> fingerprints) {
    absl::StatusOr<absl::flat_hash_map<std::string, pb::CacheEntry>> found =
        backend_->LookupCache(fingerprints, absl::Now());
    EXPECT_TRUE(found.ok()) << found.status();
    return found.ok() ? *std::move(found) : absl::flat_hash_map<std::string, pb::CacheEntry>{};
  }

  std::string dir_;
  testing::InMemoryEventLog log_;
  SequentialIdGenerator ids_;
  std::unique_ptr<store::SqliteStore> store_;
  std::unique_ptr<ingest::Ingester> ingester_;
  api::ApiContext ctx_;
  std::unique_ptr<PlatformPipelineBackend> backend_;
};

TEST_F(PipelineBackendTest, AnEntryIsFoundBeforeAndAfterTheViewsIngestIt) {
  ASSERT_TRUE(backend_->Publish({EntryCreated("fp-1", "run-a")}).ok());
  ASSERT_TRUE(
      backend_->Publish({EntryCreated("fp-old", "run-a", absl::Now() - absl::Seconds(1))}).ok());

  // The views have nothing yet (and a wait for them would time out): memory answers.
  absl::flat_hash_map<std::string, pb::CacheEntry> found = Lookup({"fp-1", "fp-old", "fp-2"});
  ASSERT_THAT(found, ::testing::SizeIs(1));
  EXPECT_EQ(found.at("fp-1").run_id(), "run-a");

  // A newer entry for the same fingerprint replaces the one remembered.
  ASSERT_TRUE(backend_->Publish({EntryCreated("fp-1", "run-b")}).ok());
  EXPECT_EQ(Lookup({"fp-1"}).at("fp-1").run_id(), "run-b");

  // Once ingested, the views answer: the same entry, and still nothing for the rest.
  ASSERT_TRUE(ingester_->Start().ok());
  ASSERT_TRUE(ingester_->WaitForOffset(log_.LastOffset(), absl::Now() + absl::Seconds(10)).ok());
  found = Lookup({"fp-1", "fp-old", "fp-2"});
  ASSERT_THAT(found, ::testing::SizeIs(1));
  EXPECT_EQ(found.at("fp-1").run_id(), "run-b");
  EXPECT_THAT(Lookup({"fp-2"}), IsEmpty());
}

}  // namespace
}  // namespace regatta::server
