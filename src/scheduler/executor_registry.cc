#include "src/scheduler/executor_registry.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace regatta::scheduler {
namespace {

absl::StatusOr<ResourceList> ParseResources(
    const google::protobuf::Map<std::string, std::string>& map, absl::string_view field) {
  std::vector<std::pair<std::string, std::string>> entries(map.begin(), map.end());
  absl::StatusOr<ResourceList> list = ResourceList::FromStrings(entries);
  if (!list.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", list.status().message()));
  }
  return list;
}

}  // namespace

absl::StatusOr<ExecutorState> ParseLeaseRequest(const regatta::v1::LeaseRequest& request,
                                                absl::Time now) {
  if (request.executor_id().empty()) {
    return absl::InvalidArgumentError("executor_id: must not be empty");
  }
  if (request.pool().empty()) return absl::InvalidArgumentError("pool: must not be empty");
  ExecutorState state;
  state.id = request.executor_id();
  state.pool = request.pool();
  state.incarnation = request.incarnation();
  state.logs_address = request.logs_address();
  state.max_runs_to_lease =
      static_cast<int>(std::min<uint32_t>(request.max_runs_to_lease(), 1 << 20));
  state.last_seen = now;
  absl::flat_hash_map<std::string, int> seen_nodes;
  for (int i = 0; i < request.nodes_size(); ++i) {
    const regatta::v1::NodeInfo& info = request.nodes(i);
    const std::string field = absl::StrCat("nodes[", i, "]");
    if (info.id().empty()) return absl::InvalidArgumentError(field + ".id: must not be empty");
    if (!seen_nodes.emplace(info.id(), i).second) {
      return absl::InvalidArgumentError(absl::StrCat(field, ".id: duplicate node ", info.id()));
    }
    Node node;
    node.id = info.id();
    node.executor_id = state.id;
    node.pool = info.pool().empty() ? state.pool : info.pool();
    node.labels.insert(info.labels().begin(), info.labels().end());
    // Every node answers to its name, as Kubernetes nodes do (brokers are pinned by it).
    node.labels.try_emplace("kubernetes.io/hostname", info.id());
    for (int t = 0; t < info.taints_size(); ++t) {
      const regatta::v1::Taint& taint = info.taints(t);
      if (taint.key().empty()) {
        return absl::InvalidArgumentError(absl::StrCat(field, ".taints[", t, "].key: empty"));
      }
      if (taint.effect() != "NoSchedule" && taint.effect() != "PreferNoSchedule" &&
          taint.effect() != "NoExecute") {
        return absl::InvalidArgumentError(
            absl::StrCat(field, ".taints[", t,
                         "].effect: must be NoSchedule, PreferNoSchedule "
                         "or NoExecute, got \"",
                         taint.effect(), "\""));
      }
      node.taints.push_back(Taint{taint.key(), taint.value(), taint.effect()});
    }
    const auto& allocatable = info.allocatable_resources().empty() ? info.total_resources()
                                                                   : info.allocatable_resources();
    absl::StatusOr<ResourceList> resources =
        ParseResources(allocatable, absl::StrCat(field, info.allocatable_resources().empty()
                                                            ? ".total_resources"
                                                            : ".allocatable_resources"));
    if (!resources.ok()) return resources.status();
    node.allocatable = *std::move(resources);
    node.unschedulable = info.unschedulable();
    for (const auto& [run_id, run_state] : info.run_states()) {
      state.runs[run_id] = run_state;
    }
    state.nodes.push_back(std::move(node));
  }
  return state;
}

namespace {

// What an executor reports of a node (`allocated` is the scheduler's own).
bool SameNode(const Node& a, const Node& b) {
  return a.id == b.id && a.pool == b.pool && a.unschedulable == b.unschedulable &&
         a.allocatable == b.allocatable && a.labels == b.labels && a.taints == b.taints;
}

// Whether `next` may let the scheduler place what `last` did not.
bool MoreRoom(const ExecutorState& last, const ExecutorState& next) {
  if (last.id.empty() || last.incarnation != next.incarnation || last.pool != next.pool ||
      last.nodes.size() != next.nodes.size()) {
    return true;
  }
  for (size_t i = 0; i < next.nodes.size(); ++i) {
    if (!SameNode(last.nodes[i], next.nodes[i])) return true;
  }
  const int left = last.max_runs_to_lease - last.leased_since_report;
  return left < next.max_runs_to_lease && left <= 0;
}

}  // namespace

bool ExecutorRegistry::Report(ExecutorState state) {
  absl::MutexLock lock(&mu_);
  Entry& entry = executors_[state.id];
  const bool more_room = MoreRoom(entry.state, state);
  if (entry.sent_incarnation != state.incarnation) {
    entry.sent.clear();
    entry.sent_incarnation = state.incarnation;
  }
  state.incarnation_since = entry.state.incarnation == state.incarnation && !entry.state.id.empty()
                                ? entry.state.incarnation_since
                                : state.last_seen;
  // Runs the executor holds are delivered: never sent to this incarnation again, even after
  // it finished and forgot them while the JobDb still shows them LEASED.
  for (const auto& [run_id, run_state] : state.runs) entry.sent[run_id] = absl::InfiniteFuture();
  entry.state = std::move(state);
  return more_room;
}

void ExecutorRegistry::Touch(absl::string_view executor_id, absl::Time now) {
  absl::MutexLock lock(&mu_);
  auto it = executors_.find(executor_id);
  if (it != executors_.end() && it->second.state.last_seen < now) it->second.state.last_seen = now;
}

std::vector<ExecutorState> ExecutorRegistry::Snapshot() const {
  absl::MutexLock lock(&mu_);
  std::vector<ExecutorState> out;
  out.reserve(executors_.size());
  for (const auto& [id, entry] : executors_) out.push_back(entry.state);
  return out;
}

std::optional<ExecutorState> ExecutorRegistry::Get(absl::string_view executor_id) const {
  absl::MutexLock lock(&mu_);
  auto it = executors_.find(executor_id);
  if (it == executors_.end()) return std::nullopt;
  return it->second.state;
}

void ExecutorRegistry::MarkDelivered(absl::string_view executor_id, absl::string_view run_id) {
  absl::MutexLock lock(&mu_);
  auto it = executors_.find(executor_id);
  if (it != executors_.end()) it->second.sent[run_id] = absl::InfiniteFuture();
}

void ExecutorRegistry::NoteLeased(absl::string_view executor_id, int runs) {
  absl::MutexLock lock(&mu_);
  auto it = executors_.find(executor_id);
  if (it != executors_.end()) it->second.state.leased_since_report += runs;
}

void ExecutorRegistry::Remove(absl::string_view executor_id) {
  absl::MutexLock lock(&mu_);
  executors_.erase(executor_id);
}

bool ExecutorRegistry::ClaimSend(absl::string_view executor_id, absl::string_view incarnation,
                                 absl::string_view run_id, absl::Time now,
                                 absl::Duration resend_after) {
  absl::MutexLock lock(&mu_);
  auto it = executors_.find(executor_id);
  if (it == executors_.end()) return false;
  Entry& entry = it->second;
  if (entry.sent_incarnation != incarnation) {
    entry.sent.clear();
    entry.sent_incarnation = std::string(incarnation);
  }
  auto [sent, inserted] = entry.sent.try_emplace(run_id, now);
  if (inserted) return true;
  if (sent->second == absl::InfiniteFuture() || now - sent->second < resend_after) return false;
  sent->second = now;
  return true;
}

}  // namespace regatta::scheduler
