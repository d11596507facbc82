#ifndef REGATTA_SRC_COMMON_STATUS_MACROS_H_
#define REGATTA_SRC_COMMON_STATUS_MACROS_H_

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function if `expr` (an absl::Status) is not OK.
#define RETURN_IF_ERROR(expr)                          \
  do {                                                 \
    ::absl::Status regatta_status_ = (expr);           \
    if (!regatta_status_.ok()) return regatta_status_; \
  } while (0)

#define REGATTA_STATUS_CONCAT_INNER_(a, b) a##b
#define REGATTA_STATUS_CONCAT_(a, b) REGATTA_STATUS_CONCAT_INNER_(a, b)

// ASSIGN_OR_RETURN(auto x, MaybeX()); assigns the value of an absl::StatusOr or returns its
// status from the enclosing function.
#define ASSIGN_OR_RETURN(lhs, expr) \
  REGATTA_ASSIGN_OR_RETURN_IMPL_(REGATTA_STATUS_CONCAT_(regatta_statusor_, __LINE__), lhs, expr)

#define REGATTA_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                   \
  if (!statusor.ok()) return std::move(statusor).status();  \
  lhs = std::move(statusor).value()

#endif  // REGATTA_SRC_COMMON_STATUS_MACROS_H_
