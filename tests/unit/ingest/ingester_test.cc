// The Ingester's loop: batching, offsets, waiting, retries, skips, thread priority.
#include "src/ingest/ingester.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <variant>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "src/common/clock.h"
#include "src/store/sqlite/sqlite_store.h"
#include "tests/testing/in_memory_event_log.h"
#include "tests/unit/ingest/test_events.h"

namespace regatta::ingest {
namespace {

using namespace ::regatta::ingest::testing;  // NOLINT: test builders

// Forwards to a real store; fails the next N ingest batches and records batch sizes.
class FlakyStore final : public store::Store {
 public:
  explicit FlakyStore(store::Store* inner) : inner_(inner) {}

  void FailApplies(int n) {
    absl::MutexLock lock(&mu_);
    failures_ = n;
  }
  std::vector<size_t> batch_mutations() const {
    absl::MutexLock lock(&mu_);
    return batch_mutations_;
  }
  int apply_calls() const {
    absl::MutexLock lock(&mu_);
    return apply_calls_;
  }

  absl::StatusOr<store::IngestResult> ApplyIngestBatch(const store::IngestBatch& batch) override {
    {
      absl::MutexLock lock(&mu_);
      ++apply_calls_;
      if (failures_ > 0) {
        --failures_;
        return absl::UnavailableError("injected store error");
      }
      batch_mutations_.push_back(batch.mutations.size());
    }
    return inner_->ApplyIngestBatch(batch);
  }
  absl::StatusOr<int64_t> GetConsumerOffset(absl::string_view consumer) override {
    return inner_->GetConsumerOffset(consumer);
  }
  absl::StatusOr<regatta::v1::Queue> GetQueue(absl::string_view name) override {
    return inner_->GetQueue(name);
  }
  absl::StatusOr<std::vector<regatta::v1::Queue>> ListQueues(absl::string_view after,
                                                             int limit) override {
    return inner_->ListQueues(after, limit);
  }
  absl::StatusOr<std::vector<store::JobLocation>> GetJobLocations(
      const std::vector<std::string>& ids) override {
    return inner_->GetJobLocations(ids);
  }
  absl::StatusOr<std::vector<store::JobLocation>> GetJobSetJobs(
      absl::string_view queue, absl::string_view job_set,
      const std::vector<regatta::v1::JobState>& states) override {
    return inner_->GetJobSetJobs(queue, job_set, states);
  }
  absl::StatusOr<std::vector<regatta::v1::JobSummary>> ListJobs(
      const store::JobFilter& filter) override {
    return inner_->ListJobs(filter);
  }
  absl::Status StreamJobs(
      const store::JobSelector& selector, size_t max_per_chunk,
      absl::FunctionRef<absl::Status(std::vector<store::JobLocation>&)> on_chunk) override {
    return inner_->StreamJobs(selector, max_per_chunk, on_chunk);
  }
  absl::StatusOr<std::vector<regatta::v1::JobDetails>> GetJobDetails(
      const std::vector<std::string>& ids, bool expand) override {
    return inner_->GetJobDetails(ids, expand);
  }
  absl::Status StreamSchedulerDelta(
      absl::string_view consumer, int64_t after_offset, size_t max_jobs_per_chunk,
      absl::FunctionRef<absl::Status(store::SchedulerDelta&)> on_chunk) override {
    return inner_->StreamSchedulerDelta(consumer, after_offset, max_jobs_per_chunk, on_chunk);
  }
  absl::StatusOr<std::vector<regatta::v1::Job>> GetJobSpecs(
      const std::vector<std::string>& ids) override {
    return inner_->GetJobSpecs(ids);
  }
  absl::StatusOr<absl::flat_hash_map<std::string, std::string>> LookupClientIds(
      absl::string_view queue, const std::vector<std::string>& ids) override {
    return inner_->LookupClientIds(queue, ids);
  }
  absl::Status StoreClientIds(
      absl::string_view queue,
      const std::vector<std::pair<std::string, std::string>>& pairs) override {
    return inner_->StoreClientIds(queue, pairs);
  }
  absl::StatusOr<std::string> DumpViews() override { return inner_->DumpViews(); }

