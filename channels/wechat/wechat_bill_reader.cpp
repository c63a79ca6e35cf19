// A WeChat Pay trade bill's lines: header, backtick rows, summary (see the header).
#include "channels/wechat/wechat_bill_reader.hpp"

#include <utility>

#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

// The summary header starts with this column.
constexpr std::string_view kWechatSummaryFirst = "总交易单数";

// A required column, or the first of several names (the bill's layouts differ over the years).
std::optional<std::size_t> wechat_column(const codec::CsvColumns& columns,
                                         std::initializer_list<std::string_view> names) {
  for (const auto name : names) {
    if (const auto index = columns.find(name)) {
      return index;
    }
  }
  return std::nullopt;
}

// The fields of a bill line: every field backtick-prefixed, or (headers) plain CSV.
bool wechat_fields(std::string_view line, std::vector<std::string>& fields) {
  return line.starts_with('`') ? codec::split_backtick_line(line, fields)
                               : codec::split_csv_line(line, fields);
}

}  // namespace

Result<void> WechatBillReader::line(std::string_view line) {
  if (line.empty()) {
    return {};
  }
  switch (part_) {
    case Part::header:
      return header(line);
    case Part::rows:
      if (line.starts_with('`')) {
        return row(line);
      }
      if (!line.starts_with(kWechatSummaryFirst) || !codec::split_csv_line(line, fields_)) {
        return rejected_answer("a line that is neither a row nor the summary header");
      }
      summary_columns_ = codec::CsvColumns(fields_);
      part_ = Part::summary;
      return {};
    case Part::summary:
      return summary(line);
    case Part::done:
      break;
  }
  return rejected_answer("text after the summary line");
}

Result<void> WechatBillReader::header(std::string_view line) {
  if (!codec::split_csv_line(line, fields_)) {
    return rejected_answer("the header line does not parse");
  }
  const codec::CsvColumns columns(fields_);
  const auto time = columns.find("交易时间");
  const auto trade_no = wechat_column(columns, {"微信订单号", "微信支付订单号"});
  const auto payment_no = columns.find("商户订单号");
  const auto state = columns.find("交易状态");
  const auto amount = wechat_column(columns, {"订单金额", "总金额"});
  const auto fee = columns.find("手续费");
  const auto refund_no = columns.find("商户退款单号");
  const auto refund_amount = columns.find("退款金额");
  if (!time || !trade_no || !payment_no || !state || !amount || !fee || !refund_no ||
      !refund_amount) {
    return rejected_answer("the header lacks a column a bill_type ALL bill has");
  }
  columns_ = Columns{*time,
                     *trade_no,
                     *payment_no,
                     *state,
                     *amount,
                     *fee,
                     *refund_no,
                     *refund_amount,
                     columns.find("应结订单金额"),
                     columns.find("申请退款金额"),
                     columns.size()};
  part_ = Part::rows;
  return {};
}

Result<void> WechatBillReader::row(std::string_view line) {
  if (auto counted = budget_.count(); !counted.ok()) {
    return counted;
  }
  if (!codec::split_backtick_line(line, fields_)) {
    return row_failure("does not split into fields");
  }
  return row_fields(fields_);
}

Failure WechatBillReader::row_failure(std::string_view why) const {
  return bill_row_rejected(budget_.read(), why);
}

