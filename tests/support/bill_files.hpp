// Gateway bills in their real formats, built at test time: a WeChat Pay trade bill (bill_type
// ALL: header, backtick rows, summary) gzipped with zlib, and an Alipay trade bill (GBK '#' lines,
// header, rows, 交易合计/退款合计) inside a zip built by hand with GBK entry names. Each builder
// can be told to get one thing wrong, for the tests of every failure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "channels/bill.hpp"

namespace seatflow::testing {

// One row of a fake bill, in SeatFlow's terms; the builders write it in the gateway's words.
struct FakeBillRow {
  bool refund = false;
  std::string trade_no;    // 微信订单号 / 支付宝交易号
  std::string payment_no;  // 商户订单号
  std::string refund_no;   // 商户退款单号 / 退款批次号/请求号 (refunds)
  std::int64_t amount_cents = 0;
  // WeChat Pay: the fee in 10^-5 yuan (its bills write five decimals), negative on refunds.
  // Alipay: the fee in cents, written as Alipay writes 服务费.
  std::int64_t fee = 0;
  std::string time = "2026-12-01 10:00:00";  // China time
};

// What a builder gets wrong on purpose.
struct FakeBillFlaws {
  std::optional<std::int64_t> count;  // the summary's / 交易合计's count instead of the true one
  bool no_summary = false;            // WeChat: no summary lines; Alipay: no 交易合计 line
  std::optional<std::string> raw_row;  // a row line written as is after the others
};

// "1.50" for 150, "-0.01" for -1; `decimals` fraction digits of 10^-decimals units.
[[nodiscard]] std::string decimal_text(std::int64_t units, int decimals = 2);

// A WeChat Pay trade bill (bill_type ALL, today's layout), UTF-8.
[[nodiscard]] std::string wechat_bill_text(const std::vector<FakeBillRow>& rows,
                                           const FakeBillFlaws& flaws = {});
// An Alipay trade bill's detail file, UTF-8 (the zip holds it in GBK).
[[nodiscard]] std::string alipay_bill_text(const std::vector<FakeBillRow>& rows,
                                           const FakeBillFlaws& flaws = {});

// `data` gzipped by zlib (one member).
[[nodiscard]] std::string gzip_bytes(std::string_view data);
// `data` as raw deflate (a zip entry's method 8).
[[nodiscard]] std::string raw_deflate(std::string_view data);

// A zip archive built by hand (local headers, central directory, end record).
struct FakeZipEntry {
  std::string name;  // raw bytes (GBK for Alipay's)
  std::string content;
  bool deflate = true;
  bool utf8_name = false;                      // sets general purpose flag bit 11
  bool wrong_crc = false;                      // the directory's CRC-32 off by one
  std::optional<std::uint32_t> declared_size;  // the directory's uncompressed size instead
};
[[nodiscard]] std::string zip_archive(const std::vector<FakeZipEntry>& entries);

// Alipay's daily bill zip: "20880000000000000156_<yyyyMMdd>_业务明细.csv" (the rows, GBK) and
// "…_业务明细(汇总).csv" (a summary), names and content GBK.
[[nodiscard]] std::string alipay_bill_zip(const std::string& date_compact,
                                          const std::string& detail_utf8, bool wrong_crc = false);

// A sink that keeps every row it is given (and can be told to fail at the n-th, as a store would).
class RecordingBillSink final : public channels::BillRowSink {
 public:
  [[nodiscard]] channels::Result<void> row(const channels::BillRow& row) override;
  std::vector<channels::BillRow> rows;
  std::optional<std::size_t> fail_at;  // 0-based index of the row refused
};

}  // namespace seatflow::testing
