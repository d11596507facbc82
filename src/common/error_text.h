#ifndef REGATTA_SRC_COMMON_ERROR_TEXT_H_
#define REGATTA_SRC_COMMON_ERROR_TEXT_H_

#include <cstddef>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace regatta {

// How much of a client's input an error message may echo (a name, a value).
inline constexpr size_t kMaxEchoBytes = 200;
// The most any status message leaving the server may carry, whatever produced it.
inline constexpr size_t kMaxStatusMessageBytes = 4096;

// `text` itself when it has at most `max_bytes`, else its first bytes (cut on a UTF-8 character
// boundary) followed by "… (N bytes)" so the reader knows it was cut and how long it was.
inline std::string Abbreviate(absl::string_view text, size_t max_bytes = kMaxEchoBytes) {
  if (text.size() <= max_bytes) return std::string(text);
  size_t cut = max_bytes;
  // Back up over UTF-8 continuation bytes (10xxxxxx) so no character is split.
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return absl::StrCat(text.substr(0, cut), "\xE2\x80\xA6 (", text.size(), " bytes)");
}

// True if `text` holds a C0 control character or DEL. A NUL cuts a C string short (what is shown
// then differs from what runs); the others have no meaning in names, paths or arguments.
inline bool HasControlChar(absl::string_view text, bool allow_tab_newline = false) {
  for (char ch : text) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (allow_tab_newline && (c == '\t' || c == '\n' || c == '\r')) continue;
    if (c < 0x20 || c == 0x7F) return true;
  }
  return false;
}

}  // namespace regatta

#endif  // REGATTA_SRC_COMMON_ERROR_TEXT_H_
