#include "src/scheduler/fairness/cost.h"

#include <algorithm>

namespace regatta::scheduler {

DominantResourceCost::DominantResourceCost(const ResourceList& total,
                                           const absl::flat_hash_map<int, double>& multipliers)
    : scale_(total.size(), 0.0) {
  for (int i = 0; i < total.size(); ++i) {
    int64_t milli = total.Get(i).milli();
    if (milli <= 0) continue;
    double multiplier = 1.0;
    if (auto it = multipliers.find(i); it != multipliers.end()) multiplier = it->second;
    if (!(multiplier > 0)) continue;  // also drops NaN
    scale_[i] = multiplier / static_cast<double>(milli);
  }
}

double DominantResourceCost::DominantShare(const ResourceList& allocated) const {
  double share = 0;
  int n = std::min(allocated.size(), static_cast<int>(scale_.size()));
  for (int i = 0; i < n; ++i) {
    share = std::max(share, static_cast<double>(allocated.Get(i).milli()) * scale_[i]);
  }
  return share;
}

double DominantResourceCost::DominantShareWith(const ResourceList& allocated,
                                               const ResourceList& extra) const {
  double share = 0;
  int n = std::min(std::max(allocated.size(), extra.size()), static_cast<int>(scale_.size()));
  for (int i = 0; i < n; ++i) {
    int64_t milli = allocated.Get(i).milli() + extra.Get(i).milli();
    share = std::max(share, static_cast<double>(milli) * scale_[i]);
  }
  return share;
}

}  // namespace regatta::scheduler
