#include "src/pipelines/schedule/cron.h"

#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/civil_time.h"
#include "absl/types/span.h"
#include "src/common/status_macros.h"

namespace regatta::pipelines::schedule {
namespace {

struct FieldSpec {
  const char* name;
  int min;
  int max;
  // Names for values min, min+1, ... (months from 1, days of week from 0); empty if none.
  absl::Span<const char* const> names;
};

constexpr const char* kMonthNames[] = {"JAN", "FEB", "MAR", "APR", "MAY", "JUN",
                                       "JUL", "AUG", "SEP", "OCT", "NOV", "DEC"};
constexpr const char* kDayNames[] = {"SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"};

constexpr FieldSpec kSecondField{"second", 0, 59, {}};
constexpr FieldSpec kMinuteField{"minute", 0, 59, {}};
constexpr FieldSpec kHourField{"hour", 0, 23, {}};
constexpr FieldSpec kDayOfMonthField{"day of month", 1, 31, {}};
constexpr FieldSpec kMonthField{"month", 1, 12, kMonthNames};
// 7 is accepted as Sunday and folded onto 0 after parsing.
constexpr FieldSpec kDayOfWeekField{"day of week", 0, 7, kDayNames};

absl::Status FieldError(const FieldSpec& field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("cron: field '", field.name, "': ", message));
}

absl::StatusOr<int> ParseValue(const FieldSpec& field, absl::string_view text) {
  int value = 0;
  if (absl::SimpleAtoi(text, &value)) {
    if (value < field.min || value > field.max) {
      return FieldError(field, absl::StrCat(text, " out of range ", field.min, "-", field.max));
    }
    return value;
  }
  std::string upper = absl::AsciiStrToUpper(text);
  for (size_t i = 0; i < field.names.size(); ++i) {
    if (upper == field.names[i]) return field.min + static_cast<int>(i);
  }
  return FieldError(field, absl::StrCat("'", text, "' is not a value"));
}

struct ParsedField {
  uint64_t bits = 0;
  bool star = false;
};

// One comma-separated part: `*`, `?`, `a`, `a-b`, each optionally followed by `/step`.
absl::Status ParsePart(const FieldSpec& field, absl::string_view part, ParsedField& out) {
  std::vector<absl::string_view> range_and_step = absl::StrSplit(part, '/');
  if (range_and_step.size() > 2) {
    return FieldError(field, absl::StrCat("'", part, "' has more than one '/'"));
  }
  absl::string_view range = range_and_step[0];
  int step = 1;
  if (range_and_step.size() == 2) {
    if (!absl::SimpleAtoi(range_and_step[1], &step) || step < 1) {
      return FieldError(field,
                        absl::StrCat("step '", range_and_step[1], "' is not a positive integer"));
    }
  }
  int start = 0;
  int end = 0;
  bool star = false;
  if (range == "*" || range == "?") {
    start = field.min;
    end = field.max;
    star = true;
  } else {
    std::vector<absl::string_view> bounds = absl::StrSplit(range, '-');
    if (bounds.size() > 2) return FieldError(field, absl::StrCat("'", range, "' is not a range"));
    ASSIGN_OR_RETURN(start, ParseValue(field, bounds[0]));
    if (bounds.size() == 2) {
      ASSIGN_OR_RETURN(end, ParseValue(field, bounds[1]));
    } else {
      // "a/n" means every n from a to the maximum.
      end = range_and_step.size() == 2 ? field.max : start;
    }
    if (start > end) {
      return FieldError(field, absl::StrCat("range ", start, "-", end, " runs backwards"));
    }
  }
  for (int v = start; v <= end; v += step) out.bits |= uint64_t{1} << v;
  // "*/n" restricts the field, so only an unstepped star leaves the day unrestricted.
  if (star && step == 1) out.star = true;
  return absl::OkStatus();
}

absl::StatusOr<ParsedField> ParseField(const FieldSpec& field, absl::string_view text) {
  ParsedField out;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    if (part.empty()) return FieldError(field, absl::StrCat("empty list item in '", text, "'"));
    RETURN_IF_ERROR(ParsePart(field, part, out));
  }
  return out;
}

absl::StatusOr<std::string> ExpandDescriptor(absl::string_view spec) {
  if (spec == "@yearly" || spec == "@annually") return std::string("0 0 0 1 1 *");
  if (spec == "@monthly") return std::string("0 0 0 1 * *");
  if (spec == "@weekly") return std::string("0 0 0 * * 0");
  if (spec == "@daily" || spec == "@midnight") return std::string("0 0 0 * * *");
  if (spec == "@hourly") return std::string("0 0 * * * *");
  return absl::InvalidArgumentError(absl::StrCat("cron: unknown descriptor '", spec, "'"));
}

bool Has(uint64_t bits, int value) { return (bits >> value) & 1; }

}  // namespace

