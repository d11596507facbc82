#include "src/cli/flags.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "src/cli/yaml_json.h"
#include "src/common/status_macros.h"

namespace regatta::cli {
namespace {

using regatta::v1::JobState;

constexpr const char* kVerbs[] = {"submit", "cancel", "reprioritize", "preempt", "watch"};

absl::Status Invalid(absl::string_view text, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat("\"", text, "\": ", problem));
}

}  // namespace

absl::StatusOr<std::pair<std::string, std::string>> ParseKeyValue(absl::string_view text) {
  size_t eq = text.find('=');
  if (eq == absl::string_view::npos) return Invalid(text, "expected key=value");
  std::string key(absl::StripAsciiWhitespace(text.substr(0, eq)));
  if (key.empty()) return Invalid(text, "the key is empty");
  return std::make_pair(key, std::string(text.substr(eq + 1)));
}

absl::StatusOr<std::map<std::string, std::string>> ParseKeyValues(
    const std::vector<std::string>& texts) {
  std::map<std::string, std::string> out;
  for (const auto& text : texts) {
    ASSIGN_OR_RETURN(auto kv, ParseKeyValue(text));
    if (!out.insert(kv).second)
      return Invalid(text, absl::StrCat("key ", kv.first, " given twice"));
  }
  return out;
}

absl::StatusOr<regatta::v1::QueuePermission> ParsePermission(absl::string_view text) {
  size_t eq = text.find('=');
  if (eq == absl::string_view::npos) {
    return Invalid(text,
                   "expected KIND:NAME[,KIND:NAME...]=VERB[,VERB...], e.g. "
                   "group:team-a=submit,cancel");
  }
  regatta::v1::QueuePermission permission;
  for (absl::string_view subject :
       absl::StrSplit(text.substr(0, eq), ',', absl::SkipWhitespace())) {
    subject = absl::StripAsciiWhitespace(subject);
    size_t colon = subject.find(':');
    if (colon == absl::string_view::npos) {
      return Invalid(
          text, absl::StrCat("subject \"", subject, "\" needs a kind: user:NAME or group:NAME"));
    }
    std::string kind = absl::AsciiStrToLower(subject.substr(0, colon));
    absl::string_view name = subject.substr(colon + 1);
    if (kind != "user" && kind != "group") {
      return Invalid(text, absl::StrCat("subject kind \"", subject.substr(0, colon),
                                        "\" is not user or group"));
    }
    if (name.empty()) return Invalid(text, absl::StrCat("subject \"", subject, "\" has no name"));
    auto* s = permission.add_subjects();
    s->set_kind(kind);
    s->set_name(std::string(name));
  }
  if (permission.subjects().empty()) return Invalid(text, "no subjects before '='");
  std::set<std::string> verbs;
  for (absl::string_view verb : absl::StrSplit(text.substr(eq + 1), ',', absl::SkipWhitespace())) {
    std::string v = absl::AsciiStrToLower(absl::StripAsciiWhitespace(verb));
    if (v == "all" || v == "*") {
      verbs.insert(std::begin(kVerbs), std::end(kVerbs));
      continue;
    }
    if (std::find(std::begin(kVerbs), std::end(kVerbs), v) == std::end(kVerbs)) {
      return Invalid(text, absl::StrCat("unknown verb \"", verb, "\" (one of ",
                                        absl::StrJoin(kVerbs, ", "), ", all)"));
    }
    verbs.insert(v);
  }
  if (verbs.empty()) return Invalid(text, "no verbs after '='");
  // Keep the documented verb order rather than alphabetical, for readable output.
  for (const char* v : kVerbs) {
    if (verbs.count(v) > 0) permission.add_verbs(v);
  }
  return permission;
}

absl::StatusOr<std::pair<std::string, regatta::v1::PriorityClassResourceLimits>> ParseResourceLimit(
    absl::string_view text) {
  size_t colon = text.find(':');
  if (colon == absl::string_view::npos || colon == 0) {
    return Invalid(text,
                   "expected PRIORITY_CLASS:RESOURCE=FRACTION[,...], e.g. "
                   "armada-default:cpu=0.5,memory=0.5");
  }
  std::string priority_class(absl::StripAsciiWhitespace(text.substr(0, colon)));
  regatta::v1::PriorityClassResourceLimits limits;
  for (absl::string_view entry :
       absl::StrSplit(text.substr(colon + 1), ',', absl::SkipWhitespace())) {
    ASSIGN_OR_RETURN(auto kv, ParseKeyValue(absl::StripAsciiWhitespace(entry)));
    double fraction = 0;
    if (!absl::SimpleAtod(kv.second, &fraction) || !std::isfinite(fraction) || fraction < 0 ||
        fraction > 1) {
      return Invalid(text, absl::StrCat("fraction for ", kv.first, " must be a number in [0, 1]"));
    }
    if (!limits.mutable_maximum_resource_fraction()->insert({kv.first, fraction}).second) {
      return Invalid(text, absl::StrCat("resource ", kv.first, " given twice"));
    }
  }
  if (limits.maximum_resource_fraction().empty()) return Invalid(text, "no resources after ':'");
  return std::make_pair(priority_class, limits);
}

