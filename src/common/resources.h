#ifndef REGATTA_SRC_COMMON_RESOURCES_H_
#define REGATTA_SRC_COMMON_RESOURCES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace regatta {

// A resource amount in fixed-point milli-units (never a double): "100m" cpu is 100, "2" is
// 2000, "64Mi" memory is 64 * 2^20 * 1000.
class Quantity {
 public:
  constexpr Quantity() = default;
  static constexpr Quantity FromMilli(int64_t milli) { return Quantity(milli); }
  static constexpr Quantity FromUnits(int64_t units) { return Quantity(units * 1000); }

  // Parses Kubernetes quantity notation: a non-negative decimal number with an optional binary
  // suffix (Ki Mi Gi Ti Pi Ei), decimal suffix (n u m k M G T P E) or exponent (1e3).
  // Amounts finer than a milli-unit are rounded up, as Kubernetes does; overflow is an error.
  static absl::StatusOr<Quantity> Parse(absl::string_view text);

  constexpr int64_t milli() const { return milli_; }
  // Canonical text: whole units with the largest exact binary suffix (for multiples of 1Ki) or
  // as plain units, else milli-units ("100m").
  std::string ToString() const;

  friend constexpr bool operator==(Quantity a, Quantity b) { return a.milli_ == b.milli_; }
  friend constexpr auto operator<=>(Quantity a, Quantity b) { return a.milli_ <=> b.milli_; }
  friend constexpr Quantity operator+(Quantity a, Quantity b) {
    return Quantity(a.milli_ + b.milli_);
  }
  friend constexpr Quantity operator-(Quantity a, Quantity b) {
    return Quantity(a.milli_ - b.milli_);
  }

 private:
  constexpr explicit Quantity(int64_t milli) : milli_(milli) {}
  int64_t milli_ = 0;
};

// True if `name` is a valid resource name: an optional DNS-subdomain prefix and "/", then
// 1-63 characters of [A-Za-z0-9._-] starting and ending alphanumeric ("cpu", "nvidia.com/gpu").
bool IsValidResourceName(absl::string_view name);

// Interns resource names to dense indices so resource vectors are plain arrays. Thread-safe;
// indices never change once given.
class ResourceNames {
 public:
  ResourceNames();  // pre-interns cpu (0), memory (1), ephemeral-storage (2), nvidia.com/gpu (3)
  static ResourceNames& Global();

  int Intern(absl::string_view name);
  // -1 if never interned.
  int Find(absl::string_view name) const;
  std::string Name(int index) const;
  int size() const;

  static constexpr int kCpu = 0;
  static constexpr int kMemory = 1;
  static constexpr int kEphemeralStorage = 2;
  static constexpr int kGpu = 3;

 private:
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, int> index_ ABSL_GUARDED_BY(mu_);
  std::vector<std::string> names_ ABSL_GUARDED_BY(mu_);
};

// Resource names a job uses to ask for a device: regatta.dev/<instance> or
// regatta.dev/<configuration> (src/scheduler/devices). The scheduler claims device slots for
// them; node allocatable and executor admission do not count them.
inline constexpr absl::string_view kDeviceResourcePrefix = "regatta.dev/";
bool IsDeviceResource(absl::string_view resource);

// A dense vector of quantities indexed by interned resource name; missing entries are zero.
class ResourceList {
 public:
  ResourceList() = default;

  // Parses name -> quantity text; the error names the offending resource.
  static absl::StatusOr<ResourceList> FromStrings(
      const std::vector<std::pair<std::string, std::string>>& entries,
      ResourceNames& names = ResourceNames::Global());

  Quantity Get(int index) const {
    return index < static_cast<int>(milli_.size()) ? Quantity::FromMilli(milli_[index])
                                                   : Quantity();
  }
  void Set(int index, Quantity q);
  void Add(const ResourceList& other);
  void Subtract(const ResourceList& other);
  // True if every entry of this is <= the same entry of `other`.
  bool FitsIn(const ResourceList& other) const;
  bool IsZero() const;
  int size() const { return static_cast<int>(milli_.size()); }
  bool operator==(const ResourceList& other) const;

  std::vector<std::pair<std::string, std::string>> ToStrings(
      const ResourceNames& names = ResourceNames::Global()) const;

 private:
  absl::InlinedVector<int64_t, 4> milli_;
};

}  // namespace regatta

#endif  // REGATTA_SRC_COMMON_RESOURCES_H_