// The row's mapping (SPEC §13). Amounts: 订单金额 is the order's total as the payment asked it
// (amount.total of the v3 query); 应结订单金额 is that less non-recharge coupons ("应结订单金额 =
// 订单金额 - 非充值代金券金额", the v2 query's settlement_total_fee), so matching it against the
// payment's amount would report every couponed payment as a mismatch. A refund likewise by what
// was asked (申请退款金额), or 退款金额 in layouts without it.
Result<void> WechatBillReader::row_fields(const std::vector<std::string>& fields) {
  if (fields.size() != columns_.count) {
    return row_failure("has another number of fields than the header");
  }
  const std::string& state = fields[columns_.state];
  const auto fee_units = codec::parse_decimal_units(fields[columns_.fee], kWechatFeeDecimals);
  const auto time_ms = codec::parse_china_time_ms(fields[columns_.time]);
  if (!fee_units || !add_exact(totals_.fee_units, *fee_units) || !time_ms) {
    return row_failure("手续费 or 交易时间 does not parse");
  }
  if (state == kWechatBillRevoked) {
    ++totals_.revoked;
    return {};
  }
  BillRow bill_row;
  bill_row.trade_no = fields[columns_.trade_no];
  bill_row.payment_no = fields[columns_.payment_no];
  bill_row.fee_cents = fee_units_to_cents(*fee_units);
  bill_row.completed_at_ms = *time_ms;
  std::optional<std::int64_t> amount;
  if (state == kWechatBillSuccess) {
    amount = yuan_to_cents(fields[columns_.amount]);
    const auto settle = columns_.settle_amount ? yuan_to_cents(fields[*columns_.settle_amount])
                                               : std::optional<std::int64_t>(0);
    if (!amount || !settle || !add_exact(totals_.order_cents, *amount) ||
        !add_exact(totals_.settle_cents, *settle)) {
      return row_failure("订单金额 or 应结订单金额 does not parse");
    }
  } else if (state == kWechatBillRefund) {
    bill_row.kind = BillRowKind::refund;
    bill_row.refund_no = fields[columns_.refund_no];
    const auto refunded = yuan_to_cents(fields[columns_.refund_amount]);
    amount = columns_.applied_refund ? yuan_to_cents(fields[*columns_.applied_refund]) : refunded;
    if (!refunded || !amount || !add_exact(totals_.refund_cents, *refunded) ||
        !add_exact(totals_.applied_cents, *amount) || !codec::is_valid_id(bill_row.refund_no)) {
      return row_failure("退款金额, 申请退款金额 or 商户退款单号 does not parse");
    }
  } else {
    return row_failure("交易状态 " + codec::log_safe_code(state) + " is not one SeatFlow reads");
  }
  if (*amount <= 0 || !codec::is_valid_id(bill_row.trade_no) ||
      !codec::is_valid_id(bill_row.payment_no)) {
    return row_failure("an amount that is not positive, or 微信订单号 or 商户订单号 not an id");
  }
  bill_row.amount_cents = *amount;
  return budget_.give(bill_row);
}

Result<void> WechatBillReader::check_total(std::string_view name, int decimals,
                                           std::int64_t expected) const {
  const auto column = summary_columns_.find(name);
  if (!column) {
    return {};  // this layout's summary has no such total
  }
  const auto value = codec::parse_decimal_units(fields_[*column], decimals);
  if (!value || *value != expected) {
    return rejected_answer("the summary's " + std::string(name) + " does not agree with the rows");
  }
  return {};
}

Result<void> WechatBillReader::summary(std::string_view line) {
  if (!wechat_fields(line, fields_) || fields_.size() != summary_columns_.size()) {
    return rejected_answer("the summary line does not parse");
  }
  if (!summary_columns_.find("总交易单数")) {
    return rejected_answer("the summary has no 总交易单数");
  }
  std::vector<Result<void>> checks;
  checks.push_back(check_total("总交易单数", 0, static_cast<std::int64_t>(budget_.read())));
  // How WeChat Pay totals REVOKED rows is not documented: with any, only the count is held.
  if (totals_.revoked == 0) {
    checks.push_back(check_total("订单总金额", 2, totals_.order_cents));
    checks.push_back(check_total("应结订单总金额", 2, totals_.settle_cents));
    checks.push_back(check_total("退款总金额", 2, totals_.refund_cents));
    checks.push_back(check_total("申请退款总金额", 2, totals_.applied_cents));
    checks.push_back(check_total("手续费总金额", kWechatFeeDecimals, totals_.fee_units));
  }
  for (auto& check : checks) {
    if (!check.ok()) {
      return check;
    }
  }
  part_ = Part::done;
  return {};
}

Result<void> WechatBillReader::finish() const {
  if (part_ != Part::done) {
    return rejected_answer("the bill ends before its summary line");
  }
  return {};
}

}  // namespace seatflow::channels
