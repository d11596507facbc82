#ifndef REGATTA_SRC_PIPELINES_AUTHORING_CONDITION_H_
#define REGATTA_SRC_PIPELINES_AUTHORING_CONDITION_H_

// A task's `when` expression (`params.rows > 10 && prep.ok == 'yes'`) rewritten into the CEL the
// kfp SDK writes in triggerPolicy.condition: every reference replaced by the operand `resolve`
// returns for it, e.g. `int(inputs.parameter_values['pipelinechannel--rows'])`.

#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace regatta::pipelines::authoring {

// A reference is a bare name or dotted names (`item`, `params.rows`, `make-data.count`); quoted
// strings, numbers, operators, true/false/null and the casts int(), double(), string(), bool()
// are copied as they are. The result must parse as the CEL subset of src/pipelines/cel.
// INVALID_ARGUMENT (without a path: the caller adds it) on a syntax error or what `resolve`
// rejects.
absl::StatusOr<std::string> TranslateCondition(
    absl::string_view expression,
    const std::function<absl::StatusOr<std::string>(const std::string& reference)>& resolve);

}  // namespace regatta::pipelines::authoring

#endif  // REGATTA_SRC_PIPELINES_AUTHORING_CONDITION_H_