absl::StatusOr<std::vector<JobState>> ParseJobStates(const std::vector<std::string>& texts) {
  std::vector<JobState> out;
  const auto* type = regatta::v1::JobState_descriptor();
  for (const auto& text : texts) {
    for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
      std::string name = absl::AsciiStrToUpper(absl::StripAsciiWhitespace(part));
      if (!absl::StartsWith(name, "JOB_STATE_")) name = absl::StrCat("JOB_STATE_", name);
      const auto* value = type->FindValueByName(name);
      if (value == nullptr || value->number() == 0) {
        std::vector<std::string> names;
        for (int i = 1; i < type->value_count(); ++i) {
          names.push_back(std::string(absl::StripPrefix(type->value(i)->name(), "JOB_STATE_")));
        }
        return Invalid(part,
                       absl::StrCat("unknown job state (one of ", absl::StrJoin(names, ", "), ")"));
      }
      auto state = static_cast<JobState>(value->number());
      if (std::find(out.begin(), out.end(), state) == out.end()) out.push_back(state);
    }
  }
  return out;
}

absl::StatusOr<absl::Duration> ParseDurationFlag(absl::string_view text) {
  absl::Duration d;
  double seconds = 0;
  if (absl::SimpleAtod(text, &seconds) && std::isfinite(seconds)) {
    d = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(text, &d)) {
    return Invalid(text, "expected a duration such as 30s, 5m or 1h30m");
  }
  if (d <= absl::ZeroDuration() || d == absl::InfiniteDuration()) {
    return Invalid(text, "must be a positive, finite duration");
  }
  return d;
}

absl::Status ApplyQueueFlags(const QueueSpecFlags& flags, regatta::v1::Queue* queue) {
  if (flags.priority_factor.has_value()) {
    double f = *flags.priority_factor;
    if (!std::isfinite(f) || f <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--priority-factor: must be a positive number, got ", f));
    }
    queue->set_priority_factor(f);
  }
  if (!flags.permissions.empty()) {
    queue->clear_permissions();
    for (const auto& text : flags.permissions) {
      auto permission = ParsePermission(text);
      if (!permission.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--permission ", permission.status().message()));
      }
      *queue->add_permissions() = *std::move(permission);
    }
  }
  if (!flags.labels.empty()) {
    auto labels = ParseKeyValues(flags.labels);
    if (!labels.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--label ", labels.status().message()));
    }
    queue->mutable_labels()->clear();
    for (const auto& [k, v] : *labels) (*queue->mutable_labels())[k] = v;
  }
  if (!flags.limits.empty()) {
    auto* limits = queue->mutable_resource_limits_by_priority_class();
    limits->clear();
    for (const auto& text : flags.limits) {
      auto limit = ParseResourceLimit(text);
      if (!limit.ok()) {
        return absl::InvalidArgumentError(absl::StrCat("--limit ", limit.status().message()));
      }
      if (!limits->insert({limit->first, limit->second}).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("--limit: priority class ", limit->first, " given twice"));
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<regatta::v1::Queue> ParseQueueFile(absl::string_view text) {
  ASSIGN_OR_RETURN(YAML::Node node, ParseYaml(text));
  if (!node.IsMap()) return absl::InvalidArgumentError("expected a Queue mapping (name: ...)");
  regatta::v1::Queue queue;
  RETURN_IF_ERROR(YamlToMessage(node, "", &queue));
  return queue;
}

bool QueueFileSetsCordoned(absl::string_view text) {
  auto node = ParseYaml(text);
  if (!node.ok() || !node->IsMap()) return false;
  auto entries = MappingEntries(*node, "");
  if (!entries.ok()) return false;
  return std::any_of(entries->begin(), entries->end(),
                     [](const auto& kv) { return kv.first == "cordoned"; });
}

}  // namespace regatta::cli
