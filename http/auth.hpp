// API authentication: `Authorization: Bearer <token>` where the token is SEATFLOW_API_TOKEN itself
// or an HS256 JWT signed with SEATFLOW_API_JWT_KEY that expires within
// SEATFLOW_API_JWT_LIFETIME_MAX. The notify path never comes here: its guard is the signature.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "http/errc.hpp"

namespace seatflow::http {

struct AuthSettings {
  std::string token;                        // the bearer token; empty: the API refuses everyone
  std::string jwt_key;                      // HS256 key of JWTs; empty: JWTs are refused
  std::int64_t jwt_lifetime_s_max = 3'600;  // a JWT's exp may be at most this far ahead
};

class Authenticator {
 public:
  explicit Authenticator(AuthSettings settings);
  // `authorization` is the raw header value; `now_s` epoch seconds for exp/nbf. Refused as
  // errc::missing_credentials (no bearer credentials), errc::bad_credentials (a wrong token, a bad
  // JWT signature, a wrong alg, no exp, expired, too long-lived, not yet valid, or a JWT while no
  // JWT key is configured) or errc::api_disabled (no API token configured), each with the detail
  // its 401 answers.
  [[nodiscard]] Result<void> check(std::string_view authorization, std::int64_t now_s) const;

 private:
  AuthSettings settings_;
  std::string token_digest_;  // SHA-256 of the token: what a bearer credential is compared with
};

// An HS256 JWT over `payload_json` (for operators and tests).
[[nodiscard]] std::string sign_jwt_hs256(std::string_view secret, std::string_view payload_json);

[[nodiscard]] std::string base64url_encode(std::string_view bytes);
// Decodes unpadded base64url; false on any character outside the alphabet.
[[nodiscard]] bool base64url_decode(std::string_view text, std::string* out);

}  // namespace seatflow::http
