#include "src/observability/http_endpoints.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/api/rest/errors.h"
#include "src/observability/state_collector.h"

namespace regatta::observability {
namespace {

struct Check {
  std::string name;
  std::string failure;  // empty: passed
};

std::string ViewsFailure(const ReadinessSources& s) {
  if (s.log == nullptr || s.ingester == nullptr) return "";
  const absl::Time now = s.clock != nullptr ? s.clock->Now() : absl::Now();
  absl::StatusOr<ViewLag> lag = MeasureViewLag(s.log, s.ingester->IngestedOffset(), now);
  if (!lag.ok()) return absl::StrCat("cannot read the log: ", lag.status().message());
  if (lag->age <= s.max_view_lag) return "";
  return absl::StrFormat("%d log records not applied yet, the oldest %s ago (bound %s)",
                         lag->records,
                         absl::FormatDuration(absl::Trunc(lag->age, absl::Milliseconds(1))),
                         absl::FormatDuration(s.max_view_lag));
}

}  // namespace

rest::HttpResponse Readiness(const ReadinessSources& s) {
  std::vector<Check> checks;
  if (s.log != nullptr) {
    absl::Status health = s.log->Health();
    checks.push_back({"log", health.ok() ? "" : std::string(health.message())});
  }
  checks.push_back({"views", ViewsFailure(s)});
  if (s.reports != nullptr) {
    checks.push_back({"scheduler", s.reports->ready() ? "" : "no scheduling cycle completed yet"});
  }
  if (s.serving != nullptr) {
    checks.push_back({"api", s.serving->load() ? "" : "not serving (starting or stopping)"});
  }
  rest::HttpResponse response;
  response.content_type = "text/plain; charset=utf-8";
  bool ready = true;
  for (const Check& c : checks) {
    if (c.failure.empty()) {
      absl::StrAppend(&response.body, "[+]", c.name, " ok\n");
    } else {
      ready = false;
      absl::StrAppend(&response.body, "[-]", c.name, " failed: ", c.failure, "\n");
    }
  }
  response.body += ready ? "readyz check passed\n" : "readyz check failed\n";
  response.status = ready ? 200 : 503;
  return response;
}

rest::HttpResponse MetricsPage(const MetricsEndpointOptions& options,
                               const rest::HttpRequest& request) {
  if (options.require_auth) {
    absl::StatusOr<auth::Principal> principal =
        options.authenticator == nullptr
            ? absl::StatusOr<auth::Principal>(absl::UnauthenticatedError("no authenticator"))
            : options.authenticator->Authenticate(request.authorization);
    if (!principal.ok()) return rest::ErrorResponse(principal.status());
  }
  rest::HttpResponse response;
  response.content_type = "text/plain; version=0.0.4; charset=utf-8";
  response.body = options.metrics->Render();
  return response;
}

std::vector<rest::PlainRoute> ObservabilityRoutes(MetricsEndpointOptions metrics,
                                                  ReadinessSources readiness) {
  std::vector<rest::PlainRoute> routes;
  routes.push_back({"/metrics", [metrics](const rest::HttpRequest& request) {
                      return MetricsPage(metrics, request);
                    }});
  routes.push_back(
      {"/readyz", [readiness](const rest::HttpRequest&) { return Readiness(readiness); }});
  return routes;
}

}  // namespace regatta::observability
