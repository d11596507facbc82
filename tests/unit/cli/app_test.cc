// Runs the command line against in-process fake services: flags to requests, metadata, paging,
// batching, output formats and exit codes.
#include "src/cli/app.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "regatta/v1/event_service.grpc.pb.h"
#include "regatta/v1/job_service.grpc.pb.h"
#include "regatta/v1/queue_service.grpc.pb.h"
#include "regatta/v1/submit_service.grpc.pb.h"

namespace regatta::cli {
namespace {

namespace v1 = regatta::v1;
using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string Authorization(grpc::ServerContext* ctx) {
  auto it = ctx->client_metadata().find("authorization");
  if (it == ctx->client_metadata().end()) return "";
  return std::string(it->second.data(), it->second.size());
}

class FakeQueues final : public v1::QueueService::Service {
 public:
  grpc::Status CreateQueue(grpc::ServerContext* ctx, const v1::CreateQueueRequest* request,
                           v1::Queue* response) override {
    absl::MutexLock lock(&mu);
    last_authorization = Authorization(ctx);
    if (queues.count(request->queue().name()) > 0) {
      return grpc::Status(grpc::StatusCode::ALREADY_EXISTS, "queue exists");
    }
    queues[request->queue().name()] = request->queue();
    *response = request->queue();
    return grpc::Status::OK;
  }
  grpc::Status UpdateQueue(grpc::ServerContext*, const v1::UpdateQueueRequest* request,
                           v1::Queue* response) override {
    absl::MutexLock lock(&mu);
    queues[request->queue().name()] = request->queue();
    *response = request->queue();
    return grpc::Status::OK;
  }
  grpc::Status GetQueue(grpc::ServerContext*, const v1::GetQueueRequest* request,
                        v1::Queue* response) override {
    absl::MutexLock lock(&mu);
    auto it = queues.find(request->name());
    if (it == queues.end()) {
      return grpc::Status(grpc::StatusCode::NOT_FOUND,
                          absl::StrCat("queue ", request->name(), " not found"));
    }
    *response = it->second;
    return grpc::Status::OK;
  }
  // Pages of one queue each, to exercise the CLI's paging.
  grpc::Status ListQueues(grpc::ServerContext*, const v1::ListQueuesRequest* request,
                          v1::ListQueuesResponse* response) override {
    absl::MutexLock lock(&mu);
    auto it = queues.upper_bound(request->page_token());
    if (it == queues.end()) return grpc::Status::OK;
    *response->add_queues() = it->second;
    if (std::next(it) != queues.end()) response->set_next_page_token(it->first);
    return grpc::Status::OK;
  }
  grpc::Status CordonQueue(grpc::ServerContext*, const v1::CordonQueueRequest* request,
                           v1::Queue* response) override {
    absl::MutexLock lock(&mu);
    queues[request->name()].set_cordoned(true);
    *response = queues[request->name()];
    return grpc::Status::OK;
  }

  absl::Mutex mu;
  std::map<std::string, v1::Queue> queues;
  std::string last_authorization;
};

class FakeSubmit final : public v1::SubmitService::Service {
 public:
  grpc::Status SubmitJobs(grpc::ServerContext* ctx, const v1::SubmitJobsRequest* request,
                          v1::SubmitJobsResponse* response) override {
    absl::MutexLock lock(&mu);
    last_authorization = Authorization(ctx);
    batch_sizes.push_back(request->items_size());
    if (fail_batch == static_cast<int>(batch_sizes.size())) {
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "items[0].task: bad");
    }
    for (const auto& item : request->items()) {
      auto* out = response->add_items();
      out->set_job_id(absl::StrCat("job-", next_id++));
      out->set_client_id(item.client_id());
    }
    return grpc::Status::OK;
  }
  grpc::Status ValidateSubmit(grpc::ServerContext*, const v1::SubmitJobsRequest* request,
                              v1::ValidateSubmitResponse* response) override {
    absl::MutexLock lock(&mu);
    if (!can_validate) return grpc::Status(grpc::StatusCode::UNIMPLEMENTED, "");
    validate_sizes.push_back(request->items_size());
    if (fail_validate == static_cast<int>(validate_sizes.size())) {  // its last item
      return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                          absl::StrCat("items[", request->items_size() - 1,
                                       "].task.resources.requests[cpu]: must not be negative"));
    }
    response->set_new_jobs(request->items_size());
    return grpc::Status::OK;
  }
  grpc::Status CancelJobs(grpc::ServerContext*, const v1::CancelJobsRequest* request,
                          v1::CancelJobsResponse* response) override {
    absl::MutexLock lock(&mu);
    last_cancel = *request;
    // The first id counts as running; the others as already finished.
    response->add_cancel_requested_ids(request->job_ids(0));
    return grpc::Status::OK;
  }
  grpc::Status CancelJobSet(grpc::ServerContext*, const v1::CancelJobSetRequest* request,
                            v1::CancelJobSetResponse*) override {
    absl::MutexLock lock(&mu);
    last_cancel_set = *request;
    return grpc::Status::OK;
  }
  grpc::Status ReprioritizeJobs(grpc::ServerContext*, const v1::ReprioritizeJobsRequest* request,
                                v1::ReprioritizeJobsResponse* response) override {
    absl::MutexLock lock(&mu);
    last_reprioritize = *request;
    for (const auto& id : request->job_ids()) response->add_reprioritized_ids(id);
    return grpc::Status::OK;
  }

