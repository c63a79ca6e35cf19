// Bearer token and HS256 JWT checks with constant-time comparisons.
#include "http/auth.hpp"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

namespace seatflow::http {
namespace {

constexpr std::string_view kBearer = "Bearer ";
constexpr std::size_t kMaxCredentialBytes = 4096;

std::string hmac_sha256(std::string_view key, std::string_view data) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(data.data()), data.size(), digest, &length);
  return {reinterpret_cast<const char*>(digest), length};
}

// A refusal of the bearer credentials: one answer for missing and invalid ones alike.
Result<void> refused(errc code) {
  return Result<void>::failure(code, "missing or invalid bearer token");
}

bool equal_constant_time(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

// SHA-256 of a credential: tokens are compared as these fixed-length digests, so neither the
// comparison's time nor its early length check tells a client anything about the token's length.
std::string sha256(std::string_view bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return {reinterpret_cast<const char*>(digest), length};
}

// exp is required: a token without one would be valid for ever. One that expires further ahead
// than the lifetime bound is refused too (a forgotten long-lived token).
bool time_claims_hold(const nlohmann::json& claims, std::int64_t now_s,
                      std::int64_t lifetime_s_max) {
  if (!claims.contains("exp") || !claims["exp"].is_number()) {
    return false;
  }
  const double exp = claims["exp"].get<double>();
  if (now_s >= exp || exp - static_cast<double>(now_s) > static_cast<double>(lifetime_s_max)) {
    return false;
  }
  if (claims.contains("nbf")) {
    if (!claims["nbf"].is_number() || now_s < claims["nbf"].get<double>()) {
      return false;
    }
  }
  return true;
}

bool valid_jwt(std::string_view jwt, std::string_view secret, std::int64_t now_s,
               std::int64_t lifetime_s_max) {
  const auto first = jwt.find('.');
  const auto second = jwt.find('.', first + 1);
  if (first == std::string_view::npos || second == std::string_view::npos ||
      jwt.find('.', second + 1) != std::string_view::npos) {
    return false;
  }
  std::string header;
  std::string payload;
  std::string signature;
  if (!base64url_decode(jwt.substr(0, first), &header) ||
      !base64url_decode(jwt.substr(first + 1, second - first - 1), &payload) ||
      !base64url_decode(jwt.substr(second + 1), &signature)) {
    return false;
  }
  const auto header_json = nlohmann::json::parse(header, nullptr, false);
  // Only HS256: an attacker must not pick "none" or another algorithm. No `crit`: it names
  // extensions the token says must be understood, and this verifier understands none, so RFC 7515
  // §4.1.11 says refuse (whatever its value, even an empty list).
  if (!header_json.is_object() || !header_json.contains("alg") || !header_json["alg"].is_string() ||
      header_json["alg"].get<std::string>() != "HS256" || header_json.contains("crit")) {
    return false;
  }
  if (!equal_constant_time(signature, hmac_sha256(secret, jwt.substr(0, second)))) {
    return false;
  }
  const auto claims = nlohmann::json::parse(payload, nullptr, false);
  return claims.is_object() && time_claims_hold(claims, now_s, lifetime_s_max);
}

}  // namespace

std::string base64url_encode(std::string_view bytes) {
  constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  std::uint32_t buffer = 0;
  int bits = 0;
  for (const unsigned char c : bytes) {
    buffer = (buffer << 8) | c;
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out.push_back(kAlphabet[(buffer >> bits) & 0x3F]);
    }
  }
  if (bits > 0) {
    out.push_back(kAlphabet[(buffer << (6 - bits)) & 0x3F]);
  }
  return out;
}

bool base64url_decode(std::string_view text, std::string* out) {
  out->clear();
  std::uint32_t buffer = 0;
  int bits = 0;
  for (const char c : text) {
    int value = -1;
    if (c >= 'A' && c <= 'Z') {
      value = c - 'A';
    } else if (c >= 'a' && c <= 'z') {
      value = c - 'a' + 26;
    } else if (c >= '0' && c <= '9') {
      value = c - '0' + 52;
    } else if (c == '-') {
      value = 62;
    } else if (c == '_') {
      value = 63;
    } else {
      return false;
    }
    buffer = (buffer << 6) | static_cast<std::uint32_t>(value);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out->push_back(static_cast<char>((buffer >> bits) & 0xFF));
    }
  }
  return true;
}

std::string sign_jwt_hs256(std::string_view secret, std::string_view payload_json) {
  const auto signing_input =
      base64url_encode(R"({"alg":"HS256","typ":"JWT"})") + "." + base64url_encode(payload_json);
  return signing_input + "." + base64url_encode(hmac_sha256(secret, signing_input));
}

Authenticator::Authenticator(AuthSettings settings)
    : settings_(std::move(settings)), token_digest_(sha256(settings_.token)) {}

Result<void> Authenticator::check(std::string_view authorization, std::int64_t now_s) const {
  if (settings_.token.empty()) {
    return Result<void>::failure(errc::api_disabled, "API disabled: no SEATFLOW_API_TOKEN");
  }
  // The scheme name is case-insensitive (RFC 9110 §11.1).
  const bool bearer =
      authorization.size() >= kBearer.size() &&
      std::equal(kBearer.begin(), kBearer.end(), authorization.begin(), [](char a, char b) {
        return std::tolower(static_cast<unsigned char>(a)) ==
               std::tolower(static_cast<unsigned char>(b));
      });
  if (!bearer || authorization.size() > kMaxCredentialBytes) {
    return refused(errc::missing_credentials);
  }
  const auto credential = authorization.substr(kBearer.size());
  if (credential.empty()) {
    return refused(errc::missing_credentials);
  }
  if (equal_constant_time(sha256(credential), token_digest_)) {
    return {};
  }
  if (settings_.jwt_key.empty() ||
      !valid_jwt(credential, settings_.jwt_key, now_s, settings_.jwt_lifetime_s_max)) {
    return refused(errc::bad_credentials);
  }
  return {};
}

}  // namespace seatflow::http
