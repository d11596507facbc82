// The submit API end to end: a real gRPC client on loopback → authentication → authorization →
// validation → dedup → one durable (fsync'd) log append per call → answer. Batches of 1000 jobs.
// items_per_second is jobs/s. Run: build/default/bench/api/submit_bench
// (BM_CancelQueue alone: --benchmark_filter=CancelQueue)
#include <filesystem>
#include <memory>
#include <mutex>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "grpcpp/grpcpp.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "regatta/v1/submit_service.grpc.pb.h"
#include "src/server/config.h"
#include "src/server/platform.h"

namespace regatta {
namespace {

struct Shared {
  std::filesystem::path dir;
  std::unique_ptr<server::Platform> platform;
  std::shared_ptr<grpc::Channel> channel;
};

Shared* shared = nullptr;
std::mutex shared_mu;

// One platform for the whole run (anonymous access on loopback, as `regatta up` has it).
Shared& Get() {
  std::lock_guard<std::mutex> lock(shared_mu);
  if (shared != nullptr) return *shared;
  shared = new Shared();
  shared->dir =
      std::filesystem::temp_directory_path() / absl::StrCat("regatta-submit-bench-", getpid());
  std::filesystem::remove_all(shared->dir);
  server::UpFlags flags;
  flags.data_dir = shared->dir.string();
  flags.grpc_listen = "127.0.0.1:0";
  flags.http_listen = "127.0.0.1:0";
  flags.overrides = {"logging.level=warn"};
  auto config = server::LoadServerConfig(flags, {});
  if (!config.ok()) std::abort();
  auto platform = server::Platform::Start(*config, server::Mode::kUp);
  if (!platform.ok()) {
    fprintf(stderr, "%s\n", platform.status().ToString().c_str());
    std::abort();
  }
  shared->platform = std::move(*platform);
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);
  shared->channel = grpc::CreateCustomChannel(shared->platform->grpc_address(),
                                              grpc::InsecureChannelCredentials(), args);
  auto queues = regatta::v1::QueueService::NewStub(shared->channel);
  regatta::v1::CreateQueueRequest req;
  req.mutable_queue()->set_name("bench");
  regatta::v1::Queue q;
  grpc::ClientContext ctx;
  grpc::Status s = queues->CreateQueue(&ctx, req, &q);
  if (!s.ok()) std::abort();
  return *shared;
}

regatta::v1::SubmitJobsRequest Batch(int n, bool client_ids, int64_t* counter) {
  regatta::v1::SubmitJobsRequest req;
  req.set_queue("bench");
  req.set_job_set("set");
  for (int i = 0; i < n; ++i) {
    auto* item = req.add_items();
    auto* task = item->mutable_task();
    task->add_command("/bin/sh");
    task->add_args("-c");
    task->add_args("echo hello from a regatta job && sleep 1");
    (*task->mutable_env())["STAGE"] = "bench";
    (*task->mutable_resources()->mutable_requests())["cpu"] = "250m";
    (*task->mutable_resources()->mutable_requests())["memory"] = "128Mi";
    (*item->mutable_labels())["team"] = "bench";
    item->set_priority(1);
    if (client_ids) item->set_client_id(absl::StrCat("c-", (*counter)++));
  }
  return req;
}

void BM_SubmitBatch(benchmark::State& state) {
  Shared& s = Get();
  auto stub = regatta::v1::SubmitService::NewStub(s.channel);
  const bool client_ids = state.range(1) != 0;
  static std::atomic<int64_t> base{0};
  int64_t counter = base.fetch_add(int64_t{1} << 40);
  for (auto _ : state) {
    state.PauseTiming();
    auto req = Batch(static_cast<int>(state.range(0)), client_ids, &counter);
    state.ResumeTiming();
    regatta::v1::SubmitJobsResponse resp;
    grpc::ClientContext ctx;
    grpc::Status status = stub->SubmitJobs(&ctx, req, &resp);
    if (!status.ok()) {
      state.SkipWithError(status.error_message().c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}

BENCHMARK(BM_SubmitBatch)
    ->ArgNames({"jobs", "client_ids"})
    ->Args({1000, 0})
    ->Args({1000, 1})
    ->UseRealTime()
    ->MinTime(3.0);
BENCHMARK(BM_SubmitBatch)
    ->ArgNames({"jobs", "client_ids"})
    ->Args({1000, 0})
    ->Threads(4)
    ->UseRealTime()
    ->MinTime(3.0);

// `regatta cancel --queue Q` on a queue of `jobs` queued jobs (submitted and ingested before the
// clock starts): find them, publish one cancel per job, answer once durable.
void BM_CancelQueue(benchmark::State& state) {
  Shared& s = Get();
  auto queues = regatta::v1::QueueService::NewStub(s.channel);
  auto stub = regatta::v1::SubmitService::NewStub(s.channel);
  const int jobs = static_cast<int>(state.range(0));
  static int next_queue = 0;
  int64_t counter = 0;
  int64_t cancelled = 0;
  for (auto _ : state) {
    state.PauseTiming();
    const std::string queue = absl::StrCat("bulk-", next_queue++);
    regatta::v1::CreateQueueRequest create;
    create.mutable_queue()->set_name(queue);
    regatta::v1::Queue created;
    grpc::ClientContext create_ctx;
    if (!queues->CreateQueue(&create_ctx, create, &created).ok()) std::abort();
    for (int submitted = 0; submitted < jobs; submitted += 10'000) {
      auto req = Batch(std::min(10'000, jobs - submitted), false, &counter);
      req.set_queue(queue);
      regatta::v1::SubmitJobsResponse resp;
      grpc::ClientContext ctx;
      if (!stub->SubmitJobs(&ctx, req, &resp).ok()) std::abort();
    }
    if (!s.platform->WaitForViews(s.platform->log()->LastOffset(), absl::Now() + absl::Minutes(5))
             .ok()) {
      std::abort();
    }
    state.ResumeTiming();
    regatta::v1::CancelQueueRequest cancel;
    cancel.set_queue(queue);
    regatta::v1::CancelQueueResponse resp;
    grpc::ClientContext ctx;
    grpc::Status status = stub->CancelQueue(&ctx, cancel, &resp);
    if (!status.ok()) {
      state.SkipWithError(status.error_message().c_str());
      break;
    }
    // Less than `jobs` by the few the embedded executor ran to the end meanwhile.
    cancelled += resp.cancel_requested_count();
  }
  state.SetItemsProcessed(cancelled);
}

BENCHMARK(BM_CancelQueue)
    ->ArgName("jobs")
    ->Arg(100'000)
    ->Iterations(2)
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace regatta

BENCHMARK_MAIN();
