#include "src/api/rest/tls_stream.h"

#include <exception>

#include "src/common/logging.h"

namespace regatta::rest {
namespace {

namespace ssl = boost::asio::ssl;

std::shared_ptr<ssl::context> MakeContext(const tls::ServerMaterial& m) {
  auto context = std::make_shared<ssl::context>(ssl::context::tls_server);
  context->set_options(ssl::context::default_workarounds | ssl::context::no_sslv2 |
                       ssl::context::no_sslv3 | ssl::context::no_tlsv1 | ssl::context::no_tlsv1_1);
  context->use_certificate_chain(boost::asio::buffer(m.cert_pem));
  context->use_private_key(boost::asio::buffer(m.key_pem), ssl::context::pem);
  if (m.client_auth != tls::ClientAuth::kNone) {
    context->add_certificate_authority(boost::asio::buffer(m.client_ca_pem));
    context->set_verify_mode(ssl::verify_peer | (m.client_auth == tls::ClientAuth::kRequire
                                                     ? ssl::verify_fail_if_no_peer_cert
                                                     : ssl::verify_none));
  }
  return context;
}

}  // namespace

std::shared_ptr<ssl::context> TlsContextCache::Get() {
  if (tls_ == nullptr) return nullptr;
  std::shared_ptr<const tls::ServerMaterial> current = tls_->Current();
  std::lock_guard<std::mutex> lock(mu_);
  if (current != material_) {
    try {
      context_ = MakeContext(*current);
    } catch (const std::exception& e) {
      // The material was checked when loaded; keep serving with the last context if any.
      LOG_ERROR("cannot use the TLS material for HTTP; keeping the previous one", "error",
                e.what());
    }
    material_ = std::move(current);
  }
  return context_;
}

}  // namespace regatta::rest
