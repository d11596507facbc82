// REST request bodies: the JSON mapping of the gateway into the request messages that carry
// user documents. The first byte picks the message; the rest is the body.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "regatta/v1/device_service.pb.h"
#include "regatta/v1/pipeline_service.pb.h"
#include "regatta/v1/queue_service.pb.h"
#include "regatta/v1/run_service.pb.h"
#include "regatta/v1/submit_service.pb.h"
#include "src/api/rest/proto_json.h"

namespace {

std::unique_ptr<google::protobuf::Message> NewRequest(uint8_t selector) {
  switch (selector % 6) {
    case 0:
      return std::make_unique<regatta::v1::SubmitJobsRequest>();
    case 1:
      return std::make_unique<regatta::v1::CreatePipelineRequest>();
    case 2:
      return std::make_unique<regatta::v1::CreateRunRequest>();
    case 3:
      return std::make_unique<regatta::v1::ApplyConfigurationRequest>();
    case 4:
      return std::make_unique<regatta::v1::CreateQueueRequest>();
    default:
      return std::make_unique<regatta::v1::ApplySecretRequest>();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  std::unique_ptr<google::protobuf::Message> message = NewRequest(data[0]);
  const std::string body(reinterpret_cast<const char*>(data + 1), size - 1);
  if (!regatta::rest::JsonToProto(body, message.get()).ok()) return 0;
  // Replies print messages back as JSON.
  std::unique_ptr<google::protobuf::Message> again(message->New());
  (void)regatta::rest::JsonToProto(regatta::rest::ProtoToJson(*message), again.get());
  return 0;
}
