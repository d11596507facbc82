#include "src/common/tls/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "grpc/grpc.h"
#include "grpc/grpc_security.h"
#include "grpcpp/security/credentials.h"
#include "src/common/status_macros.h"

namespace regatta::tls {
namespace {

struct BioDeleter {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
struct X509Deleter {
  void operator()(X509* x) const { X509_free(x); }
};
struct KeyDeleter {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};
using BioPtr = std::unique_ptr<BIO, BioDeleter>;
using X509Ptr = std::unique_ptr<X509, X509Deleter>;
using KeyPtr = std::unique_ptr<EVP_PKEY, KeyDeleter>;

BioPtr MemoryBio(const std::string& text) {
  return BioPtr(BIO_new_mem_buf(text.data(), static_cast<int>(text.size())));
}

// Never prompts: an encrypted key is refused instead of blocking on a terminal.
int NoPassphrase(char*, int, int, void*) { return 0; }

absl::StatusOr<std::string> ReadFile(const std::string& path, absl::string_view field) {
  if (path.empty()) return absl::InvalidArgumentError(absl::StrCat(field, ": required"));
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat(field, ": cannot read ", path, " (", std::strerror(errno), ")"));
  }
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

absl::StatusOr<X509Ptr> FirstCertificate(const std::string& pem, const std::string& path,
                                         absl::string_view field) {
  BioPtr bio = MemoryBio(pem);
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, NoPassphrase, nullptr));
  ERR_clear_error();
  if (cert == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(field, ": ", path, " holds no PEM certificate"));
  }
  return cert;
}

absl::StatusOr<std::shared_ptr<const ServerMaterial>> ReadMaterial(const ServerTlsOptions& o) {
  auto m = std::make_shared<ServerMaterial>();
  m->client_auth = o.client_auth;
  ASSIGN_OR_RETURN(m->cert_pem, ReadCertificates(o.cert_file, o.cert_field));
  ASSIGN_OR_RETURN(m->key_pem, ReadFile(o.key_file, o.key_field));
  ASSIGN_OR_RETURN(X509Ptr cert, FirstCertificate(m->cert_pem, o.cert_file, o.cert_field));
  BioPtr bio = MemoryBio(m->key_pem);
  KeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, NoPassphrase, nullptr));
  ERR_clear_error();
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.key_field, ": ", o.key_file, " holds no unencrypted PEM private key"));
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return absl::InvalidArgumentError(absl::StrCat(o.key_field, ": ", o.key_file,
                                                   " does not match the certificate in ",
                                                   o.cert_field, " (", o.cert_file, ")"));
  }
  if (!o.client_ca_file.empty()) {
    ASSIGN_OR_RETURN(m->client_ca_pem, ReadCertificates(o.client_ca_file, o.client_ca_field));
  } else if (o.client_auth != ClientAuth::kNone) {
    return absl::InvalidArgumentError(
        absl::StrCat(o.client_ca_field, ": required to verify client certificates"));
  }
  return std::shared_ptr<const ServerMaterial>(std::move(m));
}

grpc_ssl_client_certificate_request_type RequestType(ClientAuth auth) {
  switch (auth) {
    case ClientAuth::kNone:
      return GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE;
    case ClientAuth::kRequest:
      return GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_AND_VERIFY;
    case ClientAuth::kRequire:
      return GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  return GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
}

// gRPC's SSL server credentials with a certificate config fetcher: gRPC asks it at every
// handshake whether the material changed, so a reload reaches the next connection without
// restarting the server. The fetcher's state lives in the ServerTls, since gRPC keeps the
// credentials (and calls the fetcher) after this object is gone.
class ReloadingServerCredentials final : public grpc::ServerCredentials {
 public:
  ReloadingServerCredentials(ClientAuth client_auth,
                             grpc_ssl_server_certificate_config_callback fetch, void* state) {
    grpc_ssl_server_credentials_options* options =
        grpc_ssl_server_credentials_create_options_using_config_fetcher(RequestType(client_auth),
                                                                        fetch, state);
    creds_ = grpc_ssl_server_credentials_create_with_options(options);
  }
  ~ReloadingServerCredentials() override { grpc_server_credentials_release(creds_); }

  // Only the API's interceptors authenticate calls; nothing sets a metadata processor.
  void SetAuthMetadataProcessor(const std::shared_ptr<grpc::AuthMetadataProcessor>&) override {}

 private:
  int AddPortToServer(const std::string& addr, grpc_server* server) override {
    return grpc_server_add_http2_port(server, addr.c_str(), creds_);
  }

  grpc_server_credentials* creds_ = nullptr;
};

}  // namespace

