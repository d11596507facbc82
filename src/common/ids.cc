#include "src/common/ids.h"

#include <array>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace regatta {
namespace {

constexpr char kCrockford[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

int DecodeCrockford(char c) {
  if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  for (int i = 0; i < 32; ++i) {
    if (kCrockford[i] == c) return i;
  }
  return -1;
}

}  // namespace

std::string EncodeUlid(uint64_t time_ms, uint16_t rand_hi, uint64_t rand_lo) {
  // 128 bits: [48 time][16 rand_hi][64 rand_lo], written as 26 base32 digits (130 bits, the
  // top two always zero).
  unsigned __int128 value = (static_cast<unsigned __int128>(time_ms & 0xFFFFFFFFFFFFULL) << 80) |
                            (static_cast<unsigned __int128>(rand_hi) << 64) | rand_lo;
  std::string out(26, '0');
  for (int i = 25; i >= 0; --i) {
    out[i] = kCrockford[static_cast<int>(value & 31)];
    value >>= 5;
  }
  return out;
}

bool IsValidUlid(absl::string_view id) {
  if (id.size() != 26) return false;
  if (DecodeCrockford(id[0]) < 0 || DecodeCrockford(id[0]) > 7) return false;
  for (char c : id) {
    if (DecodeCrockford(c) < 0) return false;
  }
  return true;
}

absl::StatusOr<uint64_t> UlidTimeMs(absl::string_view id) {
  if (!IsValidUlid(id)) return absl::InvalidArgumentError(absl::StrFormat("not a ULID: %s", id));
  uint64_t ms = 0;
  for (int i = 0; i < 10; ++i) ms = (ms << 5) | static_cast<uint64_t>(DecodeCrockford(id[i]));
  return ms;
}

UlidGenerator::UlidGenerator(const Clock* clock) : clock_(clock), seed_(0), deterministic_(false) {}

UlidGenerator::UlidGenerator(const Clock* clock, uint64_t seed)
    : clock_(clock), seed_(seed), deterministic_(true) {}

std::string UlidGenerator::NewId() {
  const uint64_t now_ms = static_cast<uint64_t>(absl::ToUnixMillis(clock_->Now()));
  absl::MutexLock lock(&mu_);
  if (now_ms > last_ms_) {
    last_ms_ = now_ms;
    if (deterministic_) {
      // splitmix64 keeps the test sequence reproducible.
      seed_ += 0x9E3779B97F4A7C15ULL;
      uint64_t z = seed_;
      z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
      z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
      rand_lo_ = z ^ (z >> 31);
      rand_hi_ = static_cast<uint16_t>(seed_ >> 48);
    } else {
      rand_lo_ = absl::Uniform<uint64_t>(bitgen_);
      rand_hi_ = absl::Uniform<uint16_t>(bitgen_);
    }
    // Leave headroom so increments within one millisecond never overflow in practice.
    rand_hi_ &= 0x7FFF;
  } else {
    // Same (or earlier: clock went back) millisecond: keep monotonic by incrementing.
    if (++rand_lo_ == 0) ++rand_hi_;
  }
  return EncodeUlid(last_ms_, rand_hi_, rand_lo_);
}

std::string SequentialIdGenerator::NewId() {
  absl::MutexLock lock(&mu_);
  return absl::StrFormat("%s-%06d", prefix_, next_++);
}

}  // namespace regatta
