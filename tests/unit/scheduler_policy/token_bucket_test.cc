#include "src/scheduler/policy/token_bucket.h"

#include "gtest/gtest.h"

namespace regatta::scheduler {
namespace {

TEST(TokenBucketTest, StartsFullRefillsAtItsRateAndCapsAtTheBurst) {
  const absl::Time t0 = absl::FromUnixSeconds(1000);
  TokenBucket bucket(/*rate=*/10, /*burst=*/5, t0);
  EXPECT_EQ(bucket.Available(t0), 5);
  bucket.Take(5);
  EXPECT_EQ(bucket.Available(t0), 0);
  EXPECT_EQ(bucket.Available(t0 + absl::Milliseconds(250)), 2);  // 2.5 tokens
  bucket.Take(2);
  EXPECT_EQ(bucket.Available(t0 + absl::Milliseconds(300)), 1);  // 0.5 + 0.5
  EXPECT_EQ(bucket.Available(t0 + absl::Seconds(60)), 5);        // capped
  bucket.Take(100);                                              // never below zero
  EXPECT_EQ(bucket.Available(t0 + absl::Seconds(60)), 0);
  // A clock going backwards adds nothing.
  EXPECT_EQ(bucket.Available(t0), 0);
  // Full once waiting would add nothing more: 5 tokens at 10/s take half a second.
  EXPECT_FALSE(bucket.Full(t0 + absl::Seconds(60)));
  EXPECT_FALSE(bucket.Full(t0 + absl::Seconds(60) + absl::Milliseconds(400)));
  EXPECT_TRUE(bucket.Full(t0 + absl::Seconds(60) + absl::Milliseconds(500)));
}

TEST(TokenBucketTest, ZeroRateMeansNoLimit) {
  TokenBucket bucket(0, 0, absl::UnixEpoch());
  EXPECT_TRUE(bucket.unlimited());
  EXPECT_TRUE(bucket.Full(absl::UnixEpoch()));
  bucket.Take(1'000'000);
  EXPECT_EQ(bucket.Available(absl::UnixEpoch()), -1);
}

}  // namespace
}  // namespace regatta::scheduler
