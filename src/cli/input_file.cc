#include "src/cli/input_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "src/common/config.h"

namespace regatta::cli {
namespace {

constexpr char kInputPayload[] = "regatta.dev/cli-input";

// The length of the well-formed sequence starting at `p` (before `end`), or 0. The second byte's
// range depends on the lead byte (RFC 3629 table 3-7): that is what excludes overlong forms,
// surrogates and code points past U+10FFFF.
size_t SequenceLength(const unsigned char* p, const unsigned char* end) {
  const unsigned char lead = p[0];
  if (lead < 0x80) return 1;
  size_t length;
  unsigned char low = 0x80, high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (static_cast<size_t>(end - p) < length) return 0;
  if (p[1] < low || p[1] > high) return 0;
  for (size_t i = 2; i < length; ++i) {
    if ((p[i] & 0xC0) != 0x80) return 0;
  }
  return length;
}

std::string Reason(int err) {
  switch (err) {
    case ENOENT:
      return "no such file";
    case EISDIR:
      return "is a directory";
    case EACCES:
    case EPERM:
      return "permission denied";
    default: {
      std::string text = std::strerror(err);
      if (!text.empty()) text[0] = absl::ascii_tolower(text[0]);
      return text;
    }
  }
}

}  // namespace

absl::Status InputError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kInputPayload, absl::Cord("1"));
  return status;
}

bool IsInputError(const absl::Status& status) {
  return status.GetPayload(kInputPayload).has_value();
}

size_t FindInvalidUtf8(absl::string_view text) {
  const auto* begin = reinterpret_cast<const unsigned char*>(text.data());
  const unsigned char* end = begin + text.size();
  const unsigned char* p = begin;
  while (p < end) {
    // ASCII runs are the common case: skip them without the table.
    if (*p < 0x80) {
      ++p;
      continue;
    }
    size_t length = SequenceLength(p, end);
    if (length == 0) return static_cast<size_t>(p - begin);
    p += length;
  }
  return absl::string_view::npos;
}

absl::Status CheckUtf8(absl::string_view text, absl::string_view name) {
  if (text.size() >= 2 &&
      ((text[0] == '\xFF' && text[1] == '\xFE') || (text[0] == '\xFE' && text[1] == '\xFF'))) {
    return absl::InvalidArgumentError(
        absl::StrCat(name,
                     ": the file is UTF-16 (it starts with a UTF-16 byte order mark); "
                     "save it as UTF-8"));
  }
  const size_t bad = FindInvalidUtf8(text);
  if (bad == absl::string_view::npos) return absl::OkStatus();
  const absl::string_view before = text.substr(0, bad);
  const size_t line = 1 + std::count(before.begin(), before.end(), '\n');
  return absl::InvalidArgumentError(
      absl::StrCat(name, ": not valid UTF-8 at byte ", bad, " (line ", line, ")"));
}

absl::StatusOr<std::string> ReadInputFile(absl::string_view path) {
  if (path.empty()) return InputError("the file name is empty");
  const std::string name(path);
  struct stat st;
  if (::stat(name.c_str(), &st) != 0) return InputError(absl::StrCat(path, ": ", Reason(errno)));
  // Reading a directory fails with EISDIR only at read(2), which ReadFileToString reports as
  // UNAVAILABLE; say what it is instead. Pipes (`<(...)`) and devices are read as they are.
  if (S_ISDIR(st.st_mode)) return InputError(absl::StrCat(path, ": is a directory"));
  if (::access(name.c_str(), R_OK) != 0) {
    return InputError(absl::StrCat(path, ": ", Reason(errno)));
  }
  absl::StatusOr<std::string> text = ReadFileToString(path);
  // Its message names the path and the system's reason already.
  if (!text.ok()) return InputError(text.status().message());
  return text;
}

}  // namespace regatta::cli
