// The text of an Alipay trade bill's detail file (…_业务明细.csv, GBK, here already UTF-8): '#'
// comment lines, a header line, rows, then closing '#' lines of which
// "#交易合计：N笔，商家实收共X元，…" (and "#退款合计：M笔，商家实收退款共Y元，…" when the day had
// refunds) must agree with the rows: N the 交易 rows and M the 退款 rows read, X and Y the sums of
// their 商家实收 exactly. Columns are found by name (a trailing （元） ignored).
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

// 业务类型 values of the rows SeatFlow reads.
inline constexpr std::string_view kAlipayBillTrade = "交易";
inline constexpr std::string_view kAlipayBillRefund = "退款";

class AlipayBillReader {
 public:
  AlipayBillReader(const BillLimits& limits, BillRowSink& sink) : budget_(limits, sink) {}

  // One line of the file, converted to UTF-8.
  [[nodiscard]] Result<void> line(std::string_view line);
  // After the last line: the header, the rows and an agreeing 交易合计 (and 退款合计) were read.
  [[nodiscard]] Result<void> finish() const;
  [[nodiscard]] std::size_t rows_given() const { return budget_.given(); }

 private:
  enum class Part : std::uint8_t { preface, rows, closing };

  struct Columns {
    std::size_t trade_no = 0, payment_no = 0, type = 0, finished_at = 0, amount = 0, fee = 0;
    std::size_t refund_no = 0;
    std::optional<std::size_t> received;  // 商家实收
    std::size_t count = 0;
  };
  // What the rows came to, and what the closing lines said.
  struct Tally {
    std::int64_t trades = 0, refunds = 0;
    std::int64_t trade_received_cents = 0, refund_received_cents = 0;
    bool trade_total_read = false, refund_total_read = false;
  };

  [[nodiscard]] Result<void> header(std::string_view line);
  [[nodiscard]] Result<void> row(std::string_view line);
  [[nodiscard]] Result<void> closing(std::string_view line);
  [[nodiscard]] Failure row_failure(std::string_view why) const;

  BillRowBudget budget_;
  Part part_ = Part::preface;
  Columns columns_;
  Tally tally_;
  std::vector<std::string> fields_;
};

// "#交易合计：6笔，商家实收共0.06元，…" read from after `prefix` ("#交易合计：" or "#退款合计："):
// the count, and the amount after `amount_label` in cents when the line has it. nullopt when
// the count does not parse, or the amount is there and does not.
struct AlipayTotal {
  std::int64_t count = 0;
  std::optional<std::int64_t> amount_cents;
};
[[nodiscard]] std::optional<AlipayTotal> parse_alipay_total(std::string_view text,
                                                            std::string_view amount_label);

}  // namespace seatflow::channels
