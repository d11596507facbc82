#include "src/common/resources.h"

#include <algorithm>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "src/common/error_text.h"

namespace regatta {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

absl::Status BadQuantity(absl::string_view text, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("invalid quantity \"", Abbreviate(text, 64), "\": ", why));
}

// Multiplies non-negative a and positive b, false if the product would not fit in __int128
// (digits and multiplier may each approach 2^70).
bool MulFits(__int128 a, __int128 b, __int128* out) {
  constexpr __int128 kMax128 = ~(static_cast<unsigned __int128>(1) << 127);
  if (a != 0 && b > kMax128 / a) return false;
  *out = a * b;
  return true;
}

// a + b and a - b clamped to the int64 range: sums of many jobs' requests must not wrap.
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_add_overflow(a, b, &out)) return b > 0 ? kMax : std::numeric_limits<int64_t>::min();
  return out;
}
int64_t SaturatingSub(int64_t a, int64_t b) {
  int64_t out;
  if (__builtin_sub_overflow(a, b, &out)) return b < 0 ? kMax : std::numeric_limits<int64_t>::min();
  return out;
}

bool IsDnsLabelChar(char c) { return absl::ascii_isalnum(c) || c == '-'; }

bool IsValidDnsSubdomain(absl::string_view s) {
  if (s.empty() || s.size() > 253) return false;
  for (absl::string_view label : absl::StrSplit(s, '.')) {
    if (label.empty() || label.size() > 63) return false;
    if (!absl::ascii_isalnum(label.front()) || !absl::ascii_isalnum(label.back())) return false;
    if (!std::all_of(label.begin(), label.end(), IsDnsLabelChar)) return false;
  }
  return true;
}

}  // namespace

absl::StatusOr<Quantity> Quantity::Parse(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  if (s.empty()) return BadQuantity(text, "empty");
  size_t i = 0;
  if (s[0] == '+') ++i;
  if (i < s.size() && s[i] == '-') return BadQuantity(text, "must not be negative");
  // Digits with at most one decimal point.
  __int128 digits = 0;
  int frac_digits = 0;
  bool seen_point = false, seen_digit = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (c >= '0' && c <= '9') {
      seen_digit = true;
      if (digits > (static_cast<__int128>(kMax) * 10)) return BadQuantity(text, "too large");
      digits = digits * 10 + (c - '0');
      if (seen_point) ++frac_digits;
    } else if (c == '.' && !seen_point) {
      seen_point = true;
    } else {
      break;
    }
  }
  if (!seen_digit) return BadQuantity(text, "expected a number");
  if (frac_digits > 18) return BadQuantity(text, "too many decimal places");
  absl::string_view suffix = s.substr(i);

  // value = digits * 10^-frac_digits * multiplier, where multiplier = base^exp; computed as
  // milli = digits * numerator / denominator, rounding up.
  __int128 numerator = 1000;  // to milli-units
  __int128 denominator = 1;
  for (int k = 0; k < frac_digits; ++k) denominator *= 10;
  auto pow = [](__int128 base, int exp) {
    __int128 r = 1;
    for (int k = 0; k < exp; ++k) r *= base;
    return r;
  };
  if (suffix.empty()) {
  } else if (suffix.size() == 2 && suffix[1] == 'i') {
    static constexpr absl::string_view kBinary = "KMGTPE";
    size_t p = kBinary.find(suffix[0]);
    if (p == absl::string_view::npos) return BadQuantity(text, "unknown suffix");
    numerator *= pow(1024, static_cast<int>(p) + 1);
  } else if (suffix.size() == 1) {
    switch (suffix[0]) {
      case 'n':
        denominator *= 1'000'000'000;
        break;
      case 'u':
        denominator *= 1'000'000;
        break;
      case 'm':
        denominator *= 1'000;
        break;
      case 'k':
        numerator *= 1'000;
        break;
      case 'M':
        numerator *= pow(10, 6);
        break;
      case 'G':
        numerator *= pow(10, 9);
        break;
      case 'T':
        numerator *= pow(10, 12);
        break;
      case 'P':
        numerator *= pow(10, 15);
        break;
      case 'E':
        numerator *= pow(10, 18);
        break;
      default:
        return BadQuantity(text, "unknown suffix");
    }
  } else if (suffix[0] == 'e' || suffix[0] == 'E') {
    absl::string_view exp_text = suffix.substr(1);
    bool negative = false;
    if (!exp_text.empty() && (exp_text[0] == '+' || exp_text[0] == '-')) {
      negative = exp_text[0] == '-';
      exp_text.remove_prefix(1);
    }
    if (exp_text.empty() || exp_text.size() > 2 ||
        !std::all_of(exp_text.begin(), exp_text.end(), absl::ascii_isdigit)) {
      return BadQuantity(text, "bad exponent");
    }
    int exp = 0;
    for (char c : exp_text) exp = exp * 10 + (c - '0');
    if (exp > 18) return BadQuantity(text, "too large");
    if (negative) {
      denominator *= pow(10, exp);
    } else {
      numerator *= pow(10, exp);
    }
  } else {
    return BadQuantity(text, "unknown suffix");
  }
  __int128 product;
  // The product is divided by the denominator before the range check: "1.000000000000000000"
  // is 1.
  if (!MulFits(digits, numerator, &product)) return BadQuantity(text, "too large");
  __int128 milli = (product + denominator - 1) / denominator;
  if (milli > kMax) return BadQuantity(text, "too large");
  return Quantity(static_cast<int64_t>(milli));
}

