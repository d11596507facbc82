#include "src/devices/handlers/onvif/credentials.h"

#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/strip.h"
#include "nlohmann/json.hpp"
#include "src/common/bounded_parse.h"
#include "src/common/status_macros.h"

namespace regatta::devices::onvif {
namespace {

using Properties = google::protobuf::Map<std::string, v0::ByteData>;
using json = nlohmann::json;

absl::Status PropertyError(absl::string_view property, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("discoveryProperties.", property, ": ", message));
}

// The value of a present property (an optional source that was missing has none).
std::optional<std::string> Value(const Properties& properties, const std::string& key) {
  auto it = properties.find(key);
  if (it == properties.end() || !it->second.has_vec()) return std::nullopt;
  return it->second.vec();
}

absl::StatusOr<json> ParseJson(absl::string_view property, const std::string& text) {
  absl::StatusOr<json> parsed = regatta::ParseJson(text);
  // Not nlohmann's message: it quotes the text, and these properties hold credentials.
  if (!parsed.ok() && IsParseLimitError(parsed.status())) {
    return PropertyError(property, parsed.status().message());
  }
  if (!parsed.ok()) return PropertyError(property, "not valid JSON");
  return *std::move(parsed);
}

// The property names a list property holds (a JSON list of strings).
absl::StatusOr<std::vector<std::string>> ListedProperties(const Properties& properties,
                                                          absl::string_view list_key) {
  std::vector<std::string> names;
  std::optional<std::string> text = Value(properties, std::string(list_key));
  if (!text.has_value()) return names;
  ASSIGN_OR_RETURN(json list, ParseJson(list_key, *text));
  if (!list.is_array()) {
    return PropertyError(list_key, "must be a JSON list of discovery property names");
  }
  for (size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string()) {
      return PropertyError(absl::StrCat(list_key, "[", i, "]"), "must be a property name");
    }
    names.push_back(list[i].get<std::string>());
  }
  return names;
}

absl::StatusOr<std::string> StringField(absl::string_view where, const json& entry,
                                        const char* field, bool required) {
  auto it = entry.find(field);
  if (it == entry.end() || it->is_null()) {
    if (required) return PropertyError(absl::StrCat(where, ".", field), "required");
    return std::string();
  }
  if (!it->is_string()) return PropertyError(absl::StrCat(where, ".", field), "must be a string");
  return it->get<std::string>();
}

// Calls `read(where, uuid, entry)` for every entry of every map a list property names: the
// shape device_credential_list and device_credential_ref_list share. `fields` describes an entry
// for errors.
absl::Status ForEachListedEntry(
    const Properties& properties, absl::string_view list_key, absl::string_view fields,
    const std::function<absl::Status(const std::string&, const std::string&, const json&)>& read) {
  ASSIGN_OR_RETURN(std::vector<std::string> names, ListedProperties(properties, list_key));
  for (const std::string& name : names) {
    std::optional<std::string> text = Value(properties, name);
    if (!text.has_value()) continue;  // an optional secret that is not there
    ASSIGN_OR_RETURN(json map, ParseJson(name, *text));
    if (!map.is_object()) {
      return PropertyError(name, absl::StrCat("must be a JSON map of uuid → {", fields, "}"));
    }
    for (const auto& [uuid, entry] : map.items()) {
      const std::string where = absl::StrCat(name, "[", uuid, "]");
      if (!entry.is_object()) return PropertyError(where, absl::StrCat("must be {", fields, "}"));
      RETURN_IF_ERROR(read(where, uuid, entry));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<CredentialStore> CredentialStore::FromProperties(const Properties& properties) {
  CredentialStore store;
  auto put = [&store](absl::string_view id, Credential credential) {
    store.credentials_[absl::AsciiStrToLower(id)] = std::move(credential);
  };

  RETURN_IF_ERROR(ForEachListedEntry(
      properties, kCredentialList, "username, password",
      [&](const std::string& where, const std::string& uuid, const json& entry) -> absl::Status {
        Credential credential;
        ASSIGN_OR_RETURN(credential.username, StringField(where, entry, "username", true));
        ASSIGN_OR_RETURN(credential.password, StringField(where, entry, "password", false));
        auto encoded = entry.find("base64encoded");
        if (encoded != entry.end() && !encoded->is_boolean()) {
          return PropertyError(absl::StrCat(where, ".base64encoded"), "must be true or false");
        }
        if (encoded != entry.end() && encoded->get<bool>()) {
          std::string decoded;
          if (!absl::Base64Unescape(credential.password, &decoded)) {
            return PropertyError(absl::StrCat(where, ".password"), "not valid base64");
          }
          credential.password = std::move(decoded);
        }
        put(uuid, std::move(credential));
        return absl::OkStatus();
      }));

  RETURN_IF_ERROR(ForEachListedEntry(
      properties, kCredentialRefList, "username_ref, password_ref",
      [&](const std::string& where, const std::string& uuid, const json& entry) -> absl::Status {
        ASSIGN_OR_RETURN(std::string username_ref, StringField(where, entry, "username_ref", true));
        ASSIGN_OR_RETURN(std::string password_ref,
                         StringField(where, entry, "password_ref", false));
        std::optional<std::string> username = Value(properties, username_ref);
        // As Akri: a reference to a missing or empty username makes no entry.
        if (!username.has_value() || username->empty()) return absl::OkStatus();
        Credential credential{*username, ""};
        if (!password_ref.empty()) {
          credential.password = Value(properties, password_ref).value_or("");
        }
        put(uuid, std::move(credential));
        return absl::OkStatus();
      }));

  for (const auto& [key, value] : properties) {
    absl::string_view id = key;
    if (!absl::ConsumePrefix(&id, kUsernamePrefix) || id.empty() || !value.has_vec()) continue;
    if (id == kDefaultCredential) continue;  // below
    Credential credential{value.vec(), ""};
    credential.password = Value(properties, absl::StrCat(kPasswordPrefix, id)).value_or("");
    put(absl::StrReplaceAll(id, {{"_", "-"}}), std::move(credential));
  }

  if (std::optional<std::string> username =
          Value(properties, absl::StrCat(kUsernamePrefix, kDefaultCredential))) {
    put(kDefaultCredential,
        Credential{
            *username,
            Value(properties, absl::StrCat(kPasswordPrefix, kDefaultCredential)).value_or("")});
  }
  return store;
}

std::optional<Credential> CredentialStore::Lookup(absl::string_view uuid) const {
  auto it = credentials_.find(absl::AsciiStrToLower(uuid));
  if (it == credentials_.end()) it = credentials_.find(std::string(kDefaultCredential));
  if (it == credentials_.end()) return std::nullopt;
  return it->second;
}

}  // namespace regatta::devices::onvif
