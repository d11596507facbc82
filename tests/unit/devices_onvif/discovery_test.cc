// One discovery pass against a fake network: the filters, liveness, credentials and the device
// each camera becomes.

#include "src/devices/handlers/onvif/discovery.h"

#include <map>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace regatta::devices::onvif {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;
using ::testing::UnorderedElementsAre;

struct FakeCamera {
  std::string uuid;
  std::vector<std::string> xaddrs;
  std::vector<std::string> scopes;
  std::string ip;
  std::string mac;
  bool responding = true;
  bool interfaces_fail = false;
};

class FakeNetwork final : public OnvifNetwork {
 public:
  explicit FakeNetwork(std::vector<FakeCamera> cameras) : cameras_(std::move(cameras)) {}

  absl::StatusOr<std::vector<ProbeMatch>> Probe(absl::Duration timeout) override {
    probe_timeout_ = timeout;
    if (!probe_error_.ok()) return probe_error_;
    std::vector<ProbeMatch> matches;
    for (const FakeCamera& camera : cameras_) {
      matches.push_back({"urn:uuid:" + camera.uuid,
                         NormalizeUuid(camera.uuid),
                         camera.xaddrs,
                         camera.scopes,
                         {"NetworkVideoTransmitter"}});
    }
    return matches;
  }
  absl::Status CheckResponding(const std::string& url) override {
    const FakeCamera* camera = Find(url);
    return camera != nullptr && camera->responding ? absl::OkStatus()
                                                   : absl::UnavailableError("no reply");
  }
  absl::StatusOr<IpAndMac> GetIpAndMac(const std::string& url,
                                       const std::optional<Credential>& credential) override {
    {
      absl::MutexLock lock(&mu_);
      asked_.insert(url);
      if (credential.has_value()) users_[url] = credential->username;
    }
    const FakeCamera* camera = Find(url);
    if (camera == nullptr || camera->interfaces_fail) {
      return absl::FailedPreconditionError("SOAP fault ter:NotAuthorized");
    }
    return IpAndMac{camera->ip, camera->mac};
  }

  const FakeCamera* Find(const std::string& url) const {
    for (const FakeCamera& camera : cameras_) {
      for (const std::string& xaddr : camera.xaddrs) {
        if (xaddr == url) return &camera;
      }
    }
    return nullptr;
  }
  std::set<std::string> asked() {
    absl::MutexLock lock(&mu_);
    return asked_;
  }
  std::map<std::string, std::string> users() {
    absl::MutexLock lock(&mu_);
    return users_;
  }

  absl::Duration probe_timeout_;
  absl::Status probe_error_;

 private:
  std::vector<FakeCamera> cameras_;
  absl::Mutex mu_;
  std::set<std::string> asked_ ABSL_GUARDED_BY(mu_);
  std::map<std::string, std::string> users_ ABSL_GUARDED_BY(mu_);
};

const FakeCamera kA{"aaaaaaaa-0000-0000-0000-000000000001",
                    {"http://10.0.0.1/onvif/device_service"},
                    {"onvif://www.onvif.org/name/Gate", "onvif://www.onvif.org/type/video_encoder"},
                    "10.0.0.1",
                    "00:00:5E:00:53:01"};
const FakeCamera kB{"BBBBBBBB-0000-0000-0000-000000000002",
                    {"http://10.0.0.2/onvif/device_service"},
                    {"onvif://www.onvif.org/name/Yard"},
                    "10.0.0.2",
                    "00:00:5e:00:53:02"};

std::vector<std::string> Ids(const std::vector<v0::Device>& devices) {
  std::vector<std::string> ids;
  for (const v0::Device& device : devices) ids.push_back(device.id());
  return ids;
}

