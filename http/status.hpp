// The one table that turns what the lower layers decided into an HTTP answer: a callback's result
// (domain/) and a channel's rejection (channels/) each map to a status, and 200 means ACK — the
// gateway stops retrying. domain/ and channels/ know no HTTP; only http/ reads this.
#pragma once

#include "channels/channel.hpp"
#include "domain/outcome.hpp"

namespace seatflow::http {

// 200 ACK, 4xx permanent (the gateway should stop or alert), 5xx transient (it retries).
[[nodiscard]] constexpr int http_status(domain::CallbackResult result) {
  switch (result) {
    case domain::CallbackResult::applied:
    case domain::CallbackResult::duplicate:
    case domain::CallbackResult::ignored:
    case domain::CallbackResult::discrepancy:
      return 200;
    case domain::CallbackResult::conflict:
      return 409;
    case domain::CallbackResult::rejected_signature:
      return 401;
    case domain::CallbackResult::rejected_param:
      return 400;
    case domain::CallbackResult::unknown_payment:
      return 404;
    case domain::CallbackResult::mark_sold_failed:
    case domain::CallbackResult::unavailable:
      return 503;
  }
  return 500;
}

// A rejected request was never verified, so nothing was logged or written (SPEC §6 replies).
[[nodiscard]] constexpr int http_status(channels::RejectReason reason) {
  switch (reason) {
    case channels::RejectReason::malformed:
    case channels::RejectReason::bad_status:
      return 400;
    case channels::RejectReason::bad_signature:
    case channels::RejectReason::stale:
      return 401;
    case channels::RejectReason::unhandled_event:
      // Authentic, but an event SeatFlow does not act on: ACK so that the gateway stops.
      return 200;
  }
  // Unreachable for valid enumerators; an out-of-range value is a malformed request at worst.
  return 400;
}

[[nodiscard]] constexpr bool is_ack(int status) {
  return status == 200;
}

}  // namespace seatflow::http
