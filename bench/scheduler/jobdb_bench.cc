// The JobDb at a million queued jobs: memory per job, build time, and the scheduler's restart
// path (SQLite views -> LoadSchedulerDelta(0) -> JobDb -> first cycle).
//
//   build/<preset>/bench/scheduler/scheduler_jobdb_bench      (all cases)
//   build/<preset>/bench/scheduler/scheduler_jobdb_bench --benchmark_filter=Restart
//
// Workload: `jobs` queued jobs in 100 queues, 4 job sets per queue, one spec shape per job-set
// index (1 cpu/4Gi, 2 cpu/8Gi, 1 gpu, a node selector), ULID ids, a command, labels and
// annotations like real submissions. Memory is the allocator's allocated bytes (jemalloc
// stats.allocated, or mallinfo2 without jemalloc) after the JobDb is built minus before,
// divided by the job count. The restart case writes its SQLite views once per process in a
// temp dir (REGATTA_JOBDB_BENCH_DIR keeps and reuses them).
#include <malloc.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "benchmark/benchmark.h"
#include "google/protobuf/util/time_util.h"
#include "regatta/v1/types.pb.h"
#include "src/common/clock.h"
#include "src/common/ids.h"
#include "src/eventlog/sqlite/sqlite_event_log.h"
#include "src/scheduler/executor_registry.h"
#include "src/scheduler/jobdb/job_db.h"
#include "src/scheduler/scheduler.h"
#include "src/store/sqlite/sqlite_store.h"

