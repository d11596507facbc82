#ifndef REGATTA_TESTS_UNIT_INGEST_TEST_EVENTS_H_
#define REGATTA_TESTS_UNIT_INGEST_TEST_EVENTS_H_

// Builders for log events in ingester tests.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "regatta/v1/events.pb.h"

namespace regatta::ingest::testing {

inline std::string JobId(int i) { return absl::StrFormat("01HJJJJJJJJJJJJJ%010d", i); }
inline std::string RunId(int i) { return absl::StrFormat("01HRRRRRRRRRRRRR%010d", i); }

// Event times: milliseconds after a fixed epoch, so replays are identical.
inline regatta::v1::Event At(int64_t ms) {
  regatta::v1::Event e;
  e.mutable_created()->set_seconds(1'700'000'000 + ms / 1000);
  e.mutable_created()->set_nanos(static_cast<int32_t>(ms % 1000) * 1'000'000);
  return e;
}

inline regatta::v1::EventSequence Sequence(std::string queue, std::string job_set,
                                           std::vector<regatta::v1::Event> events,
                                           std::string user = "alice") {
  regatta::v1::EventSequence seq;
  seq.set_queue(std::move(queue));
  seq.set_job_set(std::move(job_set));
  seq.set_user_id(std::move(user));
  seq.add_groups("team");
  for (auto& e : events) *seq.add_events() = std::move(e);
  return seq;
}

inline regatta::v1::Job MakeJob(int i, const std::string& queue, const std::string& job_set,
                                uint32_t priority = 0) {
  regatta::v1::Job job;
  job.set_id(JobId(i));
  job.set_queue(queue);
  job.set_job_set(job_set);
  job.set_owner("alice");
  job.add_groups("team");
  job.set_client_id(absl::StrCat("client-", i));
  job.set_priority(priority);
  job.set_priority_class(i % 2 ? "default" : "batch");
  (*job.mutable_labels())["app"] = absl::StrCat("app-", i % 4);
  (*job.mutable_annotations())["index"] = absl::StrCat(i);
  auto* task = job.mutable_task();
  task->set_image("busybox");
  task->add_command("/bin/sh");
  task->add_args("-c");
  task->add_args(absl::StrCat("echo ", i));
  (*task->mutable_env())["I"] = absl::StrCat(i);
  (*task->mutable_resources()->mutable_requests())["cpu"] = "100m";
  (*task->mutable_resources()->mutable_requests())["memory"] = "64Mi";
  job.mutable_submit_time()->set_seconds(1'700'000'000 + i);
  return job;
}

inline regatta::v1::Event Submit(int64_t ms, regatta::v1::Job job) {
  regatta::v1::Event e = At(ms);
  *e.mutable_submit_job()->mutable_job() = std::move(job);
  return e;
}

inline regatta::v1::Event Leased(int64_t ms, int job, int run, const std::string& node = "n1") {
  regatta::v1::Event e = At(ms);
  auto* x = e.mutable_job_run_leased();
  x->set_job_id(JobId(job));
  x->set_run_id(RunId(run));
  x->set_executor_id("exec");
  x->set_node_id(node);
  x->set_pool("default");
  return e;
}

// Run events that carry only (job id, run id).
template <typename Setter>
regatta::v1::Event RunEvent(int64_t ms, int job, int run, Setter mutable_field) {
  regatta::v1::Event e = At(ms);
  auto* x = (e.*mutable_field)();
  x->set_job_id(JobId(job));
  x->set_run_id(RunId(run));
  return e;
}

inline regatta::v1::Event Pending(int64_t ms, int job, int run) {
  return RunEvent(ms, job, run, &regatta::v1::Event::mutable_job_run_pending);
}
inline regatta::v1::Event Running(int64_t ms, int job, int run) {
  return RunEvent(ms, job, run, &regatta::v1::Event::mutable_job_run_running);
}
inline regatta::v1::Event RunSucceeded(int64_t ms, int job, int run) {
  return RunEvent(ms, job, run, &regatta::v1::Event::mutable_job_run_succeeded);
}
inline regatta::v1::Event RunCancelled(int64_t ms, int job, int run) {
  return RunEvent(ms, job, run, &regatta::v1::Event::mutable_job_run_cancelled);
}
inline regatta::v1::Event RunPreempted(int64_t ms, int job, int run) {
  return RunEvent(ms, job, run, &regatta::v1::Event::mutable_job_run_preempted);
}
inline regatta::v1::Event LeaseExpired(int64_t ms, int job, int run) {
  return RunEvent(ms, job, run, &regatta::v1::Event::mutable_job_run_lease_expired);
}
inline regatta::v1::Event LeaseReturned(int64_t ms, int job, int run, std::string reason) {
  regatta::v1::Event e =
      RunEvent(ms, job, run, &regatta::v1::Event::mutable_job_run_lease_returned);
  e.mutable_job_run_lease_returned()->set_reason(std::move(reason));
  return e;
}
inline regatta::v1::Event RunFailed(int64_t ms, int job, int run, int exit_code, bool terminal) {
  regatta::v1::Event e = RunEvent(ms, job, run, &regatta::v1::Event::mutable_job_run_failed);
  auto* error = e.mutable_job_run_failed()->mutable_error();
  error->set_reason(regatta::v1::ERROR_REASON_CONTAINER_ERROR);
  error->set_message(absl::StrCat("exit code ", exit_code));
  error->set_exit_code(exit_code);
  error->set_terminal(terminal);
  return e;
}

inline regatta::v1::Event Requeued(int64_t ms, int job) {
  regatta::v1::Event e = At(ms);
  e.mutable_job_requeued()->set_job_id(JobId(job));
  return e;
}
inline regatta::v1::Event Succeeded(int64_t ms, int job) {
  regatta::v1::Event e = At(ms);
  e.mutable_job_succeeded()->set_job_id(JobId(job));
  return e;
}
inline regatta::v1::Event Failed(int64_t ms, int job, int exit_code) {
  regatta::v1::Event e = At(ms);
  e.mutable_job_failed()->set_job_id(JobId(job));
  auto* error = e.mutable_job_failed()->mutable_error();
  error->set_reason(regatta::v1::ERROR_REASON_CONTAINER_ERROR);
  error->set_message(absl::StrCat("exit code ", exit_code));
  error->set_exit_code(exit_code);
  error->set_terminal(true);
  return e;
}
inline regatta::v1::Event Cancelled(int64_t ms, int job, std::string reason = "") {
  regatta::v1::Event e = At(ms);
  e.mutable_job_cancelled()->set_job_id(JobId(job));
  e.mutable_job_cancelled()->set_reason(std::move(reason));
  return e;
}
inline regatta::v1::Event Preempted(int64_t ms, int job, int run, int by_job) {
  regatta::v1::Event e = At(ms);
  auto* x = e.mutable_job_preempted();
  x->set_job_id(JobId(job));
  x->set_run_id(RunId(run));
  x->set_preempting_job_id(JobId(by_job));
  x->set_preempting_queue("urgent");
  x->set_reason("fair share");
  return e;
}
inline regatta::v1::Event Rejected(int64_t ms, int job) {
  regatta::v1::Event e = At(ms);
  auto* x = e.mutable_job_rejected();
  x->set_job_id(JobId(job));
  x->set_message("too big");
  (*x->mutable_reasons_by_pool())["gpu"] = "no gpu nodes";
  (*x->mutable_reasons_by_pool())["cpu"] = "needs 1000 cpus";
  return e;
}
inline regatta::v1::Event Reprioritized(int64_t ms, int job, uint32_t priority) {
  regatta::v1::Event e = At(ms);
  e.mutable_job_reprioritized()->set_job_id(JobId(job));
  e.mutable_job_reprioritized()->set_new_priority(priority);
  return e;
}

inline regatta::v1::Event CancelJob(int64_t ms, int job, std::string reason = "user") {
  regatta::v1::Event e = At(ms);
  e.mutable_cancel_job()->set_job_id(JobId(job));
  e.mutable_cancel_job()->set_reason(std::move(reason));
  return e;
}
inline regatta::v1::Event CancelJobSet(int64_t ms, std::vector<regatta::v1::JobState> states,
                                       std::string reason = "set") {
  regatta::v1::Event e = At(ms);
  for (auto s : states) e.mutable_cancel_job_set()->add_states(s);
  e.mutable_cancel_job_set()->set_reason(std::move(reason));
  return e;
}
inline regatta::v1::Event ReprioritizeJob(int64_t ms, int job, uint32_t priority) {
  regatta::v1::Event e = At(ms);
  e.mutable_reprioritize_job()->set_job_id(JobId(job));
  e.mutable_reprioritize_job()->set_new_priority(priority);
  return e;
}
inline regatta::v1::Event PreemptJob(int64_t ms, int job, std::string reason = "please") {
  regatta::v1::Event e = At(ms);
  e.mutable_preempt_job()->set_job_id(JobId(job));
  e.mutable_preempt_job()->set_reason(std::move(reason));
  return e;
}

inline regatta::v1::Queue MakeQueue(const std::string& name, double factor = 1.0) {
  regatta::v1::Queue q;
  q.set_name(name);
  q.set_priority_factor(factor);
  auto* perm = q.add_permissions();
  auto* subject = perm->add_subjects();
  subject->set_kind("group");
  subject->set_name("team");
  perm->add_verbs("submit");
  (*q.mutable_labels())["owner"] = "team";
  return q;
}
inline regatta::v1::Event QueueCreated(int64_t ms, regatta::v1::Queue queue) {
  regatta::v1::Event e = At(ms);
  *e.mutable_queue_created()->mutable_queue() = std::move(queue);
  return e;
}
inline regatta::v1::Event QueueUpdated(int64_t ms, regatta::v1::Queue queue) {
  regatta::v1::Event e = At(ms);
  *e.mutable_queue_updated()->mutable_queue() = std::move(queue);
  return e;
}
inline regatta::v1::Event QueueDeleted(int64_t ms, std::string name) {
  regatta::v1::Event e = At(ms);
  e.mutable_queue_deleted()->set_name(std::move(name));
  return e;
}
inline regatta::v1::Event QueueCordoned(int64_t ms, std::string name, bool cordoned) {
  regatta::v1::Event e = At(ms);
  e.mutable_queue_cordoned()->set_name(std::move(name));
  e.mutable_queue_cordoned()->set_cordoned(cordoned);
  return e;
}
inline regatta::v1::Event Marker(int64_t ms, std::string group) {
  regatta::v1::Event e = At(ms);
  e.mutable_partition_marker()->set_group_id(std::move(group));
  return e;
}

}  // namespace regatta::ingest::testing

#endif  // REGATTA_TESTS_UNIT_INGEST_TEST_EVENTS_H_
