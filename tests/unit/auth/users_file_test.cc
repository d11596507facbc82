#include "src/api/auth/users_file.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "src/api/auth/password.h"

namespace regatta::auth {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kHash[] = "$argon2id$v=19$m=8,t=1,p=1$c2FsdHNhbHQ$aGFzaGhhc2hoYXNo";
const std::string kTokenHash(64, 'a');

// Parses `yaml` as file "users.yaml" and returns the error message (or "OK").
std::string ErrorOf(const std::string& yaml) {
  absl::StatusOr<UsersFile> file = ParseUsersFile(yaml, "users.yaml");
  if (file.ok()) return "OK";
  EXPECT_EQ(file.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(file.status().message());
}

TEST(UsersFileTest, ParsesUsersAndTokens) {
  const std::string yaml = absl::StrCat(R"(
users:
  - name: alice
    passwordHash: ")",
                                        kHash, R"("
    groups: [team-a, team-b]
  - name: bob
    passwordHash: ")",
                                        kHash, R"("
tokens:
  - name: ci-bot
    tokenSha256: ")",
                                        std::string(64, 'A'), R"("
    groups: [admins]
)");
  absl::StatusOr<UsersFile> file = ParseUsersFile(yaml, "users.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_EQ(file->users.size(), 2u);
  EXPECT_EQ(file->users[0].name, "alice");
  EXPECT_EQ(file->users[0].password_hash, kHash);
  EXPECT_THAT(file->users[0].groups, ElementsAre("team-a", "team-b"));
  EXPECT_TRUE(file->users[1].groups.empty());
  ASSERT_EQ(file->tokens.size(), 1u);
  EXPECT_EQ(file->tokens[0].name, "ci-bot");
  EXPECT_EQ(file->tokens[0].token_sha256, std::string(64, 'a'));  // normalised to lower case
  EXPECT_THAT(file->tokens[0].groups, ElementsAre("admins"));
}

TEST(UsersFileTest, EmptyFileDefinesNobody) {
  absl::StatusOr<UsersFile> file = ParseUsersFile("", "users.yaml");
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_TRUE(file->users.empty());
  EXPECT_TRUE(file->tokens.empty());
  EXPECT_EQ(ErrorOf("users: []\ntokens:\n"), "OK");
}

TEST(UsersFileTest, ErrorsNameFileEntryAndField) {
  const std::string ok_user = absl::StrCat("  - {name: a, passwordHash: \"", kHash, "\"}\n");
  EXPECT_EQ(ErrorOf(absl::StrCat("users:\n", ok_user, "  - {name: b, passwordHash: \"", kHash,
                                 "\"}\n", "  - {name: c, passwordHash: \"$2b$12$bcrypt\"}\n")),
            "users.yaml: users[2].passwordHash: not an argon2id hash (want "
            "\"$argon2id$v=19$m=...\"; generate it with `regatta users hash-password`)");
  EXPECT_THAT(ErrorOf("users:\n  - {name: a}\n"),
              HasSubstr("users.yaml: users[0].passwordHash: required"));
  EXPECT_THAT(ErrorOf(absl::StrCat("users:\n  - {passwordHash: \"", kHash, "\"}\n")),
              HasSubstr("users.yaml: users[0].name: must not be empty"));
  EXPECT_THAT(ErrorOf(absl::StrCat("users:\n", ok_user, "  - {name: 'x:y', passwordHash: \"", kHash,
                                   "\"}\n")),
              HasSubstr("users[1].name: must not contain ':'"));
  EXPECT_THAT(
      ErrorOf(absl::StrCat("users:\n  - {name: anonymous, passwordHash: \"", kHash, "\"}\n")),
      HasSubstr("users[0].name: \"anonymous\" is reserved"));
  EXPECT_THAT(ErrorOf(absl::StrCat("users:\n  - {name: a, passwordHash: \"", kHash,
                                   "\", groups: team-a}\n")),
              HasSubstr("users[0].groups: expected a list of group names"));
  EXPECT_THAT(
      ErrorOf(absl::StrCat("users:\n  - {name: a, passwordHash: \"", kHash, "\", groups: ['']}\n")),
      HasSubstr("users[0].groups[0]: must not be empty"));
  EXPECT_THAT(
      ErrorOf(absl::StrCat("users:\n  - {name: a, passwordHash: \"", kHash, "\", group: [x]}\n")),
      HasSubstr("users.yaml: users[0].group: unknown field"));
  EXPECT_THAT(ErrorOf("tokens:\n  - {name: t, tokenSha256: abc}\n"),
              HasSubstr("users.yaml: tokens[0].tokenSha256: not a SHA-256 hex digest"));
  EXPECT_THAT(ErrorOf("tokens:\n  - {name: t}\n"), HasSubstr("tokens[0].tokenSha256: required"));
  EXPECT_THAT(ErrorOf("groups: [a]\n"), HasSubstr("users.yaml: groups: unknown field"));
  EXPECT_THAT(ErrorOf("users: {alice: x}\n"), HasSubstr("users.yaml: users: expected a list"));
  EXPECT_THAT(ErrorOf("users:\n  - alice\n"),
              HasSubstr("users.yaml: users[0]: expected a mapping"));
  EXPECT_THAT(ErrorOf("- a\n"), HasSubstr("users.yaml: (top level): expected a mapping"));
  EXPECT_THAT(ErrorOf("users: [\n"), HasSubstr("users.yaml:"));
}

TEST(UsersFileTest, PlainTextSecretsAreRefused) {
  EXPECT_THAT(ErrorOf("users:\n  - {name: alice, password: hunter2}\n"),
              HasSubstr("users.yaml: users[0].password: plain-text passwords are refused"));
  EXPECT_THAT(ErrorOf("tokens:\n  - {name: bot, token: abc}\n"),
              HasSubstr("users.yaml: tokens[0].token: plain-text tokens are refused"));
  // A password pasted into the hash field is refused as well.
  EXPECT_THAT(ErrorOf("users:\n  - {name: alice, passwordHash: hunter2}\n"),
              HasSubstr("users[0].passwordHash: not an argon2id hash"));
}

TEST(UsersFileTest, DuplicatesAreErrors) {
  EXPECT_EQ(ErrorOf(absl::StrCat("users:\n  - {name: alice, passwordHash: \"", kHash, "\"}\n",
                                 "  - {name: bob, passwordHash: \"", kHash, "\"}\n",
                                 "  - {name: alice, passwordHash: \"", kHash, "\"}\n")),
            "users.yaml: users[2].name: duplicate user \"alice\" (also users[0])");
  EXPECT_EQ(ErrorOf(absl::StrCat("tokens:\n  - {name: bot, tokenSha256: ", kTokenHash, "}\n",
                                 "  - {name: bot, tokenSha256: ", std::string(64, 'b'), "}\n")),
            "users.yaml: tokens[1].name: duplicate token name \"bot\" (also tokens[0])");
  EXPECT_EQ(ErrorOf(absl::StrCat("tokens:\n  - {name: a, tokenSha256: ", kTokenHash, "}\n",
                                 "  - {name: b, tokenSha256: ", std::string(64, 'A'), "}\n")),
            "users.yaml: tokens[1].tokenSha256: same token as tokens[0]");
  // One identity may log in with a password and with a token.
  EXPECT_EQ(ErrorOf(absl::StrCat("users:\n  - {name: alice, passwordHash: \"", kHash, "\"}\n",
                                 "tokens:\n  - {name: alice, tokenSha256: ", kTokenHash, "}\n")),
            "OK");
}

TEST(UsersFileTest, LoadReadsFileAndNamesPath) {
  const std::string path =
      (std::filesystem::path(::testing::TempDir()) / "regatta_users_file_test.yaml").string();
  {
    absl::StatusOr<std::string> hash = HashPassword("pw", PasswordHashParams::Minimum());
    ASSERT_TRUE(hash.ok());
    std::ofstream out(path);
    out << "users:\n  - name: alice\n    passwordHash: \"" << *hash << "\"\n";
    out << "tokens:\n  - name: bot\n    tokenSha256: " << HashToken("t0ken") << "\n";
  }
  absl::StatusOr<UsersFile> file = LoadUsersFile(path);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(file->users.at(0).name, "alice");
  EXPECT_EQ(file->tokens.at(0).token_sha256, HashToken("t0ken"));

  {
    std::ofstream out(path);
    out << "users:\n  - name: alice\n    passwordHash: nope\n";
  }
  file = LoadUsersFile(path);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(),
              HasSubstr(absl::StrCat(path, ": users[0].passwordHash: not an argon2id hash")));
  std::remove(path.c_str());

  file = LoadUsersFile(path);
  ASSERT_FALSE(file.ok());
  EXPECT_THAT(file.status().message(), HasSubstr(path));
}

}  // namespace
}  // namespace regatta::auth
