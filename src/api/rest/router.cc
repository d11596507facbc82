#include "src/api/rest/router.h"

#include <algorithm>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace regatta::rest {
namespace {

struct RouteSpec {
  absl::string_view method;
  RouteId id;
  // Segments; "{x}" binds a variable.
  std::vector<std::string> segments;
  std::string verb;
};

RouteSpec Spec(absl::string_view method, absl::string_view pattern, RouteId id) {
  RouteSpec spec{method, id, {}, ""};
  absl::string_view path = pattern.substr(1);
  const size_t slash = path.rfind('/');
  const size_t colon = path.rfind(':');
  if (colon != absl::string_view::npos && (slash == absl::string_view::npos || colon > slash)) {
    spec.verb = std::string(path.substr(colon + 1));
    path = path.substr(0, colon);
  }
  for (absl::string_view segment : absl::StrSplit(path, '/')) {
    spec.segments.emplace_back(segment.data(), segment.size());
  }
  return spec;
}

const std::vector<RouteSpec>& Routes() {
  static const auto* routes = new std::vector<RouteSpec>{
      Spec("GET", "/healthz", RouteId::kHealthz),
      Spec("GET", "/v1/version", RouteId::kVersion),
      Spec("POST", "/v1/queues", RouteId::kCreateQueue),
      Spec("GET", "/v1/queues", RouteId::kListQueues),
      Spec("GET", "/v1/queues/{name}", RouteId::kGetQueue),
      Spec("PUT", "/v1/queues/{name}", RouteId::kUpdateQueue),
      Spec("DELETE", "/v1/queues/{name}", RouteId::kDeleteQueue),
      Spec("POST", "/v1/queues/{name}:cordon", RouteId::kCordonQueue),
      Spec("POST", "/v1/queues/{name}:uncordon", RouteId::kUncordonQueue),
      Spec("POST", "/v1/jobs:submit", RouteId::kSubmitJobs),
      Spec("POST", "/v1/jobs:cancel", RouteId::kCancelJobs),
      Spec("POST", "/v1/jobsets:cancel", RouteId::kCancelJobSet),
      Spec("POST", "/v1/jobs:reprioritize", RouteId::kReprioritizeJobs),
      Spec("POST", "/v1/jobs:preempt", RouteId::kPreemptJobs),
      Spec("POST", "/v1/queues/{name}:cancel", RouteId::kCancelQueueJobs),
      Spec("POST", "/v1/queues/{name}:preempt", RouteId::kPreemptQueueJobs),
      Spec("POST", "/v1/executors/{id}:cancel", RouteId::kCancelExecutorJobs),
      Spec("POST", "/v1/executors/{id}:preempt", RouteId::kPreemptExecutorJobs),
      Spec("POST", "/v1/jobs:status", RouteId::kJobStatus),
      Spec("GET", "/v1/jobs/{id}/status", RouteId::kGetJobStatus),
      Spec("POST", "/v1/jobs:details", RouteId::kJobDetails),
      Spec("GET", "/v1/jobs/{id}", RouteId::kGetJobDetails),
      Spec("POST", "/v1/jobs:list", RouteId::kListJobs),
      Spec("GET", "/v1/jobs", RouteId::kGetListJobs),
      Spec("GET", "/v1/jobs/{id}/logs", RouteId::kGetJobLogs),
      Spec("GET", "/v1/jobs/{id}/report", RouteId::kGetJobReport),
      Spec("GET", "/v1/reports/queues", RouteId::kQueueReport),
      Spec("GET", "/v1/queues/{queue}/jobsets/{jobSet}/events", RouteId::kJobSetEvents),
      Spec("POST", "/v1/pipelines", RouteId::kCreatePipeline),
      Spec("GET", "/v1/pipelines", RouteId::kListPipelines),
      Spec("GET", "/v1/pipelines/{id}", RouteId::kGetPipeline),
      Spec("DELETE", "/v1/pipelines/{id}", RouteId::kDeletePipeline),
      Spec("POST", "/v1/pipelines/{id}/versions", RouteId::kCreatePipelineVersion),
      Spec("GET", "/v1/pipelines/{id}/versions", RouteId::kListPipelineVersions),
      Spec("GET", "/v1/pipeline_versions/{id}", RouteId::kGetPipelineVersion),
      Spec("DELETE", "/v1/pipeline_versions/{id}", RouteId::kDeletePipelineVersion),
      Spec("POST", "/v1/experiments", RouteId::kCreateExperiment),
      Spec("GET", "/v1/experiments", RouteId::kListExperiments),
      Spec("GET", "/v1/experiments/{id}", RouteId::kGetExperiment),
      Spec("DELETE", "/v1/experiments/{id}", RouteId::kDeleteExperiment),
      Spec("POST", "/v1/experiments/{id}:archive", RouteId::kArchiveExperiment),
      Spec("POST", "/v1/experiments/{id}:unarchive", RouteId::kUnarchiveExperiment),
      Spec("GET", "/v1/artifacts/{id}", RouteId::kGetArtifact),
      Spec("GET", "/v1/artifacts/{id}:lineage", RouteId::kGetArtifactLineage),
      Spec("GET", "/v1/runs/{id}/artifacts", RouteId::kListRunArtifacts),
      Spec("GET", "/v1/cache", RouteId::kListCacheEntries),
      Spec("POST", "/v1/cache:prune", RouteId::kPruneCache),
      Spec("POST", "/v1/runs", RouteId::kCreateRun),
      Spec("GET", "/v1/runs", RouteId::kListRuns),
      Spec("GET", "/v1/runs/{id}", RouteId::kGetRun),
      Spec("DELETE", "/v1/runs/{id}", RouteId::kDeleteRun),
      Spec("POST", "/v1/runs/{id}:terminate", RouteId::kTerminateRun),
      Spec("POST", "/v1/runs/{id}:retry", RouteId::kRetryRun),
      Spec("POST", "/v1/runs/{id}:archive", RouteId::kArchiveRun),
      Spec("POST", "/v1/runs/{id}:unarchive", RouteId::kUnarchiveRun),
      Spec("POST", "/v1/recurringruns", RouteId::kCreateRecurringRun),
      Spec("GET", "/v1/recurringruns", RouteId::kListRecurringRuns),
      Spec("GET", "/v1/recurringruns/{id}", RouteId::kGetRecurringRun),
      Spec("DELETE", "/v1/recurringruns/{id}", RouteId::kDeleteRecurringRun),
      Spec("POST", "/v1/recurringruns/{id}:enable", RouteId::kEnableRecurringRun),
      Spec("POST", "/v1/recurringruns/{id}:disable", RouteId::kDisableRecurringRun),
      Spec("POST", "/v1/configurations", RouteId::kApplyConfiguration),
      Spec("GET", "/v1/configurations", RouteId::kListConfigurations),
      Spec("GET", "/v1/configurations/{id}", RouteId::kGetConfiguration),
      Spec("DELETE", "/v1/configurations/{id}", RouteId::kDeleteConfiguration),
      Spec("GET", "/v1/instances", RouteId::kListInstances),
      Spec("GET", "/v1/instances/{id}", RouteId::kGetInstance),
      Spec("GET", "/v1/services", RouteId::kListServices),
      Spec("GET", "/v1/services/{id}", RouteId::kGetService),
      Spec("POST", "/v1/secrets", RouteId::kApplySecret),
      Spec("GET", "/v1/secrets", RouteId::kListSecrets),
      Spec("GET", "/v1/secrets/{id}", RouteId::kGetSecret),
      Spec("DELETE", "/v1/secrets/{id}", RouteId::kDeleteSecret),
      Spec("POST", "/v1/configmaps", RouteId::kApplyConfigMap),
      Spec("GET", "/v1/configmaps", RouteId::kListConfigMaps),
      Spec("GET", "/v1/configmaps/{id}", RouteId::kGetConfigMap),
      Spec("DELETE", "/v1/configmaps/{id}", RouteId::kDeleteConfigMap),
  };
  return *routes;
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// One way to read a path: its segments and an optional custom verb.
struct PathReading {
  std::vector<std::string> segments;  // decoded
  std::string verb;                   // decoded
};

bool Matches(const RouteSpec& spec, const PathReading& reading,
             absl::flat_hash_map<std::string, std::string>* vars) {
  if (spec.verb != reading.verb || spec.segments.size() != reading.segments.size()) return false;
  absl::flat_hash_map<std::string, std::string> bound;
  for (size_t i = 0; i < spec.segments.size(); ++i) {
    const std::string& want = spec.segments[i];
    const std::string& got = reading.segments[i];
    if (want.size() > 2 && want.front() == '{' && want.back() == '}') {
      if (got.empty()) return false;
      bound[want.substr(1, want.size() - 2)] = got;
    } else if (want != got) {
      return false;
    }
  }
  *vars = std::move(bound);
  return true;
}

}  // namespace

bool IsValidUtf8(absl::string_view text) {
  const auto* p = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* end = p + text.size();
  while (p < end) {
    const unsigned char c = *p;
    int extra;
    uint32_t min;
    uint32_t cp;
    if (c < 0x80) {
      ++p;
      continue;
    } else if ((c & 0xE0) == 0xC0) {
      extra = 1, min = 0x80, cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      extra = 2, min = 0x800, cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      extra = 3, min = 0x10000, cp = c & 0x07;
    } else {
      return false;
    }
    if (end - p <= extra) return false;
    for (int i = 1; i <= extra; ++i) {
      if ((p[i] & 0xC0) != 0x80) return false;
      cp = (cp << 6) | (p[i] & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8.
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return false;
    p += extra + 1;
  }
  return true;
}

absl::StatusOr<std::string> PercentDecode(absl::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      const int hi = i + 1 < text.size() ? HexValue(text[i + 1]) : -1;
      const int lo = i + 2 < text.size() ? HexValue(text[i + 2]) : -1;
      if (hi < 0 || lo < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("invalid percent-encoding at offset ", i, " of \"",
                         text.substr(0, std::min<size_t>(text.size(), 200)), "\""));
      }
      out.push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else {
      out.push_back(c);
    }
  }
  if (!IsValidUtf8(out)) {
    return absl::InvalidArgumentError("percent-decoded text is not valid UTF-8");
  }
  return out;
}

absl::StatusOr<QueryParams> ParseQuery(absl::string_view query) {
  QueryParams params;
  for (absl::string_view part : absl::StrSplit(query, '&', absl::SkipEmpty())) {
    const size_t eq = part.find('=');
    absl::StatusOr<std::string> key = PercentDecode(part.substr(0, eq), true);
    if (!key.ok()) return key.status();
    std::string value;
    if (eq != absl::string_view::npos) {
      absl::StatusOr<std::string> decoded = PercentDecode(part.substr(eq + 1), true);
      if (!decoded.ok()) return decoded.status();
      value = *std::move(decoded);
    }
    params.emplace_back(*std::move(key), std::move(value));
  }
  return params;
}

absl::StatusOr<RouteResult> MatchRoute(absl::string_view method, absl::string_view path) {
  RouteResult result;
  if (path.empty() || path.front() != '/') return result;
  std::vector<absl::string_view> raw = absl::StrSplit(path.substr(1), '/');

  // Readings to try, most specific first: with the custom verb split off, then without.
  std::vector<PathReading> readings;
  auto decode_all = [&](const std::vector<absl::string_view>& segments,
                        absl::string_view verb) -> absl::Status {
    PathReading reading;
    for (absl::string_view segment : segments) {
      absl::StatusOr<std::string> decoded = PercentDecode(segment, false);
      if (!decoded.ok()) return decoded.status();
      reading.segments.push_back(*std::move(decoded));
    }
    absl::StatusOr<std::string> decoded_verb = PercentDecode(verb, false);
    if (!decoded_verb.ok()) return decoded_verb.status();
    reading.verb = *std::move(decoded_verb);
    readings.push_back(std::move(reading));
    return absl::OkStatus();
  };
  const absl::string_view last = raw.back();
  const size_t colon = last.rfind(':');
  if (colon != absl::string_view::npos) {
    std::vector<absl::string_view> segments = raw;
    segments.back() = last.substr(0, colon);
    if (absl::Status s = decode_all(segments, last.substr(colon + 1)); !s.ok()) return s;
  }
  if (absl::Status s = decode_all(raw, ""); !s.ok()) return s;

  std::vector<std::string> allowed;
  for (const PathReading& reading : readings) {
    for (const RouteSpec& spec : Routes()) {
      absl::flat_hash_map<std::string, std::string> vars;
      if (!Matches(spec, reading, &vars)) continue;
      if (spec.method == method) {
        result.kind = RouteResult::Kind::kFound;
        result.match = RouteMatch{spec.id, std::move(vars)};
        return result;
      }
      std::string m(spec.method.data(), spec.method.size());
      if (std::find(allowed.begin(), allowed.end(), m) == allowed.end()) allowed.push_back(m);
    }
    // A path that names a custom method of some route (PUT /v1/queues/x:cancel) is that route
    // with the wrong method, not another route whose last variable happens to hold a ':'.
    if (!allowed.empty()) break;
  }
  if (!allowed.empty()) {
    result.kind = RouteResult::Kind::kMethodNotAllowed;
    result.allowed = absl::StrJoin(allowed, ", ");
  }
  return result;
}

}  // namespace regatta::rest
