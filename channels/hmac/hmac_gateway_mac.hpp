// The MAC of the hmac gateway's API bodies (refunds, payment create and close): lowercase hex
// HMAC-SHA256 of newline-joined fields under the first callback secret, verified under any secret
// and within the callback window. Both sides use it: SeatFlow's dialects and the gateway's (the dev
// mock gateway, the tests' fake).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace seatflow::channels {

// Lowercase hex HMAC-SHA256 of `content` under `secret`.
[[nodiscard]] std::string hmac_gateway_sign(std::string_view secret, std::string_view content);

// Whether `sign` (hex, either case) is the MAC of `content` under any of `secrets`, compared in
// constant time; false for a null or malformed sign.
[[nodiscard]] bool hmac_gateway_signed_by_any(const std::vector<std::string>& secrets,
                                              std::string_view content, const std::string* sign);

// |now_ms - timestamp_ms| <= window_ms, without overflow for any two values.
[[nodiscard]] bool hmac_gateway_within(std::int64_t now_ms, std::int64_t timestamp_ms,
                                       std::int64_t window_ms);

// Printable ASCII only (0x20-0x7E): a field of a newline-joined signed content can then never be
// mistaken for two.
[[nodiscard]] bool hmac_gateway_printable(std::string_view text);

// The checks every hmac gateway dialect's constructor makes: at least one secret, none empty, a
// window that is not negative. Throws std::invalid_argument naming `who`.
void check_hmac_gateway_secrets(const std::vector<std::string>& secrets, std::int64_t window_ms,
                                const char* who);

// Overwrites every secret's bytes (a dialect's destructor).
void wipe_hmac_gateway_secrets(std::vector<std::string>& secrets);

}  // namespace seatflow::channels
