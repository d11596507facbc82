// Job files of `regatta submit` (YAML, several documents, merge keys).

#include <cstddef>
#include <cstdint>
#include <string>

#include "src/cli/job_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<regatta::cli::JobFile> file =
      regatta::cli::JobFile::Parse(text, "jobs.yaml", /*batch_size=*/7);
  if (!file.ok()) return 0;
  // Server errors are mapped back to a place in the file.
  for (size_t r = 0; r < file->requests().size(); ++r) {
    (void)file->Attribute(absl::InvalidArgumentError("items[0].task.command: bad"), r);
  }
  return 0;
}
