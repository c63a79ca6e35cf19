// The result of processing one callback, its metric label and its status (SPEC §6).
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
};
inline constexpr std::size_t kCallbackResultCount = 10;

[[nodiscard]] constexpr std::string_view to_string(CallbackResult result) {
  constexpr std::string_view kNames[] = {"applied",        "duplicate",       "ignored",
                                         "discrepancy",    "conflict",        "rejected_signature",
                                         "rejected_param", "unknown_payment", "mark_sold_failed",
                                         "unavailable"};
  return kNames[static_cast<std::size_t>(result)];
}

// The status each result is answered with (200 ACK, 4xx permanent, 5xx transient). It lives here,
// not in http/, because the callback log records it with the callback in the same commit
// (SPEC §12); http/status.hpp answers with it.
[[nodiscard]] constexpr int http_status(CallbackResult result) {
  switch (result) {
    case CallbackResult::applied:
    case CallbackResult::duplicate:
    case CallbackResult::ignored:
    case CallbackResult::discrepancy:
      return 200;
    case CallbackResult::conflict:
      return 409;
    case CallbackResult::rejected_signature:
      return 401;
    case CallbackResult::rejected_param:
      return 400;
    case CallbackResult::unknown_payment:
      return 404;
    case CallbackResult::mark_sold_failed:
    case CallbackResult::unavailable:
      return 503;
  }
  return 500;
}

struct CallbackOutcome {
  CallbackResult result = CallbackResult::unavailable;
  std::string detail;  // log-safe, shown in non-ACK reply bodies
};

}  // namespace seatflow::domain
