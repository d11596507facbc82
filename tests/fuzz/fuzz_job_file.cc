// Job files of `regatta submit` (YAML, several documents, merge keys).

#include <cstddef>
#include <cstdint>
#include <string>

#include "src/cli/job_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  (void)regatta::cli::ParseJobFile(text, /*batch_size=*/7);
  return 0;
}
