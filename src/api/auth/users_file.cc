#include "src/api/auth/users_file.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "src/api/auth/crypto.h"
#include "src/api/auth/password.h"
#include "src/api/auth/principal.h"
#include "src/common/bounded_parse.h"
#include "src/common/config.h"
#include "src/common/status_macros.h"
#include "yaml-cpp/yaml.h"

namespace regatta::auth {
namespace {

absl::Status FieldError(absl::string_view field, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(field, ": ", message));
}

absl::StatusOr<std::string> ScalarField(const YAML::Node& node, absl::string_view field) {
  if (!node.IsScalar()) return FieldError(field, "expected a string");
  return node.Scalar();
}

absl::StatusOr<std::vector<std::string>> GroupsField(const YAML::Node& node,
                                                     absl::string_view field) {
  std::vector<std::string> groups;
  if (node.IsNull()) return groups;
  if (!node.IsSequence()) return FieldError(field, "expected a list of group names");
  for (size_t i = 0; i < node.size(); ++i) {
    ASSIGN_OR_RETURN(std::string group, ScalarField(node[i], absl::StrCat(field, "[", i, "]")));
    groups.push_back(std::move(group));
  }
  return groups;
}

absl::StatusOr<UserEntry> ParseUser(const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) return FieldError(path, "expected a mapping with name, passwordHash, groups");
  UserEntry user;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string field = absl::StrCat(path, ".", key);
    if (key == "name") {
      ASSIGN_OR_RETURN(user.name, ScalarField(kv.second, field));
    } else if (key == "passwordHash") {
      ASSIGN_OR_RETURN(user.password_hash, ScalarField(kv.second, field));
    } else if (key == "groups") {
      ASSIGN_OR_RETURN(user.groups, GroupsField(kv.second, field));
    } else if (key == "password") {
      return FieldError(field,
                        "plain-text passwords are refused; store passwordHash instead (generate "
                        "it with `regatta users hash-password`)");
    } else {
      return FieldError(field, "unknown field (want name, passwordHash, groups)");
    }
  }
  return user;
}

absl::StatusOr<TokenEntry> ParseToken(const YAML::Node& node, const std::string& path) {
  if (!node.IsMap()) return FieldError(path, "expected a mapping with name, tokenSha256, groups");
  TokenEntry token;
  for (const auto& kv : node) {
    const std::string key = kv.first.as<std::string>();
    const std::string field = absl::StrCat(path, ".", key);
    if (key == "name") {
      ASSIGN_OR_RETURN(token.name, ScalarField(kv.second, field));
    } else if (key == "tokenSha256") {
      ASSIGN_OR_RETURN(token.token_sha256, ScalarField(kv.second, field));
      absl::AsciiStrToLower(&token.token_sha256);
    } else if (key == "groups") {
      ASSIGN_OR_RETURN(token.groups, GroupsField(kv.second, field));
    } else if (key == "token") {
      return FieldError(field,
                        "plain-text tokens are refused; store tokenSha256 instead (generate it "
                        "with `regatta users hash-token`)");
    } else {
      return FieldError(field, "unknown field (want name, tokenSha256, groups)");
    }
  }
  return token;
}

absl::StatusOr<UsersFile> ParseTree(const YAML::Node& root) {
  UsersFile file;
  if (!root || root.IsNull()) return file;  // an empty file defines nobody
  if (!root.IsMap()) return FieldError("(top level)", "expected a mapping with users, tokens");
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (key != "users" && key != "tokens") {
      return FieldError(key, "unknown field (want users, tokens)");
    }
    const YAML::Node& list = kv.second;
    if (list.IsNull()) continue;
    if (!list.IsSequence()) return FieldError(key, "expected a list");
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string path = absl::StrCat(key, "[", i, "]");
      if (key == "users") {
        ASSIGN_OR_RETURN(UserEntry user, ParseUser(list[i], path));
        file.users.push_back(std::move(user));
      } else {
        ASSIGN_OR_RETURN(TokenEntry token, ParseToken(list[i], path));
        file.tokens.push_back(std::move(token));
      }
    }
  }
  return file;
}

