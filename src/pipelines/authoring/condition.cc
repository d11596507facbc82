#include "src/pipelines/authoring/condition.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "src/common/status_macros.h"
#include "src/pipelines/cel/condition.h"

namespace regatta::pipelines::authoring {
namespace {

bool IsNameStart(char c) { return absl::ascii_isalpha(c) || c == '_'; }
// Task names have dashes; the CEL subset has no binary minus, so a dash inside a name is safe.
bool IsNameChar(char c) { return absl::ascii_isalnum(c) || c == '_' || c == '-'; }

bool IsCast(absl::string_view word) {
  return word == "int" || word == "double" || word == "string" || word == "bool";
}

}  // namespace

absl::StatusOr<std::string> TranslateCondition(
    absl::string_view expression,
    const std::function<absl::StatusOr<std::string>(const std::string& reference)>& resolve) {
  std::string out;
  size_t i = 0;
  while (i < expression.size()) {
    const char c = expression[i];
    if (c == '\'' || c == '"') {
      // A string literal is copied whole, so a dotted word inside it is not a reference.
      size_t end = i + 1;
      while (end < expression.size() && expression[end] != c) {
        end += expression[end] == '\\' ? 2 : 1;
      }
      if (end >= expression.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unterminated string starting at column ", i + 1));
      }
      absl::StrAppend(&out, expression.substr(i, end + 1 - i));
      i = end + 1;
      continue;
    }
    if (!IsNameStart(c)) {
      out.push_back(c);
      ++i;
      continue;
    }
    size_t end = i;
    while (end < expression.size() &&
           (IsNameChar(expression[end]) || (expression[end] == '.' && end + 1 < expression.size() &&
                                            IsNameStart(expression[end + 1])))) {
      ++end;
    }
    const std::string word(expression.substr(i, end - i));
    size_t next = end;
    while (next < expression.size() && absl::ascii_isspace(expression[next])) ++next;
    const bool called = next < expression.size() && expression[next] == '(';
    if (word == "true" || word == "false" || word == "null" || (called && IsCast(word))) {
      out.append(word);
    } else {
      ASSIGN_OR_RETURN(std::string operand, resolve(word));
      out.append(operand);
    }
    i = end;
  }
  absl::StatusOr<cel::CompiledCondition> parsed = cel::ParseCondition(out);
  if (!parsed.ok()) {
    // The column counts in the rewritten text, which the user never wrote.
    absl::string_view reason = parsed.status().message();
    if (absl::ConsumePrefix(&reason, "column ")) reason.remove_prefix(reason.find(": ") + 2);
    return absl::InvalidArgumentError(
        absl::StrCat("not a supported condition: ", reason, " in '", expression, "'"));
  }
  return out;
}

}  // namespace regatta::pipelines::authoring
