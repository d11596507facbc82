#include "src/common/logging.h"

#include <atomic>

#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "spdlog/sinks/stdout_color_sinks.h"

namespace regatta {
namespace {
std::atomic<bool> json_format{false};

bool NeedsQuoting(absl::string_view v) {
  if (v.empty()) return true;
  for (char c : v) {
    if (c == ' ' || c == '"' || c == '=' || c == '\n' || c == '\t') return true;
  }
  return false;
}
}  // namespace

void InitLogging(absl::string_view level, absl::string_view format) {
  auto logger = spdlog::stderr_color_mt("regatta");
  spdlog::set_default_logger(logger);
  json_format = format == "json";
  if (json_format) {
    spdlog::set_pattern(R"({"time":"%Y-%m-%dT%H:%M:%S.%eZ","level":"%l",%v})",
                        spdlog::pattern_time_type::utc);
  } else {
    spdlog::set_pattern("%Y-%m-%dT%H:%M:%S.%eZ %l %v", spdlog::pattern_time_type::utc);
  }
  spdlog::set_level(spdlog::level::from_str(std::string(level)));
}

namespace logging_internal {

void AppendField(std::string& out, absl::string_view key, absl::string_view value) {
  if (json_format) {
    absl::StrAppend(
        &out, ",",
        nlohmann::json(key).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), ":",
        nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else if (NeedsQuoting(value)) {
    absl::StrAppend(
        &out, " ", key, "=",
        nlohmann::json(value).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  } else {
    absl::StrAppend(&out, " ", key, "=", value);
  }
}

std::string Render(absl::string_view message, std::string fields) {
  if (json_format)
    return absl::StrCat(
        "\"msg\":",
        nlohmann::json(message).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
        fields);
  return absl::StrCat(message, fields);
}

}  // namespace logging_internal

std::string LogLineOf(absl::string_view message,
                      const std::vector<std::pair<std::string, std::string>>& fields) {
  std::string out;
  for (const auto& [key, value] : fields) logging_internal::AppendField(out, key, value);
  return logging_internal::Render(message, std::move(out));
}

}  // namespace regatta
