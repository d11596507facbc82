#ifndef REGATTA_SRC_COMMON_TLS_TLS_H_
#define REGATTA_SRC_COMMON_TLS_TLS_H_

// TLS material for the gRPC and HTTP listeners (server certificate, key, optional client CA)
// and for gRPC clients (CA to verify the server, optional client certificate). Files are
// checked with OpenSSL when loaded, so a bad file is an error naming its configuration key
// rather than a failed handshake later.

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace regatta::tls {

// Whether a listener asks clients for a certificate: none; request (verified against the
// client CA when one is sent); require (a connection without a valid one is refused).
enum class ClientAuth { kNone, kRequest, kRequire };

// "none", "request" or "require"; errors name `field`.
absl::StatusOr<ClientAuth> ParseClientAuth(absl::string_view text, absl::string_view field);

// What a listener serves; the *_field strings name the settings in errors.
struct ServerTlsOptions {
  std::string cert_file;
  std::string key_file;
  std::string client_ca_file;  // needed unless client_auth is kNone
  ClientAuth client_auth = ClientAuth::kNone;
  std::string cert_field = "tls.certFile";
  std::string key_field = "tls.keyFile";
  std::string client_ca_field = "tls.clientCaFile";
};

// One consistent set of PEM texts, checked: the key matches the certificate.
struct ServerMaterial {
  std::string cert_pem;
  std::string key_pem;
  std::string client_ca_pem;  // empty when client_auth is kNone
  ClientAuth client_auth = ClientAuth::kNone;
};

// A listener's TLS files, reloadable. gRPC credentials from GrpcCredentials() and HTTP
// listeners that call Current() per connection use what the last successful Load or Reload
// read; connections already open keep their session. Must outlive the servers that use its
// credentials (gRPC calls back into it at every handshake).
class ServerTls {
 public:
  static absl::StatusOr<std::shared_ptr<ServerTls>> Load(ServerTlsOptions options);
  ~ServerTls();

  // Reads the files again. On error the current material stays in use and the error is
  // returned (naming the setting).
  absl::Status Reload();

  std::shared_ptr<const ServerMaterial> Current() const;
  const ServerTlsOptions& options() const { return options_; }

  // Credentials for one listening port (a port needs its own). A handshake after Reload()
  // uses the new material.
  std::shared_ptr<grpc::ServerCredentials> GrpcCredentials();

  // Channel credentials that present this listener's certificate as a client certificate and
  // verify the peer with the client CA (the server dialing executors' log services). Made
  // again after each reload.
  std::shared_ptr<grpc::ChannelCredentials> PeerChannelCredentials();

 private:
  // What one port's credentials last handed to gRPC.
  struct Fetcher;

  explicit ServerTls(ServerTlsOptions options);

  const ServerTlsOptions options_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<Fetcher>> fetchers_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const ServerMaterial> current_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<grpc::ChannelCredentials> peer_credentials_ ABSL_GUARDED_BY(mu_);
  std::shared_ptr<const ServerMaterial> peer_material_ ABSL_GUARDED_BY(mu_);
};

// A gRPC client's TLS settings (the CLI's --tls-* flags, an executor's).
struct ClientTlsOptions {
  // Turns TLS on even without a CA file (the system's roots then verify the server).
  bool enabled = false;
  std::string ca_file;    // empty: the system's roots
  std::string cert_file;  // client certificate for mutual TLS, with key_file
  std::string key_file;
  // The name the server's certificate must carry, when the address does not (an IP).
  std::string server_name;
  std::string ca_field = "--tls-ca";
  std::string cert_field = "--tls-cert";
  std::string key_field = "--tls-key";

  bool on() const { return enabled || !ca_file.empty() || !cert_file.empty(); }
};

// Insecure credentials when `options` do not turn TLS on; else TLS credentials from the
// checked files. Sets the target name override in `args` when server_name is given.
absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(
    const ClientTlsOptions& options, grpc::ChannelArguments* args);

// Reads a PEM certificate (or bundle) and checks it parses; errors name `field`.
absl::StatusOr<std::string> ReadCertificates(const std::string& path, absl::string_view field);

}  // namespace regatta::tls

#endif  // REGATTA_SRC_COMMON_TLS_TLS_H_
