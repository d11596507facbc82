#include "src/pipelines/cache/fingerprint.h"

#include <sodium.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "src/common/status_macros.h"

namespace regatta::pipelines::cache {

using nlohmann::json;

namespace {

absl::Status AppendCanonical(const json& value, std::string& out) {
  switch (value.type()) {
    case json::value_t::null:
    case json::value_t::boolean:
    case json::value_t::number_integer:
    case json::value_t::number_unsigned:
      out += value.dump();
      return absl::OkStatus();
    case json::value_t::number_float: {
      double d = value.get<double>();
      if (!std::isfinite(d)) {
        return absl::InvalidArgumentError("NaN and infinity have no canonical JSON form");
      }
      constexpr double kMaxExactInteger = 9007199254740992.0;  // 2^53
      if (d == std::trunc(d) && std::fabs(d) <= kMaxExactInteger) {
        absl::StrAppend(&out, static_cast<int64_t>(d));  // also folds -0.0 into 0
      } else {
        out += value.dump();  // shortest representation that reads back as the same double
      }
      return absl::OkStatus();
    }
    case json::value_t::string:
      try {
        out += value.dump(-1, ' ', false, json::error_handler_t::strict);
      } catch (const json::exception&) {
        return absl::InvalidArgumentError("string is not valid UTF-8");
      }
      return absl::OkStatus();
    case json::value_t::array: {
      out.push_back('[');
      bool first = true;
      for (const json& element : value) {
        if (!first) out.push_back(',');
        first = false;
        RETURN_IF_ERROR(AppendCanonical(element, out));
      }
      out.push_back(']');
      return absl::OkStatus();
    }
    case json::value_t::object: {
      // nlohmann::json objects are std::maps keyed by std::string: iteration is in byte order.
      out.push_back('{');
      bool first = true;
      for (auto it = value.begin(); it != value.end(); ++it) {
        if (!first) out.push_back(',');
        first = false;
        RETURN_IF_ERROR(AppendCanonical(json(it.key()), out));
        out.push_back(':');
        RETURN_IF_ERROR(AppendCanonical(it.value(), out));
      }
      out.push_back('}');
      return absl::OkStatus();
    }
    default:
      return absl::InvalidArgumentError("binary values have no canonical JSON form");
  }
}

std::string Sha256Hex(const std::string& data) {
  std::array<unsigned char, crypto_hash_sha256_BYTES> digest;
  crypto_hash_sha256(digest.data(), reinterpret_cast<const unsigned char*>(data.data()),
                     data.size());
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  hex.reserve(digest.size() * 2);
  for (unsigned char byte : digest) {
    hex.push_back(kDigits[byte >> 4]);
    hex.push_back(kDigits[byte & 0xf]);
  }
  return hex;
}

absl::StatusOr<std::string> HashCanonical(const json& document) {
  static const int sodium_rc = sodium_init();  // once per process, thread-safe
  if (sodium_rc < 0) return absl::InternalError("libsodium initialisation failed");
  ASSIGN_OR_RETURN(std::string canonical, CanonicalJson(document));
  return Sha256Hex(canonical);
}

}  // namespace

absl::StatusOr<std::string> CanonicalJson(const json& value) {
  std::string out;
  RETURN_IF_ERROR(AppendCanonical(value, out));
  return out;
}

absl::StatusOr<std::string> Fingerprint(const FingerprintInputs& inputs) {
  if (!inputs.custom_cache_key.empty()) {
    return HashCanonical(json{{"customCacheKey", inputs.custom_cache_key}});
  }
  json artifacts = json::object();
  for (const auto& [name, list] : inputs.input_artifacts) {
    json identities = json::array();
    for (const ArtifactIdentity& artifact : list) {
      json identity = {{"uri", artifact.uri}};
      if (!artifact.digest.empty()) {
        identity["digest"] = artifact.digest;
      } else {
        identity["id"] = artifact.id;
      }
      identities.push_back(std::move(identity));
    }
    artifacts[name] = std::move(identities);
  }
  json document = {
      {"args", inputs.args},
      {"command", inputs.command},
      {"image", inputs.image},
      {"inputArtifacts", std::move(artifacts)},
      {"inputParameters", json(inputs.parameter_values)},
      {"outputArtifacts", json(inputs.output_artifacts)},
      {"outputParameters", json(inputs.output_parameters)},
  };
  absl::StatusOr<std::string> hash = HashCanonical(document);
  if (!hash.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("cache fingerprint: ", hash.status().message()));
  }
  return hash;
}

}  // namespace regatta::pipelines::cache