  grpc::Status CancelQueue(grpc::ServerContext*, const v1::CancelQueueRequest* request,
                           v1::CancelQueueResponse* response) override {
    absl::MutexLock lock(&mu);
    last_cancel_queue = *request;
    response->set_cancel_requested_count(3);
    return grpc::Status::OK;
  }
  grpc::Status PreemptQueue(grpc::ServerContext*, const v1::PreemptQueueRequest* request,
                            v1::PreemptQueueResponse* response) override {
    absl::MutexLock lock(&mu);
    last_preempt_queue = *request;
    response->set_preempt_requested_count(2);
    return grpc::Status::OK;
  }
  grpc::Status CancelOnExecutor(grpc::ServerContext*, const v1::CancelOnExecutorRequest* request,
                                v1::CancelOnExecutorResponse* response) override {
    absl::MutexLock lock(&mu);
    last_cancel_executor = *request;
    response->set_cancel_requested_count(4);
    return grpc::Status::OK;
  }
  grpc::Status PreemptOnExecutor(grpc::ServerContext*, const v1::PreemptOnExecutorRequest* request,
                                 v1::PreemptOnExecutorResponse* response) override {
    absl::MutexLock lock(&mu);
    last_preempt_executor = *request;
    response->set_preempt_requested_count(1);
    return grpc::Status::OK;
  }

  absl::Mutex mu;
  std::vector<int> batch_sizes;
  int fail_batch = 0;
  bool can_validate = true;  // false: answer ValidateSubmit as a server that predates it
  std::vector<int> validate_sizes;
  int fail_validate = 0;
  int next_id = 0;
  std::string last_authorization;
  v1::CancelJobsRequest last_cancel;
  v1::CancelJobSetRequest last_cancel_set;
  v1::ReprioritizeJobsRequest last_reprioritize;
  v1::CancelQueueRequest last_cancel_queue;
  v1::PreemptQueueRequest last_preempt_queue;
  v1::CancelOnExecutorRequest last_cancel_executor;
  v1::PreemptOnExecutorRequest last_preempt_executor;
};

class FakeJobs final : public v1::JobService::Service {
 public:
  // 7 jobs served in pages of the requested size; the token is the next index.
  grpc::Status ListJobs(grpc::ServerContext*, const v1::ListJobsRequest* request,
                        v1::ListJobsResponse* response) override {
    absl::MutexLock lock(&mu);
    requests.push_back(*request);
    int start = request->page_token().empty() ? 0 : std::stoi(request->page_token());
    int size = request->page_size() == 0 ? 100 : request->page_size();
    int end = std::min(kJobs, start + size);
    for (int i = start; i < end; ++i) {
      auto* job = response->add_jobs();
      job->set_job_id(absl::StrCat("job-", i));
      job->set_queue(request->queue());
      job->set_state(v1::JOB_STATE_QUEUED);
    }
    if (end < kJobs) response->set_next_page_token(absl::StrCat(end));
    return grpc::Status::OK;
  }
  grpc::Status GetJobDetails(grpc::ServerContext*, const v1::GetJobDetailsRequest* request,
                             v1::GetJobDetailsResponse* response) override {
    for (const auto& id : request->job_ids()) {
      if (id != "known") continue;
      auto& d = (*response->mutable_jobs())[id];
      d.mutable_summary()->set_job_id(id);
      d.mutable_summary()->set_state(v1::JOB_STATE_RUNNING);
      if (request->expand_spec()) d.mutable_job()->set_id(id);
    }
    return grpc::Status::OK;
  }

