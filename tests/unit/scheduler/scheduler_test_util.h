#ifndef REGATTA_TESTS_UNIT_SCHEDULER_SCHEDULER_TEST_UTIL_H_
#define REGATTA_TESTS_UNIT_SCHEDULER_SCHEDULER_TEST_UTIL_H_

#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "regatta/v1/types.pb.h"
#include "src/common/resources.h"
#include "src/scheduler/nodedb/node.h"

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

}  // namespace regatta::scheduler::testing

#endif  // REGATTA_TESTS_UNIT_SCHEDULER_SCHEDULER_TEST_UTIL_H_
