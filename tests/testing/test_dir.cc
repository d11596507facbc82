#include "tests/testing/test_dir.h"

#include <stdlib.h>

#include "absl/strings/str_cat.h"

namespace regatta::testing {

std::string MakeTestDir(absl::string_view prefix) {
  const char* tmp = getenv("TEST_TMPDIR");
  std::string dir =
      absl::StrCat(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp", "/", prefix, "XXXXXX");
  return mkdtemp(dir.data()) != nullptr ? dir : "";
}

}  // namespace regatta::testing
