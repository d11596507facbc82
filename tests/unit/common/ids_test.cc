#include "src/common/ids.h"

#include <set>

#include "gtest/gtest.h"

namespace regatta {
namespace {

TEST(UlidTest, EncodesKnownValue) {
  // All zero bits encode as 26 zeros; the maximum 48-bit time leads with 7.
  EXPECT_EQ(EncodeUlid(0, 0, 0), "00000000000000000000000000");
  EXPECT_EQ(EncodeUlid(0xFFFFFFFFFFFFULL, 0xFFFF, ~0ULL), "7ZZZZZZZZZZZZZZZZZZZZZZZZZ");
  EXPECT_EQ(EncodeUlid(1, 0, 0).substr(0, 10), "0000000001");
}

TEST(UlidTest, TimePrefixRoundTrips) {
  FakeClock clock(absl::FromUnixMillis(1'700'000'123'456));
  UlidGenerator gen(&clock, 42);
  std::string id = gen.NewId();
  EXPECT_TRUE(IsValidUlid(id));
  EXPECT_EQ(*UlidTimeMs(id), 1'700'000'123'456u);
}

TEST(UlidTest, StrictlyIncreasingWithinAndAcrossMilliseconds) {
  FakeClock clock;
  UlidGenerator gen(&clock);
  std::string last;
  for (int i = 0; i < 10000; ++i) {
    if (i % 1000 == 0) clock.Advance(absl::Milliseconds(1));
    std::string id = gen.NewId();
    ASSERT_GT(id, last);
    last = id;
  }
}

TEST(UlidTest, MonotonicWhenClockGoesBack) {
  FakeClock clock;
  UlidGenerator gen(&clock);
  std::string a = gen.NewId();
  clock.Advance(absl::Seconds(-5));
  EXPECT_GT(gen.NewId(), a);
}

TEST(UlidTest, DeterministicWithSeed) {
  FakeClock c1, c2;
  UlidGenerator a(&c1, 7), b(&c2, 7);
  EXPECT_EQ(a.NewId(), b.NewId());
}

TEST(UlidTest, Validation) {
  EXPECT_FALSE(IsValidUlid("short"));
  EXPECT_FALSE(IsValidUlid("8ZZZZZZZZZZZZZZZZZZZZZZZZZ"));  // overflows 128 bits
  EXPECT_FALSE(IsValidUlid("0000000000000000000000000U"));  // U is not Crockford
  EXPECT_FALSE(UlidTimeMs("nope").ok());
}

TEST(SequentialIdTest, Sequence) {
  SequentialIdGenerator gen("job");
  EXPECT_EQ(gen.NewId(), "job-000001");
  EXPECT_EQ(gen.NewId(), "job-000002");
}

TEST(FakeClockTest, Advances) {
  FakeClock clock(absl::FromUnixSeconds(100));
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ(clock.Now(), absl::FromUnixSeconds(105));
}

}  // namespace
}  // namespace regatta
