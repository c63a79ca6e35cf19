// Why a channel refused a request or a gateway's answer, as std::error_code values of one category
// ("channels"), carried in the module's domain::Result. The channel interface's RejectReason is
// this enum; http/status.hpp says how each is answered.
#pragma once

#include <cassert>
#include <cstdint>
#include <string>
#include <system_error>
#include <utility>

#include "domain/result.hpp"

namespace seatflow::channels {

// 0 is success (std::error_code's "no error"); the others are today's rejection kinds, plus the
// one the HTTP layer finds before any channel runs (unknown_channel).
enum class errc : std::uint8_t {
  success = 0,
  malformed,      // not parseable, missing or mistyped field
  bad_status,     // status value outside what the dialect allows
  bad_signature,  // signature does not verify under any configured key
  stale,          // signature verifies, but the timestamp is outside the accepted window
  // Authentic, but an event type SeatFlow does not act on (a Stripe account sends many); ACKed.
  // It names no payment, so it is answered at once: nothing is logged or written.
  unhandled_event,
  unknown_channel,  // no such channel, or one not enabled on this engine
  // A gateway's answer to an active query or a refund that proves nothing: unverified, malformed,
  // about another payment, refund or amount, or no answer at all. Nothing changes on it.
  rejected_answer,
  // Authentic (its signature verified), but its content cannot be used: a field missing or
  // mistyped, another currency. Answered 400 like `malformed`, but it spends no token of the
  // source's unverified-traffic bucket: the gateway itself sent it (SPEC §14).
  unusable,
  // A channel's configuration cannot make a working dialect (an empty id, a key that is not
  // one): a start-up refusal, never a request's.
  bad_config,
};

// The "channels" category (a domain::ErrorCategory): one message per errc value.
[[nodiscard]] const std::error_category& error_category() noexcept;

[[nodiscard]] inline std::error_code make_error_code(errc value) noexcept {
  return {static_cast<int>(value), error_category()};
}

// The errc of a code of this category (a channel's failure).
[[nodiscard]] inline errc errc_of(std::error_code code) {
  assert(code.category() == error_category() && "a channels error code");
  return static_cast<errc>(code.value());
}

using domain::Failure;
using domain::Result;

// A refusal of `reason`; `detail` is short and log-safe (never a secret, never a full signature).
[[nodiscard]] inline Failure reject(errc reason, std::string detail) {
  return Failure{make_error_code(reason), std::move(detail), {}};
}

// A gateway's answer that proves nothing (errc::rejected_answer), and why.
[[nodiscard]] inline Failure rejected_answer(std::string detail) {
  return reject(errc::rejected_answer, std::move(detail));
}

// The refusals that spend a token of the source's unverified-traffic bucket (SPEC §14): a request
// that failed parsing before its signature could be checked, or failed verification (a forgery, a
// stale timestamp). A message proven authentic (`bad_status`, `unusable`, `unhandled_event`) never
// does: a gateway's own unusable event must not make its valid callbacks 429.
[[nodiscard]] constexpr bool spends_unverified_token(errc value) {
  return value == errc::malformed || value == errc::bad_signature || value == errc::stale;
}

// The content of a message whose signature has verified, as the dialect parsed it: a `malformed`
// refusal becomes `unusable` (authentic, so it spends no token); anything else is kept.
template <class T>
[[nodiscard]] Result<T> authentic(Result<T> parsed) {
  if (!parsed.ok() && parsed.error() == make_error_code(errc::malformed)) {
    return Failure{make_error_code(errc::unusable), parsed.detail(), parsed.named()};
  }
  return parsed;
}

// A refusal that says the sender is not who it claims: counted as rejected_signature. A stale
// message is authentic (its signature verified) and is counted apart, as `stale`.
[[nodiscard]] constexpr bool is_signature_failure(errc value) {
  return value == errc::bad_signature;
}

}  // namespace seatflow::channels

template <>
struct std::is_error_code_enum<seatflow::channels::errc> : std::true_type {};