std::string Quantity::ToString() const {
  if (milli_ % 1000 != 0) return absl::StrCat(milli_, "m");
  int64_t units = milli_ / 1000;
  if (units == 0) return "0";
  static constexpr absl::string_view kBinary[] = {"Ki", "Mi", "Gi", "Ti", "Pi", "Ei"};
  int suffix = -1;
  while (suffix + 1 < 6 && units % 1024 == 0) {
    units /= 1024;
    ++suffix;
  }
  return suffix < 0 ? absl::StrCat(units) : absl::StrCat(units, kBinary[suffix]);
}

bool IsDeviceResource(absl::string_view resource) {
  return absl::StartsWith(resource, kDeviceResourcePrefix) &&
         resource.size() > kDeviceResourcePrefix.size();
}

bool IsValidResourceName(absl::string_view name) {
  absl::string_view local = name;
  if (size_t slash = name.find('/'); slash != absl::string_view::npos) {
    if (!IsValidDnsSubdomain(name.substr(0, slash))) return false;
    local = name.substr(slash + 1);
  }
  if (local.empty() || local.size() > 63) return false;
  if (!absl::ascii_isalnum(local.front()) || !absl::ascii_isalnum(local.back())) return false;
  return std::all_of(local.begin(), local.end(), [](char c) {
    return absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.';
  });
}

ResourceNames::ResourceNames() {
  for (const char* n : {"cpu", "memory", "ephemeral-storage", "nvidia.com/gpu"}) Intern(n);
}

ResourceNames& ResourceNames::Global() {
  static auto* names = new ResourceNames();
  return *names;
}

int ResourceNames::Intern(absl::string_view name) {
  absl::MutexLock lock(&mu_);
  auto [it, inserted] = index_.try_emplace(name, static_cast<int>(names_.size()));
  if (inserted) names_.emplace_back(name);
  return it->second;
}

int ResourceNames::Find(absl::string_view name) const {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(name);
  return it == index_.end() ? -1 : it->second;
}

std::string ResourceNames::Name(int index) const {
  absl::MutexLock lock(&mu_);
  return index >= 0 && index < static_cast<int>(names_.size()) ? names_[index] : std::string();
}

int ResourceNames::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int>(names_.size());
}

absl::StatusOr<ResourceList> ResourceList::FromStrings(
    const std::vector<std::pair<std::string, std::string>>& entries, ResourceNames& names) {
  ResourceList list;
  for (const auto& [name, text] : entries) {
    if (!IsValidResourceName(name)) {
      return absl::InvalidArgumentError(absl::StrCat("invalid resource name \"", name, "\""));
    }
    auto q = Quantity::Parse(text);
    if (!q.ok()) return absl::InvalidArgumentError(absl::StrCat(name, ": ", q.status().message()));
    list.Set(names.Intern(name), *q);
  }
  return list;
}

void ResourceList::Set(int index, Quantity q) {
  if (index >= static_cast<int>(milli_.size())) milli_.resize(index + 1, 0);
  milli_[index] = q.milli();
}

void ResourceList::Add(const ResourceList& other) {
  if (other.milli_.size() > milli_.size()) milli_.resize(other.milli_.size(), 0);
  for (size_t i = 0; i < other.milli_.size(); ++i) {
    milli_[i] = SaturatingAdd(milli_[i], other.milli_[i]);
  }
}

void ResourceList::Subtract(const ResourceList& other) {
  if (other.milli_.size() > milli_.size()) milli_.resize(other.milli_.size(), 0);
  for (size_t i = 0; i < other.milli_.size(); ++i) {
    milli_[i] = SaturatingSub(milli_[i], other.milli_[i]);
  }
}

bool ResourceList::FitsIn(const ResourceList& other) const {
  for (size_t i = 0; i < milli_.size(); ++i) {
    if (milli_[i] > other.Get(static_cast<int>(i)).milli()) return false;
  }
  return true;
}

bool ResourceList::IsZero() const {
  return std::all_of(milli_.begin(), milli_.end(), [](int64_t v) { return v == 0; });
}

bool ResourceList::operator==(const ResourceList& other) const {
  size_t n = std::max(milli_.size(), other.milli_.size());
  for (size_t i = 0; i < n; ++i) {
    if (Get(static_cast<int>(i)) != other.Get(static_cast<int>(i))) return false;
  }
  return true;
}

std::vector<std::pair<std::string, std::string>> ResourceList::ToStrings(
    const ResourceNames& names) const {
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i < milli_.size(); ++i) {
    if (milli_[i] != 0) {
      out.emplace_back(names.Name(static_cast<int>(i)), Quantity::FromMilli(milli_[i]).ToString());
    }
  }
  return out;
}

}  // namespace regatta
