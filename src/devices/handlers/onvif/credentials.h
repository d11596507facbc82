#ifndef REGATTA_SRC_DEVICES_HANDLERS_ONVIF_CREDENTIALS_H_
#define REGATTA_SRC_DEVICES_HANDLERS_ONVIF_CREDENTIALS_H_

// Camera credentials from the discovery properties, named as Akri's ONVIF handler names them
// (usually resolved by the agent from a Secret):
//
//   username_<uuid>, password_<uuid>   one camera; '_' in the key stands for '-' in the uuid
//                                      (keys are C identifiers), e.g. username_5f5a69c2_e0ae_...
//   username_default, password_default any camera without its own entry
//   device_credential_list             JSON list of property names, each holding a JSON map
//                                      uuid → {username, password, base64encoded}
//   device_credential_ref_list         JSON list of property names, each holding a JSON map
//                                      uuid → {username_ref, password_ref} naming properties
//
// Later sources override earlier ones in the order list, ref list, username_/password_, default.
// A camera found without credentials is still queried, without a UsernameToken.

#include <map>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "akri/discovery/v0/discovery.pb.h"

namespace regatta::devices::onvif {

struct Credential {
  std::string username;
  std::string password;  // empty when none was given
};

class CredentialStore {
 public:
  // INVALID_ARGUMENT naming the property when a list or an entry is not the JSON Akri reads
  // (Akri skips it silently; here the Configuration's status says what is wrong).
  static absl::StatusOr<CredentialStore> FromProperties(
      const google::protobuf::Map<std::string, v0::ByteData>& properties);

  // The camera's credential (uuid compared without case), else the default one, else nullopt.
  std::optional<Credential> Lookup(absl::string_view uuid) const;
  size_t size() const { return credentials_.size(); }

 private:
  std::map<std::string, Credential> credentials_;  // lower-case uuid or "default" → credential
};

inline constexpr absl::string_view kCredentialList = "device_credential_list";
inline constexpr absl::string_view kCredentialRefList = "device_credential_ref_list";
inline constexpr absl::string_view kUsernamePrefix = "username_";
inline constexpr absl::string_view kPasswordPrefix = "password_";
inline constexpr absl::string_view kDefaultCredential = "default";

}  // namespace regatta::devices::onvif

#endif  // REGATTA_SRC_DEVICES_HANDLERS_ONVIF_CREDENTIALS_H_
