#ifndef REGATTA_TESTS_UNIT_SCHEDULER_SCHEDULER_TEST_UTIL_H_
#define REGATTA_TESTS_UNIT_SCHEDULER_SCHEDULER_TEST_UTIL_H_

#include <deque>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/nodedb/node.h"
#include "src/scheduler/round/round.h"

namespace regatta::scheduler::testing {

inline ResourceList Res(std::vector<std::pair<std::string, std::string>> entries) {
  auto list = ResourceList::FromStrings(entries);
  EXPECT_TRUE(list.ok()) << list.status();
  return list.ok() ? *list : ResourceList();
}

inline ResourceList Cpu(const std::string& q) { return Res({{"cpu", q}}); }

inline Node MakeNode(std::string id, ResourceList allocatable, std::string executor = "exec-1") {
  Node node;
  node.id = std::move(id);
  node.executor_id = std::move(executor);
  node.pool = "default";
  node.allocatable = std::move(allocatable);
  return node;
}

// Owns the nodes, jobs and task specs of one round and builds its RoundInput.
class RoundBuilder {
 public:
  Node& AddNode(Node node) { return nodes_.emplace_back(std::move(node)); }
  std::vector<Node>& nodes() { return nodes_; }

  // Queues keep their insertion order in the input.
  RoundBuilder& AddQueue(std::string name, double weight = 1.0,
                         ResourceList allocated = ResourceList()) {
    queues_.push_back(QueueDef{std::move(name), weight, std::move(allocated), {}});
    return *this;
  }

  RoundJob& AddJob(const std::string& queue, std::string id, ResourceList requests,
                   regatta::v1::TaskSpec task = regatta::v1::TaskSpec(),
                   std::vector<std::string> avoid_nodes = {}) {
    tasks_.push_back(std::move(task));
    RoundJob& job = jobs_.emplace_back();
    job.id = std::move(id);
    job.requests = std::move(requests);
    job.task = &tasks_.back();
    job.avoid_nodes = std::move(avoid_nodes);
    for (QueueDef& q : queues_) {
      if (q.name == queue) q.jobs.push_back(&job);
    }
    return job;
  }

  // `count` jobs "<queue>-<i>" sharing one task spec.
  void AddJobs(const std::string& queue, int count, const ResourceList& requests,
               regatta::v1::TaskSpec task = regatta::v1::TaskSpec()) {
    tasks_.push_back(std::move(task));
    const regatta::v1::TaskSpec* shared = &tasks_.back();
    for (int i = 0; i < count; ++i) {
      RoundJob& job = jobs_.emplace_back();
      job.id = queue + "-" + std::to_string(i);
      job.requests = requests;
      job.task = shared;
      for (QueueDef& q : queues_) {
        if (q.name == queue) q.jobs.push_back(&job);
      }
    }
  }

  RoundInput Build(RoundConfig config = RoundConfig()) {
    RoundInput input;
    input.nodes = &nodes_;
    for (const QueueDef& q : queues_) {
      RoundQueue& rq = input.queues.emplace_back();
      rq.name = q.name;
      rq.weight = q.weight;
      rq.allocated = q.allocated;
      rq.jobs = std::make_unique<VectorJobIterator>(&q.jobs);
    }
    input.config = std::move(config);
    return input;
  }

  RoundResult Run(RoundConfig config = RoundConfig()) { return ScheduleRound(Build(config)); }

 private:
  struct QueueDef {
    std::string name;
    double weight;
    ResourceList allocated;
    std::vector<const RoundJob*> jobs;
  };
  std::vector<Node> nodes_;
  std::deque<QueueDef> queues_;
  std::deque<RoundJob> jobs_;
  std::deque<regatta::v1::TaskSpec> tasks_;
};

inline int AssignedTo(const RoundResult& result, const std::string& queue) {
  int n = 0;
  for (const Assignment& a : result.assignments) n += a.queue == queue ? 1 : 0;
  return n;
}

}  // namespace regatta::scheduler::testing

#endif  // REGATTA_TESTS_UNIT_SCHEDULER_SCHEDULER_TEST_UTIL_H_
