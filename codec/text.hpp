// Text handling shared by the gateway dialects: ids, UTF-8, GBK, URL encoding, China time.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "domain/ids.hpp"

namespace seatflow::codec {

// Every id a dialect hands on (callback id, payment number, channel trade number) is at most this
// many bytes: the one id limit (domain/ids.hpp).
inline constexpr std::size_t kMaxIdBytes = domain::id_bytes_max;

// domain::valid_id under IdRule::gateway_text: non-empty, at most kMaxIdBytes, valid UTF-8 and
// free of ASCII control characters.
[[nodiscard]] bool is_valid_id(std::string_view id);

// domain::is_valid_utf8: strict UTF-8, no overlong forms, no surrogates, nothing above U+10FFFF.
[[nodiscard]] bool is_valid_utf8(std::string_view text);

// GBK (Windows code page 936 as glibc's iconv knows it) to UTF-8. nullopt on an invalid or
// incomplete sequence. Thread-safe: each thread converts with its own iconv descriptor.
[[nodiscard]] std::optional<std::string> gbk_to_utf8(std::string_view gbk);
// UTF-8 to GBK; nullopt when the text is not valid UTF-8 or has a character GBK cannot encode.
[[nodiscard]] std::optional<std::string> utf8_to_gbk(std::string_view utf8);

// application/x-www-form-urlencoded decoding of one key or value: "+" is a space and "%XY" the
// byte 0xXY; other bytes stay as they are. nullopt on a "%" not followed by two hex digits.
[[nodiscard]] std::optional<std::string> form_decode(std::string_view text);
// The inverse: [A-Za-z0-9*-._] stay, a space becomes "+", every other byte "%XY" (upper hex).
[[nodiscard]] std::string form_encode(std::string_view bytes);

// The value of one hex digit of either case, -1 for any other character. A table lookup, inline:
// signatures and digests decode it per character on every callback, and comparisons by range
// mispredicted on mixed digits and letters (~3 % of a storm duplicate's CPU).
inline constexpr auto kHexDigitValues = [] {
  std::array<signed char, 256> values{};
  values.fill(-1);
  for (int i = 0; i < 10; ++i) {
    values['0' + i] = static_cast<signed char>(i);
  }
  for (int i = 0; i < 6; ++i) {
    values['a' + i] = static_cast<signed char>(10 + i);
    values['A' + i] = static_cast<signed char>(10 + i);
  }
  return values;
}();

[[nodiscard]] constexpr int hex_digit_value(char c) {
  return kHexDigitValues[static_cast<unsigned char>(c)];
}

// ASCII-only case-insensitive equality (charset names, header values).
[[nodiscard]] bool iequals_ascii(std::string_view a, std::string_view b);

// `now_ms` (epoch milliseconds) in China Standard Time, the gateways' clock: "yyyy-MM-dd HH:mm:ss"
// (Alipay's timestamps), or with `iso` "yyyy-MM-ddTHH:mm:ss+08:00" (WeChat Pay's).
[[nodiscard]] std::string china_time(std::int64_t now_ms, bool iso);

// A code: 1 to kLogSafeCodeBytesMax bytes of [A-Za-z0-9._-] (a gateway's error code, a merchant
// id or key serial) — safe in a log line and inside a quoted header parameter.
inline constexpr std::size_t kLogSafeCodeBytesMax = 64;

// The separator of the signed pieces of the Stripe and Standard Webhooks signatures.
inline constexpr std::string_view kDot = ".";
[[nodiscard]] bool is_safe_code(std::string_view code);
// A gateway's error code as a rejection may quote it: the code itself when is_safe_code, else "?"
// — never arbitrary answer text in a log.
[[nodiscard]] std::string log_safe_code(std::string_view code);

}  // namespace seatflow::codec
