// An Alipay trade bill's detail lines: preface, header, rows, closing totals (see the header).
#include "channels/alipay/alipay_bill_reader.hpp"

#include <utility>

#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

constexpr std::string_view kAlipayTradeTotal = "#交易合计：";
constexpr std::string_view kAlipayRefundTotal = "#退款合计：";
constexpr std::string_view kAlipayTradeReceived = "商家实收共";
constexpr std::string_view kAlipayRefundReceived = "商家实收退款共";
constexpr std::string_view kAlipayCountUnit = "笔";
constexpr std::string_view kAlipayYuanUnit = "元";

std::int64_t magnitude(std::int64_t value) {
  return value < 0 ? -value : value;
}

// The totals line agrees with what the rows came to.
Result<void> check_alipay_total(std::string_view text, std::string_view label, std::int64_t rows,
                                std::int64_t received_cents, bool received) {
  const auto total = parse_alipay_total(text, label);
  if (!total) {
    return rejected_answer("a closing total line does not parse");
  }
  if (total->count != rows) {
    return rejected_answer("the closing line's count (" + std::to_string(total->count) +
                           ") is not the rows read (" + std::to_string(rows) + ")");
  }
  if (received && total->amount_cents && *total->amount_cents != received_cents) {
    return rejected_answer("the closing line's 商家实收 total does not agree with the rows");
  }
  return {};
}

}  // namespace

std::optional<AlipayTotal> parse_alipay_total(std::string_view text,
                                              std::string_view amount_label) {
  const auto unit = text.find(kAlipayCountUnit);
  const auto count = unit == std::string_view::npos
                         ? std::nullopt
                         : codec::parse_decimal_units(text.substr(0, unit), 0);
  if (!count || *count < 0) {
    return std::nullopt;
  }
  AlipayTotal total{*count, std::nullopt};
  const auto label = text.find(amount_label);
  if (label == std::string_view::npos) {
    return total;
  }
  const auto amount_text = text.substr(label + amount_label.size());
  const auto end = amount_text.find(kAlipayYuanUnit);
  total.amount_cents =
      end == std::string_view::npos ? std::nullopt : yuan_to_cents(amount_text.substr(0, end));
  if (!total.amount_cents) {
    return std::nullopt;
  }
  return total;
}

Result<void> AlipayBillReader::line(std::string_view line) {
  if (line.empty()) {
    return {};
  }
  const bool comment = line.starts_with('#');
  switch (part_) {
    case Part::preface:
      return comment ? Result<void>{} : header(line);
    case Part::rows:
      if (!comment) {
        return row(line);
      }
      part_ = Part::closing;
      return closing(line);
    case Part::closing:
      if (comment) {
        return closing(line);
      }
      break;
  }
  return rejected_answer("a row after the closing lines");
}

Result<void> AlipayBillReader::header(std::string_view line) {
  if (!codec::split_csv_line(line, fields_)) {
    return rejected_answer("the header line does not parse");
  }
  const codec::CsvColumns columns(fields_);
  const auto trade_no = columns.find("支付宝交易号");
  const auto payment_no = columns.find("商户订单号");
  const auto type = columns.find("业务类型");
  const auto finished_at = columns.find("完成时间");
  const auto amount = columns.find("订单金额");
  const auto fee = columns.find("服务费");
  const auto refund_no = columns.find("退款批次号/请求号");
  if (!trade_no || !payment_no || !type || !finished_at || !amount || !fee || !refund_no) {
    return rejected_answer("the header lacks a column of the trade bill");
  }
  columns_ = Columns{*trade_no,     *payment_no, *type,      *finished_at,
                     *amount,       *fee,        *refund_no, columns.find("商家实收"),
                     columns.size()};
  part_ = Part::rows;
  return {};
}

Failure AlipayBillReader::row_failure(std::string_view why) const {
  return bill_row_rejected(budget_.read(), why);
}

// The row's mapping (SPEC §13). 订单金额 is the trade's total_amount (alipay.trade.query:
// "total_amount 交易的订单金额"), what the payment asked; 商家实收 is receipt_amount, less the
// merchant's discounts, so it is only summed against the closing line. A refund row writes its
// amounts negative; the row's amount is their magnitude. 服务费 is charged on a trade and given
// back on a refund: its magnitude with that sign, whichever sign the file writes.
Result<void> AlipayBillReader::row(std::string_view line) {
  if (auto counted = budget_.count(); !counted.ok()) {
    return counted;
  }
  if (!codec::split_csv_line(line, fields_) || fields_.size() != columns_.count) {
    return row_failure("does not split into the header's fields");
  }
  const std::string& type = fields_[columns_.type];
  const bool refund = type == kAlipayBillRefund;
  if (!refund && type != kAlipayBillTrade) {
    return row_failure("业务类型 is neither 交易 nor 退款");
  }
  const auto amount = yuan_to_cents(fields_[columns_.amount]);
  const auto fee = yuan_to_cents(fields_[columns_.fee]);
  const auto time_ms = codec::parse_china_time_ms(fields_[columns_.finished_at]);
  const auto received = columns_.received ? yuan_to_cents(fields_[*columns_.received])
                                          : std::optional<std::int64_t>(0);
  auto& received_total = refund ? tally_.refund_received_cents : tally_.trade_received_cents;
  if (!amount || *amount == 0 || !fee || !time_ms || !received ||
      !add_exact(received_total, *received)) {
    return row_failure("订单金额, 商家实收, 服务费 or 完成时间 does not parse");
  }
  BillRow bill_row;
  bill_row.kind = refund ? BillRowKind::refund : BillRowKind::payment;
  bill_row.trade_no = fields_[columns_.trade_no];
  bill_row.payment_no = fields_[columns_.payment_no];
  bill_row.refund_no = refund ? fields_[columns_.refund_no] : std::string();
  bill_row.amount_cents = magnitude(*amount);
  bill_row.fee_cents = refund ? -magnitude(*fee) : magnitude(*fee);
  bill_row.completed_at_ms = *time_ms;
  if (!codec::is_valid_id(bill_row.trade_no) || !codec::is_valid_id(bill_row.payment_no) ||
      (refund && !codec::is_valid_id(bill_row.refund_no))) {
    return row_failure("支付宝交易号, 商户订单号 or 退款批次号/请求号 is not an id");
  }
  ++(refund ? tally_.refunds : tally_.trades);
  return budget_.give(bill_row);
}

Result<void> AlipayBillReader::closing(std::string_view line) {
  const bool received = columns_.received.has_value();
  if (line.starts_with(kAlipayTradeTotal)) {
    tally_.trade_total_read = true;
    return check_alipay_total(line.substr(kAlipayTradeTotal.size()), kAlipayTradeReceived,
                              tally_.trades, tally_.trade_received_cents, received);
  }
  if (line.starts_with(kAlipayRefundTotal)) {
    tally_.refund_total_read = true;
    return check_alipay_total(line.substr(kAlipayRefundTotal.size()), kAlipayRefundReceived,
                              tally_.refunds, tally_.refund_received_cents, received);
  }
  return {};
}

Result<void> AlipayBillReader::finish() const {
  if (part_ == Part::preface) {
    return rejected_answer("the bill has no header line");
  }
  if (!tally_.trade_total_read) {
    return rejected_answer("the bill ends without its #交易合计 line");
  }
  if (tally_.refunds > 0 && !tally_.refund_total_read) {
    return rejected_answer("the bill has refund rows but no #退款合计 line");
  }
  return {};
}

}  // namespace seatflow::channels
