#ifndef REGATTA_TESTS_E2E_DEVICES_FIXTURE_H_
#define REGATTA_TESTS_E2E_DEVICES_FIXTURE_H_

#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/e2e/up_fixture.h"

namespace regatta::testing {

// UpFixture plus what the device tests share: `regatta up` without its executor, a scratch
// directory short enough for discovery sockets, and the Instances as the CLI lists them.
class DevicesFixture : public UpFixture {
 protected:
  // The tests start their own executors; a killed one is declared lost after 3 s.
  std::vector<std::string> ExtraUpArgs() const override {
    return {"--set", "executor.embedded=false", "--set", "scheduling.executorTimeout=3s"};
  }

  void SetUp() override {
    // Unix socket paths must stay short: discovery directories live under /tmp.
    char pattern[] = "/tmp/rgdev.XXXXXX";
    scratch_ = mkdtemp(pattern);
    UpFixture::SetUp();
  }

  void TearDown() override {
    UpFixture::TearDown();
    std::error_code ignored;
    std::filesystem::remove_all(scratch_, ignored);
  }

  std::string Stderr(const std::string& name) const { return (dir_ / (name + ".stderr")).string(); }

  // `regatta instances list -o json [filter...]`: the list of Instances.
  nlohmann::json InstancesJson(const std::vector<std::string>& filter = {}) {
    std::vector<std::string> args = {"instances", "list", "-o", "json"};
    args.insert(args.end(), filter.begin(), filter.end());
    RunResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
    if (!doc.is_object() || !doc.contains("instances")) return nlohmann::json::array();
    return doc["instances"];
  }

  // "<configuration>/<device id>@<node>,<node>" per Instance, sorted.
  std::vector<std::string> Instances() {
    std::vector<std::string> out;
    for (const nlohmann::json& i : InstancesJson()) {
      std::vector<std::string> nodes = i.value("nodes", std::vector<std::string>());
      out.push_back(absl::StrCat(i.value("configurationName", ""), "/", i.value("deviceId", ""),
                                 "@", absl::StrJoin(nodes, ",")));
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  bool WaitForInstances(std::vector<std::string> expected,
                        std::chrono::seconds timeout = std::chrono::seconds(20)) {
    return WaitForList([this] { return Instances(); }, std::move(expected), "instances", timeout,
                       std::chrono::milliseconds(50));
  }

  // Polls `list` (a sorted list) until it is `expected`; a failure says what `what` was.
  static bool WaitForList(const std::function<std::vector<std::string>()>& list,
                          std::vector<std::string> expected, const std::string& what,
                          std::chrono::seconds timeout, std::chrono::milliseconds poll) {
    std::sort(expected.begin(), expected.end());
    auto deadline = std::chrono::steady_clock::now() + timeout;
    std::vector<std::string> seen;
    while (std::chrono::steady_clock::now() < deadline) {
      seen = list();
      if (seen == expected) return true;
      std::this_thread::sleep_for(poll);
    }
    ADD_FAILURE() << what << " are " << ::testing::PrintToString(seen) << ", expected "
                  << ::testing::PrintToString(expected);
    return false;
  }

  std::string scratch_;
};

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_E2E_DEVICES_FIXTURE_H_
