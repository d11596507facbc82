// Runs every tests/scenarios/*.yaml through the simulator with the real algorithm, one test case
// per file. A scenario file:
//
//   cluster: {...}     # as for `regatta simulate --cluster`
//   workload: {...}    # as for --workload
//   run: {until: 120s, interval: 1s}   # interval: how often shares are sampled (default: cycle)
//   expect:
//     - {check: share, queue: a, at: 60s, value: 0.5, tolerance: 0.02}    # pool: if several
//     - {check: share, queue: a, from: 30s, to: 120s, value: 0.5}         # every sample between
//     - {check: running, queue: a, at: 10s, min: 19, max: 21}             # no queue: all queues
//     - {check: queued, queue: a, at: 10s, min: 20, max: 20}
//     - {check: utilisation, pool: p, resource: cpu, at: 30s, min: 0.99, max: 1}
//     - {check: jobs, template: t, state: PREEMPTED, count: 10, kind: urgency, byQueue: b,
//        reasonContains: "...", leasedAt: 0s}   # no count: every job of the template; kind
//                                               # and byQueue match preempted jobs only
//     - {check: gangUniform, template: g, label: zone}
//     - {check: preemptions, kind: fair-share, queue: a, min: 1, max: 5}
// Every scenario also asserts that the simulator saw no anomaly (broken invariant).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "src/scheduler/sim/simulator.h"
#include "src/scheduler/sim/spec.h"
#include "yaml-cpp/yaml.h"

