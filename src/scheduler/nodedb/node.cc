#include "src/scheduler/nodedb/node.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"

namespace regatta::scheduler {
namespace {

using ::regatta::v1::NodeSelectorRequirement;
using ::regatta::v1::NodeSelectorTerm;
using ::regatta::v1::TaskSpec;
using ::regatta::v1::Toleration;

// At most this many failing terms are named in an affinity reason.
constexpr int kMaxTermsInReason = 3;
// At most this many distinct reasons are named in a "0 of N nodes match" summary.
constexpr int kMaxReasonsInSummary = 3;

StaticMatch Fail(MatchRule rule, std::string reason) {
  return StaticMatch{.matches = false, .reason = std::move(reason), .rule = rule};
}

const std::string* FindLabel(const absl::flat_hash_map<std::string, std::string>& labels,
                             absl::string_view key) {
  auto it = labels.find(key);
  return it == labels.end() ? nullptr : &it->second;
}

bool ContainsValue(const NodeSelectorRequirement& requirement, absl::string_view value) {
  for (const std::string& v : requirement.values()) {
    if (v == value) return true;
  }
  return false;
}

// Gt/Lt: exactly one integer value and an integer label; false otherwise.
bool CompareIntegers(const NodeSelectorRequirement& requirement, const std::string* label,
                     bool greater) {
  if (label == nullptr || requirement.values_size() != 1) return false;
  int64_t have = 0;
  int64_t want = 0;
  if (!absl::SimpleAtoi(*label, &have) || !absl::SimpleAtoi(requirement.values(0), &want)) {
    return false;
  }
  return greater ? have > want : have < want;
}

// The index of the first expression of `term` that does not hold, -1 if all hold; an empty
// term never matches and yields match_expressions_size() (0).
int FirstFailingExpression(const NodeSelectorTerm& term,
                           const absl::flat_hash_map<std::string, std::string>& labels) {
  if (term.match_expressions_size() == 0) return 0;
  for (int e = 0; e < term.match_expressions_size(); ++e) {
    if (!RequirementHolds(term.match_expressions(e), labels)) return e;
  }
  return -1;
}

StaticMatch MatchNodeSelector(const TaskSpec& task, const Node& node) {
  const std::string* failing_key = nullptr;
  const std::string* failing_value = nullptr;
  for (const auto& [key, value] : task.node_selector()) {
    const std::string* label = FindLabel(node.labels, key);
    if (label != nullptr && *label == value) continue;
    if (failing_key == nullptr || key < *failing_key) {
      failing_key = &key;
      failing_value = &value;
    }
  }
  if (failing_key == nullptr) return StaticMatch{.matches = true};
  return Fail(MatchRule::kNodeSelector,
              absl::StrCat("node selector ", *failing_key, "=", *failing_value, " does not match"));
}

StaticMatch MatchAffinity(const TaskSpec& task, const Node& node) {
  const auto& terms = task.node_affinity().required_terms();
  if (terms.empty()) return StaticMatch{.matches = true};
  // Match first without building any text; most nodes match or fail on the first term.
  for (const NodeSelectorTerm& term : terms) {
    if (FirstFailingExpression(term, node.labels) < 0) return StaticMatch{.matches = true};
  }
  auto describe = [&](const NodeSelectorTerm& term) -> std::string {
    if (term.match_expressions_size() == 0) return "an empty term matches no node";
    return RequirementToString(term.match_expressions(FirstFailingExpression(term, node.labels)));
  };
  if (terms.size() == 1) {
    if (terms[0].match_expressions_size() == 0) {
      return Fail(MatchRule::kNodeAffinity,
                  "node affinity has an empty term, which matches no node");
    }
    return Fail(MatchRule::kNodeAffinity,
                absl::StrCat("node affinity ", describe(terms[0]), " does not match"));
  }
  std::vector<std::string> parts;
  for (int t = 0; t < terms.size() && t < kMaxTermsInReason; ++t)
    parts.push_back(describe(terms[t]));
  if (terms.size() > kMaxTermsInReason) parts.push_back("...");
  return Fail(MatchRule::kNodeAffinity,
              absl::StrCat("none of ", terms.size(), " node affinity terms match (",
                           absl::StrJoin(parts, "; "), ")"));
}

StaticMatch MatchTaints(const TaskSpec& task, const Node& node) {
  for (const Taint& taint : node.taints) {
    if (!TaintBlocks(taint)) continue;
    bool tolerated = false;
    for (const Toleration& toleration : task.tolerations()) {
      if (Tolerates(toleration, taint)) {
        tolerated = true;
        break;
      }
    }
    if (!tolerated) {
      return Fail(MatchRule::kTaint,
                  absl::StrCat("taint ", TaintToString(taint), " is not tolerated"));
    }
  }
  return StaticMatch{.matches = true};
}

StaticMatch MatchAllocatable(const ResourceList& requests, const Node& node) {
  for (int i = 0; i < requests.size(); ++i) {
    Quantity need = requests.Get(i);
    Quantity have = node.allocatable.Get(i);
    if (need > have) {
      return Fail(MatchRule::kResources,
                  absl::StrCat("needs ", need.ToString(), " ", ResourceNames::Global().Name(i),
                               ", node allocatable is ", have.ToString()));
    }
  }
  return StaticMatch{.matches = true};
}

}  // namespace

bool Tolerates(const Toleration& toleration, const Taint& taint) {
  if (!toleration.effect().empty() && toleration.effect() != taint.effect) return false;
  if (toleration.operator_() == "Exists") {
    return toleration.key().empty() || toleration.key() == taint.key;
  }
  if (toleration.operator_().empty() || toleration.operator_() == "Equal") {
    return toleration.key() == taint.key && toleration.value() == taint.value;
  }
  return false;  // unknown operator
}

bool RequirementHolds(const NodeSelectorRequirement& requirement,
                      const absl::flat_hash_map<std::string, std::string>& labels) {
  const std::string* label = FindLabel(labels, requirement.key());
  const std::string& op = requirement.operator_();
  if (op == "In") return label != nullptr && ContainsValue(requirement, *label);
  if (op == "NotIn") return label == nullptr || !ContainsValue(requirement, *label);
  if (op == "Exists") return label != nullptr;
  if (op == "DoesNotExist") return label == nullptr;
  if (op == "Gt") return CompareIntegers(requirement, label, /*greater=*/true);
  if (op == "Lt") return CompareIntegers(requirement, label, /*greater=*/false);
  return false;
}

bool TaintBlocks(const Taint& taint) {
  return taint.effect == "NoSchedule" || taint.effect == "NoExecute";
}

std::string TaintToString(const Taint& taint) {
  if (taint.value.empty()) return absl::StrCat(taint.key, ":", taint.effect);
  return absl::StrCat(taint.key, "=", taint.value, ":", taint.effect);
}

std::string RequirementToString(const NodeSelectorRequirement& requirement) {
  const std::string& op = requirement.operator_();
  if (op == "Exists" || op == "DoesNotExist") return absl::StrCat(requirement.key(), " ", op);
  if ((op == "Gt" || op == "Lt") && requirement.values_size() == 1) {
    return absl::StrCat(requirement.key(), " ", op, " ", requirement.values(0));
  }
  return absl::StrCat(requirement.key(), " ", op, " (", absl::StrJoin(requirement.values(), ", "),
                      ")");
}

StaticMatch MatchNodeStatically(const TaskSpec& task, const ResourceList& requests,
                                const Node& node) {
  if (node.unschedulable) return Fail(MatchRule::kUnschedulable, "node is unschedulable");
  StaticMatch match = MatchNodeSelector(task, node);
  if (!match.matches) return match;
  match = MatchAffinity(task, node);
  if (!match.matches) return match;
  match = MatchTaints(task, node);
  if (!match.matches) return match;
  return MatchAllocatable(requests, node);
}

std::string NoMatchSummary(int total_nodes, const absl::flat_hash_map<std::string, int>& counts) {
  if (total_nodes == 0) return "the pool has no nodes";
  std::vector<std::pair<std::string, int>> sorted(counts.begin(), counts.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  std::vector<std::string> parts;
  int others = 0;
  for (int i = 0; i < static_cast<int>(sorted.size()); ++i) {
    if (i < kMaxReasonsInSummary) {
      parts.push_back(absl::StrCat(sorted[i].first, " (", sorted[i].second, ")"));
    } else {
      others += sorted[i].second;
    }
  }
  if (others > 0) parts.push_back(absl::StrCat("other reasons (", others, ")"));
  return absl::StrCat("0 of ", total_nodes, " nodes match: ", absl::StrJoin(parts, "; "));
}

bool FitsNow(const ResourceList& requests, const Node& node) {
  for (int i = 0; i < requests.size(); ++i) {
    const Quantity need = requests.Get(i);
    // A zero request fits even where the node is overcommitted (allocated > allocatable).
    if (need > Quantity() && need > node.allocatable.Get(i) - node.allocated.Get(i)) return false;
  }
  return true;
}

}  // namespace regatta::scheduler
