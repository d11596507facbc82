#include "src/cli/input_file.h"

#include <sys/stat.h>

#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::cli {
namespace {

constexpr size_t kValid = absl::string_view::npos;

TEST(FindInvalidUtf8Test, AcceptsWellFormedText) {
  EXPECT_EQ(FindInvalidUtf8(""), kValid);
  EXPECT_EQ(FindInvalidUtf8("plain ascii\n"), kValid);
  // 2, 3 and 4 byte forms, including the edges of each range.
  EXPECT_EQ(FindInvalidUtf8("caf\xC3\xA9 \xC2\x80 \xDF\xBF"), kValid);
  EXPECT_EQ(FindInvalidUtf8("\xE0\xA0\x80 \xE2\x82\xAC \xED\x9F\xBF \xEE\x80\x80 \xEF\xBF\xBF"),
            kValid);
  EXPECT_EQ(FindInvalidUtf8("\xF0\x90\x80\x80 \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"), kValid);
}

TEST(FindInvalidUtf8Test, NamesTheFirstBadByte) {
  EXPECT_EQ(FindInvalidUtf8("caf\xE9"), 3u);           // Latin-1
  EXPECT_EQ(FindInvalidUtf8("ab\x80"), 2u);            // a lone continuation byte
  EXPECT_EQ(FindInvalidUtf8("\xC0\x80"), 0u);          // overlong NUL
  EXPECT_EQ(FindInvalidUtf8("x\xC1\xBF"), 1u);         // overlong
  EXPECT_EQ(FindInvalidUtf8("\xE0\x9F\xBF"), 0u);      // overlong 3-byte form
  EXPECT_EQ(FindInvalidUtf8("ok \xED\xA0\x80"), 3u);   // a surrogate (U+D800)
  EXPECT_EQ(FindInvalidUtf8("\xF0\x8F\xBF\xBF"), 0u);  // overlong 4-byte form
  EXPECT_EQ(FindInvalidUtf8("\xF4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(FindInvalidUtf8("\xF5\x80\x80\x80"), 0u);  // no such lead byte
  EXPECT_EQ(FindInvalidUtf8("end \xE2\x82"), 4u);      // cut short
  EXPECT_EQ(FindInvalidUtf8("\xE2\x28\xA1"), 0u);      // a bad continuation
  EXPECT_EQ(FindInvalidUtf8("\xC3\xA9\xFF"), 2u);      // after a good sequence
}

TEST(CheckUtf8Test, MessageNamesTheFileByteAndLine) {
  EXPECT_TRUE(CheckUtf8("a: b\n", "f.yaml").ok());
  absl::Status s = CheckUtf8("a: b\nc: caf\xE9\n", "f.yaml");
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(), "f.yaml: not valid UTF-8 at byte 11 (line 2)");
  EXPECT_FALSE(IsInputError(s));
  s = CheckUtf8(std::string("\xFF\xFE"
                            "a\0",
                            4),
                "w.yaml");
  EXPECT_THAT(s.message(), ::testing::HasSubstr("w.yaml: the file is UTF-16"));
}

TEST(ReadInputFileTest, RefusesWhatIsNotAReadableFile) {
  const std::string dir = ::testing::TempDir();
  auto read = ReadInputFile(dir);
  EXPECT_TRUE(IsInputError(read.status()));
  EXPECT_EQ(read.status().message(), absl::StrCat(dir, ": is a directory"));
  read = ReadInputFile(absl::StrCat(dir, "/no-such-file.yaml"));
  EXPECT_TRUE(IsInputError(read.status()));
  EXPECT_EQ(read.status().message(), absl::StrCat(dir, "/no-such-file.yaml: no such file"));
  read = ReadInputFile("");
  EXPECT_TRUE(IsInputError(read.status()));

  const std::string path = absl::StrCat(dir, "/input-file-test.yaml");
  std::ofstream(path) << "queue: q\n";
  read = ReadInputFile(path);
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(*read, "queue: q\n");
}

}  // namespace
}  // namespace regatta::cli
