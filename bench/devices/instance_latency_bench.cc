// A handler's change → the Instances visible in the API: issue 6's budget "≤ 100 ms" end to end
// in one process.
//
//   build/<preset>/bench/devices/devices_instance_latency_bench
//
// BM_AvailabilityFlipToApi: the platform as `regatta up` runs it (its embedded local executor
// runs the device agent on <data dir>/discovery), a debugEcho handler served on that directory,
// one Configuration with two devices. Each iteration writes OFFLINE into the handler's
// availability file (or removes it) and polls DeviceService.ListInstances over gRPC until the
// Instances are gone (or both back): inotify → handler stream → agent → executor's
// ReportDevices → diff against the views → log append → ingest → API read.
#include <stdlib.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "grpcpp/grpcpp.h"
#include "regatta/v1/device_service.grpc.pb.h"
#include "src/devices/handlers/debug_echo/debug_echo.h"
#include "src/devices/protocol/handler_server.h"
#include "src/server/config.h"
#include "src/server/platform.h"

namespace regatta::devices {
namespace {

void BM_AvailabilityFlipToApi(benchmark::State& state) {
  char dir_template[] = "/tmp/rgbench.XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string availability = dir + "/availability";
  server::UpFlags flags;
  flags.data_dir = dir + "/data";
  flags.grpc_listen = "127.0.0.1:0";
  flags.http_listen = "127.0.0.1:0";
  flags.overrides = {"logging.level=warn", "executor.cgroups=false"};
  auto config = server::LoadServerConfig(flags, {});
  if (!config.ok()) {
    state.SkipWithError(config.status().ToString().c_str());
    return;
  }
  auto platform = server::Platform::Start(*config, server::Mode::kUp);
  if (!platform.ok()) {
    state.SkipWithError(platform.status().ToString().c_str());
    return;
  }
  debug_echo::DebugEchoFinder finder(availability);
  HandlerServerOptions handler_options;
  handler_options.dir = (*platform)->data_dir() + "/discovery";
  handler_options.name = "debugEcho";
  auto handler = HandlerServer::Start(handler_options, &finder);
  if (!handler.ok()) {
    state.SkipWithError(handler.status().ToString().c_str());
    return;
  }
  auto channel =
      grpc::CreateChannel((*platform)->grpc_address(), grpc::InsecureChannelCredentials());
  auto devices = regatta::v1::DeviceService::NewStub(channel);
  {
    regatta::v1::ApplyConfigurationRequest request;
    regatta::v1::Configuration* c = request.mutable_configuration();
    c->set_name("echo");
    c->mutable_discovery_handler()->set_name("debugEcho");
    c->mutable_discovery_handler()->set_discovery_details("descriptions: [foo0, foo1]");
    regatta::v1::Configuration applied;
    grpc::ClientContext context;
    if (!devices->ApplyConfiguration(&context, request, &applied).ok()) {
      state.SkipWithError("cannot apply the Configuration");
      return;
    }
  }
  auto count = [&]() -> int {
    regatta::v1::ListInstancesRequest request;
    request.set_configuration_name("echo");
    regatta::v1::ListInstancesResponse response;
    grpc::ClientContext context;
    if (!devices->ListInstances(&context, request, &response).ok()) return -1;
    return response.instances_size();
  };
  auto wait_for = [&](int want) {
    const absl::Time deadline = absl::Now() + absl::Seconds(10);
    while (absl::Now() < deadline) {
      if (count() == want) return true;
    }
    return false;
  };
  if (!wait_for(2)) {
    state.SkipWithError("the Instances never appeared");
    return;
  }
  bool online = true;
  std::vector<double> latencies_ms;
  for (auto _ : state) {
    const absl::Time start = absl::Now();
    if (online) {
      std::ofstream(availability) << "OFFLINE";
    } else {
      std::remove(availability.c_str());
    }
    online = !online;
    if (!wait_for(online ? 2 : 0)) {
      state.SkipWithError("the Instances did not follow the availability file");
      break;
    }
    latencies_ms.push_back(absl::ToDoubleMilliseconds(absl::Now() - start));
  }
  if (!latencies_ms.empty()) {
    std::sort(latencies_ms.begin(), latencies_ms.end());
    state.counters["p50_ms"] = latencies_ms[latencies_ms.size() / 2];
    state.counters["p90_ms"] = latencies_ms[latencies_ms.size() * 9 / 10];
  }
  (*handler)->Shutdown();
  (*platform)->Shutdown();
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
}
BENCHMARK(BM_AvailabilityFlipToApi)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace regatta::devices
BENCHMARK_MAIN();
