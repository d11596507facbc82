#include "src/common/logging.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta {
namespace {

TEST(LoggingTest, TextFieldsQuoteWhenNeeded) {
  EXPECT_EQ(LogLine("submitted", "queue", "a", "jobs", 3), "submitted queue=a jobs=3");
  EXPECT_EQ(LogLine("x", "msg", "two words"), "x msg=\"two words\"");
  EXPECT_EQ(LogLine("x", "empty", ""), "x empty=\"\"");
}

}  // namespace
}  // namespace regatta
