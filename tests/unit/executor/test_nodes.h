#ifndef REGATTA_TESTS_UNIT_EXECUTOR_TEST_NODES_H_
#define REGATTA_TESTS_UNIT_EXECUTOR_TEST_NODES_H_

#include <vector>

#include "src/executor/simulated_executor.h"

namespace regatta::executor {

// sim-0000 and sim-0001 with 2 cpu and 4Gi; gpu-0000 with 8 cpu, 16Gi and one GPU, labelled
// accelerator=a100 and tainted gpu:NoSchedule.
inline std::vector<SimulatedNodeGroup> TwoSmallNodesAndAGpuNode() {
  SimulatedNodeGroup small;
  small.count = 2;
  small.resources = {{"cpu", "2"}, {"memory", "4Gi"}};
  SimulatedNodeGroup gpu;
  gpu.count = 1;
  gpu.name_prefix = "gpu-";
  gpu.labels = {{"accelerator", "a100"}};
  gpu.taints.emplace_back().set_key("gpu");
  gpu.taints.back().set_effect("NoSchedule");
  gpu.resources = {{"cpu", "8"}, {"memory", "16Gi"}, {"nvidia.com/gpu", "1"}};
  return {small, gpu};
}

}  // namespace regatta::executor

#endif  // REGATTA_TESTS_UNIT_EXECUTOR_TEST_NODES_H_