absl::StatusOr<CronSchedule> CronSchedule::Parse(absl::string_view spec) {
  CronSchedule schedule;
  schedule.spec_ = std::string(spec);
  absl::string_view trimmed = absl::StripAsciiWhitespace(spec);
  if (trimmed.empty()) return absl::InvalidArgumentError("cron: empty expression");

  std::string expanded(trimmed);
  if (trimmed[0] == '@') {
    if (absl::StartsWith(trimmed, "@every ")) {
      absl::string_view text = absl::StripAsciiWhitespace(trimmed.substr(7));
      absl::Duration every;
      if (!absl::ParseDuration(text, &every)) {
        return absl::InvalidArgumentError(
            absl::StrCat("cron: '@every ", text, "': not a duration (e.g. 90s, 1h30m)"));
      }
      // Whole seconds, as scheduled times are named by the second.
      if (every < absl::Seconds(1) || every % absl::Seconds(1) != absl::ZeroDuration()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "cron: '@every ", text, "': must be a whole number of seconds, at least 1s"));
      }
      schedule.every_ = every;
      return schedule;
    }
    ASSIGN_OR_RETURN(expanded, ExpandDescriptor(trimmed));
  }

  std::vector<absl::string_view> fields =
      absl::StrSplit(expanded, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  if (fields.size() != 5 && fields.size() != 6) {
    return absl::InvalidArgumentError(
        absl::StrCat("cron: expected 6 fields (sec min hour dom month dow) or 5 (no seconds), "
                     "got ",
                     fields.size()));
  }
  if (fields.size() == 5) fields.insert(fields.begin(), "0");

  ASSIGN_OR_RETURN(ParsedField seconds, ParseField(kSecondField, fields[0]));
  ASSIGN_OR_RETURN(ParsedField minutes, ParseField(kMinuteField, fields[1]));
  ASSIGN_OR_RETURN(ParsedField hours, ParseField(kHourField, fields[2]));
  ASSIGN_OR_RETURN(ParsedField days_of_month, ParseField(kDayOfMonthField, fields[3]));
  ASSIGN_OR_RETURN(ParsedField months, ParseField(kMonthField, fields[4]));
  ASSIGN_OR_RETURN(ParsedField days_of_week, ParseField(kDayOfWeekField, fields[5]));
  if (Has(days_of_week.bits, 7)) days_of_week.bits = (days_of_week.bits & ~(uint64_t{1} << 7)) | 1;

  schedule.seconds_ = seconds.bits;
  schedule.minutes_ = minutes.bits;
  schedule.hours_ = hours.bits;
  schedule.days_of_month_ = days_of_month.bits;
  schedule.months_ = months.bits;
  schedule.days_of_week_ = days_of_week.bits;
  schedule.day_of_month_star_ = days_of_month.star;
  schedule.day_of_week_star_ = days_of_week.star;
  return schedule;
}

absl::Time CronSchedule::Next(absl::Time after) const {
  if (after == absl::InfiniteFuture()) return absl::InfiniteFuture();
  if (after == absl::InfinitePast()) after = absl::UnixEpoch();
  // ToUnixSeconds rounds down, so this is the next whole second strictly after `after`.
  absl::Time start = absl::FromUnixSeconds(absl::ToUnixSeconds(after));
  if (every_ > absl::ZeroDuration()) return start + every_;
  start += absl::Seconds(1);

  const absl::TimeZone utc = absl::UTCTimeZone();
  absl::CivilSecond t = absl::ToCivilSecond(start, utc);
  const absl::civil_year_t last_year = t.year() + 5;
  // Advance the largest field that does not match, resetting the smaller ones.
  while (t.year() <= last_year) {
    if (!Has(months_, t.month())) {
      t = absl::CivilSecond(absl::CivilMonth(t) + 1);
      continue;
    }
    const int weekday_from_sunday =
        (static_cast<int>(absl::GetWeekday(absl::CivilDay(t))) + 1) % 7;  // absl: Monday = 0
    const bool dom = Has(days_of_month_, t.day());
    const bool dow = Has(days_of_week_, weekday_from_sunday);
    const bool day_matches =
        (day_of_month_star_ || day_of_week_star_) ? (dom && dow) : (dom || dow);
    if (!day_matches) {
      t = absl::CivilSecond(absl::CivilDay(t) + 1);
      continue;
    }
    if (!Has(hours_, t.hour())) {
      t = absl::CivilSecond(absl::CivilHour(t) + 1);
      continue;
    }
    if (!Has(minutes_, t.minute())) {
      t = absl::CivilSecond(absl::CivilMinute(t) + 1);
      continue;
    }
    if (!Has(seconds_, t.second())) {
      t += 1;
      continue;
    }
    return absl::FromCivil(t, utc);
  }
  return absl::InfiniteFuture();
}

}  // namespace regatta::pipelines::schedule
