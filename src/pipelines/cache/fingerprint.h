#ifndef REGATTA_SRC_PIPELINES_CACHE_FINGERPRINT_H_
#define REGATTA_SRC_PIPELINES_CACHE_FINGERPRINT_H_

// The cache fingerprint of a container task: SHA-256 (hex) of the canonical JSON of everything
// that determines its outputs. Two executions with equal fingerprints may share outputs.

#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"

namespace regatta::pipelines::cache {

// What identifies an input artifact's content: its uri plus a content digest when one is known,
// else the store's artifact id (a new artifact at the same uri then misses the cache).
struct ArtifactIdentity {
  std::string uri;
  std::string digest;  // e.g. "sha256:<hex>"; preferred over `id` when non-empty
  std::string id;
};

struct FingerprintInputs {
  // Input parameter values by name, as JSON.
  std::map<std::string, nlohmann::json> parameter_values;
  // Input artifacts by input name; a list because kfp inputs may be lists of artifacts.
  std::map<std::string, std::vector<ArtifactIdentity>> input_artifacts;
  // Output specs: parameter name -> parameterType (e.g. "STRING"), artifact name -> schema title
  // and version (e.g. "system.Model@0.0.1").
  std::map<std::string, std::string> output_parameters;
  std::map<std::string, std::string> output_artifacts;
  std::string image;
  std::vector<std::string> command;
  std::vector<std::string> args;
  // cachingOptions.cacheKey; when non-empty it alone determines the fingerprint.
  std::string custom_cache_key;
};

// JSON with object keys sorted (by bytes), no whitespace, and numbers normalised: a double with an
// integral value in the exactly representable range (|x| <= 2^53) is written as an integer, so
// 3.0 and 3 are the same value (kfp carries integers as doubles); -0.0 is 0; other doubles take
// their shortest round-trip form. INVALID_ARGUMENT on NaN/infinity or invalid UTF-8 in a string.
absl::StatusOr<std::string> CanonicalJson(const nlohmann::json& value);

// 64 lowercase hex characters. Without a custom key: SHA-256 of the canonical JSON of
//   {"args", "command", "image", "inputArtifacts": {name: [{"digest"|"id", "uri"}]},
//    "inputParameters", "outputArtifacts", "outputParameters"}.
// With one: SHA-256 of the canonical JSON of {"customCacheKey": key}, so a custom key never equals
// a computed fingerprint and equal keys share the cache whatever else differs.
absl::StatusOr<std::string> Fingerprint(const FingerprintInputs& inputs);

}  // namespace regatta::pipelines::cache

#endif  // REGATTA_SRC_PIPELINES_CACHE_FINGERPRINT_H_
