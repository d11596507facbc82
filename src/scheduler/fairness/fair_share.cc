#include "src/scheduler/fairness/fair_share.h"

#include <algorithm>
#include <cstddef>

namespace regatta::scheduler {

double SaneWeight(double weight) {
  if (!(weight > 0)) return 0;  // also NaN
  return std::clamp(weight, kMinQueueWeight, kMaxQueueWeight);
}

double WeightForPriorityFactor(double factor) {
  if (!(factor > 0)) return 1.0;
  // Dividing first could overflow (1 / 5e-324 is inf); clamp the factor instead.
  return 1.0 / std::clamp(factor, 1.0 / kMaxQueueWeight, 1.0 / kMinQueueWeight);
}

std::vector<double> FairShares(absl::Span<const double> raw_weights) {
  std::vector<double> weights(raw_weights.begin(), raw_weights.end());
  double sum = 0;
  for (double& w : weights) sum += (w = SaneWeight(w));
  std::vector<double> shares(weights.size(), 0.0);
  if (sum <= 0) return shares;
  for (size_t i = 0; i < weights.size(); ++i) shares[i] = weights[i] / sum;
  return shares;
}

std::vector<double> AdjustedFairShares(absl::Span<const double> raw_weights,
                                       absl::Span<const double> demands) {
  std::vector<double> weights(raw_weights.begin(), raw_weights.end());
  for (double& w : weights) w = SaneWeight(w);
  const size_t n = weights.size();
  std::vector<double> shares(n, 0.0);
  std::vector<bool> capped(n, false);
  for (size_t i = 0; i < n; ++i) capped[i] = !(weights[i] > 0);
  double left = 1.0;
  while (true) {
    double weight_sum = 0;
    for (size_t i = 0; i < n; ++i) weight_sum += capped[i] ? 0 : weights[i];
    if (weight_sum <= 0) break;
    bool capped_any = false;
    for (size_t i = 0; i < n; ++i) {
      if (capped[i]) continue;
      const double demand = demands[i] > 0 ? demands[i] : 0;
      if (demand < left * weights[i] / weight_sum) {
        shares[i] = demand;
        capped[i] = true;
        capped_any = true;
      }
    }
    if (!capped_any) {
      for (size_t i = 0; i < n; ++i) {
        if (!capped[i]) shares[i] = left * weights[i] / weight_sum;
      }
      break;
    }
    left = 1.0;
    for (size_t i = 0; i < n; ++i) {
      if (capped[i] && weights[i] > 0) left -= shares[i];
    }
    if (left < 0) left = 0;
  }
  return shares;
}

}  // namespace regatta::scheduler
