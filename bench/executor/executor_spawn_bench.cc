// Local executor process supervision: how many runs per second the supervisor starts and
// reports (Start + WaitResults + Forget) for /bin/true, sequentially and with 8-32 runs in
// flight, against a plain posix_spawn + waitpid loop (the machine's spawn ceiling) and the cost
// of one durable state write.
//
//   build/supervisor/bench/executor/executor_spawn_bench --benchmark_repetitions=3
//       --benchmark_report_aggregates_only=true   (one command line)
//
// items_per_second is runs/s. Run directories live under $TMPDIR (default /tmp): put it on the
// disk you want to measure, since every run writes three files with fsync.
#include <benchmark/benchmark.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "src/executor/local/files.h"
#include "src/executor/local/process_supervisor.h"

extern char** environ;

namespace regatta::executor {
namespace {

// Runs per benchmark iteration in the in-flight cases.
constexpr int kBatch = 128;

class TempRoot {
 public:
  TempRoot() {
    const char* base = getenv("TMPDIR");
    std::string templ = std::string(base != nullptr ? base : "/tmp") + "/regatta-spawn-XXXXXX";
    path_ = mkdtemp(templ.data());
  }
  ~TempRoot() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// `sync`: SupervisorOptions::sync_state (the local executor's default is off).
std::unique_ptr<ProcessSupervisor> OpenSupervisor(const std::string& root, bool sync) {
  SupervisorOptions options;
  options.sync_state = sync;
  options.root_dir = root;
  options.clock = RealClock::Get();
  options.base_env = {{"PATH", "/usr/bin:/bin"}};
  auto supervisor = ProcessSupervisor::Open(options);
  if (!supervisor.ok()) abort();
  return *std::move(supervisor);
}

RunLaunch TrueRun(int64_t n) {
  RunLaunch launch;
  launch.run_id = absl::StrCat("run-", n);
  launch.argv = {"/bin/true"};
  return launch;
}

// One run at a time: Start, wait for its result, Forget.
void BM_SupervisorSequential(benchmark::State& state) {
  TempRoot root;
  auto supervisor = OpenSupervisor(root.path(), state.range(0) != 0);
  int64_t n = 0;
  for (auto _ : state) {
    if (!supervisor->Start(TrueRun(n++)).ok()) state.SkipWithError("Start failed");
    std::vector<RunResult> results;
    while (results.empty()) results = supervisor->WaitResults(absl::Seconds(10));
    for (const RunResult& r : results) supervisor->Forget(r.run_id);
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_SupervisorSequential)
    ->ArgName("sync")
    ->Arg(1)
    ->Arg(0)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

// `range(0)` runs in flight, started by `range(1)` threads; one thread collects results
// (WaitResults + Forget), as the local executor does; `range(2)`: sync_state.
void BM_SupervisorInFlight(benchmark::State& state) {
  const int in_flight = static_cast<int>(state.range(0));
  const int starters = static_cast<int>(state.range(1));
  TempRoot root;
  auto supervisor = OpenSupervisor(root.path(), state.range(2) != 0);
  std::atomic<int64_t> next_id{0};
  std::atomic<bool> failed{false};
  for (auto _ : state) {
    absl::Mutex mu;
    int started = 0, running = 0, done = 0;
    std::thread collector([&] {
      while (true) {
        {
          absl::MutexLock lock(&mu);
          if (done == kBatch || failed) return;
        }
        for (const RunResult& r : supervisor->WaitResults(absl::Milliseconds(100))) {
          supervisor->Forget(r.run_id);
          absl::MutexLock lock(&mu);
          --running;
          ++done;
        }
      }
    });
    std::vector<std::thread> threads;
    for (int t = 0; t < starters; ++t) {
      threads.emplace_back([&] {
        while (true) {
          {
            absl::MutexLock lock(&mu);
            auto can_start = [&] { return started == kBatch || running < in_flight; };
            mu.Await(absl::Condition(&can_start));
            if (started == kBatch) return;
            ++started;
            ++running;
          }
          if (!supervisor->Start(TrueRun(next_id++)).ok()) failed = true;
        }
      });
    }
    for (auto& t : threads) t.join();
    collector.join();
    if (failed) state.SkipWithError("Start failed");
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_SupervisorInFlight)
    ->ArgNames({"in_flight", "starters", "sync"})
    ->Args({8, 1, 1})
    ->Args({32, 1, 1})
    ->Args({8, 4, 1})
    ->Args({32, 8, 1})
    ->Args({8, 1, 0})
    ->Args({32, 8, 0})
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The machine's ceiling: posix_spawn + waitpid of /bin/true, nothing else.
void BM_PosixSpawnWaitpid(benchmark::State& state) {
  const int in_flight = static_cast<int>(state.range(0));
  char arg0[] = "/bin/true";
  char* argv[] = {arg0, nullptr};
  for (auto _ : state) {
    for (int done = 0; done < kBatch; done += in_flight) {
      pid_t pids[kBatch];
      int n = std::min(in_flight, kBatch - done);
      for (int i = 0; i < n; ++i) {
        if (posix_spawn(&pids[i], "/bin/true", nullptr, nullptr, argv, environ) != 0) {
          state.SkipWithError("posix_spawn failed");
        }
      }
      for (int i = 0; i < n; ++i) waitpid(pids[i], nullptr, 0);
    }
  }
  state.SetItemsProcessed(state.iterations() * kBatch);
}
BENCHMARK(BM_PosixSpawnWaitpid)
    ->Arg(1)
    ->Arg(8)
    ->Arg(32)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// One durable file replacement (write tmp, fsync, rename, fsync dir): each run does three.
void BM_AtomicWrite(benchmark::State& state) {
  TempRoot root;
  std::string path = root.path() + "/state.json";
  std::string contents(600, 'x');
  for (auto _ : state) {
    if (!local::WriteFileAtomically(path, contents).ok()) state.SkipWithError("write failed");
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_AtomicWrite)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace regatta::executor

BENCHMARK_MAIN();
