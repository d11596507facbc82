#include "src/scheduler/nodedb/shape.h"

#include <cstdint>
#include <string>

#include "absl/hash/hash.h"

namespace regatta::scheduler {
namespace {

using ::regatta::v1::NodeSelectorRequirement;
using ::regatta::v1::NodeSelectorTerm;
using ::regatta::v1::TaskSpec;
using ::regatta::v1::Toleration;

bool SameToleration(const Toleration& a, const Toleration& b) {
  return a.key() == b.key() && a.operator_() == b.operator_() && a.value() == b.value() &&
         a.effect() == b.effect();
}

bool SameRequirement(const NodeSelectorRequirement& a, const NodeSelectorRequirement& b) {
  if (a.key() != b.key() || a.operator_() != b.operator_() || a.values_size() != b.values_size()) {
    return false;
  }
  for (int i = 0; i < a.values_size(); ++i) {
    if (a.values(i) != b.values(i)) return false;
  }
  return true;
}

bool SameTerm(const NodeSelectorTerm& a, const NodeSelectorTerm& b) {
  if (a.match_expressions_size() != b.match_expressions_size()) return false;
  for (int i = 0; i < a.match_expressions_size(); ++i) {
    if (!SameRequirement(a.match_expressions(i), b.match_expressions(i))) return false;
  }
  return true;
}

}  // namespace

size_t JobShapeHash(const TaskSpec& task, const ResourceList& requests) {
  size_t h = 0x9e3779b97f4a7c15ULL;
  // Only non-zero entries, so lists equal under ResourceList::operator== hash equally.
  for (int i = 0; i < requests.size(); ++i) {
    int64_t milli = requests.Get(i).milli();
    if (milli != 0) h = absl::HashOf(h, i, milli);
  }
  size_t selector = 0;  // order-independent: protobuf map iteration order is unspecified
  for (const auto& [key, value] : task.node_selector()) selector += absl::HashOf(key, value);
  h = absl::HashOf(h, selector, task.node_selector().size());
  for (const Toleration& t : task.tolerations()) {
    h = absl::HashOf(h, t.key(), t.operator_(), t.value(), t.effect());
  }
  for (const NodeSelectorTerm& term : task.node_affinity().required_terms()) {
    h = absl::HashOf(h, term.match_expressions_size());
    for (const NodeSelectorRequirement& r : term.match_expressions()) {
      h = absl::HashOf(h, r.key(), r.operator_(), r.values_size());
      for (const std::string& v : r.values()) h = absl::HashOf(h, v);
    }
  }
  return h;
}

bool SameJobShape(const TaskSpec& a_task, const ResourceList& a_requests, const TaskSpec& b_task,
                  const ResourceList& b_requests) {
  if (!(a_requests == b_requests)) return false;
  if (&a_task == &b_task) return true;
  if (a_task.node_selector().size() != b_task.node_selector().size()) return false;
  for (const auto& [key, value] : a_task.node_selector()) {
    auto it = b_task.node_selector().find(key);
    if (it == b_task.node_selector().end() || it->second != value) return false;
  }
  if (a_task.tolerations_size() != b_task.tolerations_size()) return false;
  for (int i = 0; i < a_task.tolerations_size(); ++i) {
    if (!SameToleration(a_task.tolerations(i), b_task.tolerations(i))) return false;
  }
  const auto& a_terms = a_task.node_affinity().required_terms();
  const auto& b_terms = b_task.node_affinity().required_terms();
  if (a_terms.size() != b_terms.size()) return false;
  for (int i = 0; i < a_terms.size(); ++i) {
    if (!SameTerm(a_terms[i], b_terms[i])) return false;
  }
  return true;
}

}  // namespace regatta::scheduler
