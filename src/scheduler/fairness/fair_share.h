#ifndef REGATTA_SRC_SCHEDULER_FAIRNESS_FAIR_SHARE_H_
#define REGATTA_SRC_SCHEDULER_FAIRNESS_FAIR_SHARE_H_

#include <vector>

#include "absl/types/span.h"

namespace regatta::scheduler {

// The weights a queue can have: 1 / priority factor for the factors the API accepts
// (0.001..1e6, src/api/validation.h).
inline constexpr double kMinQueueWeight = 1e-6;
inline constexpr double kMaxQueueWeight = 1e3;

// 1 / factor, clamped to [kMinQueueWeight, kMaxQueueWeight]; 0, negative or NaN factors count as
// the default 1. A factor outside the API's bounds can still come from a log written before
// them (a denormal factor once made the weight infinite and every fair share NaN).
double WeightForPriorityFactor(double factor);

// `weight` clamped to [kMinQueueWeight, kMaxQueueWeight]; 0 for NaN and weights <= 0 (inactive).
double SaneWeight(double weight);

// Fair shares of the pool (0..1) for queues of the given weights; a queue with weight <= 0 is
// inactive and gets 0. fair share = weight / sum of active weights. Weights pass through
// SaneWeight, so no share is NaN or infinite.
std::vector<double> FairShares(absl::Span<const double> weights);

// Adjusted fair shares by water filling: queues whose demand (dominant share of running +
// queued work) is below their weighted share of what is left get exactly their demand; what
// is left is divided among the others by weight; repeated until no queue is capped. The
// capped queues' unused share is so given to the queues that can use it.
// Example: weights 1, 1, 2 and demands 0.1, 0.6, 0.6: shares of 1.0 are 0.25, 0.25, 0.5; the
// first is capped at 0.1; the remaining 0.9 splits 1:2 as 0.3 and 0.6; the third's demand is
// 0.6 (not capped: equal); result 0.1, 0.3, 0.6.
std::vector<double> AdjustedFairShares(absl::Span<const double> weights,
                                       absl::Span<const double> demands);

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_FAIRNESS_FAIR_SHARE_H_
