#ifndef REGATTA_SRC_SCHEDULER_FAIRNESS_COST_H_
#define REGATTA_SRC_SCHEDULER_FAIRNESS_COST_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "src/common/resources.h"

namespace regatta::scheduler {

// How fair-share scheduling ranks queues: a queue's cost for an allocation; lower is served
// first. The round depends only on this interface so the policy can be swapped (Mesos keeps its
// DRF behind a Sorter interface the same way). Implementations are immutable and thread-compatible.
class QueueCostModel {
 public:
  virtual ~QueueCostModel() = default;
  // The cost of a queue of `weight` (> 0) holding `allocated`.
  virtual double Cost(const ResourceList& allocated, double weight) const = 0;
  // Cost(allocated + extra, weight) without building the sum: "cost if this job were scheduled".
  virtual double CostWith(const ResourceList& allocated, const ResourceList& extra,
                          double weight) const = 0;
};

// Dominant resource fairness (Ghodsi et al., NSDI 2011): the dominant share is the maximum over
// resources with a positive pool total of allocated/total x multiplier; the cost divides it by
// the queue's weight (1 / priority factor). Quantities stay fixed-point; only the share ratio is
// a double.
class DominantResourceCost final : public QueueCostModel {
 public:
  // `total`: the pool's capacity (sum of the schedulable nodes' allocatable). `multipliers`:
  // by interned resource index; a resource without an entry counts with 1, one with a
  // multiplier <= 0 or a total <= 0 is ignored.
  DominantResourceCost(const ResourceList& total,
                       const absl::flat_hash_map<int, double>& multipliers);

  // max over counted resources of allocated/total x multiplier (unweighted).
  double DominantShare(const ResourceList& allocated) const;
  // DominantShare(allocated + extra).
  double DominantShareWith(const ResourceList& allocated, const ResourceList& extra) const;

  double Cost(const ResourceList& allocated, double weight) const override {
    return DominantShare(allocated) / weight;
  }
  double CostWith(const ResourceList& allocated, const ResourceList& extra,
                  double weight) const override {
    return DominantShareWith(allocated, extra) / weight;
  }

  // multiplier / total per resource index (0 for ignored resources); size() = total.size().
  const std::vector<double>& scale() const { return scale_; }

 private:
  std::vector<double> scale_;
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_FAIRNESS_COST_H_
