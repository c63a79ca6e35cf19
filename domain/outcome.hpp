// The result of processing one callback and its metric label (SPEC §6). How each is answered
// (HTTP status, ACK or not) is http/'s table (http/status.hpp): domain knows no HTTP.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace seatflow::domain {

// One value per `result` label of seatflow_payment_callback_total.
enum class CallbackResult : std::uint8_t {
  applied = 0,
  duplicate,
  ignored,
  discrepancy,
  conflict,
  rejected_signature,
  rejected_param,
  unknown_payment,
  mark_sold_failed,
  unavailable,
  // The signature verified but the signed timestamp is outside the freshness window: a wrong
  // clock here or at the gateway, or a replay of an old message (SPEC §14).
  stale,
};
inline constexpr std::size_t kCallbackResultCount = 11;

[[nodiscard]] constexpr std::string_view to_string(CallbackResult result) {
  constexpr std::string_view kNames[] = {
      "applied",          "duplicate",          "ignored",        "discrepancy",
      "conflict",         "rejected_signature", "rejected_param", "unknown_payment",
      "mark_sold_failed", "unavailable",        "stale"};
  return kNames[static_cast<std::size_t>(result)];
}

struct CallbackOutcome {
  CallbackResult result = CallbackResult::unavailable;
  std::string detail;  // log-safe, shown in non-ACK reply bodies
};

}  // namespace seatflow::domain