  // PipelineViews: forwarded as they are.
  absl::StatusOr<regatta::v1::Pipeline> GetPipeline(absl::string_view id) override {
    return inner_->GetPipeline(id);
  }
  absl::StatusOr<regatta::v1::Pipeline> GetPipelineByName(absl::string_view name) override {
    return inner_->GetPipelineByName(name);
  }
  absl::StatusOr<store::Page<regatta::v1::Pipeline>> ListPipelines(
      const store::PageRequest& page) override {
    return inner_->ListPipelines(page);
  }
  absl::StatusOr<regatta::v1::PipelineVersion> GetPipelineVersion(absl::string_view id) override {
    return inner_->GetPipelineVersion(id);
  }
  absl::StatusOr<store::Page<regatta::v1::PipelineVersion>> ListPipelineVersions(
      absl::string_view pipeline_id, const store::PageRequest& page, bool with_spec) override {
    return inner_->ListPipelineVersions(pipeline_id, page, with_spec);
  }
  absl::StatusOr<regatta::v1::Experiment> GetExperiment(absl::string_view id) override {
    return inner_->GetExperiment(id);
  }
  absl::StatusOr<regatta::v1::Experiment> GetExperimentByName(absl::string_view name) override {
    return inner_->GetExperimentByName(name);
  }
  absl::StatusOr<store::Page<regatta::v1::Experiment>> ListExperiments(
      const store::PageRequest& page, bool include_archived) override {
    return inner_->ListExperiments(page, include_archived);
  }
  absl::StatusOr<regatta::v1::PipelineRun> GetPipelineRun(absl::string_view id,
                                                          bool with_tasks) override {
    return inner_->GetPipelineRun(id, with_tasks);
  }
  absl::StatusOr<store::Page<regatta::v1::PipelineRun>> ListPipelineRuns(
      const store::PipelineRunFilter& filter) override {
    return inner_->ListPipelineRuns(filter);
  }
  absl::StatusOr<std::vector<regatta::v1::PipelineRun>> ListActivePipelineRuns() override {
    return inner_->ListActivePipelineRuns();
  }
  absl::StatusOr<regatta::v1::PipelineArtifact> GetArtifact(absl::string_view id) override {
    return inner_->GetArtifact(id);
  }
  absl::StatusOr<std::vector<regatta::v1::PipelineArtifact>> ListRunArtifacts(
      absl::string_view run_id) override {
    return inner_->ListRunArtifacts(run_id);
  }
  absl::StatusOr<store::ArtifactLineage> GetArtifactLineage(
      absl::string_view artifact_id) override {
    return inner_->GetArtifactLineage(artifact_id);
  }
  absl::StatusOr<absl::flat_hash_map<std::string, regatta::v1::CacheEntry>> LookupCacheEntries(
      const std::vector<std::string>& fingerprints, absl::Time now) override {
    return inner_->LookupCacheEntries(fingerprints, now);
  }
  absl::StatusOr<store::Page<regatta::v1::CacheEntry>> ListCacheEntries(
      const store::PageRequest& page) override {
    return inner_->ListCacheEntries(page);
  }
  absl::StatusOr<regatta::v1::RecurringRun> GetRecurringRun(absl::string_view id) override {
    return inner_->GetRecurringRun(id);
  }
  absl::StatusOr<store::Page<regatta::v1::RecurringRun>> ListRecurringRuns(
      const store::PageRequest& page) override {
    return inner_->ListRecurringRuns(page);
  }
  absl::StatusOr<regatta::v1::Configuration> GetConfiguration(absl::string_view name) override {
    return inner_->GetConfiguration(name);
  }
  absl::StatusOr<store::Page<regatta::v1::Configuration>> ListConfigurations(
      const store::PageRequest& page) override {
    return inner_->ListConfigurations(page);
  }
  absl::StatusOr<regatta::v1::Instance> GetInstance(absl::string_view name) override {
    return inner_->GetInstance(name);
  }
  absl::StatusOr<store::Page<regatta::v1::Instance>> ListInstances(
      const store::InstanceFilter& filter) override {
    return inner_->ListInstances(filter);
  }
  absl::StatusOr<regatta::v1::Secret> GetSecret(absl::string_view name) override {
    return inner_->GetSecret(name);
  }
  absl::StatusOr<store::Page<regatta::v1::Secret>> ListSecrets(
      const store::PageRequest& page) override {
    return inner_->ListSecrets(page);
  }
  absl::StatusOr<regatta::v1::ConfigMap> GetConfigMap(absl::string_view name) override {
    return inner_->GetConfigMap(name);
  }
  absl::StatusOr<store::Page<regatta::v1::ConfigMap>> ListConfigMaps(
      const store::PageRequest& page) override {
    return inner_->ListConfigMaps(page);
  }

