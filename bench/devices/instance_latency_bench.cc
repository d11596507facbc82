// A handler's change → the Instances visible in the API, and → their brokers running: issue
// 6's budgets "≤ 100 ms" and "≤ 1 s" end to end in one process.
//
//   build/<preset>/bench/devices/devices_instance_latency_bench
//
// Both run the platform as `regatta up` runs it (its embedded local executor runs the device
// agent on <data dir>/discovery), a debugEcho handler served on that directory, one
// Configuration with two devices, and flip the handler's availability file (OFFLINE / removed)
// once per iteration.
//
// BM_AvailabilityFlipToApi: polls DeviceService.ListInstances over gRPC until the Instances are
// gone (or both back): inotify → handler stream → agent → executor's ReportDevices → diff
// against the views → log append → ingest → API read.
//
// BM_DeviceToBrokerRunning: the Configuration has a brokerPodSpec (`sleep 600`); each iteration
// brings the devices back and polls JobService.ListJobs until both brokers are RUNNING: the
// above, then the controller's pass → submit → scheduler cycle (claims the device slot) → lease
// → the executor starts the process and reports it running. Between iterations (not timed) the
// devices go OFFLINE and the brokers are cancelled.
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "grpcpp/grpcpp.h"
#include "regatta/v1/device_service.grpc.pb.h"
#include "regatta/v1/job_service.grpc.pb.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "src/devices/handlers/debug_echo/debug_echo.h"
#include "src/devices/protocol/handler_server.h"
#include "src/server/config.h"
#include "src/server/platform.h"

namespace regatta::devices {
namespace {

// The platform, a debugEcho handler and the Configuration "echo" with two devices.
class DeviceBench {
 public:
  // Empty when it started; otherwise why not.
  std::string Start(const regatta::v1::Configuration& configuration) {
    char dir_template[] = "/tmp/rgbench.XXXXXX";
    dir_ = mkdtemp(dir_template);
    availability_ = dir_ + "/availability";
    server::UpFlags flags;
    flags.data_dir = dir_ + "/data";
    flags.grpc_listen = "127.0.0.1:0";
    flags.http_listen = "127.0.0.1:0";
    flags.overrides = {"logging.level=warn", "executor.cgroups=false"};
    auto config = server::LoadServerConfig(flags, {});
    if (!config.ok()) return config.status().ToString();
    auto platform = server::Platform::Start(*config, server::Mode::kUp);
    if (!platform.ok()) return platform.status().ToString();
    platform_ = *std::move(platform);
    finder_ = std::make_unique<debug_echo::DebugEchoFinder>(availability_);
    HandlerServerOptions handler_options;
    handler_options.dir = platform_->data_dir() + "/discovery";
    handler_options.name = "debugEcho";
    auto handler = HandlerServer::Start(handler_options, finder_.get());
    if (!handler.ok()) return handler.status().ToString();
    handler_ = *std::move(handler);
    auto channel =
        grpc::CreateChannel(platform_->grpc_address(), grpc::InsecureChannelCredentials());
    devices_ = regatta::v1::DeviceService::NewStub(channel);
    jobs_ = regatta::v1::JobService::NewStub(channel);
    queues_ = regatta::v1::QueueService::NewStub(channel);
    {
      regatta::v1::CreateQueueRequest request;
      request.mutable_queue()->set_name("devices");
      regatta::v1::Queue queue;
      grpc::ClientContext context;
      if (!queues_->CreateQueue(&context, request, &queue).ok()) return "cannot create a queue";
    }
    regatta::v1::ApplyConfigurationRequest request;
    *request.mutable_configuration() = configuration;
    regatta::v1::Configuration applied;
    grpc::ClientContext context;
    grpc::Status status = devices_->ApplyConfiguration(&context, request, &applied);
    if (!status.ok()) return "cannot apply the Configuration: " + status.error_message();
    if (!WaitFor([&] { return Instances() == 2; })) return "the Instances never appeared";
    return "";
  }

  ~DeviceBench() {
    if (handler_) handler_->Shutdown();
    if (platform_) platform_->Shutdown();
    std::error_code ignored;
    if (!dir_.empty()) std::filesystem::remove_all(dir_, ignored);
  }

  void SetOnline(bool online) {
    if (online) {
      std::remove(availability_.c_str());
    } else {
      std::ofstream(availability_) << "OFFLINE";
    }
  }

