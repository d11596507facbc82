#ifndef REGATTA_SRC_CLI_INPUT_FILE_H_
#define REGATTA_SRC_CLI_INPUT_FILE_H_

// Reading the files the CLI sends (job files, pipeline specs, queue and device YAML): a path
// that cannot be read is refused naming it, before anything is sent, and so is text that is not
// UTF-8 (protobuf strings must be; the call would otherwise fail with an empty INTERNAL error).

#include <cstddef>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace regatta::cli {

// A status that app.cc reports as a bad input path: exit code 2, one line
// "regatta: <verb>: <message>" without the usage hint.
absl::Status InputError(absl::string_view message);
bool IsInputError(const absl::Status& status);

// The offset of the first byte of `text` that is not part of well-formed UTF-8 (RFC 3629: no
// overlong forms, surrogates or code points past U+10FFFF), or npos when all of it is.
size_t FindInvalidUtf8(absl::string_view text);

// INVALID_ARGUMENT "NAME: not valid UTF-8 at byte N (line L)" (a UTF-16 file is named
// as such); OK for UTF-8 text.
absl::Status CheckUtf8(absl::string_view text, absl::string_view name);

// The contents of the file at `path`: InputError "PATH: is a directory", "PATH: no such file",
// "PATH: permission denied" (or the system's reason) when it cannot be read.
absl::StatusOr<std::string> ReadInputFile(absl::string_view path);

}  // namespace regatta::cli

#endif  // REGATTA_SRC_CLI_INPUT_FILE_H_
