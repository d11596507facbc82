#ifndef REGATTA_SRC_EXECUTOR_LOCAL_FILES_H_
#define REGATTA_SRC_EXECUTOR_LOCAL_FILES_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

// Small file-system helpers of the process supervisor: errno text, whole-file reads and
// durable (atomic + fsynced) writes.
namespace regatta::executor::local {

// "No such file or directory" for ENOENT; thread-safe (unlike strerror).
std::string ErrnoText(int err);

// An absl::Status for a failed system call: `what` (e.g. "open '/x'") then the errno text, with
// the canonical code that fits errno (NOT_FOUND for ENOENT, PERMISSION_DENIED for EACCES, ...).
absl::Status ErrnoStatus(int err, absl::string_view what);

// The whole file. NOT_FOUND if it does not exist.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Replaces `path` atomically: writes `<dir>/.<name>.tmp`, renames it over `path`. A crash of the
// process leaves either the old or the new contents. With `sync` the file and the directory are
// also fsynced, so the same holds after a crash of the machine.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents,
                                 bool sync = true);

// Overwrites the existing file `path` from its start with `contents`, padded with spaces to
// the file's old size if shorter (for formats that ignore trailing spaces, such as JSON): no
// temporary, so no inode is allocated or freed. A crash of the process during the write may
// leave old and new bytes mixed; use it only where a corrupt file is handled like one written
// a moment too late. Not durable across a machine crash.
absl::Status OverwriteFileInPlace(const std::string& path, absl::string_view contents);

// Removes `path` (a file) if it exists and, with `sync`, fsyncs its directory. OK if it did
// not exist.
absl::Status RemoveFileDurably(const std::string& path, bool sync = true);

// mkdir -p.
absl::Status MakeDirs(const std::string& path);

// fsync of a directory, so renames and unlinks in it are durable.
absl::Status SyncDir(const std::string& dir);

}  // namespace regatta::executor::local

#endif  // REGATTA_SRC_EXECUTOR_LOCAL_FILES_H_
