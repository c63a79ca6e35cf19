// The dialect-independent parts of bill sources: names, the yuan parser and the repair's callback
// id.
#include "channels/bill.hpp"

#include <limits>

namespace seatflow::channels {

std::string_view to_string(BillRowKind kind) {
  return kind == BillRowKind::payment ? "payment" : "refund";
}

std::optional<std::int64_t> yuan_to_cents(std::string_view text) {
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  const auto dot = text.find('.');
  const auto whole = text.substr(0, dot);
  const auto fraction = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && fraction.empty()) || fraction.size() > 2) {
    return std::nullopt;
  }
  constexpr auto kMax = std::numeric_limits<std::int64_t>::max() / 100;
  std::int64_t yuan = 0;
  for (const char c : whole) {
    if (c < '0' || c > '9' || yuan > (kMax - (c - '0')) / 10) {
      return std::nullopt;
    }
    yuan = yuan * 10 + (c - '0');
  }
  std::int64_t cents = 0;
  for (std::size_t i = 0; i < 2; ++i) {
    const char c = i < fraction.size() ? fraction[i] : '0';
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    cents = cents * 10 + (c - '0');
  }
  const auto total = yuan * 100 + cents;
  return negative ? -total : total;
}

std::string bill_callback_id(domain::Channel channel, std::string_view trade_no) {
  std::string id = "bill:";
  id += domain::to_string(channel);
  id += ':';
  id += trade_no;
  return id;
}

}  // namespace seatflow::channels
