#include "src/devices/handlers/onvif/credentials.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::devices::onvif {
namespace {

using ::testing::HasSubstr;
using Properties = google::protobuf::Map<std::string, v0::ByteData>;

Properties Make(const std::map<std::string, std::optional<std::string>>& values) {
  Properties properties;
  for (const auto& [key, value] : values) {
    v0::ByteData& data = properties[key];
    if (value.has_value()) data.set_vec(*value);
  }
  return properties;
}

TEST(OnvifCredentialsTest, NoPropertiesNoCredentials) {
  absl::StatusOr<CredentialStore> store = CredentialStore::FromProperties(Properties());
  ASSERT_TRUE(store.ok());
  EXPECT_FALSE(store->Lookup("5f5a69c2-e0ae-504f-829b-00fcdab169cc").has_value());
}

TEST(OnvifCredentialsTest, PerCameraKeysUseUnderscoresForDashesAndDefaultCoversTheRest) {
  absl::StatusOr<CredentialStore> store = CredentialStore::FromProperties(Make({
      {"username_5f5a69c2_e0ae_504f_829b_00fcdab169cc", "cam1"},
      {"password_5f5a69c2_e0ae_504f_829b_00fcdab169cc", "pw1"},
      {"username_default", "admin"},
      {"password_default", "adminpw"},
      {"unrelated", "x"},
  }));
  ASSERT_TRUE(store.ok()) << store.status();
  std::optional<Credential> camera = store->Lookup("5F5A69C2-E0AE-504F-829B-00FCDAB169CC");
  ASSERT_TRUE(camera.has_value());
  EXPECT_EQ(camera->username, "cam1");
  EXPECT_EQ(camera->password, "pw1");
  std::optional<Credential> other = store->Lookup("7a21dc67-8438-5588-1547-4d1349048438");
  ASSERT_TRUE(other.has_value());
  EXPECT_EQ(other->username, "admin");
  EXPECT_EQ(other->password, "adminpw");
}

TEST(OnvifCredentialsTest, ListsAndRefListsAsAkriReadsThem) {
  absl::StatusOr<CredentialStore> store = CredentialStore::FromProperties(Make({
      {"device_credential_list", R"(["list1"])"},
      {"list1", R"({"aaaa-1": {"username": "u1", "password": "cDE=", "base64encoded": true},
                   "bbbb-2": {"username": "u2", "password": "p2"},
                   "cccc-3": {"username": "u3"}})"},
      {"device_credential_ref_list", R"(["refs", "missing-optional"])"},
      {"refs", R"({"dddd-4": {"username_ref": "d4_user", "password_ref": "d4_pass"},
                  "eeee-5": {"username_ref": "nobody"}})"},
      {"d4_user", "u4"},
      {"d4_pass", "p4"},
      {"missing-optional", std::nullopt},
      // A per-camera key overrides the list's entry.
      {"username_bbbb_2", "u2-override"},
      {"password_bbbb_2", "p2-override"},
  }));
  ASSERT_TRUE(store.ok()) << store.status();
  EXPECT_EQ(store->Lookup("aaaa-1")->password, "p1");
  EXPECT_EQ(store->Lookup("bbbb-2")->username, "u2-override");
  EXPECT_EQ(store->Lookup("bbbb-2")->password, "p2-override");
  EXPECT_EQ(store->Lookup("cccc-3")->username, "u3");
  EXPECT_EQ(store->Lookup("cccc-3")->password, "");
  EXPECT_EQ(store->Lookup("dddd-4")->username, "u4");
  EXPECT_EQ(store->Lookup("dddd-4")->password, "p4");
  EXPECT_FALSE(store->Lookup("eeee-5").has_value());  // its username property does not exist
}

TEST(OnvifCredentialsTest, MalformedCredentialPropertiesNameTheProperty) {
  struct Case {
    std::map<std::string, std::optional<std::string>> properties;
    const char* error;
  };
  for (const Case& c : std::vector<Case>{
           {{{"device_credential_list", "list1"}},
            "discoveryProperties.device_credential_list: not valid JSON"},
           {{{"device_credential_list", R"({"a": 1})"}},
            "discoveryProperties.device_credential_list: must be a JSON list"},
           {{{"device_credential_list", R"([1])"}},
            "discoveryProperties.device_credential_list[0]: must be a property name"},
           {{{"device_credential_list", R"(["l"])"}, {"l", R"({"u": {"password": "p"}})"}},
            "discoveryProperties.l[u].username: required"},
           {{{"device_credential_list", R"(["l"])"},
             {"l", R"({"u": {"username": "x", "password": "%%", "base64encoded": true}})"}},
            "discoveryProperties.l[u].password: not valid base64"},
           {{{"device_credential_ref_list", R"(["r"])"}, {"r", R"({"u": {"password_ref": "p"}})"}},
            "discoveryProperties.r[u].username_ref: required"},
       }) {
    absl::StatusOr<CredentialStore> store = CredentialStore::FromProperties(Make(c.properties));
    ASSERT_FALSE(store.ok()) << c.error;
    EXPECT_EQ(store.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(store.status().message(), HasSubstr(c.error));
  }
}

}  // namespace
}  // namespace regatta::devices::onvif