absl::StatusOr<ClientAuth> ParseClientAuth(absl::string_view text, absl::string_view field) {
  if (text == "none") return ClientAuth::kNone;
  if (text == "request") return ClientAuth::kRequest;
  if (text == "require") return ClientAuth::kRequire;
  return absl::InvalidArgumentError(
      absl::StrCat(field, ": \"", text, "\" must be none, request or require"));
}

absl::StatusOr<std::string> ReadCertificates(const std::string& path, absl::string_view field) {
  ASSIGN_OR_RETURN(std::string pem, ReadFile(path, field));
  RETURN_IF_ERROR(FirstCertificate(pem, path, field).status());
  return pem;
}

absl::StatusOr<std::shared_ptr<ServerTls>> ServerTls::Load(ServerTlsOptions options) {
  ASSIGN_OR_RETURN(std::shared_ptr<const ServerMaterial> material, ReadMaterial(options));
  std::shared_ptr<ServerTls> tls(new ServerTls(std::move(options)));
  tls->current_ = std::move(material);
  return tls;
}

absl::Status ServerTls::Reload() {
  ASSIGN_OR_RETURN(std::shared_ptr<const ServerMaterial> material, ReadMaterial(options_));
  absl::MutexLock lock(&mu_);
  current_ = std::move(material);
  return absl::OkStatus();
}

std::shared_ptr<const ServerMaterial> ServerTls::Current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

struct ServerTls::Fetcher {
  const ServerTls* tls = nullptr;
  absl::Mutex mu;
  std::shared_ptr<const ServerMaterial> served ABSL_GUARDED_BY(mu);

  static grpc_ssl_certificate_config_reload_status Fetch(
      void* user_data, grpc_ssl_server_certificate_config** config) {
    auto* self = static_cast<Fetcher*>(user_data);
    std::shared_ptr<const ServerMaterial> m = self->tls->Current();
    absl::MutexLock lock(&self->mu);
    if (m == self->served) return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;
    grpc_ssl_pem_key_cert_pair pair{m->key_pem.c_str(), m->cert_pem.c_str()};
    // gRPC insists on roots in a fetched config; without a client CA they go unused (no
    // client certificate is asked for), so the server's own chain serves.
    const std::string& roots = m->client_ca_pem.empty() ? m->cert_pem : m->client_ca_pem;
    *config = grpc_ssl_server_certificate_config_create(roots.c_str(), &pair, 1);
    self->served = std::move(m);
    return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW;
  }
};

ServerTls::ServerTls(ServerTlsOptions options) : options_(std::move(options)) {}
ServerTls::~ServerTls() = default;

std::shared_ptr<grpc::ServerCredentials> ServerTls::GrpcCredentials() {
  auto fetcher = std::make_unique<Fetcher>();
  fetcher->tls = this;
  Fetcher* raw = fetcher.get();
  {
    absl::MutexLock lock(&mu_);
    fetchers_.push_back(std::move(fetcher));
  }
  return std::make_shared<ReloadingServerCredentials>(options_.client_auth, &Fetcher::Fetch, raw);
}

std::shared_ptr<grpc::ChannelCredentials> ServerTls::PeerChannelCredentials() {
  absl::MutexLock lock(&mu_);
  if (peer_credentials_ == nullptr || peer_material_ != current_) {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = current_->client_ca_pem;
    ssl.pem_private_key = current_->key_pem;
    ssl.pem_cert_chain = current_->cert_pem;
    peer_credentials_ = grpc::SslCredentials(ssl);
    peer_material_ = current_;
  }
  return peer_credentials_;
}

absl::StatusOr<std::shared_ptr<grpc::ChannelCredentials>> ClientCredentials(
    const ClientTlsOptions& options, grpc::ChannelArguments* args) {
  if (!options.on()) {
    if (!options.key_file.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat(options.key_field, ": needs ", options.cert_field));
    }
    return grpc::InsecureChannelCredentials();
  }
  grpc::SslCredentialsOptions ssl;
  if (!options.ca_file.empty()) {
    ASSIGN_OR_RETURN(ssl.pem_root_certs, ReadCertificates(options.ca_file, options.ca_field));
  }
  if (!options.cert_file.empty() || !options.key_file.empty()) {
    ServerTlsOptions pair;
    pair.cert_file = options.cert_file;
    pair.key_file = options.key_file;
    pair.cert_field = options.cert_field;
    pair.key_field = options.key_field;
    ASSIGN_OR_RETURN(std::shared_ptr<const ServerMaterial> m, ReadMaterial(pair));
    ssl.pem_cert_chain = m->cert_pem;
    ssl.pem_private_key = m->key_pem;
  }
  if (!options.server_name.empty() && args != nullptr) {
    args->SetSslTargetNameOverride(options.server_name);
  }
  return grpc::SslCredentials(ssl);
}

}  // namespace regatta::tls
