// Maps a channel rejection to the HTTP status that answers it (SPEC §6 replies).
#include "channels/channel.hpp"

namespace seatflow::channels {

int http_status(RejectReason reason) {
  switch (reason) {
    case RejectReason::malformed:
    case RejectReason::bad_status:
      return 400;
    case RejectReason::bad_signature:
    case RejectReason::stale:
      return 401;
  }
  // Unreachable for valid enumerators; an out-of-range value is a malformed request at worst.
  return 400;
}

}  // namespace seatflow::channels
