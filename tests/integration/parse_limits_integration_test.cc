// Hostile YAML and JSON through the real REST gateway: the server refuses it with
// INVALID_ARGUMENT naming the limit and keeps serving.

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/integration/platform_fixture.h"
#include "tests/unit/rest/http_test_client.h"

namespace regatta::testing {
namespace {

using ::testing::HasSubstr;
using json = nlohmann::json;
using rest::testing::Fetch;
using rest::testing::HttpReply;

// 642 bytes: nine levels of nine aliases (387 million scalars once expanded) in a parameter
// default, where converting the spec to JSON used to allocate until std::bad_alloc.
constexpr char kBillionLaughs[] = R"(pipelineInfo: {name: laughs}
root:
  inputDefinitions:
    parameters:
      laughs:
        parameterType: STRUCT
        defaultValue:
          a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]
          b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]
          c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]
          d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]
          e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]
          f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]
          g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]
          h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]
          i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]
  dag: {tasks: {}}
)";

constexpr char kHello[] = R"(name: hello
tasks:
  say:
    image: alpine:3.20
    command: [echo, hello]
)";

class ParseLimitsIntegrationTest : public PlatformTest {
 protected:
  HttpReply Post(const std::string& target, const json& body) {
    return Fetch(
        HttpPort(), "POST", target, body.dump(),
        {{"Authorization", Basic("alice", "alice-pw")}, {"Content-Type", "application/json"}});
  }

  void ExpectRefusedNamingTheLimit(const HttpReply& reply) {
    EXPECT_EQ(reply.status, 400) << reply.body;
    const json body = json::parse(reply.body, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(body.is_object()) << reply.body;
    EXPECT_EQ(body.value("status", ""), "INVALID_ARGUMENT") << reply.body;
    EXPECT_THAT(body.value("message", ""),
                HasSubstr("YAML aliases expand to more than 1000000 nodes (limit: 1000000 "
                          "expanded nodes)"));
    EXPECT_THAT(body.value("message", ""), HasSubstr("line 14, column "));
  }
};

TEST_F(ParseLimitsIntegrationTest, CreatePipelineRefusesABillionLaughsAndKeepsServing) {
  ExpectRefusedNamingTheLimit(
      Post("/v1/pipelines", {{"name", "laughs"}, {"spec", kBillionLaughs}}));
  HttpReply next = Post("/v1/pipelines", {{"name", "hello"}, {"spec", kHello}});
  EXPECT_EQ(next.status, 200) << next.body;
}

TEST_F(ParseLimitsIntegrationTest, CreateRunWithAnInlineSpecRefusesABillionLaughs) {
  ASSERT_TRUE(CreateQueue("default").ok());
  ExpectRefusedNamingTheLimit(Post("/v1/runs", {{"spec", kBillionLaughs}, {"queue", "default"}}));
  HttpReply list = Fetch(HttpPort(), "GET", "/v1/pipelines", "",
                         {{"Authorization", Basic("alice", "alice-pw")}});
  EXPECT_EQ(list.status, 200) << list.body;
}

}  // namespace
}  // namespace regatta::testing