 private:
  store::Store* inner_;
  mutable absl::Mutex mu_;
  int failures_ ABSL_GUARDED_BY(mu_) = 0;
  int apply_calls_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<size_t> batch_mutations_ ABSL_GUARDED_BY(mu_);
};

class IngesterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* tmp = getenv("TEST_TMPDIR");
    std::string templ =
        absl::StrCat((tmp != nullptr && *tmp) ? tmp : "/tmp", "/regatta_ingester_XXXXXX");
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    sqlite_ = OpenStore("views.db");
    ASSERT_NE(sqlite_, nullptr);
    store_ = std::make_unique<FlakyStore>(sqlite_.get());
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  std::unique_ptr<store::SqliteStore> OpenStore(const std::string& name) {
    auto store = store::SqliteStore::Open(dir_ + "/" + name);
    EXPECT_TRUE(store.ok()) << store.status();
    return store.ok() ? std::move(*store) : nullptr;
  }

  IngesterOptions FastOptions() {
    IngesterOptions options;
    options.poll_timeout = absl::Milliseconds(20);
    options.initial_backoff = absl::Milliseconds(1);
    options.max_backoff = absl::Milliseconds(10);
    return options;
  }

  int64_t Append(std::vector<regatta::v1::EventSequence> sequences) {
    auto offsets = log_.Append(std::move(sequences));
    EXPECT_TRUE(offsets.ok()) << offsets.status();
    return offsets.ok() && !offsets->empty() ? offsets->back() : log_.LastOffset();
  }

  // One record per job: a submit in job set "s" of queue "q".
  int64_t AppendSubmits(int begin, int end) {
    std::vector<regatta::v1::EventSequence> seqs;
    for (int i = begin; i < end; ++i)
      seqs.push_back(Sequence("q", "s", {Submit(i, MakeJob(i, "q", "s"))}));
    return Append(std::move(seqs));
  }

  absl::Time Deadline(absl::Duration d = absl::Seconds(30)) { return clock_.Now() + d; }

  size_t JobCount(store::Store& store) {
    auto jobs = store.ListJobs({.limit = store::kMaxListJobsLimit});
    EXPECT_TRUE(jobs.ok()) << jobs.status();
    return jobs.ok() ? jobs->size() : 0;
  }

