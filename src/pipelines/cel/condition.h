#ifndef REGATTA_SRC_PIPELINES_CEL_CONDITION_H_
#define REGATTA_SRC_PIPELINES_CEL_CONDITION_H_

// The subset of CEL that the kfp 2.x SDK writes into a task's triggerPolicy.condition, e.g.
//   !(int(inputs.parameter_values['pipelinechannel--n']) < 5000) && inputs.parameter_values['b'] ==
//   true
//
// Supported: literals (strings in ' or " with backslash escapes, ints, doubles, true, false,
// null), parameter references `inputs.parameter_values['k']` (also the older
// `inputs.parameters['k']`), comparisons == != < <= > >=, && || ! and unary minus, parentheses,
// and the casts int(), double(), string(), bool().
//
// Semantics follow CEL: ints and doubles compare numerically with each other; values of different
// kinds are unequal under == and an error under ordering; && and || are commutative over errors
// (`false && <error>` is false, `true || <error>` is true); casts of strings parse them
// (int('3') is 3, int('x') is an error); int(double) truncates toward zero. Parameter values are
// JSON as kfp passes them (numbers may arrive as doubles, hence the int() casts the SDK emits).

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace regatta::pipelines::cel {

struct Node;

// A parsed condition; cheap to copy (the tree is shared and immutable) and safe to evaluate from
// several threads at once.
class CompiledCondition {
 public:
  const std::string& text() const { return text_; }

 private:
  friend absl::StatusOr<CompiledCondition> ParseCondition(absl::string_view text);
  friend absl::StatusOr<bool> Evaluate(const CompiledCondition& condition,
                                       const nlohmann::json& parameter_values);
  std::string text_;
  std::shared_ptr<const Node> root_;
};

// INVALID_ARGUMENT naming the 1-based column on a syntax error or an unsupported construct.
absl::StatusOr<CompiledCondition> ParseCondition(absl::string_view text);

// `parameter_values` is a JSON object of the task's input parameter values. INVALID_ARGUMENT when
// a referenced key is missing (the error names it), on a type error (no matching overload, failed
// cast), or when the condition's value is not a bool.
absl::StatusOr<bool> Evaluate(const CompiledCondition& condition,
                              const nlohmann::json& parameter_values);

}  // namespace regatta::pipelines::cel

#endif  // REGATTA_SRC_PIPELINES_CEL_CONDITION_H_
