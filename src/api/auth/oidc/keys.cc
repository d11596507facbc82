#include "src/api/auth/oidc/keys.h"

#include <cjose/cjose.h>

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"

namespace regatta::auth::oidc {
namespace {

using nlohmann::json;

// Real issuers publish a handful of keys; a set this large is a mistake or an attack.
constexpr size_t kMaxKeys = 100;
constexpr size_t kMinRsaBits = 2048;

std::string StringMember(const json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

bool ParseAlgorithm(absl::string_view name, Algorithm* out) {
  if (name == "RS256") {
    *out = Algorithm::kRS256;
  } else if (name == "ES256") {
    *out = Algorithm::kES256;
  } else {
    return false;
  }
  return true;
}

const char* AlgorithmName(Algorithm alg) { return alg == Algorithm::kRS256 ? "RS256" : "ES256"; }

JsonWebKey::~JsonWebKey() {
  if (jwk_ != nullptr) cjose_jwk_release(jwk_);
}

bool JsonWebKey::UsableWith(Algorithm alg) const {
  return alg == alg_ && (declared_alg_.empty() || declared_alg_ == AlgorithmName(alg));
}

absl::StatusOr<std::string> JsonWebKey::VerifyCompact(absl::string_view compact) const {
  cjose_err err;
  cjose_jws_t* jws = cjose_jws_import(compact.data(), compact.size(), &err);
  if (jws == nullptr) return absl::UnauthenticatedError("malformed JWT: not a valid JWS");
  std::string payload;
  bool ok = cjose_jws_verify(jws, jwk_, &err);
  if (ok) {
    uint8_t* plaintext = nullptr;
    size_t size = 0;
    // The plaintext stays owned by the JWS object.
    ok = cjose_jws_get_plaintext(jws, &plaintext, &size, &err);
    if (ok) payload.assign(reinterpret_cast<const char*>(plaintext), size);
  }
  cjose_jws_release(jws);
  if (!ok) return absl::UnauthenticatedError("signature does not verify");
  return payload;
}

absl::StatusOr<std::shared_ptr<const JsonWebKeySet>> JsonWebKeySet::Parse(absl::string_view text) {
  json doc = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return absl::InvalidArgumentError("JWKS: not valid JSON");
  if (!doc.is_object() || !doc.contains("keys") || !doc["keys"].is_array()) {
    return absl::InvalidArgumentError("JWKS: want an object with a \"keys\" array");
  }
  const json& keys = doc["keys"];
  if (keys.size() > kMaxKeys) {
    return absl::InvalidArgumentError(absl::StrCat("JWKS: more than ", kMaxKeys, " keys"));
  }
  auto set = std::make_shared<JsonWebKeySet>();
  for (size_t i = 0; i < keys.size(); ++i) {
    const std::string where = absl::StrCat("JWKS keys[", i, "]");
    const json& entry = keys[i];
    if (!entry.is_object()) return absl::InvalidArgumentError(where + ": not an object");
    const std::string kty = StringMember(entry, "kty");
    const std::string use = StringMember(entry, "use");
    const std::string declared_alg = StringMember(entry, "alg");
    Algorithm alg;
    if (!use.empty() && use != "sig") {
      set->skipped_.push_back(absl::StrCat(where, ": use \"", use, "\""));
      continue;
    }
    if (!declared_alg.empty() && !ParseAlgorithm(declared_alg, &alg)) {
      set->skipped_.push_back(absl::StrCat(where, ": alg \"", declared_alg, "\""));
      continue;
    }
    if (kty != "RSA" && kty != "EC") {
      set->skipped_.push_back(absl::StrCat(where, ": kty \"", kty, "\""));
      continue;
    }
    if (kty == "EC" && StringMember(entry, "crv") != "P-256") {
      set->skipped_.push_back(absl::StrCat(where, ": crv \"", StringMember(entry, "crv"), "\""));
      continue;
    }
    // Only the public members go to cjose: a JWKS must never carry private keys, and a
    // verifier has no use for them.
    json public_key = {{"kty", kty}};
    for (const char* member : kty == "RSA" ? std::vector<const char*>{"n", "e"}
                                           : std::vector<const char*>{"crv", "x", "y"}) {
      if (!entry.contains(member) || !entry[member].is_string()) {
        return absl::InvalidArgumentError(absl::StrCat(where, ": missing \"", member, "\""));
      }
      public_key[member] = entry[member];
    }
    const std::string serialized = public_key.dump();
    cjose_err err;
    auto key = std::unique_ptr<JsonWebKey>(new JsonWebKey());
    key->jwk_ = cjose_jwk_import(serialized.data(), serialized.size(), &err);
    if (key->jwk_ == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(where, ": not a valid ", kty, " key (", err.message, ")"));
    }
    key->kid_ = StringMember(entry, "kid");
    key->declared_alg_ = declared_alg;
    if (kty == "RSA") {
      const size_t bits = cjose_jwk_get_keysize(key->jwk_, &err);
      if (bits < kMinRsaBits) {
        return absl::InvalidArgumentError(
            absl::StrCat(where, ": RSA key of ", bits, " bits (want at least ", kMinRsaBits, ")"));
      }
      key->alg_ = Algorithm::kRS256;
      key->description_ = absl::StrCat("RSA ", bits);
    } else {
      key->alg_ = Algorithm::kES256;
      key->description_ = "EC P-256";
    }
    set->keys_.push_back(std::move(key));
  }
  if (set->keys_.empty()) {
    return absl::InvalidArgumentError(
        "JWKS: no usable signing key (want RSA of at least 2048 bits or EC P-256 with use sig)");
  }
  return std::shared_ptr<const JsonWebKeySet>(std::move(set));
}

std::vector<const JsonWebKey*> JsonWebKeySet::FindByKid(absl::string_view kid) const {
  std::vector<const JsonWebKey*> out;
  for (const auto& key : keys_) {
    if (key->kid() == kid) out.push_back(key.get());
  }
  return out;
}

std::vector<const JsonWebKey*> JsonWebKeySet::UsableWith(Algorithm alg) const {
  std::vector<const JsonWebKey*> out;
  for (const auto& key : keys_) {
    if (key->UsableWith(alg)) out.push_back(key.get());
  }
  return out;
}

}  // namespace regatta::auth::oidc
