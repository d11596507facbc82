#include "src/common/secrets/sealer.h"

#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::secrets {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

std::string TempDir() {
  std::string dir = absl::StrCat(::testing::TempDir(), "sealer-XXXXXX");
  return mkdtemp(dir.data());
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteFile(const std::string& path, const std::string& text, mode_t mode) {
  std::ofstream(path) << text;
  chmod(path.c_str(), mode);
}

TEST(SealerTest, SealsAndOpensInItsContextOnly) {
  auto sealer = Sealer::FromText(NewKeyLine("k1"), "keys");
  ASSERT_TRUE(sealer.ok()) << sealer.status();
  absl::StatusOr<std::string> sealed = (*sealer)->Seal("hunter2", "env/TOKEN");
  ASSERT_TRUE(sealed.ok()) << sealed.status();
  EXPECT_THAT(*sealed, StartsWith("sealed:v1:k1:"));
  EXPECT_THAT(*sealed, Not(HasSubstr("hunter2")));
  EXPECT_TRUE(IsSealed(*sealed));
  EXPECT_EQ(SealedKeyId(*sealed), "k1");
  // A fresh nonce each time: the same value never seals the same way twice.
  EXPECT_NE(*sealed, *(*sealer)->Seal("hunter2", "env/TOKEN"));

  EXPECT_EQ(*(*sealer)->Open(*sealed, "env/TOKEN"), "hunter2");
  // Moved to another variable, it does not open.
  EXPECT_EQ((*sealer)->Open(*sealed, "env/OTHER").status().code(), absl::StatusCode::kDataLoss);
  // Nor when a byte of it changed.
  std::string altered = *sealed;
  altered[altered.size() - 3] = altered[altered.size() - 3] == 'A' ? 'B' : 'A';
  EXPECT_EQ((*sealer)->Open(altered, "env/TOKEN").status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ((*sealer)->Open("sealed:v1:k1:###", "env/TOKEN").status().code(),
            absl::StatusCode::kDataLoss);
  // Values from before sealing pass through.
  EXPECT_EQ(*(*sealer)->Open("plain", "env/TOKEN"), "plain");
  EXPECT_FALSE(IsSealed("plain"));
  EXPECT_EQ(SealedKeyId("plain"), "");
  // Empty and binary values too.
  EXPECT_EQ(*(*sealer)->Open(*(*sealer)->Seal("", "c"), "c"), "");
  const std::string binary("\0\xff\x01", 3);
  EXPECT_EQ(*(*sealer)->Open(*(*sealer)->Seal(binary, "c"), "c"), binary);
}

TEST(SealerTest, RotationSealsWithTheFirstKeyAndOpensWithAny) {
  const std::string old_line = NewKeyLine("old");
  auto before = Sealer::FromText(old_line, "keys");
  ASSERT_TRUE(before.ok());
  const std::string sealed_old = *(*before)->Seal("v1", "ctx");

  auto rotated = Sealer::FromText(absl::StrCat(NewKeyLine("new"), "\n", old_line), "keys");
  ASSERT_TRUE(rotated.ok()) << rotated.status();
  EXPECT_EQ((*rotated)->sealing_key_id(), "new");
  EXPECT_THAT((*rotated)->key_ids(), ::testing::ElementsAre("new", "old"));
  EXPECT_EQ(*(*rotated)->Open(sealed_old, "ctx"), "v1");
  const std::string sealed_new = *(*rotated)->Seal("v2", "ctx");
  EXPECT_EQ(SealedKeyId(sealed_new), "new");

  // Once the old key is dropped, its values name it.
  auto retired = Sealer::FromText(NewKeyLine("new"), "keys");
  absl::Status gone = (*retired)->Open(sealed_old, "ctx").status();
  EXPECT_EQ(gone.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(gone.message(), HasSubstr("key \"old\""));
  // A key with the same id but other bytes does not open it.
  EXPECT_EQ((*retired)->Open(sealed_new, "ctx").status().code(), absl::StatusCode::kDataLoss);
}

TEST(SealerTest, KeyFileErrorsNameTheLine) {
  auto error = [](const std::string& text) {
    return std::string(Sealer::FromText(text, "keys.txt").status().message());
  };
  EXPECT_THAT(error(""), HasSubstr("keys.txt: no key"));
  EXPECT_THAT(error("# only a comment\n\n"), HasSubstr("no key"));
  EXPECT_THAT(error("k1\n"), HasSubstr("keys.txt:1: expected"));
  EXPECT_THAT(error("# c\nk1 c2hvcnQ=\n"), HasSubstr("keys.txt:2: key \"k1\": expected 32 bytes"));
  EXPECT_THAT(error("k/1 " + NewKeyLine("x").substr(2)), HasSubstr("key id"));
  const std::string line = NewKeyLine("dup");
  EXPECT_THAT(error(line + "\n" + line), HasSubstr("keys.txt:2: key id \"dup\" repeated"));
  // A key file's error never shows key material.
  EXPECT_THAT(error("k1 " + std::string(43, 'A') + "@"), Not(HasSubstr("AAAA")));
}

TEST(SealerTest, CreatesAMissingFileOwnerOnlyAndRefusesOpenFiles) {
  const std::string dir = TempDir();
  const std::string path = dir + "/secrets.key";
  EXPECT_EQ(Sealer::FromFile(path, false).status().code(), absl::StatusCode::kFailedPrecondition);

  auto created = Sealer::FromFile(path, true);
  ASSERT_TRUE(created.ok()) << created.status();
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600);
  EXPECT_THAT((*created)->sealing_key_id(), StartsWith("auto-"));
  const std::string sealed = *(*created)->Seal("s", "ctx");
  // The same file read again opens what was sealed.
  auto again = Sealer::FromFile(path, true);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(*(*again)->Open(sealed, "ctx"), "s");

  chmod(path.c_str(), 0644);
  absl::Status open_file = Sealer::FromFile(path, true).status();
  EXPECT_EQ(open_file.code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(open_file.message(), HasSubstr("chmod 600"));
  std::filesystem::remove_all(dir);
}

TEST(SealerTest, ReloadPicksUpARotationAndKeepsTheKeysOnError) {
  const std::string dir = TempDir();
  const std::string path = dir + "/keys";
  const std::string first = NewKeyLine("first");
  WriteFile(path, first + "\n", 0600);
  auto sealer = Sealer::FromFile(path, false);
  ASSERT_TRUE(sealer.ok()) << sealer.status();
  const std::string sealed_first = *(*sealer)->Seal("a", "ctx");

  WriteFile(path, NewKeyLine("second") + "\n" + first + "\n", 0600);
  ASSERT_TRUE((*sealer)->Reload().ok());
  EXPECT_EQ((*sealer)->sealing_key_id(), "second");
  EXPECT_EQ(*(*sealer)->Open(sealed_first, "ctx"), "a");

  WriteFile(path, "garbage\n", 0600);
  EXPECT_FALSE((*sealer)->Reload().ok());
  EXPECT_EQ((*sealer)->sealing_key_id(), "second");
  EXPECT_EQ(*(*sealer)->Open(sealed_first, "ctx"), "a");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace regatta::secrets