  int Instances() {
    regatta::v1::ListInstancesRequest request;
    request.set_configuration_name("echo");
    regatta::v1::ListInstancesResponse response;
    grpc::ClientContext context;
    if (!devices_->ListInstances(&context, request, &response).ok()) return -1;
    return response.instances_size();
  }

  // Broker jobs in `states`.
  int Brokers(std::vector<regatta::v1::JobState> states) {
    regatta::v1::ListJobsRequest request;
    (*request.mutable_labels())["regatta.dev/broker"] = "true";
    for (regatta::v1::JobState s : states) request.add_states(s);
    regatta::v1::ListJobsResponse response;
    grpc::ClientContext context;
    if (!jobs_->ListJobs(&context, request, &response).ok()) return -1;
    return response.jobs_size();
  }

  template <typename Condition>
  static bool WaitFor(Condition condition, absl::Duration timeout = absl::Seconds(10)) {
    const absl::Time deadline = absl::Now() + timeout;
    while (absl::Now() < deadline) {
      if (condition()) return true;
    }
    return false;
  }

 private:
  std::string dir_;
  std::string availability_;
  std::unique_ptr<server::Platform> platform_;
  std::unique_ptr<debug_echo::DebugEchoFinder> finder_;
  std::unique_ptr<HandlerServer> handler_;
  std::unique_ptr<regatta::v1::DeviceService::Stub> devices_;
  std::unique_ptr<regatta::v1::JobService::Stub> jobs_;
  std::unique_ptr<regatta::v1::QueueService::Stub> queues_;
};

regatta::v1::Configuration EchoConfiguration() {
  regatta::v1::Configuration c;
  c.set_name("echo");
  c.mutable_discovery_handler()->set_name("debugEcho");
  c.mutable_discovery_handler()->set_discovery_details("descriptions: [foo0, foo1]");
  return c;
}

void Report(benchmark::State& state, std::vector<double> latencies_ms) {
  if (latencies_ms.empty()) return;
  std::sort(latencies_ms.begin(), latencies_ms.end());
  state.counters["p50_ms"] = latencies_ms[latencies_ms.size() / 2];
  state.counters["p90_ms"] = latencies_ms[latencies_ms.size() * 9 / 10];
}

void BM_AvailabilityFlipToApi(benchmark::State& state) {
  DeviceBench bench;
  if (std::string error = bench.Start(EchoConfiguration()); !error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  bool online = true;
  std::vector<double> latencies_ms;
  for (auto _ : state) {
    const absl::Time start = absl::Now();
    online = !online;
    bench.SetOnline(online);
    if (!DeviceBench::WaitFor([&] { return bench.Instances() == (online ? 2 : 0); })) {
      state.SkipWithError("the Instances did not follow the availability file");
      break;
    }
    latencies_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  Report(state, std::move(latencies_ms));
}
BENCHMARK(BM_AvailabilityFlipToApi)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_DeviceToBrokerRunning(benchmark::State& state) {
  regatta::v1::Configuration config = EchoConfiguration();
  regatta::v1::BrokerTemplate* broker = config.mutable_broker_spec()->mutable_broker_pod_spec();
  broker->set_queue("devices");
  broker->mutable_job()->mutable_task()->add_command("sleep");
  broker->mutable_job()->mutable_task()->add_command("600");
  (*broker->mutable_job()->mutable_task()->mutable_resources()->mutable_requests())["cpu"] = "10m";
  DeviceBench bench;
  if (std::string error = bench.Start(config); !error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  const std::vector<regatta::v1::JobState> active = {
      regatta::v1::JOB_STATE_QUEUED, regatta::v1::JOB_STATE_LEASED, regatta::v1::JOB_STATE_PENDING,
      regatta::v1::JOB_STATE_RUNNING};
  std::vector<double> latencies_ms;
  for (auto _ : state) {
    state.PauseTiming();
    bench.SetOnline(false);
    if (!DeviceBench::WaitFor([&] { return bench.Brokers(active) == 0; })) {
      state.SkipWithError("the brokers were not cancelled");
      break;
    }
    state.ResumeTiming();
    const absl::Time start = absl::Now();
    bench.SetOnline(true);
    if (!DeviceBench::WaitFor(
            [&] { return bench.Brokers({regatta::v1::JOB_STATE_RUNNING}) == 2; })) {
      state.SkipWithError("the brokers did not start");
      break;
    }
    latencies_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  Report(state, std::move(latencies_ms));
}
BENCHMARK(BM_DeviceToBrokerRunning)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace regatta::devices
BENCHMARK_MAIN();
