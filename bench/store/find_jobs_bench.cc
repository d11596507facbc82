// Store::FindJobs, the lookup behind bulk cancel / preempt of a queue, executor or node, on the
// SQLite store: `live` non-terminal jobs of queue q (every 10th leased on exec-1, spread over 10
// nodes) behind `finished` terminal jobs of the same queue, with and without migration 0004's
// partial indexes. items_per_second is jobs found per second.
// Run: build/default/bench/store/find_jobs_bench
#include <filesystem>
#include <map>
#include <memory>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "src/store/sqlite/sqlite_store.h"

namespace regatta::store {
namespace {

constexpr int kBatch = 10'000;

std::string JobId(int i) { return absl::StrFormat("01HZZZZZZZZZZZZZ%010d", i); }

void ApplyBatch(SqliteStore& store, int64_t& offset, std::vector<OffsetMutation> mutations) {
  IngestBatch batch;
  batch.consumer = "query";
  batch.to_offset = ++offset;
  for (auto& m : mutations) m.offset = offset;
  batch.mutations = std::move(mutations);
  if (!store.ApplyIngestBatch(batch).ok()) std::abort();
}

// Finished jobs first (a queue's history), then the live ones.
std::unique_ptr<SqliteStore> Build(int live, int finished, bool partial_indexes) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            absl::StrCat("regatta-find-jobs-bench-", getpid(), "-", live, "-",
                                         finished, "-", partial_indexes, ".db"))
                               .string();
  std::filesystem::remove(path);
  SqliteStoreOptions options;
  auto migrations = SqliteStore::EmbeddedMigrations();
  if (!migrations.ok()) std::abort();
  if (!partial_indexes) std::erase_if(*migrations, [](const auto& m) { return m.version == 4; });
  options.migrations = *migrations;
  auto store = SqliteStore::Open(path, options);
  if (!store.ok()) std::abort();
  int64_t offset = 0;
  const int total = live + finished;
  for (int begin = 0; begin < total; begin += kBatch) {
    std::vector<OffsetMutation> mutations;
    const int end = std::min(total, begin + kBatch);
    for (int i = begin; i < end; ++i) {
      regatta::v1::Job job;
      job.set_id(JobId(i));
      job.set_queue("q");
      job.set_job_set(absl::StrCat("set-", i / 1000));
      job.set_priority_class(i % 2 == 0 ? "default" : "preemptible");
      (*job.mutable_task()->mutable_resources()->mutable_requests())["cpu"] = "1";
      mutations.push_back({0, JobInsert{job}});
    }
    for (int i = begin; i < end; ++i) {
      if (i < finished) {
        JobSetState done;
        done.job_id = JobId(i);
        done.state = regatta::v1::JOB_STATE_SUCCEEDED;
        mutations.push_back({0, done});
      } else if (i % 10 == 0) {
        RunInsert run;
        run.run.set_run_id(absl::StrCat("run-", i));
        run.run.set_job_id(JobId(i));
        run.run.set_executor_id("exec-1");
        run.run.set_node_id(absl::StrCat("node-", (i / 10) % 10));
        run.run.set_pool("default");
        run.run.set_state(regatta::v1::RUN_STATE_LEASED);
        mutations.push_back({0, run});
        JobSetState leased;
        leased.job_id = JobId(i);
        leased.state = regatta::v1::JOB_STATE_LEASED;
        mutations.push_back({0, leased});
      }
    }
    ApplyBatch(**store, offset, std::move(mutations));
  }
  return *std::move(store);
}

SqliteStore& StoreFor(int live, int finished, bool partial_indexes) {
  static auto* stores = new std::map<std::tuple<int, int, bool>, std::unique_ptr<SqliteStore>>();
  auto& slot = (*stores)[{live, finished, partial_indexes}];
  if (slot == nullptr) slot = Build(live, finished, partial_indexes);
  return *slot;
}

void Run(benchmark::State& state, const JobSelector& selector) {
  SqliteStore& store = StoreFor(static_cast<int>(state.range(0)), static_cast<int>(state.range(1)),
                                state.range(2) != 0);
  size_t found = 0;
  for (auto _ : state) {
    auto jobs = store.FindJobs(selector);
    if (!jobs.ok()) std::abort();
    found = jobs->size();
    benchmark::DoNotOptimize(jobs);
  }
  state.counters["found"] = static_cast<double>(found);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * found));
}

// The whole queue: every live job.
void BM_FindQueue(benchmark::State& state) { Run(state, {.queues = {"q"}}); }
// One class of the queue: half the live jobs.
void BM_FindQueueClass(benchmark::State& state) {
  Run(state, {.queues = {"q"}, .priority_classes = {"preemptible"}});
}
// One node of the executor: 1% of the live jobs.
void BM_FindNode(benchmark::State& state) {
  Run(state, {.executor_id = "exec-1", .node_id = "node-3"});
}

// {live, finished, partial indexes}
void Args(benchmark::internal::Benchmark* b) {
  b->ArgNames({"live", "finished", "index"});
  for (int index : {0, 1}) {
    b->Args({10'000, 0, index});
    b->Args({10'000, 990'000, index});
  }
  b->Unit(benchmark::kMillisecond);
}

BENCHMARK(BM_FindQueue)->Apply(Args);
BENCHMARK(BM_FindQueueClass)->Apply(Args);
BENCHMARK(BM_FindNode)->Apply(Args);

}  // namespace
}  // namespace regatta::store

BENCHMARK_MAIN();
