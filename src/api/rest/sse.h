#ifndef REGATTA_SRC_API_REST_SSE_H_
#define REGATTA_SRC_API_REST_SSE_H_

#include <string>

#include "absl/strings/string_view.h"
#include "grpcpp/support/status.h"
#include "regatta/v1/event_service.pb.h"

namespace regatta::rest {

// One server-sent event for a job-set event:
//   id: <event id>\nevent: <JobEventType name>\ndata: <one-line JSON>\n\n
std::string FormatSseEvent(const regatta::v1::JobSetEvent& event);

// A comment line, ignored by EventSource; keeps proxies from timing out idle streams.
std::string FormatSseComment(absl::string_view text);

// The frame sent when the gRPC stream fails after the response has started:
//   event: error\ndata: {"code":..,"status":"..","message":".."}\n\n
std::string FormatSseError(const grpc::Status& status);

// Wraps `data` as one chunk of a chunked transfer-encoded body.
std::string HttpChunk(absl::string_view data);
// The chunk that ends a chunked body.
inline constexpr absl::string_view kLastHttpChunk = "0\r\n\r\n";

}  // namespace regatta::rest

#endif  // REGATTA_SRC_API_REST_SSE_H_
