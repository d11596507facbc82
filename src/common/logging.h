#ifndef REGATTA_SRC_COMMON_LOGGING_H_
#define REGATTA_SRC_COMMON_LOGGING_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "spdlog/spdlog.h"

namespace regatta {

// Structured logging on spdlog: one line per event, a message then key=value fields, e.g.
//   LOG_INFO("submitted", "queue", q, "jobs", n);
// Format: "2026-11-29T08:00:00.123Z info submitted queue=a jobs=3".
// `format` is "text" (default) or "json" (one JSON object per line).
void InitLogging(absl::string_view level, absl::string_view format = "text");

namespace logging_internal {
void AppendField(std::string& out, absl::string_view key, absl::string_view value);
inline void AppendFields(std::string&) {}
template <typename V, typename... Rest>
void AppendFields(std::string& out, absl::string_view key, const V& value, const Rest&... rest) {
  if constexpr (std::is_convertible_v<const V&, absl::string_view>) {
    AppendField(out, key, absl::string_view(value));
  } else {
    AppendField(out, key, fmt::format("{}", value));
  }
  AppendFields(out, rest...);
}
std::string Render(absl::string_view message, std::string fields);
}  // namespace logging_internal

template <typename... Fields>
std::string LogLine(absl::string_view message, const Fields&... fields) {
  std::string out;
  logging_internal::AppendFields(out, fields...);
  return logging_internal::Render(message, std::move(out));
}

// As LogLine, with fields known only at run time (key, value), in order.
std::string LogLineOf(absl::string_view message,
                      const std::vector<std::pair<std::string, std::string>>& fields);

}  // namespace regatta

#define LOG_DEBUG(...)                                      \
  do {                                                      \
    if (spdlog::should_log(spdlog::level::debug))           \
      spdlog::debug("{}", ::regatta::LogLine(__VA_ARGS__)); \
  } while (0)
#define LOG_INFO(...) spdlog::info("{}", ::regatta::LogLine(__VA_ARGS__))
#define LOG_WARN(...) spdlog::warn("{}", ::regatta::LogLine(__VA_ARGS__))
#define LOG_ERROR(...) spdlog::error("{}", ::regatta::LogLine(__VA_ARGS__))

#endif  // REGATTA_SRC_COMMON_LOGGING_H_