namespace regatta::scheduler::sim {
namespace {

std::vector<std::string> ScenarioFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(REGATTA_SCENARIO_DIR)) {
    if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

absl::Duration DurationOf(const YAML::Node& node) {
  absl::Duration d;
  if (!absl::ParseDuration(node.as<std::string>(), &d)) {
    ADD_FAILURE() << "not a duration: " << node.as<std::string>();
  }
  return d;
}

class Scenario {
 public:
  Scenario(const Simulator& sim, std::string file) : sim_(sim), file_(std::move(file)) {}

  void Check(const YAML::Node& e, size_t index) {
    const std::string check = e["check"].as<std::string>("");
    SCOPED_TRACE(absl::StrCat(file_, ": expect[", index, "] (", check, ")"));
    // A misspelt key would silently widen a check: only known keys are allowed.
    static const auto* const kKeys = new absl::flat_hash_map<std::string, std::vector<std::string>>{
        {"share", {"pool", "queue", "at", "from", "to", "value", "tolerance"}},
        {"running", {"pool", "queue", "at", "from", "to", "min", "max"}},
        {"queued", {"queue", "at", "from", "to", "min", "max"}},
        {"utilisation", {"pool", "resource", "at", "from", "to", "min", "max"}},
        {"jobs", {"template", "state", "count", "kind", "byQueue", "reasonContains", "leasedAt"}},
        {"gangUniform", {"template", "label"}},
        {"preemptions", {"kind", "queue", "min", "max"}}};
    auto known = kKeys->find(check);
    ASSERT_NE(known, kKeys->end()) << "unknown check \"" << check << "\"";
    for (const auto& kv : e) {
      const std::string key = kv.first.as<std::string>();
      ASSERT_TRUE(key == "check" ||
                  std::find(known->second.begin(), known->second.end(), key) != known->second.end())
          << "unknown key \"" << key << "\"";
    }
    if (check == "share") {
      CheckShare(e);
    } else if (check == "running" || check == "queued") {
      CheckCount(e, check == "running");
    } else if (check == "utilisation") {
      CheckUtilisation(e);
    } else if (check == "jobs") {
      CheckJobs(e);
    } else if (check == "gangUniform") {
      CheckGangUniform(e);
    } else {
      CheckPreemptions(e);
    }
  }

 private:
  int PoolIndex(const YAML::Node& e) const {
    if (!e["pool"]) {
      EXPECT_EQ(sim_.cluster().pools.size(), 1u) << "name the pool";
      return 0;
    }
    const std::string name = e["pool"].as<std::string>();
    for (size_t p = 0; p < sim_.cluster().pools.size(); ++p) {
      if (sim_.cluster().pools[p].name == name) return static_cast<int>(p);
    }
    ADD_FAILURE() << "no pool " << name;
    return 0;
  }
  int QueueIndex(const YAML::Node& e) const {
    if (!e["queue"]) return -1;
    const std::string name = e["queue"].as<std::string>();
    for (size_t q = 0; q < sim_.workload().queues.size(); ++q) {
      if (sim_.workload().queues[q].name == name) return static_cast<int>(q);
    }
    ADD_FAILURE() << "no queue " << name;
    return -1;
  }
  // The samples an expectation is about: the one at `at`, or all in [from, to].
  std::vector<const Sample*> SamplesOf(const YAML::Node& e) const {
    std::vector<const Sample*> out;
    absl::Duration from = e["at"] ? DurationOf(e["at"]) : DurationOf(e["from"]);
    absl::Duration to = e["at"] ? from : DurationOf(e["to"]);
    for (const Sample& s : sim_.samples()) {
      if (s.time >= from && s.time <= to) out.push_back(&s);
    }
    EXPECT_FALSE(out.empty()) << "no sample between " << from << " and " << to;
    return out;
  }
  // "0s:0.600(r24,q0) 30s:0.300(r12,q0)" for failure messages: the queue's samples where
  // something changed.
  std::string Series(int pool, int queue) const {
    std::vector<std::string> parts;
    std::string last;
    for (const Sample& s : sim_.samples()) {
      for (const QueueSample& q : s.queues) {
        if (q.pool != pool || q.queue != queue) continue;
        std::string value = absl::StrFormat("%.3f(r%d,q%d)", q.share, q.running, q.queued);
        if (value != last) parts.push_back(absl::StrCat(absl::FormatDuration(s.time), ":", value));
        last = value;
      }
    }
    return absl::StrJoin(parts, " ");
  }

  void CheckShare(const YAML::Node& e) {
    const int pool = PoolIndex(e);
    const int queue = QueueIndex(e);
    const double value = e["value"].as<double>();
    const double tolerance = e["tolerance"].as<double>(0.02);
    std::vector<std::string> off;
    for (const Sample* s : SamplesOf(e)) {
      for (const QueueSample& q : s->queues) {
        if (q.pool == pool && q.queue == queue && std::abs(q.share - value) > tolerance) {
          off.push_back(absl::StrFormat("%s: %.3f", absl::FormatDuration(s->time), q.share));
        }
      }
    }
    EXPECT_TRUE(off.empty()) << "share not within " << value << " +- " << tolerance << " at "
                             << off.size() << " samples, first " << off.front()
                             << "; series: " << Series(pool, queue);
  }

  void CheckCount(const YAML::Node& e, bool running) {
    const int queue = QueueIndex(e);
    const int pool = e["pool"] ? PoolIndex(e) : -1;
    const int64_t min = e["min"].as<int64_t>(0);
    const int64_t max = e["max"].as<int64_t>(std::numeric_limits<int64_t>::max());
    std::vector<std::string> off;
    for (const Sample* s : SamplesOf(e)) {
      int64_t count = 0;
      for (const QueueSample& q : s->queues) {
        if (queue >= 0 && q.queue != queue) continue;
        if (running) {
          if (pool < 0 || q.pool == pool) count += q.running;
        } else if (q.pool == 0) {
          count += q.queued;  // the same in every pool's rows
        }
      }
      if (count < min || count > max) {
        off.push_back(absl::StrCat(absl::FormatDuration(s->time), ": ", count));
      }
    }
    EXPECT_TRUE(off.empty()) << "count not in [" << min << ", " << max << "] at " << off.size()
                             << " samples: " << absl::StrJoin(off, ", ");
  }

  void CheckUtilisation(const YAML::Node& e) {
    const int pool = PoolIndex(e);
    const int resource = ResourceNames::Global().Find(e["resource"].as<std::string>());
    for (const Sample* s : SamplesOf(e)) {
      bool found = false;
      for (const auto& [r, fraction] : s->pools[pool].utilisation) {
        if (r != resource) continue;
        found = true;
        EXPECT_GE(fraction, e["min"].as<double>(0)) << "at " << s->time;
        EXPECT_LE(fraction, e["max"].as<double>(1)) << "at " << s->time;
      }
      EXPECT_TRUE(found) << "no utilisation of " << e["resource"].as<std::string>();
    }
  }

  static bool JobMatches(const SimJob& job, const YAML::Node& e) {
    if (e["state"] && SimJobStateName(job.state) != e["state"].as<std::string>()) return false;
    // Kind and cause only mean something for preempted jobs.
    if ((e["kind"] || e["byQueue"]) && job.state != SimJobState::kPreempted) return false;
    if (e["kind"] && PreemptionKindName(job.preemption_kind) != e["kind"].as<std::string>()) {
      return false;
    }
    if (e["byQueue"] && job.preempted_by_queue != e["byQueue"].as<std::string>()) return false;
    if (e["reasonContains"] &&
        job.reason.find(e["reasonContains"].as<std::string>()) == std::string::npos) {
      return false;
    }
    if (e["leasedAt"] && job.lease_time != DurationOf(e["leasedAt"])) return false;
    return true;
  }

  void CheckJobs(const YAML::Node& e) {
    const std::string tmpl = e["template"].as<std::string>();
    int64_t total = 0, matching = 0;
    std::string first_mismatch;
    for (const SimJob& job : sim_.jobs()) {
      if (sim_.workload().jobs[job.template_index].name != tmpl) continue;
      ++total;
      if (JobMatches(job, e)) {
        ++matching;
      } else if (first_mismatch.empty()) {
        first_mismatch = absl::StrCat(job.id, " is ", SimJobStateName(job.state), ", leased at ",
                                      absl::FormatDuration(job.lease_time));
        if (job.state == SimJobState::kPreempted) {
          absl::StrAppend(&first_mismatch, ", preempted (", PreemptionKindName(job.preemption_kind),
                          ") for queue ", job.preempted_by_queue);
        }
        if (!job.reason.empty()) absl::StrAppend(&first_mismatch, ": ", job.reason);
      }
    }
    ASSERT_GT(total, 0) << "no jobs of template " << tmpl;
    const int64_t want = e["count"] ? e["count"].as<int64_t>() : total;
    EXPECT_EQ(matching, want) << "first job that does not match: " << first_mismatch;
  }

  void CheckGangUniform(const YAML::Node& e) {
    const std::string tmpl = e["template"].as<std::string>();
    const std::string label = e["label"].as<std::string>();
    absl::flat_hash_map<std::string, std::string> value_of_gang;
    int64_t placed = 0;
    for (const SimJob& job : sim_.jobs()) {
      if (sim_.workload().jobs[job.template_index].name != tmpl || job.node < 0) continue;
      ++placed;
      const Node& node = sim_.pool_nodes()[job.pool][job.node];
      auto it = node.labels.find(label);
      ASSERT_NE(it, node.labels.end()) << job.id << " ran on " << node.id << " without " << label;
      auto [entry, inserted] = value_of_gang.emplace(job.gang_id, it->second);
      EXPECT_EQ(entry->second, it->second) << "gang " << job.gang_id << " spans two values";
    }
    EXPECT_GT(placed, 0) << "no job of " << tmpl << " ever ran";
  }

  void CheckPreemptions(const YAML::Node& e) {
    int64_t count = 0;
    for (const PreemptionEvent& p : sim_.preemptions()) {
      if (e["kind"] && PreemptionKindName(p.preemption.kind) != e["kind"].as<std::string>()) {
        continue;
      }
      if (e["queue"] && p.preemption.queue != e["queue"].as<std::string>()) continue;
      ++count;
    }
    EXPECT_GE(count, e["min"].as<int64_t>(0));
    EXPECT_LE(count, e["max"].as<int64_t>(std::numeric_limits<int64_t>::max()));
  }

  const Simulator& sim_;
  std::string file_;
};

class ScenarioTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScenarioTest, MeetsItsExpectations) {
  const std::string& file = GetParam();
  YAML::Node root = YAML::LoadFile(file);
  auto cluster = ParseCluster(root["cluster"], file + " (cluster)");
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  auto workload = ParseWorkload(root["workload"], file + " (workload)");
  ASSERT_TRUE(workload.ok()) << workload.status();
  auto sim = Simulator::Create(*std::move(cluster), *std::move(workload));
  ASSERT_TRUE(sim.ok()) << sim.status();
  SimOptions options;
  if (root["run"]["until"]) options.until = DurationOf(root["run"]["until"]);
  if (root["run"]["interval"]) options.sample_interval = DurationOf(root["run"]["interval"]);
  (*sim)->Run(options);

  EXPECT_TRUE((*sim)->anomalies().empty())
      << "anomalies:\n  " << absl::StrJoin((*sim)->anomalies(), "\n  ");
  ASSERT_TRUE(root["expect"].IsSequence() && root["expect"].size() > 0) << "no expectations";
  Scenario scenario(**sim, file);
  for (size_t i = 0; i < root["expect"].size(); ++i) scenario.Check(root["expect"][i], i);
}

INSTANTIATE_TEST_SUITE_P(Scenarios, ScenarioTest, ::testing::ValuesIn(ScenarioFiles()),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string name = std::filesystem::path(info.param).stem().string();
                           for (char& c : name) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace regatta::scheduler::sim
