#include "src/executor/local/run_files.h"

#include <exception>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace regatta::executor::local {
namespace {

using Json = nlohmann::json;

constexpr int kVersion = 1;

int64_t TimeToNanos(absl::Time t) {
  if (t == absl::InfinitePast()) return 0;
  return absl::ToUnixNanos(t);
}
absl::Time NanosToTime(int64_t nanos) {
  return nanos == 0 ? absl::InfinitePast() : absl::FromUnixNanos(nanos);
}

// Strings that need not be valid UTF-8 (argv) are written with invalid bytes replaced.
std::string Dump(const Json& json) {
  return json.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

absl::StatusOr<Json> Parse(absl::string_view text) {
  Json json = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object()) {
    return absl::DataLossError("not a JSON object");
  }
  if (!json.contains("version") || json["version"] != kVersion) {
    return absl::DataLossError("unknown version");
  }
  return json;
}

constexpr std::pair<RunEnd, const char*> kEndNames[] = {
    {RunEnd::kSucceeded, "succeeded"}, {RunEnd::kFailed, "failed"},
    {RunEnd::kCancelled, "cancelled"}, {RunEnd::kPreempted, "preempted"},
    {RunEnd::kLost, "lost"},
};

}  // namespace

absl::string_view RunEndName(RunEnd end) {
  for (const auto& [value, name] : kEndNames) {
    if (value == end) return name;
  }
  return "unknown";
}

std::string EncodeRunState(const RunState& state) {
  Json json = {
      {"version", kVersion},
      {"run_id", state.run_id},
      {"metadata_base64", absl::Base64Escape(state.metadata)},
      {"argv", state.argv},
      {"working_dir", state.working_dir},
      {"pid", state.pid},
      {"pid_start_time", state.pid_start_time},
      {"started_unix_nanos", TimeToNanos(state.started)},
      {"active_deadline_ms", absl::ToInt64Milliseconds(state.active_deadline)},
      {"termination_grace_ms", absl::ToInt64Milliseconds(state.termination_grace)},
      {"memory_limit_bytes", state.memory_limit_bytes},
      {"cgroup_dir", state.cgroup_dir},
  };
  return Dump(json);
}

absl::StatusOr<RunState> DecodeRunState(absl::string_view text) {
  absl::StatusOr<Json> json = Parse(text);
  if (!json.ok()) return json.status();
  try {
    RunState state;
    state.run_id = json->at("run_id").get<std::string>();
    if (!absl::Base64Unescape(json->at("metadata_base64").get<std::string>(), &state.metadata)) {
      return absl::DataLossError("metadata_base64: not base64");
    }
    state.argv = json->at("argv").get<std::vector<std::string>>();
    state.working_dir = json->at("working_dir").get<std::string>();
    state.pid = json->at("pid").get<pid_t>();
    state.pid_start_time = json->at("pid_start_time").get<uint64_t>();
    state.started = NanosToTime(json->at("started_unix_nanos").get<int64_t>());
    state.active_deadline = absl::Milliseconds(json->at("active_deadline_ms").get<int64_t>());
    state.termination_grace = absl::Milliseconds(json->at("termination_grace_ms").get<int64_t>());
    state.memory_limit_bytes = json->at("memory_limit_bytes").get<int64_t>();
    state.cgroup_dir = json->at("cgroup_dir").get<std::string>();
    if (ValidateRunId(state.run_id).ok() && state.pid >= 0) return state;
    return absl::DataLossError("run_id or pid out of range");
  } catch (const std::exception& e) {
    return absl::DataLossError(e.what());
  }
}

std::string EncodeRunResult(const RunResult& result) {
  Json error = {
      {"reason", regatta::v1::ErrorReason_Name(result.error.reason())},
      {"message", result.error.message()},
      {"category", result.error.category()},
      {"terminal", result.error.terminal()},
      {"exit_code", result.error.exit_code()},
      {"signal", result.error.signal()},
  };
  Json json = {
      {"version", kVersion},
      {"run_id", result.run_id},
      {"end", RunEndName(result.end)},
      {"error", error},
      {"exit_code", result.exit_code},
      {"signal", result.signal},
      {"started_unix_nanos", TimeToNanos(result.started)},
      {"finished_unix_nanos", TimeToNanos(result.finished)},
  };
  return Dump(json);
}

absl::StatusOr<RunResult> DecodeRunResult(absl::string_view text) {
  absl::StatusOr<Json> json = Parse(text);
  if (!json.ok()) return json.status();
  try {
    RunResult result;
    result.run_id = json->at("run_id").get<std::string>();
    std::string end = json->at("end").get<std::string>();
    bool known = false;
    for (const auto& [value, name] : kEndNames) {
      if (end == name) {
        result.end = value;
        known = true;
      }
    }
    if (!known) return absl::DataLossError(absl::StrCat("end: unknown value '", end, "'"));
    const Json& error = json->at("error");
    regatta::v1::ErrorReason reason;
    if (!regatta::v1::ErrorReason_Parse(error.at("reason").get<std::string>(), &reason)) {
      return absl::DataLossError("error.reason: unknown value");
    }
    result.error.set_reason(reason);
    result.error.set_message(error.at("message").get<std::string>());
    result.error.set_category(error.at("category").get<std::string>());
    result.error.set_terminal(error.at("terminal").get<bool>());
    result.error.set_exit_code(error.at("exit_code").get<int32_t>());
    result.error.set_signal(error.at("signal").get<int32_t>());
    result.exit_code = json->at("exit_code").get<int>();
    result.signal = json->at("signal").get<int>();
    result.started = NanosToTime(json->at("started_unix_nanos").get<int64_t>());
    result.finished = NanosToTime(json->at("finished_unix_nanos").get<int64_t>());
    return result;
  } catch (const std::exception& e) {
    return absl::DataLossError(e.what());
  }
}

absl::Status ValidateRunId(absl::string_view run_id, absl::string_view field) {
  if (run_id.empty() || run_id.size() > 200 || run_id == "." || run_id == "..") {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": must be 1 to 200 characters and not '.' or '..'"));
  }
  for (char c : run_id) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '_' && c != '-' &&
        c != ':' && c != '@' && c != '+' && c != '=') {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": '", absl::CHexEscape(run_id),
                       "' may contain only letters, digits and . _ - : @ + ="));
    }
  }
  return absl::OkStatus();
}

}  // namespace regatta::executor::local
