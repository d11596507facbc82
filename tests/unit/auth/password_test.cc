#include "src/api/auth/password.h"

#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/api/auth/crypto.h"

namespace regatta::auth {
namespace {

TEST(HashPasswordTest, ProducesVerifiableArgon2idHash) {
  absl::StatusOr<std::string> hash = HashPassword("s3cret", PasswordHashParams::Minimum());
  ASSERT_TRUE(hash.ok()) << hash.status();
  EXPECT_TRUE(absl::StartsWith(*hash, "$argon2id$v=19$m=8,t=1,p=1$")) << *hash;
  EXPECT_TRUE(IsArgon2idHash(*hash));
  EXPECT_TRUE(VerifyPassword("s3cret", *hash));
  EXPECT_FALSE(VerifyPassword("s3cret ", *hash));
  EXPECT_FALSE(VerifyPassword("", *hash));
}

TEST(HashPasswordTest, SaltsEachHash) {
  auto a = HashPassword("pw", PasswordHashParams::Minimum());
  auto b = HashPassword("pw", PasswordHashParams::Minimum());
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
}

TEST(HashPasswordTest, InteractiveParamsAreLibsodiumInteractive) {
  PasswordHashParams params = PasswordHashParams::Interactive();
  EXPECT_EQ(params.opslimit, 2u);
  EXPECT_EQ(params.memlimit, 64u << 20);
}

TEST(HashPasswordTest, RejectsEmptyPasswordAndTooLowCost) {
  EXPECT_EQ(HashPassword("", PasswordHashParams::Minimum()).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(HashPassword("pw", PasswordHashParams{0, 8192}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(IsArgon2idHashTest, RejectsOtherFormats) {
  EXPECT_FALSE(IsArgon2idHash("hunter2"));
  EXPECT_FALSE(IsArgon2idHash("$argon2i$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA"));
  EXPECT_FALSE(IsArgon2idHash("$2b$12$abcdefghijklmnopqrstuv"));  // bcrypt
  EXPECT_FALSE(IsArgon2idHash("$argon2id$v=19$m=8,t=1$c2FsdA$aGFzaA"));
  EXPECT_FALSE(IsArgon2idHash("$argon2id$v=19$m=8,t=1,p=1$$aGFzaA"));
  EXPECT_TRUE(IsArgon2idHash("$argon2id$v=19$m=8,t=1,p=1$c2FsdA$aGFzaA"));
}

TEST(HashTokenTest, IsLowerCaseSha256Hex) {
  // echo -n abc | sha256sum
  EXPECT_EQ(HashToken("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_TRUE(IsSha256Hex(HashToken("")));
}

TEST(Base64DecodeTest, AcceptsPaddedAndUnpaddedRejectsGarbage) {
  EXPECT_EQ(*Base64Decode("YWxpY2U6cHc="), "alice:pw");
  EXPECT_EQ(*Base64Decode("YWxpY2U6cHc"), "alice:pw");
  EXPECT_FALSE(Base64Decode("not base64!").ok());
  EXPECT_FALSE(Base64Decode("YWxpY2U6cHc=junk").ok());
}

}  // namespace
}  // namespace regatta::auth
