#include "src/api/rest/sse.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "src/api/rest/errors.h"
#include "src/api/rest/proto_json.h"

namespace regatta::rest {
namespace {

// A field value may not contain a line break: it would end the field early.
std::string SingleLine(absl::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c != '\n' && c != '\r') out.push_back(c);
  }
  return out;
}

}  // namespace

std::string FormatSseEvent(const regatta::v1::JobSetEvent& event) {
  std::string type = regatta::v1::JobEventType_Name(event.type());
  // A value newer than this build's proto has no name; its number still says something.
  if (type.empty()) type = absl::StrCat(static_cast<int>(event.type()));
  // ProtoToJson prints one line: newlines inside strings are escaped.
  return absl::StrCat("id: ", SingleLine(event.id()), "\nevent: ", type,
                      "\ndata: ", ProtoToJson(event), "\n\n");
}

std::string FormatSseComment(absl::string_view text) {
  return absl::StrCat(": ", SingleLine(text), "\n\n");
}

std::string FormatSseError(const grpc::Status& status) {
  return absl::StrCat(
      "event: error\ndata: ", ErrorJson(status.error_code(), status.error_message()), "\n\n");
}

std::string HttpChunk(absl::string_view data) {
  return absl::StrCat(absl::StrFormat("%x", data.size()), "\r\n", data, "\r\n");
}

}  // namespace regatta::rest