  RealClock clock_;
  std::string dir_;
  regatta::testing::InMemoryEventLog log_;
  std::unique_ptr<store::SqliteStore> sqlite_;
  std::unique_ptr<FlakyStore> store_;
};

TEST_F(IngesterTest, IngestsWhatIsThereAndWhatComesLater) {
  Append({Sequence("q", "", {QueueCreated(1, MakeQueue("q"))})});
  int64_t last = AppendSubmits(0, 10);
  Ingester ingester(&log_, store_.get(), &clock_, "query", FastOptions());
  ASSERT_TRUE(ingester.Start().ok());
  ASSERT_TRUE(ingester.WaitForOffset(last, Deadline()).ok());
  EXPECT_EQ(ingester.IngestedOffset(), last);
  EXPECT_EQ(JobCount(*sqlite_), 10u);
  EXPECT_TRUE(sqlite_->GetQueue("q").ok());
  EXPECT_EQ(*sqlite_->GetConsumerOffset("query"), last);

  last = AppendSubmits(10, 15);
  ASSERT_TRUE(ingester.WaitForOffset(last, Deadline()).ok());
  EXPECT_EQ(JobCount(*sqlite_), 15u);
  ingester.Stop();
}

TEST_F(IngesterTest, TheIngestThreadRunsAtTheNiceValueItIsGiven) {
  const int base = ::getpriority(PRIO_PROCESS, 0);
  Append({Sequence("q", "", {QueueCreated(1, MakeQueue("q"))})});
  IngesterOptions options = FastOptions();
  options.thread_nice = 5;
  Ingester ingester(&log_, store_.get(), &clock_, "query", options);
  std::atomic<int> seen{-100};
  ingester.AddObserver([&](const store::IngestBatch&) {
    seen = ::getpriority(PRIO_PROCESS, static_cast<id_t>(::gettid()));
  });
  ASSERT_TRUE(ingester.Start().ok());
  ASSERT_TRUE(ingester.WaitForOffset(log_.LastOffset(), Deadline()).ok());
  EXPECT_EQ(seen.load(), std::min(base + 5, 19));
  // The rest of the process keeps its own.
  EXPECT_EQ(::getpriority(PRIO_PROCESS, 0), base);
  ingester.Stop();
}

TEST_F(IngesterTest, WaitForOffsetTimesOut) {
  int64_t last = AppendSubmits(0, 2);
  Ingester ingester(&log_, store_.get(), &clock_, "query", FastOptions());
  ASSERT_TRUE(ingester.Start().ok());
  ASSERT_TRUE(ingester.WaitForOffset(last, Deadline()).ok());
  absl::Status status = ingester.WaitForOffset(last + 1, Deadline(absl::Milliseconds(30)));
  EXPECT_EQ(status.code(), absl::StatusCode::kDeadlineExceeded) << status;
  // Already reached: OK even with a past deadline.
  EXPECT_TRUE(ingester.WaitForOffset(last, clock_.Now() - absl::Seconds(1)).ok());
}

TEST_F(IngesterTest, WaitForOffsetDeadlineIsInTheInjectedClock) {
  // A fake clock far in the past must not make every wait expire at once.
  FakeClock fake;
  Ingester ingester(&log_, store_.get(), &fake, "query", FastOptions());
  ASSERT_TRUE(ingester.Start().ok());
  std::thread writer([&] {
    absl::SleepFor(absl::Milliseconds(50));
    AppendSubmits(0, 1);
  });
  absl::Status status = ingester.WaitForOffset(1, fake.Now() + absl::Seconds(30));
  writer.join();
  EXPECT_TRUE(status.ok()) << status;
}

TEST_F(IngesterTest, StopReleasesWaiters) {
  Ingester ingester(&log_, store_.get(), &clock_, "query", FastOptions());
  ASSERT_TRUE(ingester.Start().ok());
  absl::Status status;
  std::thread waiter([&] { status = ingester.WaitForOffset(100, Deadline(absl::Minutes(5))); });
  absl::SleepFor(absl::Milliseconds(20));
  ingester.Stop();
  waiter.join();
  EXPECT_EQ(status.code(), absl::StatusCode::kUnavailable) << status;
  ingester.Stop();  // idempotent
}

TEST_F(IngesterTest, StartTwiceFails) {
  Ingester ingester(&log_, store_.get(), &clock_, "query", FastOptions());
  ASSERT_TRUE(ingester.Start().ok());
  EXPECT_EQ(ingester.Start().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(ingester.CatchUp().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(IngesterTest, ResumesFromTheStoredOffset) {
  int64_t first = AppendSubmits(0, 20);
  {
    Ingester ingester(&log_, store_.get(), &clock_, "query", FastOptions());
    ASSERT_TRUE(ingester.Start().ok());
    ASSERT_TRUE(ingester.WaitForOffset(first, Deadline()).ok());
  }
  int64_t last = AppendSubmits(20, 30);
  int applies_before = store_->apply_calls();
  Ingester ingester(&log_, store_.get(), &clock_, "query", FastOptions());
  ASSERT_TRUE(ingester.Start().ok());
  EXPECT_GE(ingester.IngestedOffset(), first);
  ASSERT_TRUE(ingester.WaitForOffset(last, Deadline()).ok());
  EXPECT_EQ(JobCount(*sqlite_), 30u);
  // Only the ten new records were applied.
  std::vector<size_t> batches = store_->batch_mutations();
  size_t applied = 0;
  for (size_t i = applies_before; i < batches.size(); ++i) applied += batches[i];
  EXPECT_EQ(applied, 10u);
}

TEST_F(IngesterTest, StoreErrorsAreRetried) {
  store_->FailApplies(3);
  int64_t last = AppendSubmits(0, 5);
  Ingester ingester(&log_, store_.get(), &clock_, "query", FastOptions());
  ASSERT_TRUE(ingester.Start().ok());
  ASSERT_TRUE(ingester.WaitForOffset(last, Deadline()).ok());
  EXPECT_GE(store_->apply_calls(), 4);
  EXPECT_EQ(JobCount(*sqlite_), 5u);
}

TEST_F(IngesterTest, LogReadErrorsAreRetried) {
  log_.FailReads(3);
  int64_t last = AppendSubmits(0, 5);
  Ingester ingester(&log_, store_.get(), &clock_, "query", FastOptions());
  ASSERT_TRUE(ingester.Start().ok());
  ASSERT_TRUE(ingester.WaitForOffset(last, Deadline()).ok());
  EXPECT_GE(log_.read_calls(), 4);
  EXPECT_EQ(JobCount(*sqlite_), 5u);
}

TEST_F(IngesterTest, EventsThatCannotBeAppliedAreSkipped) {
  regatta::v1::Event junk = At(1);  // no payload
  Append(
      {Sequence("q", "s",
                {Running(1, 404, 404), Succeeded(1, 405), CancelJob(1, 406), junk,
                 QueueCordoned(1, "ghost", true), Marker(1, "m")}),
       Sequence("q", "s", {Submit(2, MakeJob(1, "q", "s")), Leased(3, 1, 1), Running(4, 1, 1)})});
  Ingester ingester(&log_, store_.get(), &clock_, "query", FastOptions());
  ASSERT_TRUE(ingester.Start().ok());
  ASSERT_TRUE(ingester.WaitForOffset(2, Deadline()).ok());
  auto details = sqlite_->GetJobDetails({JobId(1)}, false);
  ASSERT_TRUE(details.ok()) << details.status();
  ASSERT_EQ(details->size(), 1u);
  EXPECT_EQ((*details)[0].summary().state(), regatta::v1::JOB_STATE_RUNNING);
}

TEST_F(IngesterTest, BatchesManyRecordsPerTransaction) {
  int64_t last = AppendSubmits(0, 1200);
  IngesterOptions options = FastOptions();
  options.max_records_per_batch = 500;
  Ingester ingester(&log_, store_.get(), &clock_, "query", options);
  ASSERT_TRUE(ingester.Start().ok());
  ASSERT_TRUE(ingester.WaitForOffset(last, Deadline()).ok());
  // Reads are sized by the mutations per record seen so far (the first guess is a big submit),
  // so the first batch may be small; the rest are full.
  std::vector<size_t> batches = store_->batch_mutations();
  EXPECT_THAT(batches, ::testing::Each(::testing::Le(500u)));
  EXPECT_LE(batches.size(), 4u);
  size_t total = 0;
  for (size_t b : batches) total += b;
  EXPECT_EQ(total, 1200u);
}

// Records that come one at a time linger for more and go in one transaction; a record the
// urgent predicate names is applied as soon as it is read, and no linger starts while someone
// waits for the views.
TEST_F(IngesterTest, RecordsThatComeAloneLingerForMoreUnlessUrgent) {
  Append({Sequence("q", "", {QueueCreated(1, MakeQueue("q"))})});
  IngesterOptions options = FastOptions();
  options.linger = absl::Seconds(1);
  options.urgent = [](const store::OffsetMutation& m) {
    return std::holds_alternative<store::QueueUpsert>(m.mutation);
  };
  Ingester ingester(&log_, store_.get(), &clock_, "query", options);
  ASSERT_TRUE(ingester.Start().ok());
  auto ingested_within = [&](int64_t offset, absl::Duration limit) {
    // Polled: a WaitForOffset caller would keep the ingester from lingering.
    const absl::Time start = absl::Now();
    while (ingester.IngestedOffset() < offset && absl::Now() - start < absl::Seconds(30)) {
      absl::SleepFor(absl::Milliseconds(2));
    }
    return ingester.IngestedOffset() >= offset && absl::Now() - start < limit;
  };
  ASSERT_TRUE(ingested_within(log_.LastOffset(), absl::Milliseconds(500)));  // urgent
  const size_t batches = store_->batch_mutations().size();

  const absl::Time start = absl::Now();
  AppendSubmits(0, 1);
  absl::SleepFor(absl::Milliseconds(20));
  AppendSubmits(1, 2);
  absl::SleepFor(absl::Milliseconds(20));
  const int64_t third = AppendSubmits(2, 3);
  ASSERT_TRUE(ingested_within(third, absl::Seconds(30)));
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(900));
  EXPECT_EQ(store_->batch_mutations().size(), batches + 1);

  const int64_t lingering = AppendSubmits(3, 4);
  absl::SleepFor(absl::Milliseconds(50));
  EXPECT_LT(ingester.IngestedOffset(), lingering);
  Append({Sequence("q2", "", {QueueCreated(2, MakeQueue("q2"))})});
  EXPECT_TRUE(ingested_within(log_.LastOffset(), absl::Milliseconds(500)));

  absl::Status awaited;
  absl::Time reached;
  std::thread waiter([&, next = log_.LastOffset() + 1] {
    awaited = ingester.WaitForOffset(next, Deadline());
    reached = absl::Now();
  });
  absl::SleepFor(absl::Milliseconds(50));  // the waiter waits by now
  const absl::Time appended = absl::Now();
  AppendSubmits(4, 5);
  waiter.join();
  ASSERT_TRUE(awaited.ok()) << awaited;
  EXPECT_LT(reached - appended, absl::Milliseconds(500));
  ingester.Stop();
}

TEST_F(IngesterTest, BatchesStopAtTheMutationBound) {
  // Ten records of 100 submits each.
  std::vector<regatta::v1::EventSequence> seqs;
  for (int r = 0; r < 10; ++r) {
    std::vector<regatta::v1::Event> events;
    for (int i = 0; i < 100; ++i) events.push_back(Submit(i, MakeJob(r * 100 + i, "q", "s")));
    seqs.push_back(Sequence("q", "s", std::move(events)));
  }
  int64_t last = Append(std::move(seqs));
  IngesterOptions options = FastOptions();
  options.max_mutations_per_batch = 250;
  Ingester ingester(&log_, store_.get(), &clock_, "query", options);
  ASSERT_TRUE(ingester.Start().ok());
  ASSERT_TRUE(ingester.WaitForOffset(last, Deadline()).ok());
  std::vector<size_t> batches = store_->batch_mutations();
  EXPECT_THAT(batches, ::testing::Each(::testing::Le(250u)));
  EXPECT_THAT(batches, ::testing::Contains(200u));  // two records once the size is known
  EXPECT_EQ(JobCount(*sqlite_), 1000u);
}

TEST_F(IngesterTest, CatchUpIngestsOnTheCallersThread) {
  int64_t last = AppendSubmits(0, 50);
  IngesterOptions options = FastOptions();
  options.max_records_per_batch = 7;
  Ingester ingester(&log_, store_.get(), &clock_, "query", options);
  ASSERT_TRUE(ingester.CatchUp().ok());
  EXPECT_EQ(ingester.IngestedOffset(), last);
  EXPECT_EQ(JobCount(*sqlite_), 50u);
  EXPECT_EQ(store_->batch_mutations().size(), 8u);  // ceil(50 / 7)
}

}  // namespace
}  // namespace regatta::ingest
