#include "src/scheduler/fairness/queue_heap.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace regatta::scheduler {

QueueHeap::QueueHeap(absl::Span<const absl::string_view> names)
    : rank_(names.size()), cost_(names.size(), 0.0), position_(names.size(), -1) {
  std::vector<int> order(names.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return names[a] < names[b]; });
  for (int r = 0; r < static_cast<int>(order.size()); ++r) rank_[order[r]] = r;
  heap_.reserve(names.size());
}

void QueueHeap::Set(int id, double cost) {
  if (std::isnan(cost)) cost = std::numeric_limits<double>::infinity();
  if (position_[id] < 0) {
    cost_[id] = cost;
    heap_.push_back(id);
    position_[id] = static_cast<int>(heap_.size()) - 1;
    SiftUp(position_[id]);
    return;
  }
  double old = cost_[id];
  if (cost == old) return;  // common: the queue's next job costs what the last one did
  cost_[id] = cost;
  if (cost < old) {
    SiftUp(position_[id]);
  } else {
    SiftDown(position_[id]);
  }
}

void QueueHeap::Remove(int id) {
  int slot = position_[id];
  if (slot < 0) return;
  int last = heap_.back();
  heap_.pop_back();
  position_[id] = -1;
  if (last == id) return;
  Place(slot, last);
  SiftUp(slot);
  SiftDown(position_[last]);
}

void QueueHeap::SiftUp(int slot) {
  int id = heap_[slot];
  while (slot > 0) {
    int parent = (slot - 1) / 2;
    if (!Before(id, heap_[parent])) break;
    Place(slot, heap_[parent]);
    slot = parent;
  }
  Place(slot, id);
}

void QueueHeap::SiftDown(int slot) {
  int id = heap_[slot];
  int n = static_cast<int>(heap_.size());
  while (true) {
    int child = 2 * slot + 1;
    if (child >= n) break;
    if (child + 1 < n && Before(heap_[child + 1], heap_[child])) ++child;
    if (!Before(heap_[child], id)) break;
    Place(slot, heap_[child]);
    slot = child;
  }
  Place(slot, id);
}

}  // namespace regatta::scheduler
