#include "src/common/resources.h"

#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta {
namespace {

int64_t Milli(absl::string_view text) {
  absl::StatusOr<Quantity> q = Quantity::Parse(text);
  EXPECT_TRUE(q.ok()) << text << ": " << q.status();
  return q.ok() ? q->milli() : -1;
}

TEST(QuantityTest, ParsesKubernetesNotation) {
  EXPECT_EQ(Milli("100m"), 100);
  EXPECT_EQ(Milli("2"), 2000);
  EXPECT_EQ(Milli("0.5"), 500);
  EXPECT_EQ(Milli("1.5k"), 1'500'000);
  EXPECT_EQ(Milli("64Mi"), int64_t{64} * 1024 * 1024 * 1000);
  EXPECT_EQ(Milli("1Gi"), (int64_t{1} << 30) * 1000);
  EXPECT_EQ(Milli("1G"), int64_t{1'000'000'000} * 1000);
  EXPECT_EQ(Milli("1e3"), 1'000'000);
  EXPECT_EQ(Milli("+3"), 3000);
  EXPECT_EQ(Milli(" 4 "), 4000);
}

TEST(QuantityTest, RoundsSubMilliUpLikeKubernetes) {
  EXPECT_EQ(Milli("1n"), 1);
  EXPECT_EQ(Milli("1500u"), 2);
  EXPECT_EQ(Milli("0.0001"), 1);
}

TEST(QuantityTest, RejectsMalformedWithReason) {
  for (const char* bad : {"", "abc", "-1", "1Xi", "1.2.3", "10 m", "1e", "1e999", "m", "9Ei",
                          "99999999999999999999"}) {
    absl::StatusOr<Quantity> q = Quantity::Parse(bad);
    EXPECT_FALSE(q.ok()) << bad;
    EXPECT_EQ(q.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(q.status().message()), testing::HasSubstr("invalid quantity")) << bad;
  }
}

TEST(QuantityTest, CanonicalText) {
  EXPECT_EQ(Quantity::Parse("100m")->ToString(), "100m");
  EXPECT_EQ(Quantity::Parse("2")->ToString(), "2");
  EXPECT_EQ(Quantity::Parse("1024Mi")->ToString(), "1Gi");
  EXPECT_EQ(Quantity::Parse("0")->ToString(), "0");
  EXPECT_EQ(Quantity::Parse("1k")->ToString(), "1000");
}

TEST(QuantityTest, Arithmetic) {
  Quantity a = Quantity::FromMilli(1500), b = Quantity::FromUnits(1);
  EXPECT_EQ((a + b).milli(), 2500);
  EXPECT_EQ((a - b).milli(), 500);
  EXPECT_LT(b, a);
}

TEST(QuantityTest, HugeInputsAreErrorsNotOverflow) {
  // 18 decimal places of a small number: divided before the range check.
  EXPECT_EQ(Milli("1.000000000000000000"), 1000);
  EXPECT_EQ(Milli("0.000000000000000001k"), 1);
  // Digits and a multiplier each near 2^70: the product would overflow __int128.
  for (const char* text :
       {"99999999999999999999E", "922337203685477580799Ei", "9e18", "9223372036854775808m"}) {
    absl::StatusOr<Quantity> q = Quantity::Parse(text);
    ASSERT_FALSE(q.ok()) << text << " parsed as " << q->milli();
    EXPECT_THAT(std::string(q.status().message()), ::testing::HasSubstr("too large")) << text;
  }
  EXPECT_EQ(Milli("9223372036854775807m"), std::numeric_limits<int64_t>::max());
}

TEST(QuantityTest, ErrorsEchoBoundedInput) {
  absl::StatusOr<Quantity> q = Quantity::Parse(std::string(1 << 20, 'x'));
  ASSERT_FALSE(q.ok());
  EXPECT_LT(q.status().message().size(), 200u);
}

TEST(ResourceListTest, SumsSaturateInsteadOfWrapping) {
  const int64_t max = std::numeric_limits<int64_t>::max();
  ResourceList a;
  a.Set(0, Quantity::FromMilli(max - 1));
  ResourceList b;
  b.Set(0, Quantity::FromMilli(10));
  a.Add(b);
  EXPECT_EQ(a.Get(0).milli(), max);
  ResourceList c;
  c.Set(0, Quantity::FromMilli(std::numeric_limits<int64_t>::min() + 1));
  c.Subtract(b);
  EXPECT_EQ(c.Get(0).milli(), std::numeric_limits<int64_t>::min());
}

TEST(ResourceNamesTest, InternsDenseAndStable) {
  ResourceNames names;
  EXPECT_EQ(names.Find("cpu"), ResourceNames::kCpu);
  EXPECT_EQ(names.Find("memory"), ResourceNames::kMemory);
  EXPECT_EQ(names.Find("nvidia.com/gpu"), ResourceNames::kGpu);
  int dev = names.Intern("example.com/camera");
  EXPECT_EQ(dev, 4);
  EXPECT_EQ(names.Intern("example.com/camera"), dev);
  EXPECT_EQ(names.Name(dev), "example.com/camera");
  EXPECT_EQ(names.Find("nope"), -1);
}

TEST(ResourceNameTest, Validity) {
  EXPECT_TRUE(IsValidResourceName("cpu"));
  EXPECT_TRUE(IsValidResourceName("nvidia.com/gpu"));
  EXPECT_TRUE(IsValidResourceName("akri.sh/camera-1a2b3c"));
  EXPECT_FALSE(IsValidResourceName(""));
  EXPECT_FALSE(IsValidResourceName("/gpu"));
  EXPECT_FALSE(IsValidResourceName("bad name"));
  EXPECT_FALSE(IsValidResourceName("-cpu"));
  EXPECT_FALSE(IsValidResourceName("a/b/c"));
}

TEST(ResourceListTest, FromStringsAddSubtractFit) {
  ResourceNames names;
  auto a = ResourceList::FromStrings({{"cpu", "2"}, {"memory", "1Gi"}}, names);
  ASSERT_TRUE(a.ok());
  auto b = ResourceList::FromStrings({{"cpu", "500m"}}, names);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->FitsIn(*a));
  EXPECT_FALSE(a->FitsIn(*b));
  ResourceList c = *a;
  c.Subtract(*b);
  EXPECT_EQ(c.Get(ResourceNames::kCpu).milli(), 1500);
  c.Add(*b);
  EXPECT_EQ(c, *a);
  EXPECT_THAT(a->ToStrings(names),
              testing::ElementsAre(testing::Pair("cpu", "2"), testing::Pair("memory", "1Gi")));
}

TEST(ResourceListTest, ErrorsNameTheResource) {
  ResourceNames names;
  auto bad = ResourceList::FromStrings({{"memory", "lots"}}, names);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), testing::StartsWith("memory: "));
  auto bad_name = ResourceList::FromStrings({{"a b", "1"}}, names);
  EXPECT_FALSE(bad_name.ok());
}

}  // namespace
}  // namespace regatta
