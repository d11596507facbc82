#include "tests/testing/oidc/test_issuer.h"

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace regatta::testing {
namespace {

using nlohmann::json;

std::string BigNum(EVP_PKEY* pkey, const char* param, int pad_to) {
  BIGNUM* bn = nullptr;
  if (EVP_PKEY_get_bn_param(pkey, param, &bn) != 1) return "";
  std::string bytes(pad_to > 0 ? pad_to : BN_num_bytes(bn), '\0');
  if (pad_to > 0) {
    BN_bn2binpad(bn, reinterpret_cast<unsigned char*>(bytes.data()), pad_to);
  } else {
    BN_bn2bin(bn, reinterpret_cast<unsigned char*>(bytes.data()));
  }
  BN_free(bn);
  return Base64Url(bytes);
}

}  // namespace

std::string Base64Url(const std::string& bytes) { return absl::WebSafeBase64Escape(bytes); }

absl::StatusOr<std::unique_ptr<TestSigningKey>> TestSigningKey::Generate(Kind kind, std::string kid,
                                                                         const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/", kid, ".pem");
  const std::string options = kind == Kind::kRsa2048
                                  ? "-algorithm RSA -pkeyopt rsa_keygen_bits:2048"
                                  : "-algorithm EC -pkeyopt ec_paramgen_curve:P-256";
  const std::string command =
      absl::StrCat("openssl genpkey ", options, " -out '", path, "' 2>/dev/null");
  if (std::system(command.c_str()) != 0) {
    return absl::InternalError(absl::StrCat("failed: ", command));
  }
  FILE* file = std::fopen(path.c_str(), "r");
  if (file == nullptr) return absl::InternalError(absl::StrCat("cannot open ", path));
  auto key = std::unique_ptr<TestSigningKey>(new TestSigningKey());
  key->pkey_ = PEM_read_PrivateKey(file, nullptr, nullptr, nullptr);
  std::fclose(file);
  if (key->pkey_ == nullptr) return absl::InternalError(absl::StrCat("cannot read ", path));
  key->kind_ = kind;
  key->kid_ = std::move(kid);
  return key;
}

TestSigningKey::~TestSigningKey() { EVP_PKEY_free(pkey_); }

const char* TestSigningKey::alg() const { return kind_ == Kind::kRsa2048 ? "RS256" : "ES256"; }

json TestSigningKey::Jwk() const {
  json jwk = {{"kid", kid_}, {"use", "sig"}, {"alg", alg()}};
  if (kind_ == Kind::kRsa2048) {
    jwk["kty"] = "RSA";
    jwk["n"] = BigNum(pkey_, OSSL_PKEY_PARAM_RSA_N, 0);
    jwk["e"] = BigNum(pkey_, OSSL_PKEY_PARAM_RSA_E, 0);
  } else {
    jwk["kty"] = "EC";
    jwk["crv"] = "P-256";
    jwk["x"] = BigNum(pkey_, OSSL_PKEY_PARAM_EC_PUB_X, 32);
    jwk["y"] = BigNum(pkey_, OSSL_PKEY_PARAM_EC_PUB_Y, 32);
  }
  return jwk;
}

std::string TestSigningKey::Sign(const json& claims, const json& extra_header) const {
  json header = {{"alg", alg()}, {"typ", "JWT"}, {"kid", kid_}};
  for (const auto& [name, value] : extra_header.items()) {
    if (value.is_null()) {
      header.erase(name);
    } else {
      header[name] = value;
    }
  }
  const std::string input = Base64Url(header.dump()) + "." + Base64Url(claims.dump());
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  size_t size = 0;
  std::string signature;
  if (EVP_DigestSignInit(ctx, nullptr, EVP_sha256(), nullptr, pkey_) == 1 &&
      EVP_DigestSign(ctx, nullptr, &size, reinterpret_cast<const unsigned char*>(input.data()),
                     input.size()) == 1) {
    signature.resize(size);
    EVP_DigestSign(ctx, reinterpret_cast<unsigned char*>(signature.data()), &size,
                   reinterpret_cast<const unsigned char*>(input.data()), input.size());
    signature.resize(size);
  }
  EVP_MD_CTX_free(ctx);
  if (kind_ == Kind::kEcP256) {
    // JWS wants R || S (32 bytes each), OpenSSL gives DER.
    const unsigned char* der = reinterpret_cast<const unsigned char*>(signature.data());
    ECDSA_SIG* sig = d2i_ECDSA_SIG(nullptr, &der, static_cast<long>(signature.size()));
    std::string raw(64, '\0');
    if (sig != nullptr) {
      BN_bn2binpad(ECDSA_SIG_get0_r(sig), reinterpret_cast<unsigned char*>(raw.data()), 32);
      BN_bn2binpad(ECDSA_SIG_get0_s(sig), reinterpret_cast<unsigned char*>(raw.data()) + 32, 32);
      ECDSA_SIG_free(sig);
    }
    signature = raw;
  }
  return input + "." + Base64Url(signature);
}

std::string JwksJson(const std::vector<const TestSigningKey*>& keys) {
  json doc = {{"keys", json::array()}};
  for (const TestSigningKey* key : keys) doc["keys"].push_back(key->Jwk());
  return doc.dump(2);
}

std::string UnsignedJwt(const json& claims) {
  return Base64Url(json({{"alg", "none"}, {"typ", "JWT"}}).dump()) + "." +
         Base64Url(claims.dump()) + ".";
}

}  // namespace regatta::testing
