#ifndef REGATTA_TESTS_UNIT_CLI_FAKE_SERVER_TEST_BASE_H_
#define REGATTA_TESTS_UNIT_CLI_FAKE_SERVER_TEST_BASE_H_

// A fixture for running CLI verbs against fake services on an in-process gRPC server.

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "src/cli/app.h"

namespace regatta::cli {

class FakeServerCliTest : public ::testing::Test {
 protected:
  // Serves `service` (which must outlive the test) on a free loopback port.
  void StartServer(grpc::Service* service) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port_);
    builder.RegisterService(service);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
  }
  void TearDown() override {
    if (server_ == nullptr) return;
    server_->Shutdown();
    server_.reset();  // before the derived fixture's services go
  }

  struct Result {
    int code;
    std::string out;
    std::string err;
  };

  // The command line `args` against the server, with empty standard input.
  Result Run(std::vector<std::string> args) {
    args.insert(args.begin(), {"--server", absl::StrCat("127.0.0.1:", port_)});
    std::istringstream in;
    std::ostringstream out, err;
    int code = RunCli(args, in, out, err);
    return {code, out.str(), err.str()};
  }

  int port_ = 0;
  std::unique_ptr<grpc::Server> server_;
};

}  // namespace regatta::cli

#endif  // REGATTA_TESTS_UNIT_CLI_FAKE_SERVER_TEST_BASE_H_
