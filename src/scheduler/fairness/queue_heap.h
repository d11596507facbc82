#ifndef REGATTA_SRC_SCHEDULER_FAIRNESS_QUEUE_HEAP_H_
#define REGATTA_SRC_SCHEDULER_FAIRNESS_QUEUE_HEAP_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace regatta::scheduler {

// The progressive-filling order over queues: a min-heap of queue ids keyed by cost, ties broken
// by queue name, then by id (so equal names stay deterministic). As in Mesos' DRF sorter the
// order is re-established lazily: the caller updates only the queues whose cost changed (the one
// it just served), each update costing O(log n), instead of re-sorting every queue per step.
// Ids are 0..names.size()-1; a queue is in the heap once Set and until Remove.
class QueueHeap {
 public:
  explicit QueueHeap(absl::Span<const absl::string_view> names);

  // Inserts the queue or changes its cost. A NaN cost counts as +infinity.
  void Set(int id, double cost);
  void Remove(int id);
  bool Contains(int id) const { return position_[id] >= 0; }

  bool empty() const { return heap_.empty(); }
  int size() const { return static_cast<int>(heap_.size()); }
  // The queue to serve next: lowest cost, then name, then id. Requires !empty().
  int Top() const { return heap_.front(); }
  double cost(int id) const { return cost_[id]; }

 private:
  bool Before(int a, int b) const {
    if (cost_[a] != cost_[b]) return cost_[a] < cost_[b];
    return rank_[a] < rank_[b];
  }
  void Place(int slot, int id) {
    heap_[slot] = id;
    position_[id] = slot;
  }
  void SiftUp(int slot);
  void SiftDown(int slot);

  std::vector<int> rank_;      // id -> position in (name, id) order
  std::vector<double> cost_;   // id -> current cost
  std::vector<int> position_;  // id -> slot in heap_, -1 if absent
  std::vector<int> heap_;      // binary heap of ids
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_FAIRNESS_QUEUE_HEAP_H_
