// A channel's rejection as an HTTP status (channels/ knows no HTTP), and what counts as an ACK. A
// callback's result maps to its status in domain/outcome.hpp (domain::http_status), because the
// callback log records that status in the callback's commit (SPEC §12), below this layer.
#pragma once

#include "channels/channel.hpp"
#include "domain/outcome.hpp"

namespace seatflow::http {

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