  static constexpr int kJobs = 7;
  absl::Mutex mu;
  std::vector<v1::ListJobsRequest> requests;
};

class FakeEvents final : public v1::EventService::Service {
 public:
  grpc::Status GetJobSetEvents(grpc::ServerContext* ctx, const v1::JobSetEventsRequest* request,
                               grpc::ServerWriter<v1::JobSetEvent>* writer) override {
    int index = 0;
    for (const auto& [job, type] : script) {
      v1::JobSetEvent e;
      e.set_id(absl::StrCat(index++));
      e.set_queue(request->queue());
      e.set_job_set(request->job_set());
      e.set_job_id(job);
      e.set_type(type);
      e.mutable_created()->set_seconds(1'700'000'000 + index);
      if (!writer->Write(e)) return grpc::Status::OK;
    }
    if (!request->watch()) return grpc::Status::OK;
    // Following: hold the stream open until the client goes away, as a real server would.
    while (!ctx->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
    return grpc::Status::CANCELLED;
  }

  std::vector<std::pair<std::string, v1::JobEventType>> script;
};

class AppTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(&queues_);
    builder.RegisterService(&submit_);
    builder.RegisterService(&jobs_);
    builder.RegisterService(&events_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override { server_->Shutdown(); }

  struct Result {
    int code;
    std::string out;
    std::string err;
  };

  Result Run(std::vector<std::string> args, const std::string& input = "") {
    args.insert(args.begin(), {"--server", absl::StrCat("127.0.0.1:", port_)});
    std::istringstream in(input);
    std::ostringstream out, err;
    int code = RunCli(args, in, out, err);
    return {code, out.str(), err.str()};
  }

  std::string WriteFile(const std::string& name, const std::string& text) {
    std::string path = absl::StrCat(::testing::TempDir(), "/", name);
    std::ofstream(path) << text;
    return path;
  }

  static int Lines(const std::string& text) {
    return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  }

  int port_ = 0;
  FakeQueues queues_;
  FakeSubmit submit_;
  FakeJobs jobs_;
  FakeEvents events_;
  std::unique_ptr<grpc::Server> server_;
};

TEST_F(AppTest, QueueCreateSendsFlagsAndToken) {
  auto r = Run({"--token", "s3cret", "queue", "create", "team-a", "--priority-factor", "2",
                "--permission", "group:team-a=submit,cancel", "--label", "cost=42", "--limit",
                "pc:cpu=0.5"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "queue team-a created\n");
  EXPECT_EQ(r.err, "");
  absl::MutexLock lock(&queues_.mu);
  EXPECT_EQ(queues_.last_authorization, "Bearer s3cret");
  const v1::Queue& q = queues_.queues.at("team-a");
  EXPECT_EQ(q.priority_factor(), 2);
  EXPECT_EQ(q.permissions(0).subjects(0).kind(), "group");
  EXPECT_EQ(q.labels().at("cost"), "42");
  EXPECT_EQ(q.resource_limits_by_priority_class().size(), 1u);
}

TEST_F(AppTest, BasicAuthAndGlobalFlagsAfterTheVerb) {
  auto r = Run({"queue", "create", "q", "--user", "u", "--password", "p", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"name\": \"q\""));
  absl::MutexLock lock(&queues_.mu);
  EXPECT_EQ(queues_.last_authorization, "Basic dTpw");
}

TEST_F(AppTest, QueueCreateFromFile) {
  std::string path = WriteFile("queue.yaml", "name: from-file\npriorityFactor: 3\n");
  auto r = Run({"queue", "create", "-f", path});
  ASSERT_EQ(r.code, 0) << r.err;
  absl::MutexLock lock(&queues_.mu);
  EXPECT_EQ(queues_.queues.at("from-file").priority_factor(), 3);
}

TEST_F(AppTest, QueueUpdateKeepsWhatFlagsDoNotName) {
  ASSERT_EQ(Run({"queue", "create", "q", "--label", "a=1", "--priority-factor", "5"}).code, 0);
  auto r = Run({"queue", "update", "q", "--permission", "user:bob=watch"});
  ASSERT_EQ(r.code, 0) << r.err;
  absl::MutexLock lock(&queues_.mu);
  const v1::Queue& q = queues_.queues.at("q");
  EXPECT_EQ(q.priority_factor(), 5);
  EXPECT_EQ(q.labels().at("a"), "1");
  EXPECT_EQ(q.permissions(0).verbs(0), "watch");
}

TEST_F(AppTest, RpcErrorIsOneLineWithCodeName) {
  auto r = Run({"queue", "get", "missing"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "regatta: queue get: NOT_FOUND: queue missing not found\n");
  r = Run({"queue", "create", "dup"});
  r = Run({"queue", "create", "dup"});
  EXPECT_EQ(r.err, "regatta: queue create: ALREADY_EXISTS: queue exists\n");
}

TEST_F(AppTest, QueueListPagesAndPrintsJsonOrYaml) {
  for (const char* name : {"a", "b", "c"}) ASSERT_EQ(Run({"queue", "create", name}).code, 0);
  auto r = Run({"queue", "list"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("NAME   PRIORITY FACTOR"));
  EXPECT_EQ(Lines(r.out), 4);
  r = Run({"-o", "json", "queue", "list"});
  auto j = nlohmann::json::parse(r.out);
  ASSERT_EQ(j["queues"].size(), 3u);
  EXPECT_EQ(j["queues"][2]["name"], "c");
  r = Run({"queue", "get", "b", "-o", "yaml"});
  EXPECT_EQ(r.out, "name: b\n");
}

TEST_F(AppTest, SubmitBatchesAndPrintsIds) {
  std::string path = WriteFile("jobs.yaml",
                               "queue: q\njobSet: s\njobs:\n"
                               "  - {clientId: c, count: 2500, command: [true]}\n");
  auto r = Run({"submit", path});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("JOB ID     CLIENT ID   DUPLICATE\njob-0      c-0         no\n"));
  EXPECT_EQ(Lines(r.out), 2501);
  {
    absl::MutexLock lock(&submit_.mu);
    EXPECT_THAT(submit_.batch_sizes, ::testing::ElementsAre(1000, 1000, 500));
    submit_.batch_sizes.clear();
  }
  r = Run({"submit", path, "--batch-size", "2000", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["items"].size(), 2500u);
  absl::MutexLock lock(&submit_.mu);
  EXPECT_THAT(submit_.batch_sizes, ::testing::ElementsAre(2000, 500));
}

TEST_F(AppTest, SubmitDryRunAsksTheServerAndSubmitsNothing) {
  std::string path =
      WriteFile("dry.yaml", "queue: q\njobSet: s\njobs: [{count: 3, command: [a]}]\n");
  auto r = Run({"submit", "--dry-run", path});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "QUEUE   JOB SET   JOBS   REQUESTS\nq       s         3      1\n"
            "dry run: 3 jobs valid (checked by the server), nothing submitted\n");
  EXPECT_EQ(r.err, "");
  {
    absl::MutexLock lock(&submit_.mu);
    EXPECT_TRUE(submit_.batch_sizes.empty());
    EXPECT_THAT(submit_.validate_sizes, ::testing::ElementsAre(3));
    submit_.validate_sizes.clear();
  }
  // --local: the server is not asked.
  r = Run({"submit", "--dry-run", "--local", path, "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["checkedBy"], "local");
  absl::MutexLock lock(&submit_.mu);
  EXPECT_TRUE(submit_.validate_sizes.empty());
  EXPECT_TRUE(submit_.batch_sizes.empty());
}

TEST_F(AppTest, SubmitDryRunWithoutAServerSaysItCheckedLocally) {
  std::string path = WriteFile("dry2.yaml", "queue: q\njobSet: s\njobs: [{command: [a]}]\n");
  // Nothing listens on port 1.
  std::istringstream in;
  std::ostringstream out, err;
  int code = RunCli({"--server", "127.0.0.1:1", "submit", "--dry-run", path}, in, out, err);
  EXPECT_EQ(code, 0) << err.str();
  EXPECT_THAT(out.str(), HasSubstr("dry run: 1 job valid (checked here only), nothing submitted"));
  EXPECT_THAT(err.str(), StartsWith("regatta: submit: warning: the server at 127.0.0.1:1 could "
                                    "not check the file (UNAVAILABLE: "));
}

TEST_F(AppTest, SubmitDryRunReportsTheServersErrorAtItsPlace) {
  {
    absl::MutexLock lock(&submit_.mu);
    submit_.fail_validate = 1;
  }
  std::string path = WriteFile("dry3.yaml",
                               "queue: q\njobSet: s\njobs:\n  - command: [a]\n"
                               "  - command: [b]\n    resources: {requests: {cpu: \"-1\"}}\n");
  auto r = Run({"submit", "--dry-run", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, absl::StrCat("regatta: submit: INVALID_ARGUMENT: ", path,
                                ":6:28: jobs[1].task.resources.requests[cpu]: must not be "
                                "negative\n"));
}

TEST_F(AppTest, SubmitFileErrorNamesFileAndPosition) {
  std::string path = WriteFile("bad.yaml", "queue: q\njobSet: s\njobs: [{command: run}]\n");
  auto r = Run({"submit", path});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, absl::StrCat("regatta: submit: INVALID_ARGUMENT: ", path,
                                ":3:9: jobs[0].command: expected a list, got \"run\"\n"));
}

TEST_F(AppTest, FileThatCannotBeReadIsAnInputErrorNamingThePath) {
  // Was UNAVAILABLE (a directory) and NOT_FOUND with exit code 1, as if the server had failed.
  const std::string dir = ::testing::TempDir();
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"submit", dir},
                                             {"submit", "--dry-run", dir},
                                             {"queue", "create", "-f", dir},
                                             {"pipeline", "validate", dir},
                                             {"pipeline", "upload", dir, "--name", "p"},
                                             {"pipeline", "compile", dir},
                                             {"pipeline", "run", dir},
                                             {"config", "apply", dir}}) {
    auto r = Run(args);
    EXPECT_EQ(r.code, 2) << args[0] << ": " << r.err;
    EXPECT_THAT(r.err, ::testing::EndsWith(absl::StrCat(": ", dir, ": is a directory\n")))
        << args[0];
    EXPECT_EQ(Lines(r.err), 1);
  }
  auto r = Run({"submit", "/nonexistent/jobs.yaml"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(r.err, "regatta: submit: /nonexistent/jobs.yaml: no such file\n");
  absl::MutexLock lock(&submit_.mu);
  EXPECT_TRUE(submit_.batch_sizes.empty());
}

TEST_F(AppTest, NonUtf8FileIsRefusedBeforeSending) {
  // Latin-1 "é" (0xE9) on line 4: protobuf would refuse to serialize the string, and the call
  // failed with an empty INTERNAL error.
  std::string path =
      WriteFile("latin1.yaml", "queue: q\njobSet: s\njobs:\n  - command: [caf\xE9]\n");
  for (const auto& args :
       std::vector<std::vector<std::string>>{{"submit", path},
                                             {"queue", "create", "-f", path},
                                             {"pipeline", "validate", path},
                                             {"pipeline", "upload", path, "--name", "p"},
                                             {"pipeline", "run", path},
                                             {"config", "apply", path}}) {
    auto r = Run(args);
    EXPECT_EQ(r.code, 1) << args[0];
    EXPECT_THAT(r.err, ::testing::EndsWith(absl::StrCat("INVALID_ARGUMENT: ", path,
                                                        ": not valid UTF-8 at byte 42 (line 4)\n")))
        << args[0];
  }
  auto r = Run({"submit", "-"}, "queue: q\n\xC0\x80");
  EXPECT_EQ(r.err,
            "regatta: submit: INVALID_ARGUMENT: stdin: not valid UTF-8 at byte 9 (line 2)\n");
  absl::MutexLock lock(&submit_.mu);
  EXPECT_TRUE(submit_.batch_sizes.empty());
  EXPECT_TRUE(submit_.validate_sizes.empty());
}

TEST_F(AppTest, SubmitChecksEveryRequestBeforeSubmittingAny) {
  {
    absl::MutexLock lock(&submit_.mu);
    submit_.fail_validate = 3;  // the third request: jobs 4 and 5 of the file
  }
  auto r = Run({"submit", "-", "--batch-size", "2"},
               "queue: q\njobSet: s\njobs:\n  - {count: 4, command: [a]}\n"
               "  - command: [b]\n    resources:\n      requests: {cpu: \"-1\"}\n");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err,
            "regatta: submit: INVALID_ARGUMENT: stdin:7:18: jobs[1].task.resources.requests[cpu]: "
            "must not be negative (nothing was submitted)\n");
  absl::MutexLock lock(&submit_.mu);
  EXPECT_THAT(submit_.validate_sizes, ::testing::ElementsAre(2, 2, 1));
  EXPECT_TRUE(submit_.batch_sizes.empty());
}

TEST_F(AppTest, SubmitFailingBatchSaysWhatWasSubmitted) {
  // Checked fine, then the server refuses request 2 (changed in between, say).
  {
    absl::MutexLock lock(&submit_.mu);
    submit_.fail_batch = 2;
  }
  auto r = Run({"submit", "-", "--batch-size", "2"},
               "queue: q\njobSet: s\njobs: [{count: 5, command: [a]}]\n");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(Lines(r.out), 3);  // header + the 2 jobs of the first batch
  EXPECT_EQ(r.err,
            "regatta: submit: INVALID_ARGUMENT: stdin:3:8: jobs[0] (copy 2 of 5).task: bad "
            "(request 2 of 3 failed; the 2 jobs of the file before it were submitted; client "
            "ids make a retry safe)\n");
}

TEST_F(AppTest, SubmitToAServerThatCannotValidateWarnsAndGoesRequestByRequest) {
  {
    absl::MutexLock lock(&submit_.mu);
    submit_.can_validate = false;
  }
  auto r = Run({"submit", "-", "--batch-size", "2"},
               "queue: q\njobSet: s\njobs: [{count: 3, command: [a]}]\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("warning: the server predates ValidateSubmit"));
  absl::MutexLock lock(&submit_.mu);
  EXPECT_THAT(submit_.batch_sizes, ::testing::ElementsAre(2, 1));
}

TEST_F(AppTest, CancelByIdsAndByJobSet) {
  auto r = Run({"cancel", "j1", "j2", "--reason", "oops"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "j1 cancel requested\nj2 not cancelled (already finished)\n");
  r = Run({"cancel", "--queue", "q", "--job-set", "s", "--state", "queued,RUNNING"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "cancel requested for job set q/s (jobs in QUEUED,RUNNING)\n");
  absl::MutexLock lock(&submit_.mu);
  EXPECT_EQ(submit_.last_cancel.reason(), "oops");
  EXPECT_EQ(submit_.last_cancel_set.states_size(), 2);
}

TEST_F(AppTest, CancelAndPreemptAWholeQueue) {
  auto r = Run({"cancel", "--queue", "q", "--priority-class", "low,batch", "--priority-class", "x",
                "--state", "queued", "--reason", "drain"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "cancel requested for 3 jobs of queue q (priority classes low,batch,x) in QUEUED\n");
  r = Run({"preempt", "--queue", "q"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "preemption requested for 2 jobs of queue q (jobs with a run)\n");
  absl::MutexLock lock(&submit_.mu);
  EXPECT_EQ(submit_.last_cancel_queue.queue(), "q");
  EXPECT_THAT(submit_.last_cancel_queue.priority_classes(),
              ::testing::ElementsAre("low", "batch", "x"));
  EXPECT_THAT(submit_.last_cancel_queue.states(), ::testing::ElementsAre(v1::JOB_STATE_QUEUED));
  EXPECT_EQ(submit_.last_cancel_queue.reason(), "drain");
  EXPECT_EQ(submit_.last_preempt_queue.queue(), "q");
}

TEST_F(AppTest, CancelAndPreemptOnAnExecutor) {
  auto r = Run(
      {"preempt", "--executor", "e1", "--node", "n1", "--queue", "q", "--priority-class", "low"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out,
            "preemption requested for 1 job on node n1 of executor e1 (queue q; priority class "
            "low)\n");
  r = Run({"cancel", "--executor", "e1", "-o", "json"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"cancelRequestedCount\": 4"));
  absl::MutexLock lock(&submit_.mu);
  EXPECT_EQ(submit_.last_preempt_executor.executor_id(), "e1");
  EXPECT_EQ(submit_.last_preempt_executor.node_id(), "n1");
  EXPECT_THAT(submit_.last_preempt_executor.queues(), ::testing::ElementsAre("q"));
  EXPECT_THAT(submit_.last_preempt_executor.priority_classes(), ::testing::ElementsAre("low"));
  EXPECT_EQ(submit_.last_cancel_executor.executor_id(), "e1");
  EXPECT_TRUE(submit_.last_cancel_executor.node_id().empty());
  EXPECT_TRUE(submit_.last_cancel_executor.queues().empty());
}

TEST_F(AppTest, ReprioritizeJobSet) {
  auto r = Run({"reprioritize", "--queue", "q", "--job-set", "s", "--priority", "7"});
  ASSERT_EQ(r.code, 0) << r.err;
  absl::MutexLock lock(&submit_.mu);
  EXPECT_EQ(submit_.last_reprioritize.new_priority(), 7u);
  EXPECT_EQ(submit_.last_reprioritize.job_set(), "s");
}

TEST_F(AppTest, UsageErrorsExitTwoWithOneLine) {
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"cancel"},
           {"cancel", "j1", "--state", "QUEUED"},
           {"cancel", "--node", "n1"},
           {"cancel", "j1", "--priority-class", "low"},
           {"cancel", "--executor", "e1", "--state", "QUEUED"},
           {"cancel", "--executor", "e1", "--job-set", "s"},
           {"preempt"},
           {"preempt", "--queue", "q", "--job-set", "s"},
           {"queue"},
           {"queue", "create", "q", "--permission", "team=submit"},
           {"queue", "list", "--bogus"},
           {"reprioritize", "j1"},
           {"jobs", "list", "--state", "DONE"},
           {"watch", "q"},
           {"nosuchverb"},
           {"queue", "list", "-o", "xml"},
           {"--timeout", "soon", "queue", "list"},
           {"executor"},
           {"executor", "--local", "--simulated"},
           {"executor", "--local", "--nodes", "5"},
           {"executor", "--simulated", "--nodes", "-1"},
       }) {
    auto r = Run(args);
    EXPECT_EQ(r.code, 2) << absl::StrJoin(args, " ") << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << absl::StrJoin(args, " ") << ": " << r.err;
    EXPECT_THAT(r.err, StartsWith("regatta: ")) << absl::StrJoin(args, " ");
  }
  auto r = Run({"queue", "create", "q", "--permission", "team=submit"});
  EXPECT_EQ(r.err,
            "regatta: queue create: --permission \"team=submit\": subject \"team\" needs a kind: "
            "user:NAME or group:NAME (see 'regatta queue create --help')\n");
}

TEST_F(AppTest, AgentUsageErrorsNameTheFlag) {
  unsetenv("REGATTA_DISCOVERY_DIR");
  const std::string long_dir = absl::StrCat("/tmp/", std::string(100, 'd'));
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"agent", "--node", "n1", "--dir", "/tmp/d"}, "--executor-id: required"},
      {{"agent", "--executor-id", "", "--node", "n1", "--dir", "/tmp/d"},
       "--executor-id: required"},
      {{"agent", "--executor-id", "e1", "--dir", "/tmp/d"}, "--node: required"},
      {{"agent", "--executor-id", "e1", "--node", "", "--dir", "/tmp/d"}, "--node: required"},
      {{"agent", "--executor-id", "e1", "--node", std::string(1025, 'n'), "--dir", "/tmp/d"},
       "--node: at most 1024 bytes"},
      {{"agent", "--executor-id", "e1", "--node", "n1"}, "--dir: required"},
      {{"agent", "--executor-id", "e1", "--node", "n1", "--dir", ""}, "--dir: required"},
      {{"agent", "--executor-id", "e1", "--node", "n1", "--dir", long_dir},
       "--dir: socket path '" + long_dir + "/agent-registration.sock' is 129 bytes"},
  };
  for (const auto& [args, message] : cases) {
    auto r = Run(args);
    EXPECT_EQ(r.code, 2) << absl::StrJoin(args, " ") << ": " << r.err;
    EXPECT_EQ(Lines(r.err), 1) << r.err;
    EXPECT_THAT(r.err, StartsWith("regatta: agent: " + message)) << absl::StrJoin(args, " ");
    EXPECT_THAT(r.err, HasSubstr("(see 'regatta agent --help')"));
    EXPECT_EQ(r.out, "");
  }
}

TEST_F(AppTest, HelpExitsZero) {
  auto r = Run({"queue", "create", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, HasSubstr("--permission"));
  EXPECT_THAT(Run({"watch", "--help"}).out, HasSubstr("--no-follow"));
}

TEST_F(AppTest, JobsListPagesUpToLimitOrAll) {
  auto r = Run({"jobs", "list", "--queue", "q", "--limit", "3"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Lines(r.out), 4);
  EXPECT_THAT(r.err, HasSubstr("showing the first 3 jobs"));
  r = Run({"jobs", "list", "--all", "-o", "json", "--state", "queued", "--label", "a=b"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["jobs"].size(), 7u);
  absl::MutexLock lock(&jobs_.mu);
  EXPECT_EQ(jobs_.requests.back().states(0), v1::JOB_STATE_QUEUED);
  EXPECT_EQ(jobs_.requests.back().labels().at("a"), "b");
}

TEST_F(AppTest, JobsGet) {
  auto r = Run({"jobs", "get", "known", "--spec"});
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("State:"));
  EXPECT_THAT(r.out, HasSubstr("RUNNING"));
  EXPECT_THAT(r.out, HasSubstr("Spec:"));
  r = Run({"jobs", "get", "unknown"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.err, "regatta: jobs get: NOT_FOUND: job unknown not found\n");
}

TEST_F(AppTest, WatchExitsZeroWhenAllSucceed) {
  events_.script = {{"a", v1::JOB_EVENT_TYPE_SUBMITTED},
                    {"b", v1::JOB_EVENT_TYPE_SUBMITTED},
                    {"a", v1::JOB_EVENT_TYPE_SUCCEEDED},
                    {"b", v1::JOB_EVENT_TYPE_SUCCEEDED}};
  auto r = Run({"watch", "q", "s", "--timeout", "10s"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Lines(r.out), 5);
  EXPECT_THAT(r.out, HasSubstr("watch: 2 jobs: 2 succeeded, 0 unsuccessful, 0 unfinished\n"));
}

TEST_F(AppTest, WatchExitsOneWhenAnyFails) {
  events_.script = {{"a", v1::JOB_EVENT_TYPE_SUBMITTED},
                    {"b", v1::JOB_EVENT_TYPE_SUBMITTED},
                    {"a", v1::JOB_EVENT_TYPE_SUCCEEDED},
                    {"b", v1::JOB_EVENT_TYPE_FAILED}};
  auto r = Run({"watch", "q", "s", "-o", "json"});
  EXPECT_EQ(r.code, 1) << r.err;
  std::vector<std::string> lines = absl::StrSplit(r.out, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(nlohmann::json::parse(lines[3])["type"], "JOB_EVENT_TYPE_FAILED");
}

TEST_F(AppTest, WatchTimesOutWithExitTwo) {
  events_.script = {{"a", v1::JOB_EVENT_TYPE_SUBMITTED}, {"a", v1::JOB_EVENT_TYPE_QUEUED}};
  auto r = Run({"watch", "q", "s", "--timeout", "300ms"});
  EXPECT_EQ(r.code, 2);
  EXPECT_EQ(Lines(r.out), 2);
  EXPECT_EQ(r.err,
            "regatta: watch: DEADLINE_EXCEEDED: not finished after 300ms; 1 job: 0 succeeded, 0 "
            "unsuccessful, 1 unfinished\n");
}

TEST_F(AppTest, WatchNoFollowPrintsWhatIsThere) {
  events_.script = {{"a", v1::JOB_EVENT_TYPE_SUBMITTED}, {"a", v1::JOB_EVENT_TYPE_QUEUED}};
  auto r = Run({"watch", "q", "s", "--no-follow"});
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(Lines(r.out), 3);
}

TEST_F(AppTest, UnreachableServerIsUnavailable) {
  std::istringstream in;
  std::ostringstream out, err;
  int code = RunCli({"--server", "127.0.0.1:1", "--timeout", "2s", "queue", "list"}, in, out, err);
  EXPECT_EQ(code, 1);
  EXPECT_THAT(err.str(), StartsWith("regatta: queue list: UNAVAILABLE: "));
  EXPECT_EQ(Lines(err.str()), 1);
}

TEST_F(AppTest, Version) {
  auto r = Run({"version"});
  EXPECT_EQ(r.code, 0);
  EXPECT_THAT(r.out, StartsWith("regatta "));
}

TEST_F(AppTest, UsersHashToken) {
  auto r = Run({"users", "hash-token"}, "abc\n");
  ASSERT_EQ(r.code, 0) << r.err;
  // SHA-256("abc")
  EXPECT_EQ(r.out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\n");
  EXPECT_EQ(Run({"users", "hash-token", "abc"}).out, r.out);
  r = Run({"users", "hash-token"}, "");
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(Lines(r.err), 1);
}

TEST_F(AppTest, UsersHashPassword) {
  auto r = Run({"users", "hash-password"}, "hunter2\n");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("$argon2id$"));
}

}  // namespace
}  // namespace regatta::cli
