// Query-view ingestion and query throughput on the SQLite Store.
//
//   build/store/bench/ingest/ingest_bench --benchmark_counters_tabular=true
//
// Budget (DESIGN.md §9): the ingester keeps up with >= 50 000 submitted jobs/s, i.e. a batch
// of 1000 job inserts in well under 20 ms including the fsync of its commit.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/common/clock.h"
#include "src/ingest/ingester.h"
#include "src/store/sqlite/sqlite_store.h"
#include "tests/testing/in_memory_event_log.h"

namespace regatta {
namespace {

std::string JobId(int64_t i) { return absl::StrFormat("01HBBBBBBBBBBBBB%010d", i); }

// A realistic submitted job: command, env, resources, labels, annotations. One submit request
// is 1000 jobs of one job set; requests rotate over queues, job sets and users.
regatta::v1::Job MakeJob(int64_t i) {
  const int64_t request = i / 1000;
  regatta::v1::Job job;
  job.set_id(JobId(i));
  job.set_queue(absl::StrCat("queue-", request % 8));
  job.set_job_set(absl::StrCat("set-", request % 64));
  job.set_owner(absl::StrCat("user-", request % 16));
  job.add_groups("research");
  job.set_client_id(absl::StrCat("client-", i));
  job.set_priority(static_cast<uint32_t>(i % 5));
  job.set_priority_class("default");
  (*job.mutable_labels())["app"] = absl::StrCat("app-", i % 10);
  (*job.mutable_labels())["team"] = "ml";
  (*job.mutable_annotations())["origin"] = "bench";
  auto* task = job.mutable_task();
  task->set_image("python:3.11");
  task->add_command("python");
  task->add_args("train.py");
  task->add_args(absl::StrCat("--shard=", i));
  (*task->mutable_env())["SHARD"] = absl::StrCat(i);
  (*task->mutable_resources()->mutable_requests())["cpu"] = "500m";
  (*task->mutable_resources()->mutable_requests())["memory"] = "1Gi";
  job.mutable_submit_time()->set_seconds(1'700'000'000 + i / 1000);
  return job;
}

class TempDir {
 public:
  TempDir() {
    const char* tmp = getenv("TMPDIR");
    std::string templ = absl::StrCat((tmp && *tmp) ? tmp : "/tmp", "/regatta_ingest_bench_XXXXXX");
    if (mkdtemp(templ.data()) == nullptr) abort();
    path_ = templ;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::unique_ptr<store::SqliteStore> OpenStore(const TempDir& dir) {
  auto store = store::SqliteStore::Open(dir.path() + "/views.db");
  if (!store.ok()) {
    fprintf(stderr, "open: %s\n", store.status().ToString().c_str());
    abort();
  }
  return std::move(*store);
}

// One ingest batch of `batch` job inserts per iteration (one transaction, one fsync), into a
// store that keeps growing.
void BM_ApplyJobInserts(benchmark::State& state) {
  const int batch_size = static_cast<int>(state.range(0));
  TempDir dir;
  auto store = OpenStore(dir);
  int64_t next = 0;
  int64_t offset = 0;
  for (auto _ : state) {
    state.PauseTiming();
    store::IngestBatch batch;
    batch.consumer = "query";
    batch.to_offset = ++offset;
    batch.mutations.reserve(batch_size);
    for (int i = 0; i < batch_size; ++i) {
      batch.mutations.push_back({offset, store::JobInsert{MakeJob(next++)}});
    }
    state.ResumeTiming();
    auto result = store->ApplyIngestBatch(batch);
    if (!result.ok()) state.SkipWithError(result.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * batch_size);
  state.counters["jobs/s"] = benchmark::Counter(
      static_cast<double>(state.iterations() * batch_size), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_ApplyJobInserts)
    ->Arg(100)
    ->Arg(1000)
    ->Arg(10000)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// End to end: a log of submit sequences (1000 jobs each, as the API publishes a request) read,
// converted and applied by the Ingester, started (its thread) or with CatchUp.
void BM_IngestSubmitLog(benchmark::State& state) {
  const int records = static_cast<int>(state.range(0));
  const bool started = state.range(1) != 0;
  constexpr int kJobsPerRecord = 1000;
  testing::InMemoryEventLog log(64 << 20);
  int64_t next = 0;
  for (int r = 0; r < records; ++r) {
    regatta::v1::EventSequence seq;
    for (int i = 0; i < kJobsPerRecord; ++i) {
      auto* event = seq.add_events();
      event->mutable_created()->set_seconds(1'700'000'000);
      *event->mutable_submit_job()->mutable_job() = MakeJob(next++);
    }
    seq.set_queue(seq.events(0).submit_job().job().queue());
    seq.set_job_set(seq.events(0).submit_job().job().job_set());
    seq.set_user_id(seq.events(0).submit_job().job().owner());
    if (!log.Append({std::move(seq)}).ok()) abort();
  }
  for (auto _ : state) {
    state.PauseTiming();
    TempDir dir;
    auto store = OpenStore(dir);
    ingest::Ingester ingester(&log, store.get(), RealClock::Get());
    state.ResumeTiming();
    absl::Status status;
    if (started) {
      // The production path: the ingest thread, until the whole log is in.
      status = ingester.Start();
      if (status.ok()) {
        status = ingester.WaitForOffset(log.LastOffset(), absl::Now() + absl::Minutes(5));
      }
    } else {
      status = ingester.CatchUp();  // the same loop on this thread
    }
    if (!status.ok()) state.SkipWithError(status.ToString().c_str());
    state.PauseTiming();
    ingester.Stop();
    store.reset();
    state.ResumeTiming();
  }
  state.counters["jobs/s"] =
      benchmark::Counter(static_cast<double>(state.iterations() * records * kJobsPerRecord),
                         benchmark::Counter::kIsRate);
}
BENCHMARK(BM_IngestSubmitLog)
    ->ArgNames({"records", "started"})
    ->Args({50, 1})
    ->Args({50, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

// Queries against 100 000 jobs, a tenth of them running. Built once; the statics are
// destroyed at exit in reverse order (store closed, then the directory removed).
store::SqliteStore* QueryStore() {
  static const std::unique_ptr<TempDir> dir = std::make_unique<TempDir>();
  static const std::unique_ptr<store::SqliteStore> store = [] {
    std::unique_ptr<store::SqliteStore> s = OpenStore(*dir);
    constexpr int kJobs = 100'000;
    int64_t offset = 0;
    for (int begin = 0; begin < kJobs; begin += 10'000) {
      store::IngestBatch batch;
      batch.consumer = "query";
      batch.to_offset = ++offset;
      for (int i = begin; i < begin + 10'000; ++i) {
        batch.mutations.push_back({offset, store::JobInsert{MakeJob(i)}});
        if (i % 10 == 0) {
          store::JobSetState running;
          running.job_id = JobId(i);
          running.state = regatta::v1::JOB_STATE_RUNNING;
          batch.mutations.push_back({offset, running});
        }
      }
      if (!s->ApplyIngestBatch(batch).ok()) abort();
    }
    return s;
  }();
  return store.get();
}

void RunList(benchmark::State& state, const store::JobFilter& filter) {
  store::SqliteStore* store = QueryStore();
  size_t rows = 0;
  for (auto _ : state) {
    auto jobs = store->ListJobs(filter);
    if (!jobs.ok()) state.SkipWithError(jobs.status().ToString().c_str());
    rows = jobs->size();
  }
  state.counters["rows"] = static_cast<double>(rows);
  state.counters["rows/s"] = benchmark::Counter(static_cast<double>(state.iterations() * rows),
                                                benchmark::Counter::kIsRate);
}

void BM_ListJobs_All(benchmark::State& state) {
  RunList(state, {.limit = static_cast<int>(state.range(0))});
}
BENCHMARK(BM_ListJobs_All)->Arg(100)->Arg(10000)->Unit(benchmark::kMillisecond);

void BM_ListJobs_QueueJobSet(benchmark::State& state) {
  RunList(state, {.queue = "queue-3", .job_set = "set-11", .limit = 10000});
}
BENCHMARK(BM_ListJobs_QueueJobSet)->Unit(benchmark::kMillisecond);

void BM_ListJobs_QueueRunning(benchmark::State& state) {
  RunList(state, {.queue = "queue-2", .states = {regatta::v1::JOB_STATE_RUNNING}, .limit = 10000});
}
BENCHMARK(BM_ListJobs_QueueRunning)->Unit(benchmark::kMillisecond);

void BM_ListJobs_Running(benchmark::State& state) {
  RunList(state, {.states = {regatta::v1::JOB_STATE_RUNNING}, .limit = 10000});
}
BENCHMARK(BM_ListJobs_Running)->Unit(benchmark::kMillisecond);

void BM_ListJobs_Owner(benchmark::State& state) {
  RunList(state, {.owner = "user-3", .newest_first = true, .limit = 100});
}
BENCHMARK(BM_ListJobs_Owner)->Unit(benchmark::kMillisecond);

void BM_ListJobs_Label(benchmark::State& state) {
  RunList(state, {.labels = {{"app", "app-7"}}, .limit = 10000});
}
BENCHMARK(BM_ListJobs_Label)->Unit(benchmark::kMillisecond);

void BM_ListJobs_QueueLabel(benchmark::State& state) {
  RunList(state, {.queue = "queue-1", .labels = {{"app", "app-1"}}, .limit = 100});
}
BENCHMARK(BM_ListJobs_QueueLabel)->Unit(benchmark::kMillisecond);

void BM_GetJobDetails(benchmark::State& state) {
  store::SqliteStore* store = QueryStore();
  std::vector<std::string> ids;
  for (int i = 0; i < state.range(0); ++i) ids.push_back(JobId(i * 97));
  for (auto _ : state) {
    auto details = store->GetJobDetails(ids, /*expand_spec=*/true);
    if (!details.ok()) state.SkipWithError(details.status().ToString().c_str());
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_GetJobDetails)->Arg(1)->Arg(100)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace regatta

BENCHMARK_MAIN();
