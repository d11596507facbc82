#ifndef REGATTA_TESTS_TESTING_TEST_DIR_H_
#define REGATTA_TESTS_TESTING_TEST_DIR_H_

#include <string>

#include "absl/strings/string_view.h"

namespace regatta::testing {

// Creates a fresh directory "<TEST_TMPDIR or /tmp>/<prefix>XXXXXX" and returns its path, or ""
// if it cannot (the caller asserts).
std::string MakeTestDir(absl::string_view prefix);

}  // namespace regatta::testing

#endif  // REGATTA_TESTS_TESTING_TEST_DIR_H_
