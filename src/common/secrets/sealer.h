#ifndef REGATTA_SRC_COMMON_SECRETS_SEALER_H_
#define REGATTA_SRC_COMMON_SECRETS_SEALER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace regatta::secrets {

// A sealed value is text, so that it fits string fields of the log's protobufs:
//   sealed:v1:<key id>:<base64 of a 24-byte nonce, then XChaCha20-Poly1305 ciphertext and tag>
// The associated data binds it to its key id and to a context (what it is the value of, e.g.
// "env/TOKEN"), so a sealed value copied into another field does not open there.
inline constexpr absl::string_view kSealedPrefix = "sealed:v1:";

// True if `value` has the sealed form's prefix (it may still fail to open).
bool IsSealed(absl::string_view value);

// The key id a sealed value names, or "" if it is not sealed.
std::string SealedKeyId(absl::string_view value);

// One line of a key file: "<id> <base64 of 32 random bytes>".
std::string NewKeyLine(absl::string_view id);

// The keys of a key file. The file holds one key per line, "<id> <base64 key>" (ids of
// letters, digits, '.', '_', '-'; keys of 32 bytes, as `openssl rand -base64 32` prints), with
// '#' comments and blank lines. The first key seals; every key opens, which is how keys are
// rotated: a new first line, and the old key kept below it while values sealed with it remain.
class Sealer {
 public:
  // Keys from a key file's text; `source` names it in errors.
  static absl::StatusOr<std::unique_ptr<Sealer>> FromText(absl::string_view text,
                                                          absl::string_view source);
  // Reads the key file at `path`, which must be readable by its owner only (no group or other
  // permission bits). With `create_if_missing`, a missing file is created (mode 0600) with one
  // new key.
  static absl::StatusOr<std::unique_ptr<Sealer>> FromFile(const std::string& path,
                                                          bool create_if_missing);

  // Re-reads the key file (SIGHUP); on error the keys in use stay.
  absl::Status Reload();

  // Seals `plaintext` with the first key.
  absl::StatusOr<std::string> Seal(absl::string_view plaintext, absl::string_view context) const;

  // Opens a sealed value. A value that is not sealed (written before sealing existed) is
  // returned as it is. FAILED_PRECONDITION if its key is not in the file, DATA_LOSS if it does
  // not open (altered, or sealed for another context).
  absl::StatusOr<std::string> Open(absl::string_view value, absl::string_view context) const;

  // The id of the key that seals.
  std::string sealing_key_id() const;
  std::vector<std::string> key_ids() const;
  const std::string& path() const { return path_; }

 private:
  struct Key {
    std::string id;
    std::string bytes;
  };
  static absl::StatusOr<std::vector<Key>> ParseKeys(absl::string_view text,
                                                    absl::string_view source);
  static absl::StatusOr<std::vector<Key>> ReadKeyFile(const std::string& path,
                                                      bool create_if_missing);
  Sealer(std::string path, std::vector<Key> keys)
      : path_(std::move(path)), keys_(std::move(keys)) {}

  const std::string path_;  // "" when made from text
  mutable absl::Mutex mu_;
  std::vector<Key> keys_ ABSL_GUARDED_BY(mu_);
};

}  // namespace regatta::secrets

#endif  // REGATTA_SRC_COMMON_SECRETS_SEALER_H_