// Names end up in error messages, logs and queue permission entries: keep them printable.
absl::Status ValidateName(absl::string_view name, absl::string_view field, bool is_user) {
  if (name.empty()) return FieldError(field, "must not be empty");
  if (name == kAnonymousPrincipalName) {
    return FieldError(field, absl::StrCat("\"", kAnonymousPrincipalName,
                                          "\" is reserved for unauthenticated requests"));
  }
  for (char c : name) {
    if (absl::ascii_iscntrl(static_cast<unsigned char>(c)) ||
        absl::ascii_isspace(static_cast<unsigned char>(c))) {
      return FieldError(field, "must not contain whitespace or control characters");
    }
    // Basic credentials are "user:password", so a user name cannot contain a colon.
    if (is_user && c == ':') return FieldError(field, "must not contain ':'");
  }
  return absl::OkStatus();
}

absl::Status ValidateGroups(const std::vector<std::string>& groups, absl::string_view field) {
  for (size_t i = 0; i < groups.size(); ++i) {
    if (groups[i].empty()) return FieldError(absl::StrCat(field, "[", i, "]"), "must not be empty");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateUsersFile(const UsersFile& file) {
  absl::flat_hash_map<absl::string_view, size_t> user_index;
  for (size_t i = 0; i < file.users.size(); ++i) {
    const UserEntry& user = file.users[i];
    const std::string path = absl::StrCat("users[", i, "]");
    RETURN_IF_ERROR(ValidateName(user.name, path + ".name", /*is_user=*/true));
    auto [it, inserted] = user_index.emplace(user.name, i);
    if (!inserted) {
      return FieldError(path + ".name", absl::StrCat("duplicate user \"", user.name,
                                                     "\" (also users[", it->second, "])"));
    }
    if (user.password_hash.empty()) return FieldError(path + ".passwordHash", "required");
    if (!IsArgon2idHash(user.password_hash)) {
      return FieldError(path + ".passwordHash",
                        "not an argon2id hash (want \"$argon2id$v=19$m=...\"; generate it with "
                        "`regatta users hash-password`)");
    }
    RETURN_IF_ERROR(ValidateGroups(user.groups, path + ".groups"));
  }
  absl::flat_hash_map<absl::string_view, size_t> token_name_index;
  absl::flat_hash_map<std::string, size_t> token_hash_index;
  for (size_t i = 0; i < file.tokens.size(); ++i) {
    const TokenEntry& token = file.tokens[i];
    const std::string path = absl::StrCat("tokens[", i, "]");
    RETURN_IF_ERROR(ValidateName(token.name, path + ".name", /*is_user=*/false));
    auto [it, inserted] = token_name_index.emplace(token.name, i);
    if (!inserted) {
      return FieldError(path + ".name", absl::StrCat("duplicate token name \"", token.name,
                                                     "\" (also tokens[", it->second, "])"));
    }
    if (token.token_sha256.empty()) return FieldError(path + ".tokenSha256", "required");
    if (!IsSha256Hex(token.token_sha256)) {
      return FieldError(path + ".tokenSha256",
                        "not a SHA-256 hex digest (want 64 hex characters; generate it with "
                        "`regatta users hash-token`)");
    }
    auto [hit, hinserted] = token_hash_index.emplace(absl::AsciiStrToLower(token.token_sha256), i);
    if (!hinserted) {
      return FieldError(path + ".tokenSha256",
                        absl::StrCat("same token as tokens[", hit->second, "]"));
    }
    RETURN_IF_ERROR(ValidateGroups(token.groups, path + ".groups"));
  }
  return absl::OkStatus();
}

absl::StatusOr<UsersFile> ParseUsersFile(absl::string_view yaml_text, absl::string_view source) {
  auto prefixed = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(source, ": ", s.message()));
  };
  absl::StatusOr<YAML::Node> loaded = LoadYaml(yaml_text);
  if (!loaded.ok()) return prefixed(loaded.status());
  YAML::Node root = *std::move(loaded);
  absl::StatusOr<UsersFile> file;
  try {
    file = ParseTree(root);
  } catch (const YAML::Exception& e) {
    // Only reachable through odd documents (e.g. a non-scalar mapping key).
    return absl::InvalidArgumentError(absl::StrCat(source, ": ", e.what()));
  }
  if (!file.ok()) return prefixed(file.status());
  if (absl::Status s = ValidateUsersFile(*file); !s.ok()) return prefixed(s);
  return file;
}

absl::StatusOr<UsersFile> LoadUsersFile(absl::string_view path) {
  ASSIGN_OR_RETURN(std::string text, ReadFileToString(path));
  return ParseUsersFile(text, path);
}

}  // namespace regatta::auth
