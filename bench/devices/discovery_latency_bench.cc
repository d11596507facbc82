// A device change → the agent's device set: the first half of issue 6's budget "handler change →
// Instance visible in the API ≤ 100 ms" (the whole path: instance_latency_bench.cc).
//
//   build/<preset>/bench/devices/devices_discovery_latency_bench
//
// BM_AvailabilityFlipToAgent: a debugEcho handler and an agent in this process over real gRPC on
// Unix sockets, one Configuration with two devices; each iteration writes OFFLINE into the
// availability file (or removes it) and waits until the agent's callback reports the empty (or
// full) set: inotify → the handler's stream → the agent's merge → callback.
#include <cstdio>
#include <fstream>
#include <string>

#include "absl/synchronization/mutex.h"
#include "benchmark/benchmark.h"
#include "src/devices/agent/agent.h"
#include "src/devices/handlers/debug_echo/debug_echo.h"
#include "src/devices/protocol/handler_server.h"

namespace regatta::devices {
namespace {

void BM_AvailabilityFlipToAgent(benchmark::State& state) {
  char dir_template[] = "/tmp/rgbench.XXXXXX";
  const std::string dir = mkdtemp(dir_template);
  const std::string availability = dir + "/availability";

  absl::Mutex mu;
  size_t devices = 0;
  uint64_t reports = 0;
  AgentCallbacks callbacks;
  callbacks.on_devices = [&](const std::string&, const std::vector<DiscoveredDevice>& found) {
    absl::MutexLock lock(&mu);
    devices = found.size();
    ++reports;
  };
  AgentOptions agent_options;
  agent_options.dir = dir;
  agent_options.node_name = "bench";
  auto agent = Agent::Start(agent_options, callbacks);
  debug_echo::DebugEchoFinder finder(availability);
  HandlerServerOptions handler_options;
  handler_options.dir = dir;
  handler_options.name = "debugEcho";
  auto handler = HandlerServer::Start(handler_options, &finder);
  if (!agent.ok() || !handler.ok()) {
    state.SkipWithError("cannot start the agent or the handler");
    return;
  }
  DiscoveryRequest request;
  request.configuration = "echo";
  request.handler = "debugEcho";
  request.discovery_details = "descriptions: [foo0, foo1]";
  (void)(*agent)->Apply(request);
  auto wait_for = [&](size_t want) {
    absl::MutexLock lock(&mu);
    auto seen = [&] { return reports > 0 && devices == want; };
    return mu.AwaitWithTimeout(absl::Condition(&seen), absl::Seconds(10));
  };
  if (!wait_for(2)) {
    state.SkipWithError("the agent never saw the devices");
    return;
  }
  bool online = true;
  for (auto _ : state) {
    if (online) {
      std::ofstream(availability) << "OFFLINE";
    } else {
      std::remove(availability.c_str());
    }
    online = !online;
    if (!wait_for(online ? 2 : 0)) {
      state.SkipWithError("the agent did not follow the availability file");
      break;
    }
  }
  (*handler)->Shutdown();
  (*agent)->Shutdown();
  std::remove(availability.c_str());
}
BENCHMARK(BM_AvailabilityFlipToAgent)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace regatta::devices
BENCHMARK_MAIN();
