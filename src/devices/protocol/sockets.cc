#include "src/devices/protocol/sockets.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"
#include "src/common/status_macros.h"

namespace regatta::devices {

std::string AgentRegistrationSocket(absl::string_view dir) {
  return absl::StrCat(dir, "/agent-registration.sock");
}

std::string HandlerSocket(absl::string_view dir, absl::string_view name) {
  return absl::StrCat(dir, "/", name, ".sock");
}

std::string UdsAddress(absl::string_view socket_path) { return absl::StrCat("unix:", socket_path); }

absl::Status CheckSocketPath(absl::string_view field, absl::string_view path) {
  if (path.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": empty"));
  if (path.size() >= sizeof(sockaddr_un{}.sun_path)) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": socket path '", path, "' is ", path.size(),
                     " bytes, longer than a Unix socket allows (",
                     sizeof(sockaddr_un{}.sun_path) - 1, "); use a shorter directory"));
  }
  return absl::OkStatus();
}

absl::Status EnsureDirectory(absl::string_view dir) {
  std::error_code error;
  std::filesystem::create_directories(std::string(dir), error);
  if (error) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create directory '", dir, "': ", error.message()));
  }
  return absl::OkStatus();
}

absl::Status RemoveStaleSocket(absl::string_view path) {
  std::string p(path);
  struct stat info;
  if (lstat(p.c_str(), &info) != 0) {
    if (errno == ENOENT) return absl::OkStatus();
    return absl::FailedPreconditionError(
        absl::StrCat("cannot inspect '", path, "': ", std::strerror(errno)));
  }
  if (!S_ISSOCK(info.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat("'", path, "' exists and is not a socket; refusing to replace it"));
  }
  if (unlink(p.c_str()) != 0 && errno != ENOENT) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot remove stale socket '", path, "': ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status CheckHandlerName(absl::string_view field, absl::string_view name) {
  if (name.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": empty"));
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return absl::InvalidArgumentError(
          absl::StrCat(field, ": '", name,
                       "' may hold only letters, digits, '-', '_' and '.' (it names a socket)"));
    }
  }
  if (name == "." || name == "..") {
    return absl::InvalidArgumentError(absl::StrCat(field, ": '", name, "' is not a name"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<grpc::Server>> ServeOnSocket(absl::string_view what,
                                                            absl::string_view dir,
                                                            const std::string& socket_path,
                                                            grpc::Service* service) {
  RETURN_IF_ERROR(CheckSocketPath(what, socket_path));
  RETURN_IF_ERROR(EnsureDirectory(dir));
  RETURN_IF_ERROR(RemoveStaleSocket(socket_path));
  grpc::ServerBuilder builder;
  builder.AddListeningPort(UdsAddress(socket_path), grpc::InsecureServerCredentials());
  builder.RegisterService(service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr) {
    return absl::UnavailableError(
        absl::StrCat(what, ": cannot serve on '", socket_path, "' (see the log)"));
  }
  return server;
}

}  // namespace regatta::devices
