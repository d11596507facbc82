#include "src/cli/table.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"

namespace regatta::cli {
namespace {

constexpr char kColumnGap[] = "   ";

std::string StripEnumPrefix(const std::string& name, absl::string_view prefix) {
  if (name.empty()) return "UNKNOWN";
  return std::string(absl::StripPrefix(name, prefix));
}

void AppendRow(std::string& out, const std::vector<std::string>& cells,
               const std::vector<size_t>& widths) {
  std::string line;
  for (size_t i = 0; i < widths.size(); ++i) {
    const std::string& cell = i < cells.size() ? cells[i] : std::string();
    line += cell;
    if (i + 1 < widths.size()) {
      line.append(widths[i] - cell.size(), ' ');
      line += kColumnGap;
    }
  }
  absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(line), "\n");
}

}  // namespace

void Table::AddRow(std::vector<std::string> cells) {
  cells.resize(headers_.size());
  rows_.push_back(std::move(cells));
}

std::string Table::Render() const {
  std::vector<size_t> widths(headers_.size());
  for (size_t i = 0; i < headers_.size(); ++i) {
    widths[i] = headers_[i].size();
    for (const auto& row : rows_) widths[i] = std::max(widths[i], row[i].size());
  }
  std::string out;
  AppendRow(out, headers_, widths);
  for (const auto& row : rows_) AppendRow(out, row, widths);
  return out;
}

std::string Details::Render() const {
  size_t width = 0;
  for (const auto& [key, value] : rows_) width = std::max(width, key.size() + 1);
  std::string out;
  for (const auto& [key, value] : rows_) {
    // An empty key continues the previous entry (e.g. a second permission).
    std::string line = key.empty() ? "" : absl::StrCat(key, ":");
    line.append(width - line.size() + 2, ' ');
    absl::StrAppend(&out, absl::StripTrailingAsciiWhitespace(absl::StrCat(line, value)), "\n");
  }
  return out;
}

std::string JobStateName(regatta::v1::JobState state) {
  return StripEnumPrefix(regatta::v1::JobState_Name(state), "JOB_STATE_");
}
std::string RunStateName(regatta::v1::RunState state) {
  return StripEnumPrefix(regatta::v1::RunState_Name(state), "RUN_STATE_");
}
std::string EventTypeName(regatta::v1::JobEventType type) {
  return StripEnumPrefix(regatta::v1::JobEventType_Name(type), "JOB_EVENT_TYPE_");
}
std::string ErrorReasonName(regatta::v1::ErrorReason reason) {
  return StripEnumPrefix(regatta::v1::ErrorReason_Name(reason), "ERROR_REASON_");
}

bool IsSet(const google::protobuf::Timestamp& ts) { return ts.seconds() != 0 || ts.nanos() != 0; }

absl::Time ToAbslTime(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

std::string FormatTime(const google::protobuf::Timestamp& ts, const RenderContext& ctx) {
  if (!IsSet(ts)) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%S%Ez", ToAbslTime(ts), ctx.zone);
}

std::string FormatTimeMillis(const google::protobuf::Timestamp& ts, const RenderContext& ctx) {
  if (!IsSet(ts)) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3S%Ez", ToAbslTime(ts), ctx.zone);
}

std::string FormatAge(const google::protobuf::Timestamp& ts, const RenderContext& ctx) {
  if (!IsSet(ts)) return "";
  absl::Duration age = ctx.now - ToAbslTime(ts);
  if (age < absl::ZeroDuration()) age = absl::ZeroDuration();  // clock skew
  int64_t s = absl::ToInt64Seconds(age);
  if (s < 120) return absl::StrCat(s, "s");
  if (s < 120 * 60) return absl::StrCat(s / 60, "m");
  if (s < 48 * 3600) return absl::StrCat(s / 3600, "h");
  return absl::StrCat(s / 86400, "d");
}

std::string FormatTimeWithAge(const google::protobuf::Timestamp& ts, const RenderContext& ctx) {
  if (!IsSet(ts)) return "";
  return absl::StrCat(FormatTime(ts, ctx), " (", FormatAge(ts, ctx), " ago)");
}

}  // namespace regatta::cli
