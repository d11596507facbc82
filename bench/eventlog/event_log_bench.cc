// Event-log throughput: the API server publishes submits in batches of 1000 jobs and must
// sustain >= 50 000 jobs/s durable (DESIGN.md section 9), i.e. well under 20 ms per batch.
//
//   build/eventlog/bench/eventlog/event_log_bench [--benchmark_filter=Append]
//
// items_per_second is jobs/s. The log lives under $TMPDIR (default /tmp): put it on the disk
// you want to measure, since every append waits for an fsync.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "src/eventlog/sqlite/sqlite_event_log.h"

namespace regatta::eventlog {
namespace {

constexpr int kJobsPerBatch = 1000;

// A job as the API server would store it: command, args, env, resources, labels.
regatta::v1::Event MakeSubmitJob(int batch, int index) {
  regatta::v1::Event event;
  event.mutable_created()->set_seconds(1'764'400'000);
  event.mutable_created()->set_nanos(index * 1000);
  regatta::v1::Job* job = event.mutable_submit_job()->mutable_job();
  job->set_id(absl::StrCat("01JDQ8ZK4M", 1'000'000'000 + batch, 100'000 + index));
  job->set_queue("research");
  job->set_job_set("hyperparam-sweep-2026-11-29");
  job->set_owner("alice");
  job->add_groups("ml-team");
  job->add_groups("gpu-users");
  job->set_client_id(absl::StrCat("sweep-", batch, "-", index));
  job->set_priority(static_cast<uint32_t>(index % 5));
  job->set_priority_class("armada-default");
  (*job->mutable_labels())["app"] = "trainer";
  (*job->mutable_labels())["sweep"] = "lr-search";
  (*job->mutable_labels())["trial"] = absl::StrCat(index);
  (*job->mutable_annotations())["regatta.io/submitted-by"] = "regatta-cli/0.1.0";
  regatta::v1::TaskSpec* task = job->mutable_task();
  task->set_image("ghcr.io/example/trainer:2026.11");
  task->add_command("python3");
  task->add_command("-m");
  task->add_command("trainer.main");
  task->add_args("--epochs=10");
  task->add_args(absl::StrCat("--learning-rate=0.00", 1 + index % 9));
  task->add_args(absl::StrCat("--output=/data/sweeps/lr-search/trial-", index));
  (*task->mutable_env())["PYTHONUNBUFFERED"] = "1";
  (*task->mutable_env())["OMP_NUM_THREADS"] = "2";
  (*task->mutable_env())["TRIAL_INDEX"] = absl::StrCat(index);
  (*task->mutable_env())["DATASET"] = "/data/imagenet-mini";
  task->set_working_dir("/workspace");
  auto& requests = *task->mutable_resources()->mutable_requests();
  requests["cpu"] = "2";
  requests["memory"] = "4Gi";
  requests["ephemeral-storage"] = "10Gi";
  auto& limits = *task->mutable_resources()->mutable_limits();
  limits = requests;
  (*task->mutable_node_selector())["pool"] = "cpu-standard";
  regatta::v1::Toleration* toleration = task->add_tolerations();
  toleration->set_key("dedicated");
  toleration->set_value("batch");
  toleration->set_effect("NoSchedule");
  task->mutable_active_deadline()->set_seconds(3600);
  job->mutable_retry_policy()->set_max_retries(3);
  job->mutable_submit_time()->set_seconds(1'764'400'000);
  return event;
}

regatta::v1::EventSequence MakeBatch(int batch) {
  regatta::v1::EventSequence seq;
  seq.set_queue("research");
  seq.set_job_set("hyperparam-sweep-2026-11-29");
  seq.set_user_id("alice");
  seq.add_groups("ml-team");
  for (int i = 0; i < kJobsPerBatch; ++i) *seq.add_events() = MakeSubmitJob(batch, i);
  return seq;
}

std::string FreshDir(absl::string_view name) {
  const char* tmp = std::getenv("TMPDIR");
  std::filesystem::path dir = std::filesystem::path(tmp != nullptr ? tmp : "/tmp") /
                              absl::StrCat("regatta_bench_", name, "_", getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir.string();
}

// Bytes this process has passed to write()/pwrite() so far (/proc/self/io "wchar").
int64_t BytesWritten() {
  std::ifstream io("/proc/self/io");
  std::string key;
  int64_t value = 0;
  while (io >> key >> value) {
    if (key == "wchar:") return value;
  }
  return 0;
}

// Shared by the threads of one benchmark run; thread 0 sets it up before the timing barrier.
struct Fixture {
  std::string dir;
  std::unique_ptr<SqliteEventLog> log;
  absl::Mutex mu;
  std::vector<absl::Duration> latencies ABSL_GUARDED_BY(mu);  // of every Append, all threads
  int64_t bytes_written_at_start = 0;
};
Fixture* g_fixture = nullptr;

// Percentiles of Append latency in ms: the mean hides the checkpoint stalls.
void ReportLatencies(benchmark::State& state) {
  absl::MutexLock lock(&g_fixture->mu);
  std::vector<absl::Duration>& l = g_fixture->latencies;
  if (l.empty()) return;
  std::sort(l.begin(), l.end());
  auto at = [&](double q) {
    return absl::ToDoubleMilliseconds(l[std::min(l.size() - 1, static_cast<size_t>(q * l.size()))]);
  };
  state.counters["p50_ms"] = at(0.50);
  state.counters["p99_ms"] = at(0.99);
  state.counters["max_ms"] = absl::ToDoubleMilliseconds(l.back());
}

void SetUpLog(benchmark::State& state, absl::string_view name) {
  g_fixture = new Fixture;
  g_fixture->dir = FreshDir(name);
  SqliteEventLog::Options options;
  if (const char* page = std::getenv("REGATTA_BENCH_PAGE_SIZE"))
    options.page_size = std::atoi(page);
  if (const char* ckpt = std::getenv("REGATTA_BENCH_CKPT"))
    options.checkpoint_wal_bytes = std::atoll(ckpt);
  absl::StatusOr<std::unique_ptr<SqliteEventLog>> log =
      SqliteEventLog::Open(g_fixture->dir + "/events.db", options);
  if (!log.ok()) {
    state.SkipWithError(log.status().ToString().c_str());
    return;
  }
  g_fixture->log = std::move(*log);
  g_fixture->bytes_written_at_start = BytesWritten();
}

// File bytes written (WAL, checkpoints) per Append, i.e. the write amplification.
void ReportBytesWritten(benchmark::State& state) {
  const int64_t appends = g_fixture->log->GetStats().appends;
  if (appends == 0) return;
  state.counters["written_kb_per_append"] =
      static_cast<double>(BytesWritten() - g_fixture->bytes_written_at_start) / 1024 / appends;
}

void TearDownLog() {
  g_fixture->log.reset();
  std::filesystem::remove_all(g_fixture->dir);
  delete g_fixture;
  g_fixture = nullptr;
}

// One durable Append of one EventSequence holding 1000 SubmitJob events, from 1, 4 and 8
// threads. Timed: serialization (on the caller's thread), queueing, the transaction, fsync.
void BM_SqliteAppend1000Jobs(benchmark::State& state) {
  if (state.thread_index() == 0) SetUpLog(state, "append");
  const regatta::v1::EventSequence batch = MakeBatch(state.thread_index());
  std::vector<absl::Duration> latencies;
  for (auto _ : state) {
    // Copying the prepared batch in is the caller's cost, not the log's (see BM_CopyBatch).
    state.PauseTiming();
    std::vector<regatta::v1::EventSequence> sequences;
    sequences.push_back(batch);
    state.ResumeTiming();
    absl::Time start = absl::Now();
    absl::StatusOr<std::vector<int64_t>> offsets = g_fixture->log->Append(std::move(sequences));
    latencies.push_back(absl::Now() - start);
    if (!offsets.ok()) {
      state.SkipWithError(offsets.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * kJobsPerBatch);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(batch.ByteSizeLong()));
  {
    absl::MutexLock lock(&g_fixture->mu);
    g_fixture->latencies.insert(g_fixture->latencies.end(), latencies.begin(), latencies.end());
  }
  if (state.thread_index() == 0) {
    ReportLatencies(state);
    SqliteEventLog::Stats stats = g_fixture->log->GetStats();
    state.counters["batch_kb"] = static_cast<double>(batch.ByteSizeLong()) / 1024;
    state.counters["appends_per_commit"] =
        stats.commits > 0 ? static_cast<double>(stats.appends) / stats.commits : 0;
    state.counters["checkpoints"] = static_cast<double>(stats.checkpoints);
    ReportBytesWritten(state);
    std::error_code ec;
    state.counters["wal_mb"] =
        static_cast<double>(std::filesystem::file_size(g_fixture->log->path() + "-wal", ec)) /
        (1 << 20);
    TearDownLog();
  }
}
BENCHMARK(BM_SqliteAppend1000Jobs)
    ->Threads(1)
    ->Threads(4)
    ->Threads(8)
    ->UseRealTime()
    ->MeasureProcessCPUTime()  // the writer and checkpointer threads' CPU too
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

// The same with one-job sequences: the cost of the fsync and transaction alone.
void BM_SqliteAppend1Job(benchmark::State& state) {
  if (state.thread_index() == 0) SetUpLog(state, "append1");
  regatta::v1::EventSequence batch;
  batch.set_queue("research");
  batch.set_job_set("single");
  *batch.add_events() = MakeSubmitJob(state.thread_index(), 0);
  for (auto _ : state) {
    absl::StatusOr<std::vector<int64_t>> offsets = g_fixture->log->Append({batch});
    if (!offsets.ok()) {
      state.SkipWithError(offsets.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) {
    SqliteEventLog::Stats stats = g_fixture->log->GetStats();
    state.counters["appends_per_commit"] =
        stats.commits > 0 ? static_cast<double>(stats.appends) / stats.commits : 0;
    state.counters["appends_per_sync"] =
        stats.syncs > 0 ? static_cast<double>(stats.appends) / stats.syncs : 0;
    ReportBytesWritten(state);
    TearDownLog();
  }
}
BENCHMARK(BM_SqliteAppend1Job)
    ->Threads(1)
    ->Threads(8)
    ->UseRealTime()
    ->MeasureProcessCPUTime()  // the writer and checkpointer threads' CPU too
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(1.0);

// AppendVisible of one-job sequences: the commit without the sync (what the pipeline engine's
// submits and progress pay).
void BM_SqliteAppendVisible1Job(benchmark::State& state) {
  if (state.thread_index() == 0) SetUpLog(state, "visible1");
  regatta::v1::EventSequence batch;
  batch.set_queue("research");
  batch.set_job_set("single");
  *batch.add_events() = MakeSubmitJob(state.thread_index(), 0);
  for (auto _ : state) {
    absl::StatusOr<std::vector<int64_t>> offsets = g_fixture->log->AppendVisible({batch});
    if (!offsets.ok()) {
      state.SkipWithError(offsets.status().ToString().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  if (state.thread_index() == 0) TearDownLog();
}
BENCHMARK(BM_SqliteAppendVisible1Job)
    ->Threads(1)
    ->UseRealTime()
    ->MeasureProcessCPUTime()
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(1.0);

// Reading back and parsing 1000-job sequences, as an ingester replaying the log does.
void BM_SqliteRead1000Jobs(benchmark::State& state) {
  constexpr int kBatches = 20;
  SetUpLog(state, "read");
  for (int b = 0; b < kBatches; ++b) {
    if (!g_fixture->log->Append({MakeBatch(b)}).ok()) state.SkipWithError("append failed");
  }
  int64_t after = 0;
  for (auto _ : state) {
    absl::StatusOr<std::vector<LogRecord>> records = g_fixture->log->Read(after, 1);
    if (!records.ok() || records->size() != 1) {
      state.SkipWithError("read failed");
      break;
    }
    after = (after + 1) % kBatches;
  }
  state.SetItemsProcessed(state.iterations() * kJobsPerBatch);
  TearDownLog();
}
BENCHMARK(BM_SqliteRead1000Jobs)->Unit(benchmark::kMillisecond);

// Overheads inside the append loop above, to subtract: the copy into the call and the
// serialization Append does on the caller's thread.
void BM_CopyBatch(benchmark::State& state) {
  const regatta::v1::EventSequence batch = MakeBatch(0);
  for (auto _ : state) {
    regatta::v1::EventSequence copy = batch;
    benchmark::DoNotOptimize(copy);
  }
  state.SetItemsProcessed(state.iterations() * kJobsPerBatch);
}
BENCHMARK(BM_CopyBatch)->Unit(benchmark::kMillisecond);

void BM_SerializeBatch(benchmark::State& state) {
  const regatta::v1::EventSequence batch = MakeBatch(0);
  std::string out;
  for (auto _ : state) {
    batch.SerializeToString(&out);
    benchmark::DoNotOptimize(out);
  }
  state.SetItemsProcessed(state.iterations() * kJobsPerBatch);
}
BENCHMARK(BM_SerializeBatch)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace regatta::eventlog

BENCHMARK_MAIN();
