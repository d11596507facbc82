#include "src/pipelines/placeholders/placeholders.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::pipelines::placeholders {
namespace {

using ::nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ExecutorValues Values() {
  ExecutorValues values;
  values.parameter_values = {{"name", "alice"}, {"n", 3.0},       {"ratio", 0.25},
                             {"flag", true},    {"list", {1, 2}}, {"map", {{"k", "v"}}},
                             {"big", 12},       {"empty", ""}};
  RuntimeArtifact data;
  data.name = "artifacts/41";
  data.uri = "file:///var/lib/regatta/objects/p/r/producer/u1/data";
  data.schema_title = "system.Dataset";
  data.metadata = {{"rows", 10}};
  values.input_artifacts["data"] = {data};
  RuntimeArtifact remote;
  remote.uri = "s3://bucket/key/model";
  values.input_artifacts["remote"] = {remote};
  RuntimeArtifact model;
  model.uri = "file:///var/lib/regatta/objects/p/r/train/u2/model";
  model.schema_title = "system.Model";
  values.output_artifacts["model"] = {model};
  RuntimeArtifact mounted;
  mounted.uri = "file:///store/x";
  mounted.local_path = "/mnt/work/x";
  values.output_artifacts["mounted"] = {mounted};
  values.output_parameter_files["Output"] = "/tmp/task/outputs/Output";
  values.output_file = "/tmp/task/output_metadata.json";
  return values;
}

std::vector<std::string> Resolve(const std::vector<std::string>& args,
                                 const ExecutorValues& values = Values()) {
  absl::StatusOr<std::vector<std::string>> out = ResolveArgs(args, values);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : std::vector<std::string>{"<error>"};
}

std::string Error(const std::vector<std::string>& args, const ExecutorValues& values = Values()) {
  absl::StatusOr<std::vector<std::string>> out = ResolveArgs(args, values);
  EXPECT_FALSE(out.ok());
  return out.ok() ? "" : std::string(out.status().message());
}

TEST(LocalPathForUriTest, Mapping) {
  EXPECT_EQ(*LocalPathForUri("file:///root/x"), "/root/x");
  EXPECT_EQ(*LocalPathForUri("file://localhost/root/x"), "/root/x");
  EXPECT_EQ(*LocalPathForUri("/root/x"), "/root/x");
  EXPECT_EQ(*LocalPathForUri("gs://b/k/f"), "/gcs/b/k/f");
  EXPECT_EQ(*LocalPathForUri("minio://b/k"), "/minio/b/k");
  EXPECT_EQ(*LocalPathForUri("s3://b/k"), "/s3/b/k");
  EXPECT_THAT(LocalPathForUri("http://h/x").status().message(), HasSubstr("'http://h/x'"));
  EXPECT_THAT(LocalPathForUri("file://host/x").status().message(), HasSubstr("absolute"));
  EXPECT_FALSE(LocalPathForUri("relative/x").ok());
}

TEST(HostPathForUriTest, BucketsLiveUnderTheBucketsDirectory) {
  EXPECT_EQ(*HostPathForUri("gs://b/k/f", "/data/buckets"), "/data/buckets/gcs/b/k/f");
  EXPECT_EQ(*HostPathForUri("minio://b/k", "/data/buckets/"), "/data/buckets/minio/b/k");
  EXPECT_EQ(*HostPathForUri("s3://b/k", "/data/buckets"), "/data/buckets/s3/b/k");
  // "/" keeps kfp's own mount paths (buckets FUSE-mounted there).
  EXPECT_EQ(*HostPathForUri("gs://b/k", "/"), "/gcs/b/k");
  // Local uris are where they say.
  EXPECT_EQ(*HostPathForUri("file:///root/x", "/data/buckets"), "/root/x");
  EXPECT_EQ(*HostPathForUri("/root/x", "/data/buckets"), "/root/x");
  EXPECT_FALSE(HostPathForUri("http://h/x", "/data/buckets").ok());
}

TEST(PlaceholdersTest, InputParametersRenderLikeTheLauncher) {
  EXPECT_THAT(Resolve({"{{$.inputs.parameters['name']}}", "{{$.inputs.parameters['n']}}",
                       "{{$.inputs.parameters['ratio']}}", "{{$.inputs.parameters['flag']}}",
                       "{{$.inputs.parameters['list']}}", "{{$.inputs.parameters['map']}}",
                       "{{$.inputs.parameters['big']}}", "{{$.inputs.parameters[\"empty\"]}}"}),
              ElementsAre("alice", "3", "0.25", "true", "[1,2]", "{\"k\":\"v\"}", "12", ""));
}

TEST(PlaceholdersTest, NumbersRenderLikeGoFormatFloatF) {
  ExecutorValues values;
  values.parameter_values = {{"a", 1e-7},     {"b", 1e21}, {"c", -2.5},
                             {"d", 123456.0}, {"e", -0.0}, {"f", 0.1 + 0.2}};
  EXPECT_THAT(Resolve({"{{$.inputs.parameters['a']}}", "{{$.inputs.parameters['b']}}",
                       "{{$.inputs.parameters['c']}}", "{{$.inputs.parameters['d']}}",
                       "{{$.inputs.parameters['e']}}", "{{$.inputs.parameters['f']}}"},
                      values),
              ElementsAre("0.0000001", "1000000000000000000000", "-2.5", "123456", "-0",
                          "0.30000000000000004"));
}

TEST(PlaceholdersTest, PlaceholdersInsideLongerStrings) {
  EXPECT_THAT(Resolve({"--name={{$.inputs.parameters['name']}} n={{$.inputs.parameters['n']}}!",
                       "echo hi > {{$.outputs.parameters['Output'].output_file}}"}),
              ElementsAre("--name=alice n=3!", "echo hi > /tmp/task/outputs/Output"));
}

TEST(PlaceholdersTest, Artifacts) {
  EXPECT_THAT(
      Resolve({"{{$.inputs.artifacts['data'].uri}}", "{{$.inputs.artifacts['data'].path}}",
               "{{$.inputs.artifacts['data'].metadata}}", "{{$.inputs.artifacts['remote'].path}}",
               "{{$.outputs.artifacts['model'].uri}}", "{{$.outputs.artifacts['model'].path}}",
               "{{$.outputs.artifacts['model'].metadata}}",
               "{{$.outputs.artifacts['mounted'].path}}", "{{$.outputs.output_file}}"}),
      ElementsAre("file:///var/lib/regatta/objects/p/r/producer/u1/data",
                  "/var/lib/regatta/objects/p/r/producer/u1/data", "{\"rows\":10}",
                  "/s3/bucket/key/model", "file:///var/lib/regatta/objects/p/r/train/u2/model",
                  "/var/lib/regatta/objects/p/r/train/u2/model", "{}", "/mnt/work/x",
                  "/tmp/task/output_metadata.json"));
}

TEST(PlaceholdersTest, ExecutorInputJson) {
  std::vector<std::string> out = Resolve({"{{$}}"});
  ASSERT_EQ(out.size(), 1u);
  json input = json::parse(out[0]);
  EXPECT_EQ(input, ExecutorInputJson(Values()));
  EXPECT_EQ(input["inputs"]["parameterValues"]["name"], "alice");
  EXPECT_EQ(input["inputs"]["parameterValues"]["n"], 3.0);
  const json& data = input["inputs"]["artifacts"]["data"]["artifacts"][0];
  EXPECT_EQ(data["name"], "artifacts/41");
  // A local uri is its path, which the kfp executor takes as the artifact's path.
  EXPECT_EQ(data["uri"], "/var/lib/regatta/objects/p/r/producer/u1/data");
  EXPECT_EQ(data["type"]["schemaTitle"], "system.Dataset");
  EXPECT_EQ(data["type"]["schemaVersion"], "0.0.1");
  EXPECT_EQ(data["metadata"]["rows"], 10);
  EXPECT_EQ(input["outputs"]["parameters"]["Output"]["outputFile"], "/tmp/task/outputs/Output");
  EXPECT_EQ(input["outputs"]["artifacts"]["model"]["artifacts"][0]["type"]["schemaTitle"],
            "system.Model");
  EXPECT_EQ(input["outputs"]["outputFile"], "/tmp/task/output_metadata.json");

  // Empty maps are left out, as the proto's JSON mapping does.
  json bare = ExecutorInputJson(ExecutorValues{});
  EXPECT_EQ(bare, json::parse(R"({"inputs": {}, "outputs": {}})"));
}

TEST(PlaceholdersTest, Concat) {
  EXPECT_THAT(Resolve({R"({"Concat": ["--n=", "{{$.inputs.parameters['n']}}", "/x"]})"}),
              ElementsAre("--n=3/x"));
  EXPECT_THAT(Resolve({R"({"Concat": ["a", {"Concat": ["b", "c"]}]})"}), ElementsAre("abc"));
  EXPECT_THAT(Resolve({R"({"Concat": []})"}), ElementsAre(""));
}

TEST(PlaceholdersTest, IfPresent) {
  const std::string present =
      R"({"IfPresent": {"InputName": "name",)"
      R"( "Then": ["--name", "{{$.inputs.parameters['name']}}"], "Else": ["--anonymous"]}})";
  const std::string absent =
      R"({"IfPresent": {"InputName": "missing",)"
      R"( "Then": ["--m", "{{$.inputs.parameters['missing']}}"], "Else": "--none"}})";
  const std::string absent_no_else = R"({"IfPresent": {"InputName": "missing", "Then": ["-m"]}})";
  const std::string artifact = R"({"IfPresent": {"InputName": "data", "Then": "-d"}})";
  EXPECT_THAT(Resolve({"cmd", present, absent, absent_no_else, artifact, "end"}),
              ElementsAre("cmd", "--name", "alice", "--none", "-d", "end"));
  EXPECT_THAT(Resolve({absent_no_else}), IsEmpty());
}

TEST(PlaceholdersTest, IfPresentAndConcatNest) {
  const std::string nested =
      R"({"Concat": ["my-prefix-", {"IfPresent": {"InputName": "name", "Then":)"
      R"( [{"Concat": ["infix-", "{{$.inputs.parameters['name']}}"]}]}}]})";
  EXPECT_THAT(Resolve({nested}), ElementsAre("my-prefix-infix-alice"));
  ExecutorValues values = Values();
  values.parameter_values.erase("name");
  EXPECT_THAT(Resolve({nested}, values), ElementsAre("my-prefix-"));
}

TEST(PlaceholdersTest, OtherJsonAndShellTextPassThrough) {
  EXPECT_THAT(Resolve({R"({"a": 1})", "{\"Concat\": [", "awk '{{$1}}'", "{{ $.x }}", "{}"}),
              ElementsAre(R"({"a": 1})", "{\"Concat\": [", "awk '{{$1}}'", "{{ $.x }}", "{}"));
}

TEST(PlaceholdersTest, ErrorsNameTheArgumentAndThePlaceholder) {
  EXPECT_EQ(Error({"ok", "{{$.inputs.parameter['x']}}"}),
            "args[1]: unknown placeholder '{{$.inputs.parameter['x']}}'");
  EXPECT_THAT(Error({"{{$.inputs.parameters['x']}}"}),
              HasSubstr("args[0]: {{$.inputs.parameters['x']}}: no input parameter 'x'"));
  EXPECT_THAT(Error({"{{$.outputs.parameters['y'].output_file}}"}),
              HasSubstr("no output parameter 'y'"));
  EXPECT_THAT(Error({"{{$.inputs.artifacts['a'].uri}}"}), HasSubstr("no input artifact 'a'"));
  EXPECT_THAT(Error({"{{$.outputs.artifacts['a'].path}}"}), HasSubstr("no output artifact 'a'"));
  EXPECT_THAT(Error({"{{$.inputs.artifacts['data'].size}}"}), HasSubstr("unknown placeholder"));
  EXPECT_THAT(Error({"{{$.outputs.parameters['Output']}}"}), HasSubstr("unknown placeholder"));
  EXPECT_THAT(Error({"{{$.inputs.parameters['name'].x}}"}), HasSubstr("unknown placeholder"));
  EXPECT_THAT(Error({"{{$.inputs.parameters['name}}"}), HasSubstr("unknown placeholder"));
  EXPECT_THAT(Error({"{{$.pipeline_job_name}}"}),
              HasSubstr("args[0]: {{$.pipeline_job_name}}: no value for this run"));
  EXPECT_THAT(Error({"{{$.pipeline_job_nam}}"}),
              HasSubstr("unknown placeholder '{{$.pipeline_job_nam}}'"));
  EXPECT_THAT(Error({"x {{$.inputs.parameters['n']"}), HasSubstr("unterminated placeholder"));
  EXPECT_THAT(Error({R"({"Concat": "x"})"}), HasSubstr("Concat: expected a list"));
  EXPECT_THAT(Error({R"({"IfPresent": {"Then": "x"}})"}), HasSubstr("string InputName"));
  EXPECT_THAT(Error({R"({"IfPresent": {"InputName": "n", "Than": "x"}})"}),
              HasSubstr("unknown key 'Than'"));
  EXPECT_THAT(Error({R"({"Concat": [1]})"}),
              HasSubstr("expected a string, a Concat or an IfPresent"));
  EXPECT_THAT(Error({R"({"Concat": ["{{$.nope}}"]})"}), HasSubstr("unknown placeholder"));

  ExecutorValues values = Values();
  values.input_artifacts["data"][0].uri = "https://example.com/d";
  EXPECT_THAT(Error({"{{$.inputs.artifacts['data'].path}}"}, values),
              HasSubstr("no local path for this scheme"));
  EXPECT_EQ(Resolve({"{{$.inputs.artifacts['data'].uri}}"}, values)[0], "https://example.com/d");
}

TEST(PlaceholdersTest, DeepNestingIsRefused) {
  std::string nested = "\"x\"";
  for (int i = 0; i < 40; ++i) nested = "{\"Concat\": [" + nested + "]}";
  EXPECT_THAT(Error({nested}), HasSubstr("nested too deeply"));
}

TEST(PlaceholdersTest, PipelineValues) {
  ExecutorValues values;
  values.pipeline_values = {{"pipeline_job_name", "run-1"},
                            {"pipeline_task_name", "train"},
                            {"pipeline_job_create_time_utc", "2026-11-29T18:00:00Z"}};
  EXPECT_EQ(*ResolveString("{{$.pipeline_job_name}}/{{$.pipeline_task_name}} at "
                           "{{$.pipeline_job_create_time_utc}}",
                           values),
            "run-1/train at 2026-11-29T18:00:00Z");
}

TEST(PlaceholdersTest, ResolveStringAndCustomFieldName) {
  EXPECT_EQ(*ResolveString("n={{$.inputs.parameters['n']}}", Values()), "n=3");
  absl::StatusOr<std::vector<std::string>> out = ResolveArgs({"{{$.nope}}"}, Values(), "command");
  EXPECT_THAT(out.status().message(), HasSubstr("command[0]: unknown placeholder"));
}

}  // namespace
}  // namespace regatta::pipelines::placeholders
