// The one id validator: every id SeatFlow takes in (order and payment numbers, callback ids, the
// API's show/user/seat ids, a gateway's trade numbers) passes valid_id under one of three rules,
// with one length limit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace seatflow::domain {

// Every id is 1 to id_bytes_max bytes.
inline constexpr std::size_t id_bytes_max = 128;

enum class IdRule : std::uint8_t {
  // What the API creates and Redis keys and hash tags hold: [A-Za-z0-9_.:-] only, so a key is
  // never ambiguous. Every order number, and a payment number a client names.
  api_key,
  // What a gateway sends: valid UTF-8 without ASCII control characters (a newline could forge log
  // lines downstream; a NUL is refused by PostgreSQL's TEXT). Callback ids, and the payment numbers
  // and trade numbers callbacks name.
  gateway_text,
  // Any byte but ASCII control characters, not checked for UTF-8: the hmac dialect's ids (a
  // newline would make its newline-joined canonical string ambiguous) and the API's search and
  // path values.
  printable_bytes,
};

// Strict UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF, no truncated sequence.
[[nodiscard]] bool is_valid_utf8(std::string_view text);

// Non-empty, at most id_bytes_max bytes, and every byte allowed by `rule`.
[[nodiscard]] bool valid_id(std::string_view id, IdRule rule);

// An id under the loosest rule (printable_bytes, which the other two imply): what every store and
// actor entry asserts of the ids it is handed (SEATFLOW_ASSERT). The border that takes an id in
// checks its own rule first.
[[nodiscard]] inline bool is_id(std::string_view id) {
  return valid_id(id, IdRule::printable_bytes);
}

}  // namespace seatflow::domain
