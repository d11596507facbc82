#ifndef REGATTA_SRC_PIPELINES_PLACEHOLDERS_PLACEHOLDERS_H_
#define REGATTA_SRC_PIPELINES_PLACEHOLDERS_PLACEHOLDERS_H_

// Resolves the Kubeflow Pipelines placeholders in a container's command and args, as the kfp
// launcher does before starting the step:
//   {{$}}                                        the ExecutorInput JSON (see ExecutorInputJson)
//   {{$.inputs.parameters['x']}}                 a string as is; numbers, bools, lists, maps as
//   JSON
//   {{$.inputs.artifacts['a'].uri|path|metadata}}
//   {{$.outputs.parameters['y'].output_file}}
//   {{$.outputs.artifacts['a'].uri|path|metadata}}
//   {{$.outputs.output_file}}                    where the step may write its ExecutorOutput JSON
//   {{$.pipeline_job_name}} and the other run/task values of ExecutorValues::pipeline_values
// Placeholders may sit inside longer strings ("--n={{$.inputs.parameters['n']}}"). An argument
// that is a JSON object {"Concat": [...]} becomes one argument (the pieces joined); one that is
// {"IfPresent": {"InputName": n, "Then": x, "Else": y}} becomes the arguments of Then when input
// n (parameter or artifact) is present, else of Else (or none); x and y are a string or a list,
// and the pieces nest. kfp 2.x still writes both forms as JSON strings in args.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace regatta::pipelines::placeholders {

struct RuntimeArtifact {
  std::string name;  // the store's artifact name; empty for outputs not yet recorded
  std::string uri;
  // Where the step reads or writes it; empty: LocalPathForUri(uri).
  std::string local_path;
  std::string schema_title = "system.Artifact";
  std::string schema_version = "0.0.1";
  nlohmann::json metadata = nlohmann::json::object();
};

// The resolved values of one execution of a container task.
struct ExecutorValues {
  std::map<std::string, nlohmann::json> parameter_values;
  std::map<std::string, std::vector<RuntimeArtifact>> input_artifacts;
  std::map<std::string, std::string> output_parameter_files;  // output name -> file path
  std::map<std::string, std::vector<RuntimeArtifact>> output_artifacts;
  std::string output_file;  // e.g. <task dir>/output_metadata.json
  // The kfp SDK's run-level placeholders (dsl.PIPELINE_JOB_NAME_PLACEHOLDER etc.), keyed without
  // "$.": pipeline_job_name, pipeline_job_resource_name, pipeline_job_uuid, pipeline_task_name,
  // pipeline_task_uuid, pipeline_root, pipeline_job_create_time_utc,
  // pipeline_job_schedule_time_utc. The SDK puts them in runtimeValue constants of task inputs,
  // so the driver resolves those constants with ResolveString too.
  std::map<std::string, std::string> pipeline_values;
};

// The path a step reads or writes an artifact at, as the kfp launcher gives it:
//   file:///root/x (or file://localhost/root/x) -> /root/x   (Regatta's local object store)
//   /root/x                                       -> /root/x
//   gs://b/k -> /gcs/b/k, minio://b/k -> /minio/b/k, s3://b/k -> /s3/b/k
// The last three are the kfp conventions for buckets mounted into the step; in a step's
// container Regatta mounts them from the buckets directory (HostPathForUri). INVALID_ARGUMENT
// for other schemes and relative paths.
absl::StatusOr<std::string> LocalPathForUri(absl::string_view uri);

// Where the artifact is on this machine: LocalPathForUri, except that a bucket uri is under
// `buckets_dir` (gs://b/k -> <buckets_dir>/gcs/b/k). A buckets_dir of "/" gives kfp's own
// paths, for machines with the buckets FUSE-mounted there.
absl::StatusOr<std::string> HostPathForUri(absl::string_view uri, absl::string_view buckets_dir);

// The ExecutorInput as kfp's JSON mapping of the proto writes it (camelCase; empty maps omitted):
//   {"inputs": {"parameterValues": {...}, "artifacts": {"a": {"artifacts": [{"name", "type":
//    {"schemaTitle", "schemaVersion"}, "uri", "metadata"}]}}},
//    "outputs": {"parameters": {"y": {"outputFile"}}, "artifacts": {...}, "outputFile"}}
// A file:// uri is written as its path, as kfp's local runners do: the kfp executor reads the
// path of a local artifact from its uri as is.
nlohmann::json ExecutorInputJson(const ExecutorValues& values);

// Resolves every element of `args` (a command or an args list); Concat and IfPresent arguments may
// produce zero or several. Errors are INVALID_ARGUMENT prefixed with `<field>[<index>]: ` and name
// the placeholder, e.g. "args[1]: unknown placeholder '{{$.inputs.parameter['x']}}'".
absl::StatusOr<std::vector<std::string>> ResolveArgs(const std::vector<std::string>& args,
                                                     const ExecutorValues& values,
                                                     absl::string_view field = "args");

// Resolves the placeholders inside one string (no Concat/IfPresent interpretation).
absl::StatusOr<std::string> ResolveString(absl::string_view text, const ExecutorValues& values);

}  // namespace regatta::pipelines::placeholders

#endif  // REGATTA_SRC_PIPELINES_PLACEHOLDERS_PLACEHOLDERS_H_
