// The dialect-independent parts of bill sources: names, the download's last step, the yuan parser
// and the repair's callback id.
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

Result<BillStep> download_step(
    const net::Response& response, BillCursor& cursor,
    const std::function<Result<BillSummary>(std::string_view body)>& read) {
  if (response.status != 200) {
    return rejected_answer("the bill download answered HTTP " + std::to_string(response.status));
  }
  auto rows = read(response.body);
  if (!rows.ok()) {
    return std::move(rows).failure();
  }
  cursor.rows = rows.value().rows;
  BillStep step;
  step.kind = BillStep::Kind::done;
  step.summary = std::move(rows).value();
  return step;
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
