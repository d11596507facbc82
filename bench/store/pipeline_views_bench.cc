// The pipeline views of the SQLite store on the engine's hot paths:
//   * LookupCacheEntries: one call for `fingerprints` keys (half of them cached) against a cache
//     of 10 000 entries, what a run's start does for its container steps;
//   * ApplyPipelineTaskUpdates: one ingest batch of 1000 PipelineTaskUpdated (each task with an
//     input parameter, an output parameter and an output artifact, so lineage rows too), first
//     creating the tasks, then replacing them (RUNNING -> SUCCEEDED).
// items_per_second is fingerprints looked up / task updates applied per second.
// Run: build/default/bench/store/pipeline_views_bench
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "src/store/sqlite/sqlite_store.h"

namespace regatta::store {
namespace {

constexpr int kCacheEntries = 10'000;
constexpr int kTasksPerBatch = 1000;

std::string Fingerprint(int i) { return absl::StrFormat("%064x", i); }

std::unique_ptr<SqliteStore> OpenEmpty(absl::string_view name) {
  const std::string path =
      (std::filesystem::temp_directory_path() /
       absl::StrCat("regatta-pipeline-views-bench-", getpid(), "-", name, ".db"))
          .string();
  std::filesystem::remove(path);
  auto store = SqliteStore::Open(path);
  if (!store.ok()) std::abort();
  return std::move(*store);
}

void Apply(SqliteStore& store, int64_t& offset, std::vector<regatta::v1::Event> events) {
  IngestBatch batch;
  batch.consumer = "query";
  batch.to_offset = ++offset;
  for (auto& e : events) batch.mutations.push_back({offset, PipelineChange{std::move(e)}});
  absl::StatusOr<IngestResult> result = store.ApplyIngestBatch(batch);
  if (!result.ok() || !result->skipped.empty()) std::abort();
}

void BM_LookupCacheEntries(benchmark::State& state) {
  const int wanted = static_cast<int>(state.range(0));
  std::unique_ptr<SqliteStore> store = OpenEmpty("cache");
  int64_t offset = 0;
  std::vector<regatta::v1::Event> events;
  for (int i = 0; i < kCacheEntries; ++i) {
    regatta::v1::Event& e = events.emplace_back();
    regatta::v1::CacheEntry* entry = e.mutable_cache_entry_created()->mutable_entry();
    entry->set_fingerprint(Fingerprint(2 * i));  // even fingerprints are cached
    entry->set_pipeline_name("fan-out");
    entry->set_run_id("run-0");
    entry->set_task_path(absl::StrCat("for-loop[", i, "].step"));
    (*entry->mutable_output_parameters())["Output"] = absl::StrCat(i);
    regatta::v1::PipelineArtifact* a = (*entry->mutable_output_artifacts())["data"].add_artifacts();
    a->set_id(absl::StrCat("art-", i));
    a->set_uri(absl::StrCat("file:///artifacts/fan-out/run-0/step/", i, "/data"));
    entry->mutable_expire_time()->set_seconds(4'000'000'000);
  }
  Apply(*store, offset, std::move(events));
  std::vector<std::string> fingerprints;
  for (int i = 0; i < wanted; ++i) fingerprints.push_back(Fingerprint(i));
  const absl::Time now = absl::FromUnixSeconds(1'800'000'000);
  for (auto _ : state) {
    auto found = store->LookupCacheEntries(fingerprints, now);
    if (!found.ok() || static_cast<int>(found->size()) != (wanted + 1) / 2) std::abort();
    benchmark::DoNotOptimize(found);
  }
  state.SetItemsProcessed(state.iterations() * wanted);
}
BENCHMARK(BM_LookupCacheEntries)->Arg(1000)->Unit(benchmark::kMillisecond);

regatta::v1::Event TaskUpdate(const std::string& run_id, int i,
                              regatta::v1::PipelineTaskState task_state) {
  regatta::v1::Event e;
  e.mutable_created()->set_seconds(1'800'000'000);
  auto* update = e.mutable_pipeline_task_updated();
  update->set_run_id(run_id);
  regatta::v1::PipelineTask* task = update->mutable_task();
  task->set_path(absl::StrCat("for-loop[", i, "].step"));
  task->set_name("step");
  task->set_parent_path("for-loop");
  task->set_kind("container");
  task->set_iteration_index(i);
  task->set_state(task_state);
  (*task->mutable_input_parameters())["item"] = absl::StrCat(i);
  task->set_fingerprint(Fingerprint(i));
  task->add_job_ids(absl::StrFormat("01HZZZZZZZZZZZZZ%010d", i));
  if (task_state == regatta::v1::PIPELINE_TASK_STATE_SUCCEEDED) {
    (*task->mutable_output_parameters())["Output"] = absl::StrCat(i * 2);
    regatta::v1::PipelineArtifact* a = (*task->mutable_output_artifacts())["data"].add_artifacts();
    a->set_id(absl::StrCat(run_id, "-art-", i));
    a->set_uri(absl::StrCat("file:///artifacts/fan-out/", run_id, "/step/", i, "/data"));
  }
  return e;
}

void BM_ApplyPipelineTaskUpdates(benchmark::State& state) {
  const bool replace = state.range(0) != 0;
  std::unique_ptr<SqliteStore> store = OpenEmpty(replace ? "replace" : "create");
  int64_t offset = 0;
  int runs = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::string run_id = absl::StrCat("run-", runs++);
    regatta::v1::Event created;
    auto* run = created.mutable_pipeline_run_created()->mutable_run();
    run->set_id(run_id);
    run->set_state(regatta::v1::PIPELINE_RUN_STATE_PENDING);
    Apply(*store, offset, {created});
    std::vector<regatta::v1::Event> running;
    for (int i = 0; i < kTasksPerBatch; ++i) {
      running.push_back(TaskUpdate(run_id, i, regatta::v1::PIPELINE_TASK_STATE_RUNNING));
    }
    std::vector<regatta::v1::Event> succeeded;
    if (replace) {
      Apply(*store, offset, std::move(running));
      for (int i = 0; i < kTasksPerBatch; ++i) {
        succeeded.push_back(TaskUpdate(run_id, i, regatta::v1::PIPELINE_TASK_STATE_SUCCEEDED));
      }
    }
    state.ResumeTiming();
    Apply(*store, offset, replace ? std::move(succeeded) : std::move(running));
  }
  state.SetItemsProcessed(state.iterations() * kTasksPerBatch);
}
BENCHMARK(BM_ApplyPipelineTaskUpdates)
    ->ArgName("replace")
    ->Arg(0)
    ->Arg(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace regatta::store

BENCHMARK_MAIN();