// jemalloc's control interface when the binary links jemalloc (weak: absent otherwise).
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace regatta::scheduler {
namespace {

constexpr int kQueues = 100;
constexpr int kJobSetsPerQueue = 4;
const absl::Time kT0 = absl::FromUnixSeconds(1'750'000'000);

size_t AllocatedBytes() {
  if (mallctl != nullptr) {
    uint64_t epoch = 1;
    size_t len = sizeof(epoch);
    mallctl("epoch", &epoch, &len, &epoch, len);
    size_t allocated = 0;
    len = sizeof(allocated);
    if (mallctl("stats.allocated", &allocated, &len, nullptr, 0) == 0) return allocated;
  }
  return mallinfo2().uordblks;
}

std::string QueueName(int q) { return absl::StrCat("queue-", q); }

// Job `i` as submitted (its spec shape follows its job-set index).
regatta::v1::Job MakeJob(int64_t i) {
  const int q = static_cast<int>(i % kQueues);
  const int set = static_cast<int>((i / kQueues) % kJobSetsPerQueue);
  regatta::v1::Job job;
  job.set_id(EncodeUlid(absl::ToUnixMillis(kT0) + i / 1000, 0, static_cast<uint64_t>(i)));
  job.set_queue(QueueName(q));
  job.set_job_set(absl::StrCat("set-", set));
  job.set_owner("alice");
  job.add_groups("team");
  job.set_priority_class("default");
  (*job.mutable_labels())["app"] = "train";
  (*job.mutable_annotations())["note"] = absl::StrCat("job number ", i);
  regatta::v1::TaskSpec* task = job.mutable_task();
  task->set_image("busybox:latest");
  task->add_command("/bin/sh");
  task->add_args("-c");
  task->add_args(absl::StrCat("echo ", i));
  auto& requests = *task->mutable_resources()->mutable_requests();
  requests["cpu"] = set == 1 ? "2" : "1";
  requests["memory"] = set == 1 ? "8Gi" : "4Gi";
  if (set == 2) requests["nvidia.com/gpu"] = "1";
  if (set == 3) (*task->mutable_node_selector())["zone"] = "a";
  *job.mutable_submit_time() =
      google::protobuf::util::TimeUtil::MicrosecondsToTimestamp(absl::ToUnixMicros(kT0) + i);
  return job;
}

int32_t NoPriority(absl::string_view) { return 0; }

// Builds the JobDb from rows, as the scheduler's load does: one template per distinct spec
// (made from the spec of the job's (queue, job set), whose id and submit time change per job),
// in one transaction; arg 1 is the bulk load of an empty JobDb, arg 0 the overlay + commit.
void BM_JobDbBuild(benchmark::State& state) {
  const int64_t jobs = state.range(0);
  const bool bulk = state.range(1) != 0;
  std::vector<regatta::v1::Job> specs;
  for (int64_t i = 0; i < kQueues * kJobSetsPerQueue; ++i) specs.push_back(MakeJob(i));
  double bytes_per_job = 0;
  size_t template_count = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const size_t before = AllocatedBytes();
    auto db = std::make_unique<JobDb>(NoPriority);
    state.ResumeTiming();
    std::unique_ptr<JobDb::Txn> txn = db->Begin(bulk);
    txn->Reserve(static_cast<size_t>(jobs));
    std::vector<std::shared_ptr<const JobSpecTemplate>> templates(specs.size());
    for (int64_t i = 0; i < jobs; ++i) {
      const size_t s = static_cast<size_t>(i) % specs.size();
      regatta::v1::Job& job = specs[s];
      job.set_id(EncodeUlid(absl::ToUnixMillis(kT0) + i / 1000, 0, static_cast<uint64_t>(i)));
      job.mutable_submit_time()->set_nanos(static_cast<int32_t>(i % 1'000'000) * 1000);
      txn->ApplyJobRow(store::SubmittedJobRow(job), 1,
                       [&]() -> std::shared_ptr<const JobSpecTemplate> {
                         if (templates[s] == nullptr)
                           templates[s] = db->Template(job, job.priority_class());
                         return templates[s];
                       });
    }
    templates.clear();
    txn->Commit();
    txn.reset();
    state.PauseTiming();
    bytes_per_job = static_cast<double>(AllocatedBytes() - before) / static_cast<double>(jobs);
    template_count = db->template_count();
    db.reset();
    state.ResumeTiming();
  }
  state.counters["bytes_per_job"] = bytes_per_job;
  state.counters["templates"] = static_cast<double>(template_count);
  state.counters["jobs_per_s"] =
      benchmark::Counter(static_cast<double>(jobs), benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_JobDbBuild)
    ->Args({100'000, 0})
    ->Args({1'000'000, 0})
    ->Args({1'000'000, 1})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The SQLite views of `jobs` queued jobs, written once per process.
std::string ViewsWith(int64_t jobs) {
  static std::string* made_for = new std::string();
  const char* keep = std::getenv("REGATTA_JOBDB_BENCH_DIR");
  const std::filesystem::path dir =
      keep != nullptr ? std::filesystem::path(keep) / absl::StrCat("views-", jobs)
                      : std::filesystem::temp_directory_path() /
                            absl::StrCat("regatta-jobdb-bench-", getpid(), "-", jobs);
  const std::string path = (dir / "views.db").string();
  if (*made_for == path || (keep != nullptr && std::filesystem::exists(path))) return path;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = store::SqliteStore::Open(path);
  if (!store.ok()) return "";
  int64_t offset = 0;
  for (int q = 0; q < kQueues; ++q) {
    store::IngestBatch batch;
    batch.consumer = "query";
    regatta::v1::Queue queue;
    queue.set_name(QueueName(q));
    queue.set_priority_factor(1);
    batch.mutations.push_back({++offset, store::QueueUpsert{queue}});
    batch.to_offset = offset;
    if (!(*store)->ApplyIngestBatch(batch).ok()) return "";
  }
  constexpr int64_t kBatch = 10'000;
  for (int64_t start = 0; start < jobs; start += kBatch) {
    store::IngestBatch batch;
    batch.consumer = "query";
    for (int64_t i = start; i < std::min(jobs, start + kBatch); ++i) {
      batch.mutations.push_back({++offset, store::JobInsert{MakeJob(i)}});
    }
    batch.to_offset = offset;
    if (!(*store)->ApplyIngestBatch(batch).ok()) return "";
  }
  *made_for = path;
  return path;
}

// Restart: a new scheduler loads its JobDb from the views and completes its first cycle. The
// catch-up marker goes to a fresh log whose views wait returns at once.
void BM_Restart(benchmark::State& state) {
  const int64_t jobs = state.range(0);
  const std::string views = ViewsWith(jobs);
  if (views.empty()) {
    state.SkipWithError("could not write the views");
    return;
  }
  const std::filesystem::path dir = std::filesystem::path(views).parent_path();
  size_t loaded = 0;
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove(dir / "log.db");
    auto log = eventlog::SqliteEventLog::Open((dir / "log.db").string());
    UlidGenerator ids(RealClock::Get());
    ExecutorRegistry executors;
    state.ResumeTiming();
    auto store = store::SqliteStore::Open(views);
    if (!store.ok() || !log.ok()) {
      state.SkipWithError("could not open the store or log");
      return;
    }
    auto scheduler = std::make_unique<Scheduler>(
        log->get(), store->get(), [](int64_t, absl::Time) { return absl::OkStatus(); }, &executors,
        RealClock::Get(), &ids, SchedulerOptions());
    if (!scheduler->Initialize().ok() || !scheduler->RunCycle().ok()) {
      state.SkipWithError("restart failed");
      return;
    }
    loaded = scheduler->job_db().size();
    // The restart ends with the first cycle: tearing the old process's JobDb down is not part
    // of it (a real restart starts a fresh process).
    state.PauseTiming();
    scheduler.reset();
    store->reset();
    (*log)->Close();
    state.ResumeTiming();
  }
  state.counters["jobs"] = static_cast<double>(loaded);
  if (std::getenv("REGATTA_JOBDB_BENCH_DIR") == nullptr) std::filesystem::remove_all(dir);
}
BENCHMARK(BM_Restart)->Arg(100'000)->Arg(1'000'000)->Unit(benchmark::kMillisecond)->Iterations(1);

}  // namespace
}  // namespace regatta::scheduler

BENCHMARK_MAIN();
