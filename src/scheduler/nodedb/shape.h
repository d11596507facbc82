#ifndef REGATTA_SRC_SCHEDULER_NODEDB_SHAPE_H_
#define REGATTA_SRC_SCHEDULER_NODEDB_SHAPE_H_

#include <cstddef>

#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"

namespace regatta::scheduler {

// A job's scheduling shape: everything MatchNodeStatically and FitsNow look at — the requests,
// node selector, required node affinity and tolerations. Jobs of one shape match the same nodes
// and fit the same free space, so a scheduler may decide once per shape (Armada calls this the
// scheduling key). Everything else in the task (image, command, env, ...) is ignored.

// Hash of the shape; equal shapes hash equally within one process. Node-selector entries are
// combined independently of map order; tolerations and affinity terms in their order.
size_t JobShapeHash(const regatta::v1::TaskSpec& task, const ResourceList& requests);

// True if the two jobs have the same shape (tolerations and affinity compared in order, so a
// reordered list is a different shape: harmless, only a cache miss).
bool SameJobShape(const regatta::v1::TaskSpec& a_task, const ResourceList& a_requests,
                  const regatta::v1::TaskSpec& b_task, const ResourceList& b_requests);

// A hash-map key standing for one shape: points at a job's task and requests, which must
// outlive the map.
struct ShapeKey {
  const regatta::v1::TaskSpec* task;
  const ResourceList* requests;
  size_t hash;

  static ShapeKey Of(const regatta::v1::TaskSpec& task, const ResourceList& requests) {
    return ShapeKey{&task, &requests, JobShapeHash(task, requests)};
  }
};
struct ShapeKeyHash {
  size_t operator()(const ShapeKey& key) const { return key.hash; }
};
struct ShapeKeyEq {
  bool operator()(const ShapeKey& a, const ShapeKey& b) const {
    return a.hash == b.hash && SameJobShape(*a.task, *a.requests, *b.task, *b.requests);
  }
};

}  // namespace regatta::scheduler

#endif  // REGATTA_SRC_SCHEDULER_NODEDB_SHAPE_H_
