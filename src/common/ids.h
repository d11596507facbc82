#ifndef REGATTA_SRC_COMMON_IDS_H_
#define REGATTA_SRC_COMMON_IDS_H_

#include <cstdint>
#include <string>

#include "absl/random/random.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "src/common/clock.h"

namespace regatta {

// Generates identifiers; injected so tests get predictable ids.
class IdGenerator {
 public:
  virtual ~IdGenerator() = default;
  virtual std::string NewId() = 0;
};

// ULIDs (https://github.com/ulid/spec): 48-bit millisecond time + 80 random bits, 26 characters
// of Crockford base32, lexicographically sortable by time. Within one millisecond the random
// part is incremented, so ids from one generator are strictly increasing.
class UlidGenerator final : public IdGenerator {
 public:
  explicit UlidGenerator(const Clock* clock);
  // Deterministic sequence for tests.
  UlidGenerator(const Clock* clock, uint64_t seed);
  std::string NewId() override;

 private:
  const Clock* clock_;
  absl::Mutex mu_;
  absl::BitGen bitgen_ ABSL_GUARDED_BY(mu_);
  uint64_t seed_ ABSL_GUARDED_BY(mu_);
  bool deterministic_;
  uint64_t last_ms_ ABSL_GUARDED_BY(mu_) = 0;
  uint16_t rand_hi_ ABSL_GUARDED_BY(mu_) = 0;  // top 16 of the 80 random bits
  uint64_t rand_lo_ ABSL_GUARDED_BY(mu_) = 0;  // low 64 bits
};

// Encodes a ULID from its parts (exposed for tests).
std::string EncodeUlid(uint64_t time_ms, uint16_t rand_hi, uint64_t rand_lo);
// True if `id` is 26 Crockford base32 characters whose first is 0-7.
bool IsValidUlid(absl::string_view id);
// Milliseconds since the epoch encoded in a valid ULID.
absl::StatusOr<uint64_t> UlidTimeMs(absl::string_view id);

// Sequential ids "<prefix>-000001", ... for tests.
class SequentialIdGenerator final : public IdGenerator {
 public:
  explicit SequentialIdGenerator(std::string prefix = "id") : prefix_(std::move(prefix)) {}
  std::string NewId() override;

 private:
  absl::Mutex mu_;
  std::string prefix_;
  uint64_t next_ ABSL_GUARDED_BY(mu_) = 1;
};

}  // namespace regatta

#endif  // REGATTA_SRC_COMMON_IDS_H_
