// The DRF cost model and the progressive-filling queue heap.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "src/scheduler/fairness/cost.h"
#include "src/scheduler/fairness/fair_share.h"
#include "src/scheduler/fairness/queue_heap.h"
#include "tests/unit/scheduler/scheduler_test_util.h"

namespace regatta::scheduler {
namespace {

using ::regatta::scheduler::testing::Cpu;
using ::regatta::scheduler::testing::Res;

// Pool: 10 cpu, 100Gi memory, no gpu.
ResourceList Pool() { return Res({{"cpu", "10"}, {"memory", "100Gi"}}); }

TEST(DominantResourceCostTest, DominantShareIsTheLargestShare) {
  DominantResourceCost drf(Pool(), {});
  EXPECT_DOUBLE_EQ(drf.DominantShare(ResourceList()), 0.0);
  // cpu 2/10 = 0.2, memory 50/100 = 0.5 -> 0.5 (memory dominates)
  EXPECT_DOUBLE_EQ(drf.DominantShare(Res({{"cpu", "2"}, {"memory", "50Gi"}})), 0.5);
  // cpu 6/10 = 0.6, memory 10/100 = 0.1 -> 0.6 (cpu dominates)
  EXPECT_DOUBLE_EQ(drf.DominantShare(Res({{"cpu", "6"}, {"memory", "10Gi"}})), 0.6);
}

TEST(DominantResourceCostTest, CostDividesByWeight) {
  DominantResourceCost drf(Pool(), {});
  ResourceList a = Res({{"cpu", "2"}, {"memory", "50Gi"}});
  EXPECT_DOUBLE_EQ(drf.Cost(a, 1.0), 0.5);
  // priority factor 2 -> weight 0.5 -> cost 0.5 / 0.5 = 1.0
  EXPECT_DOUBLE_EQ(drf.Cost(a, 0.5), 1.0);
  // priority factor 0.5 -> weight 2 -> cost 0.25
  EXPECT_DOUBLE_EQ(drf.Cost(a, 2.0), 0.25);
}

TEST(DominantResourceCostTest, MultipliersScaleEachResource) {
  // cpu counts 4x: 2 cpu of 10 -> 0.2 x 4 = 0.8 beats memory 0.5.
  DominantResourceCost drf(Pool(), {{ResourceNames::kCpu, 4.0}});
  EXPECT_DOUBLE_EQ(drf.DominantShare(Res({{"cpu", "2"}, {"memory", "50Gi"}})), 0.8);
  // A multiplier below 1 can hide a resource's dominance: memory 0.5 x 0.1 = 0.05 < cpu 0.2.
  DominantResourceCost cheap_memory(Pool(), {{ResourceNames::kMemory, 0.1}});
  EXPECT_DOUBLE_EQ(cheap_memory.DominantShare(Res({{"cpu", "2"}, {"memory", "50Gi"}})), 0.2);
  // A multiplier of 0 (or less) ignores the resource.
  DominantResourceCost no_memory(Pool(), {{ResourceNames::kMemory, 0.0}});
  EXPECT_DOUBLE_EQ(no_memory.DominantShare(Res({{"memory", "100Gi"}})), 0.0);
}

TEST(DominantResourceCostTest, ResourcesWithZeroTotalAreIgnored) {
  DominantResourceCost drf(Pool(), {{ResourceNames::kGpu, 10.0}});
  // gpu total is 0: the 4 gpus do not count; cpu 1/10 does.
  EXPECT_DOUBLE_EQ(drf.DominantShare(Res({{"cpu", "1"}, {"nvidia.com/gpu", "4"}})), 0.1);
  DominantResourceCost empty(ResourceList(), {});
  EXPECT_DOUBLE_EQ(empty.Cost(Cpu("5"), 1.0), 0.0);
}

TEST(DominantResourceCostTest, CostWithIsTheCostOfTheSum) {
  DominantResourceCost drf(Pool(), {{ResourceNames::kMemory, 2.0}});
  ResourceList held = Res({{"cpu", "3"}, {"memory", "10Gi"}});
  ResourceList next = Res({{"memory", "20Gi"}, {"nvidia.com/gpu", "1"}});
  ResourceList sum = held;
  sum.Add(next);
  EXPECT_DOUBLE_EQ(drf.CostWith(held, next, 0.5), drf.Cost(sum, 0.5));
  // memory (10+20)/100 x 2 = 0.6 -> / 0.5 = 1.2
  EXPECT_DOUBLE_EQ(drf.CostWith(held, next, 0.5), 1.2);
}

TEST(DominantResourceCostTest, IsAQueueCostModel) {
  DominantResourceCost drf(Pool(), {});
  const QueueCostModel& model = drf;
  EXPECT_DOUBLE_EQ(model.Cost(Cpu("5"), 1.0), 0.5);
}

std::vector<absl::string_view> Names(const std::vector<std::string>& names) {
  return std::vector<absl::string_view>(names.begin(), names.end());
}

TEST(QueueHeapTest, LowestCostFirst) {
  std::vector<std::string> names = {"a", "b", "c"};
  QueueHeap heap(Names(names));
  heap.Set(0, 0.5);
  heap.Set(1, 0.2);
  heap.Set(2, 0.9);
  EXPECT_EQ(heap.Top(), 1);
  heap.Set(1, 0.7);  // served: its cost rose
  EXPECT_EQ(heap.Top(), 0);
  heap.Remove(0);
  EXPECT_EQ(heap.Top(), 1);
  EXPECT_FALSE(heap.Contains(0));
  EXPECT_EQ(heap.size(), 2);
  heap.Set(2, 0.1);  // a cost can fall too
  EXPECT_EQ(heap.Top(), 2);
}

TEST(QueueHeapTest, EqualCostsGoInNameOrderWhateverTheIdOrInsertionOrder) {
  std::vector<std::string> names = {"zeta", "alpha", "mid"};
  QueueHeap heap(Names(names));
  heap.Set(0, 0.25);
  heap.Set(2, 0.25);
  heap.Set(1, 0.25);
  std::vector<int> order;
  while (!heap.empty()) {
    order.push_back(heap.Top());
    heap.Remove(heap.Top());
  }
  EXPECT_EQ(order, (std::vector<int>{1, 2, 0}));  // alpha, mid, zeta
}

TEST(QueueHeapTest, DuplicateNamesFallBackToId) {
  std::vector<std::string> names = {"q", "q"};
  QueueHeap heap(Names(names));
  heap.Set(1, 0.0);
  heap.Set(0, 0.0);
  EXPECT_EQ(heap.Top(), 0);
}

TEST(QueueHeapTest, NanCountsAsInfinity) {
  std::vector<std::string> names = {"a", "b"};
  QueueHeap heap(Names(names));
  heap.Set(0, std::nan(""));
  heap.Set(1, 1e300);
  EXPECT_EQ(heap.Top(), 1);
  EXPECT_EQ(heap.cost(0), std::numeric_limits<double>::infinity());
}

TEST(QueueHeapTest, ManyRandomUpdatesKeepTheOrder) {
  std::vector<std::string> names;
  for (int i = 0; i < 50; ++i) names.push_back("q" + std::to_string(1000 + (i * 37) % 50));
  QueueHeap heap(Names(names));
  uint64_t x = 12345;
  std::vector<double> cost(50, 0);
  for (int step = 0; step < 2000; ++step) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    int id = static_cast<int>((x >> 33) % 50);
    if ((x >> 20) % 7 == 0) {
      heap.Remove(id);
    } else {
      cost[id] = static_cast<double>((x >> 40) % 8) / 8;  // many ties
      heap.Set(id, cost[id]);
    }
    if (heap.empty()) continue;
    // The top is the minimum by (cost, name).
    int top = heap.Top();
    for (int i = 0; i < 50; ++i) {
      if (!heap.Contains(i)) continue;
      EXPECT_TRUE(cost[top] < cost[i] || (cost[top] == cost[i] && names[top] <= names[i]))
          << "step " << step;
    }
  }
}

// Issue 21: a denormal priority factor (5e-324) made one weight inf, its fair share NaN and every
// other queue's 0. Out-of-range inputs are clamped so no share is NaN or infinite.
TEST(FairShareTest, WeightsFromAnyPriorityFactorAreFinite) {
  EXPECT_DOUBLE_EQ(WeightForPriorityFactor(2), 0.5);
  EXPECT_DOUBLE_EQ(WeightForPriorityFactor(0), 1.0);
  EXPECT_DOUBLE_EQ(WeightForPriorityFactor(-3), 1.0);
  EXPECT_DOUBLE_EQ(WeightForPriorityFactor(std::numeric_limits<double>::quiet_NaN()), 1.0);
  EXPECT_DOUBLE_EQ(WeightForPriorityFactor(5e-324), kMaxQueueWeight);
  EXPECT_DOUBLE_EQ(WeightForPriorityFactor(std::numeric_limits<double>::infinity()),
                   kMinQueueWeight);
  EXPECT_DOUBLE_EQ(WeightForPriorityFactor(1e300), kMinQueueWeight);
}

TEST(FairShareTest, SharesStayFiniteWhateverTheWeights) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> weights = {inf, 1, 1, nan, 5e-324};
  for (const std::vector<double>& shares :
       {FairShares(weights), AdjustedFairShares(weights, {1, 1, 1, 1, 1})}) {
    double sum = 0;
    for (double share : shares) {
      EXPECT_TRUE(std::isfinite(share));
      EXPECT_GE(share, 0);
      sum += share;
    }
    EXPECT_NEAR(sum, 1.0, 1e-9);
    // The other queues keep a share (1 / 1000 of the clamped infinite weight), not 0.
    EXPECT_GT(shares[1], 0);
    EXPECT_DOUBLE_EQ(shares[3], 0);  // NaN: inactive
  }
}

}  // namespace
}  // namespace regatta::scheduler
