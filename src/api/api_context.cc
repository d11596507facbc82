#include "src/api/api_context.h"

namespace regatta::api {

absl::StatusOr<auth::Principal> AuthenticateCall(const ApiContext& ctx,
                                                 const grpc::ServerContext* call) {
  const auto& metadata = call->client_metadata();
  auto it = metadata.find("authorization");
  absl::string_view header;
  if (it != metadata.end()) header = absl::string_view(it->second.data(), it->second.size());
  return ctx.authenticator->Authenticate(header);
}

void SetTimestamp(absl::Time time, google::protobuf::Timestamp* out) {
  const int64_t nanos = absl::ToUnixNanos(time);
  out->set_seconds(nanos / 1'000'000'000);
  out->set_nanos(static_cast<int32_t>(nanos % 1'000'000'000));
}

absl::Time FromTimestamp(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

}  // namespace regatta::api
