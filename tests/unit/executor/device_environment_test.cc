#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "src/executor/executor.h"

namespace regatta::executor {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Pair;

regatta::v1::LeasedDevice* AddDevice(regatta::v1::JobRunLease& lease, const std::string& name) {
  regatta::v1::LeasedDevice* device = lease.add_devices();
  device->set_instance_name(name);
  device->set_slot(name + "-0");
  device->set_cdi_name("akri.sh/cam=" + name.substr(name.size() - 6));
  return device;
}

TEST(LeasedDeviceEnvironmentTest, PropertiesAndDeviceListsInLeaseOrder) {
  regatta::v1::JobRunLease lease;
  (*lease.mutable_job()->mutable_task()->mutable_env())["MINE"] = "job";
  regatta::v1::LeasedDevice* first = AddDevice(lease, "cam-aaaaaa");
  (*first->mutable_properties())["URL"] = "rtsp://a";
  (*first->mutable_properties())["MINE"] = "device";  // the job's own env wins
  first->add_device_specs()->set_host_path("/dev/video0");
  v0::Mount* mount = first->add_mounts();
  mount->set_host_path("/run/cam");
  mount->set_container_path("/cam");
  mount->set_read_only(true);
  regatta::v1::LeasedDevice* second = AddDevice(lease, "cam-bbbbbb");
  (*second->mutable_properties())["URL"] = "rtsp://b";  // the first device's value wins
  second->add_device_specs()->set_host_path("/dev/video1");

  EXPECT_THAT(LeasedDeviceEnvironment(lease),
              ElementsAre(Pair("URL", "rtsp://a"),
                          Pair("REGATTA_DEVICE_INSTANCES", "cam-aaaaaa,cam-bbbbbb"),
                          Pair("REGATTA_DEVICE_SLOTS", "cam-aaaaaa-0,cam-bbbbbb-0"),
                          Pair("REGATTA_DEVICE_CDI_NAMES", "akri.sh/cam=aaaaaa,akri.sh/cam=bbbbbb"),
                          Pair("REGATTA_DEVICE_NODES", "/dev/video0,/dev/video1"),
                          Pair("REGATTA_DEVICE_MOUNTS", "/run/cam:/cam:ro")));
}

TEST(LeasedDeviceEnvironmentTest, NoDevicesNoEnvironment) {
  EXPECT_THAT(LeasedDeviceEnvironment(regatta::v1::JobRunLease()), IsEmpty());
}

TEST(RequestsOfTest, DevicesAreNotNodeResources) {
  regatta::v1::Job job;
  auto& requests = *job.mutable_task()->mutable_resources()->mutable_requests();
  requests["cpu"] = "1";
  requests["regatta.dev/cam"] = "1";
  ResourceList list = RequestsOf(job);
  EXPECT_EQ(list.Get(ResourceNames::kCpu).ToString(), "1");
  EXPECT_EQ(list.Get(ResourceNames::Global().Intern("regatta.dev/cam")).milli(), 0);
}

}  // namespace
}  // namespace regatta::executor
