// The dialect-independent parts of bill sources: names, the yuan parser and the repair's callback
// id.
#include "channels/bill.hpp"

#include "codec/bill_text.hpp"

namespace seatflow::channels {
namespace {

// Yuan have two decimals of cents.
constexpr int kCentsDecimals = 2;

}  // namespace

std::string_view to_string(BillRowKind kind) {
  return kind == BillRowKind::payment ? "payment" : "refund";
}

// Delegates to the codec's exact decimal reader: "92233720368547758.07" is the largest amount and
// anything beyond is refused rather than wrapped.
std::optional<std::int64_t> yuan_to_cents(std::string_view text) {
  return codec::parse_decimal_units(text, kCentsDecimals);
}

std::string bill_callback_id(domain::Channel channel, std::string_view trade_no) {
  std::string id = "bill:";
  id += domain::to_string(channel);
  id += ':';
  id += trade_no;
  return id;
}

}  // namespace seatflow::channels
