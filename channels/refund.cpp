// The channel-independent part of gateway refunds: refund numbers and reasons.
#include "channels/refund.hpp"

#include <algorithm>

namespace seatflow::channels {

bool valid_refund_no(std::string_view refund_no) {
  if (refund_no.empty() || refund_no.size() > kRefundNoBytesMax) {
    return false;
  }
  return std::all_of(refund_no.begin(), refund_no.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
           c == '-';
  });
}

std::string bounded_reason(std::string_view text) {
  return bounded_printable(text, kRefundReasonBytesMax);
}

std::string bounded_printable(std::string_view text, std::size_t bytes_max) {
  std::string out(text.substr(0, bytes_max));
  for (char& c : out) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20U || byte >= 0x7FU) {
      c = '?';
    }
  }
  return out;
}

}  // namespace seatflow::channels