std::vector<std::string> Discover(const std::string& details_yaml,
                                  std::vector<FakeCamera> cameras = {kA, kB}) {
  absl::StatusOr<OnvifDiscoveryDetails> details = ParseOnvifDiscoveryDetails(details_yaml);
  EXPECT_TRUE(details.ok()) << details.status();
  FakeNetwork network(std::move(cameras));
  absl::StatusOr<std::vector<v0::Device>> devices =
      DiscoverCameras(*details, *CredentialStore::FromProperties({}), network);
  EXPECT_TRUE(devices.ok()) << devices.status();
  return devices.ok() ? Ids(*devices) : std::vector<std::string>{"<error>"};
}

constexpr char kIdA[] = "http://10.0.0.1/onvif/device_service-aaaaaaaa-0000-0000-0000-000000000001";
constexpr char kIdB[] = "http://10.0.0.2/onvif/device_service-bbbbbbbb-0000-0000-0000-000000000002";

TEST(OnvifDiscoveryTest, EachCameraBecomesADeviceNamedByServiceUrlAndUuid) {
  auto details = ParseOnvifDiscoveryDetails("discoveryTimeoutSeconds: 2");
  FakeNetwork network({kA, kB});
  absl::StatusOr<std::vector<v0::Device>> devices =
      DiscoverCameras(*details, *CredentialStore::FromProperties({}), network);
  ASSERT_TRUE(devices.ok()) << devices.status();
  EXPECT_EQ(network.probe_timeout_, absl::Seconds(2));
  ASSERT_THAT(Ids(*devices), ElementsAre(kIdA, kIdB));
  EXPECT_THAT(
      (*devices)[1].properties(),
      UnorderedElementsAre(Pair("ONVIF_DEVICE_SERVICE_URL", "http://10.0.0.2/onvif/device_service"),
                           Pair("ONVIF_DEVICE_UUID", "bbbbbbbb-0000-0000-0000-000000000002"),
                           Pair("ONVIF_DEVICE_IP_ADDRESS", "10.0.0.2"),
                           Pair("ONVIF_DEVICE_MAC_ADDRESS", "00:00:5e:00:53:02")));
  EXPECT_EQ((*devices)[1].mounts_size(), 0);
  EXPECT_EQ((*devices)[1].device_specs_size(), 0);
}

TEST(OnvifDiscoveryTest, ACameraWithTwoServiceUrlsIsTwoDevicesAndARepeatIsOne) {
  FakeCamera dual = kA;
  dual.xaddrs = {"http://10.0.0.1/onvif/device_service", "http://10.0.0.9/onvif/device_service"};
  EXPECT_THAT(Discover("", {dual, kA}), ElementsAre(kIdA,
                                                    "http://10.0.0.9/onvif/device_service-"
                                                    "aaaaaaaa-0000-0000-0000-000000000001"));
}

TEST(OnvifDiscoveryTest, ACameraThatDoesNotAnswerIsNotReported) {
  FakeCamera silent = kB;
  silent.responding = false;
  EXPECT_THAT(Discover("", {kA, silent}), ElementsAre(kIdA));
}

TEST(OnvifDiscoveryTest, ScopesMatchWholeScopes) {
  EXPECT_THAT(Discover("scopes: {items: [onvif://www.onvif.org/name/Gate]}"), ElementsAre(kIdA));
  EXPECT_THAT(Discover("scopes: {action: Exclude, items: [onvif://www.onvif.org/name/Gate]}"),
              ElementsAre(kIdB));
  EXPECT_THAT(Discover("scopes: {items: [onvif://www.onvif.org/name/Ga]}"), IsEmpty());
}

TEST(OnvifDiscoveryTest, UuidsCompareWithoutCase) {
  EXPECT_THAT(Discover("uuids: {items: [bbbbbbbb-0000-0000-0000-000000000002]}"),
              ElementsAre(kIdB));
  EXPECT_THAT(Discover("uuids: {action: Exclude, items: [AAAAAAAA-0000-0000-0000-000000000001]}"),
              ElementsAre(kIdB));
}

