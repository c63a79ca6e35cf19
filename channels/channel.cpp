// Header lookup for the dialects, and the HTTP status that answers a rejection (SPEC §6 replies).
#include "channels/channel.hpp"

namespace seatflow::channels {

std::optional<std::string_view> header_value(const Headers* headers, std::string_view name) {
  if (headers == nullptr) {
    return std::nullopt;
  }
  const auto it = headers->find(name);
  if (it == headers->end() || it->second.empty()) {
    return std::nullopt;
  }
  return std::string_view(it->second);
}

int http_status(RejectReason reason) {
  switch (reason) {
    case RejectReason::malformed:
    case RejectReason::bad_status:
      return 400;
    case RejectReason::bad_signature:
    case RejectReason::stale:
      return 401;
    case RejectReason::unhandled_event:
      return 200;
  }
  // Unreachable for valid enumerators; an out-of-range value is a malformed request at worst.
  return 400;
}

}  // namespace seatflow::channels
