#include "src/api/auth/oidc/claims.h"

#include <cmath>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "src/common/status_macros.h"

namespace regatta::auth::oidc {
namespace {

using nlohmann::json;

constexpr size_t kMaxGroups = 1000;
constexpr size_t kMaxNameBytes = 256;

absl::Status Refuse(absl::string_view why) { return absl::UnauthenticatedError(why); }

std::string Quote(absl::string_view text) {
  // Names come from the token; keep messages short.
  std::string quoted = json(std::string(text.substr(0, 100))).dump();
  return text.size() > 100 ? quoted + "..." : quoted;
}

// The claim `name` at top level, else along its dot-separated path; null if absent.
const json* FindClaim(const json& claims, const std::string& name) {
  auto it = claims.find(name);
  if (it != claims.end()) return &*it;
  const json* node = &claims;
  for (absl::string_view part : absl::StrSplit(name, '.')) {
    if (!node->is_object()) return nullptr;
    auto child = node->find(std::string(part));
    if (child == node->end()) return nullptr;
    node = &*child;
  }
  return node == &claims ? nullptr : node;
}

// A NumericDate (RFC 7519 section 2): seconds since the epoch, possibly fractional.
absl::StatusOr<absl::Time> NumericDate(const json& claims, const char* name, bool required) {
  auto it = claims.find(name);
  if (it == claims.end()) {
    if (required) return Refuse(absl::StrCat("token has no \"", name, "\" claim"));
    return absl::InfinitePast();
  }
  if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0 ||
      it->get<double>() > 1e11) {
    return Refuse(absl::StrCat("token claim \"", name, "\" is not a date in seconds"));
  }
  return absl::FromUnixSeconds(0) + absl::Seconds(it->get<double>());
}

std::string Rfc3339(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", t, absl::UTCTimeZone());
}

absl::Status CheckAudience(const json& claims, const std::string& audience) {
  auto it = claims.find("aud");
  if (it == claims.end()) return Refuse("token has no \"aud\" claim");
  std::vector<std::string> audiences;
  if (it->is_string()) {
    audiences.push_back(it->get<std::string>());
  } else if (it->is_array()) {
    for (const json& a : *it) {
      if (!a.is_string()) return Refuse("token claim \"aud\" is not a string or list of strings");
      audiences.push_back(a.get<std::string>());
    }
  } else {
    return Refuse("token claim \"aud\" is not a string or list of strings");
  }
  for (const std::string& a : audiences) {
    if (a == audience) return absl::OkStatus();
  }
  std::vector<std::string> quoted;
  for (size_t i = 0; i < audiences.size() && i < 5; ++i) quoted.push_back(Quote(audiences[i]));
  return Refuse(absl::StrCat("token audience [", absl::StrJoin(quoted, ", "),
                             audiences.size() > 5 ? ", ...]" : "]", " is not ", Quote(audience)));
}

absl::Status CheckTimes(const json& claims, const ClaimRules& rules, absl::Time now,
                        absl::Time* expires) {
  ASSIGN_OR_RETURN(*expires, NumericDate(claims, "exp", /*required=*/true));
  if (now > *expires + rules.clock_skew) {
    return Refuse(absl::StrCat("token expired at ", Rfc3339(*expires)));
  }
  ASSIGN_OR_RETURN(absl::Time not_before, NumericDate(claims, "nbf", /*required=*/false));
  if (now + rules.clock_skew < not_before) {
    return Refuse(absl::StrCat("token is not valid before ", Rfc3339(not_before)));
  }
  ASSIGN_OR_RETURN(absl::Time issued, NumericDate(claims, "iat", /*required=*/false));
  if (now + rules.clock_skew < issued) {
    return Refuse(absl::StrCat("token is issued in the future, at ", Rfc3339(issued)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<std::string>> Groups(const json& claims, const ClaimRules& rules) {
  std::vector<std::string> groups;
  const json* claim = FindClaim(claims, rules.groups_claim);
  if (claim == nullptr || claim->is_null()) return groups;  // no groups: queue verbs by user only
  const std::string wrong =
      absl::StrCat("token claim ", Quote(rules.groups_claim), " is not a list of strings");
  if (claim->is_string()) {
    groups.push_back(rules.groups_prefix + claim->get<std::string>());
    return groups;
  }
  if (!claim->is_array()) return Refuse(wrong);
  if (claim->size() > kMaxGroups) {
    return Refuse(absl::StrCat("token claim ", Quote(rules.groups_claim), " has more than ",
                               kMaxGroups, " groups"));
  }
  for (const json& g : *claim) {
    if (!g.is_string() || g.get<std::string>().empty()) return Refuse(wrong);
    groups.push_back(rules.groups_prefix + g.get<std::string>());
  }
  return groups;
}

}  // namespace

absl::StatusOr<VerifiedClaims> CheckClaims(absl::string_view payload_json, const ClaimRules& rules,
                                           absl::Time now) {
  json claims = json::parse(payload_json.begin(), payload_json.end(), nullptr,
                            /*allow_exceptions=*/false);
  if (claims.is_discarded() || !claims.is_object()) {
    return Refuse("malformed JWT: the payload is not a JSON object");
  }
  const std::string issuer = claims.contains("iss") && claims["iss"].is_string()
                                 ? claims["iss"].get<std::string>()
                                 : std::string();
  if (issuer.empty()) return Refuse("token has no \"iss\" claim");
  if (issuer != rules.issuer) {
    return Refuse(absl::StrCat("token issuer ", Quote(issuer), " is not ", Quote(rules.issuer)));
  }
  RETURN_IF_ERROR(CheckAudience(claims, rules.audience));
  VerifiedClaims out;
  RETURN_IF_ERROR(CheckTimes(claims, rules, now, &out.expires));
  const json* name = FindClaim(claims, rules.username_claim);
  if (name == nullptr || !name->is_string() || name->get<std::string>().empty()) {
    return Refuse(absl::StrCat("token has no string claim ", Quote(rules.username_claim),
                               " for the user name"));
  }
  out.principal.name = rules.username_prefix + name->get<std::string>();
  if (out.principal.name.size() > kMaxNameBytes) {
    return Refuse(absl::StrCat("token user name is longer than ", kMaxNameBytes, " bytes"));
  }
  if (out.principal.name == kAnonymousPrincipalName) {
    return Refuse(absl::StrCat("token user name ", Quote(out.principal.name), " is reserved"));
  }
  ASSIGN_OR_RETURN(out.principal.groups, Groups(claims, rules));
  return out;
}

}  // namespace regatta::auth::oidc