TEST(OnvifDiscoveryTest, IpAndMacFiltersUseWhatGetNetworkInterfacesSays) {
  EXPECT_THAT(Discover("ipAddresses: {items: [10.0.0.2]}"), ElementsAre(kIdB));
  EXPECT_THAT(Discover("ipAddresses: {action: Exclude, items: [10.0.0.2]}"), ElementsAre(kIdA));
  EXPECT_THAT(Discover("macAddresses: {items: ['00:00:5e:00:53:01']}"), ElementsAre(kIdA));
  EXPECT_THAT(Discover("macAddresses: {action: Exclude, items: ['00:00:5E:00:53:01']}"),
              ElementsAre(kIdB));
}

TEST(OnvifDiscoveryTest, WithoutItsAddressesACameraPassesOnlyWhenNoAddressFilterApplies) {
  FakeCamera locked = kB;
  locked.interfaces_fail = true;
  auto details = ParseOnvifDiscoveryDetails("");
  FakeNetwork network({kA, locked});
  absl::StatusOr<std::vector<v0::Device>> devices =
      DiscoverCameras(*details, *CredentialStore::FromProperties({}), network);
  ASSERT_TRUE(devices.ok());
  ASSERT_THAT(Ids(*devices), ElementsAre(kIdA, kIdB));
  EXPECT_FALSE((*devices)[1].properties().contains("ONVIF_DEVICE_IP_ADDRESS"));
  EXPECT_FALSE((*devices)[1].properties().contains("ONVIF_DEVICE_MAC_ADDRESS"));
  EXPECT_THAT(Discover("ipAddresses: {action: Exclude, items: [10.9.9.9]}", {kA, locked}),
              ElementsAre(kIdA));
  EXPECT_THAT(Discover("macAddresses: {action: Exclude, items: []}", {kA, locked}),
              ElementsAre(kIdA, kIdB));
}

TEST(OnvifDiscoveryTest, UsesEachCamerasCredentialsAndSkipsCamerasTheUuidFilterDrops) {
  auto details =
      ParseOnvifDiscoveryDetails("uuids: {items: [bbbbbbbb-0000-0000-0000-000000000002]}");
  google::protobuf::Map<std::string, v0::ByteData> properties;
  properties["username_bbbbbbbb_0000_0000_0000_000000000002"].set_vec("yard-user");
  properties["password_bbbbbbbb_0000_0000_0000_000000000002"].set_vec("pw");
  FakeNetwork network({kA, kB});
  absl::StatusOr<std::vector<v0::Device>> devices =
      DiscoverCameras(*details, *CredentialStore::FromProperties(properties), network);
  ASSERT_TRUE(devices.ok());
  EXPECT_THAT(Ids(*devices), ElementsAre(kIdB));
  EXPECT_THAT(network.asked(), ElementsAre("http://10.0.0.2/onvif/device_service"));
  EXPECT_THAT(network.users(),
              ElementsAre(Pair("http://10.0.0.2/onvif/device_service", "yard-user")));
}

TEST(OnvifDiscoveryTest, ManyCamerasAreCheckedInBatchesAndAllReported) {
  std::vector<FakeCamera> cameras;
  std::vector<std::string> expected;
  for (int i = 0; i < 40; ++i) {
    const std::string n = absl::StrCat(100 + i);
    const std::string url = absl::StrCat("http://10.0.1.", n, "/onvif/device_service");
    const std::string uuid = absl::StrCat("00000000-0000-0000-0000-000000000", n);
    cameras.push_back({uuid,
                       {url},
                       {},
                       absl::StrCat("10.0.1.", n),
                       "00:00:5e:00:53:00",
                       /*responding=*/i % 5 != 0});
    if (i % 5 != 0) expected.push_back(url + "-" + uuid);
  }
  EXPECT_EQ(Discover("", cameras), expected);
}

TEST(OnvifDiscoveryTest, AFailedProbeIsAnError) {
  auto details = ParseOnvifDiscoveryDetails("");
  FakeNetwork network({kA});
  network.probe_error_ = absl::UnavailableError("send the WS-Discovery Probe: Network is down");
  EXPECT_EQ(DiscoverCameras(*details, *CredentialStore::FromProperties({}), network).status(),
            network.probe_error_);
}

}  // namespace
}  // namespace regatta::devices::onvif
