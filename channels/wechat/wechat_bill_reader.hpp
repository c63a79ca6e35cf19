// The text of a WeChat Pay trade bill (交易账单, bill_type ALL), as the v3 docs lay it out
// (https://pay.weixin.qq.com/docs/merchant/products/bill-download/format-trade.html): a header
// line, rows whose every field starts with '`', then the summary header (总交易单数,…) and its
// line. Columns are found by name. The summary must agree with the rows: the count always, and
// each total the summary has (订单总金额, 应结订单总金额, 退款总金额, 申请退款总金额,
// 手续费总金额) exactly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "channels/bill.hpp"
#include "channels/bill_lines.hpp"
#include "codec/bill_text.hpp"

namespace seatflow::channels {

// 交易状态 values of a trade bill's rows.
inline constexpr std::string_view kWechatBillSuccess = "SUCCESS";
inline constexpr std::string_view kWechatBillRefund = "REFUND";
// A payment cancelled after it succeeded (付款码 撤销): counted, no row for the sink.
inline constexpr std::string_view kWechatBillRevoked = "REVOKED";

// Reads one bill, line by line (BillLineHandler), giving its rows to the sink.
class WechatBillReader {
 public:
  WechatBillReader(const BillLimits& limits, BillRowSink& sink) : budget_(limits, sink) {}

  [[nodiscard]] Result<void> line(std::string_view line);
  // After the last line: the summary was read and agrees with the rows.
  [[nodiscard]] Result<void> finish() const;
  [[nodiscard]] std::size_t rows_given() const { return budget_.given(); }

 private:
  enum class Part : std::uint8_t { header, rows, summary, done };

  // The columns rows are read by; the optional ones are absent from older layouts.
  struct Columns {
    std::size_t time = 0, trade_no = 0, payment_no = 0, state = 0, amount = 0, fee = 0;
    std::size_t refund_no = 0, refund_amount = 0;
    std::optional<std::size_t> settle_amount, applied_refund;
    std::size_t count = 0;
  };
  // Exact sums of what the rows said, to hold against the summary.
  struct Totals {
    std::int64_t order_cents = 0, settle_cents = 0;    // SUCCESS rows
    std::int64_t refund_cents = 0, applied_cents = 0;  // REFUND rows
    std::int64_t fee_units = 0;                        // every row, 10^-5 yuan
    std::size_t revoked = 0;
  };

  [[nodiscard]] Result<void> header(std::string_view line);
  [[nodiscard]] Result<void> row(std::string_view line);
  [[nodiscard]] Result<void> row_fields(const std::vector<std::string>& fields);
  [[nodiscard]] Result<void> summary(std::string_view line);
  [[nodiscard]] Result<void> check_total(std::string_view name, int decimals,
                                         std::int64_t expected) const;
  [[nodiscard]] Failure row_failure(std::string_view why) const;

  BillRowBudget budget_;
  Part part_ = Part::header;
  Columns columns_;
  Totals totals_;
  codec::CsvColumns summary_columns_;
  std::vector<std::string> fields_;
};

}  // namespace seatflow::channels
