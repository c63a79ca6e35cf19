// The hmac gateway's body MAC: signing, verifying under any secret, the window, printable fields.
#include "channels/hmac/hmac_gateway_mac.hpp"

#include <openssl/crypto.h>

#include <array>
#include <stdexcept>

#include "codec/crypto.hpp"
#include "codec/digest.hpp"

namespace seatflow::channels {

std::string hmac_gateway_sign(std::string_view secret, std::string_view content) {
  const std::array<std::string_view, 1> pieces{content};
  return codec::to_lower_hex(codec::hmac_sha256(secret, pieces));
}

bool hmac_gateway_signed_by_any(const std::vector<std::string>& secrets, std::string_view content,
                                const std::string* sign) {
  if (sign == nullptr) {
    return false;
  }
  const auto given = codec::hex_decode(*sign);
  if (!given || given->size() != codec::kHmacSha256Bytes) {
    return false;
  }
  const std::array<std::string_view, 1> pieces{content};
  bool any = false;
  for (const auto& secret : secrets) {
    any = codec::constant_time_equal(codec::hmac_sha256(secret, pieces), *given) || any;
  }
  return any;
}

bool hmac_gateway_within(std::int64_t now_ms, std::int64_t timestamp_ms, std::int64_t window_ms) {
  const auto now = static_cast<std::uint64_t>(now_ms);
  const auto stamp = static_cast<std::uint64_t>(timestamp_ms);
  return (now >= stamp ? now - stamp : stamp - now) <= static_cast<std::uint64_t>(window_ms);
}

bool hmac_gateway_printable(std::string_view text) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20U || byte >= 0x7FU) {
      return false;
    }
  }
  return true;
}

void check_hmac_gateway_secrets(const std::vector<std::string>& secrets, std::int64_t window_ms,
                                const char* who) {
  if (secrets.empty() || window_ms < 0) {
    throw std::invalid_argument(std::string(who) + ": no secret, or a negative window");
  }
  for (const auto& secret : secrets) {
    if (secret.empty()) {
      throw std::invalid_argument(std::string(who) + ": empty secret");
    }
  }
}

void wipe_hmac_gateway_secrets(std::vector<std::string>& secrets) {
  for (auto& secret : secrets) {
    OPENSSL_cleanse(secret.data(), secret.size());
  }
}

}  // namespace seatflow::channels
