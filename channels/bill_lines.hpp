// What the gzip (wechat) and zip (alipay) bill dialects share: the downloaded bill read line by
// line as it inflates, every uncompressed byte hashed on the way, and the row checks both apply
// (ids, the row limit). Pure: zlib and OpenSSL only.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "channels/bill.hpp"
#include "codec/inflate.hpp"

namespace seatflow::channels {

// The digests of a bill's uncompressed bytes, lowercase hex.
struct BillDigests {
  std::string sha1;    // empty unless asked for
  std::string sha256;  // BillSummary::sha256
};

// Produces the uncompressed bill, chunk by chunk, into the sink it is given (codec::gunzip or
// codec::zip_extract bound to the body and the byte limit).
using BillInflate = std::function<codec::InflateStatus(const codec::ChunkSink&)>;
// Takes one line of the bill (without its line end); a failure stops the read.
using BillLineHandler = std::function<Result<void>(std::string_view line)>;

// Runs `inflate`, hashing each chunk (SHA-256, and SHA-1 when `with_sha1`) and handing each line
// to `on_line`. Fails with on_line's first failure, or errc::rejected_answer naming `what` when
// a line passes codec::kBillLineBytesMax or the inflate does not end whole (truncated, corrupt,
// a checksum, over the byte limit: "over SEATFLOW_BILL_BYTES_MAX").
[[nodiscard]] Result<BillDigests> read_bill_lines(std::string_view what, const BillInflate& inflate,
                                                  bool with_sha1, const BillLineHandler& on_line);

// Counts the bill's rows against BillLimits::rows_max and gives rows to the sink.
class BillRowBudget {
 public:
  BillRowBudget(const BillLimits& limits, BillRowSink& sink) : limits_(limits), sink_(sink) {}

  // One more row read (given to the sink or not); a rejection past rows_max.
  [[nodiscard]] Result<void> count();
  // Gives `row` to the sink (after count()).
  [[nodiscard]] Result<void> give(const BillRow& row);
  [[nodiscard]] std::size_t read() const { return read_; }
  [[nodiscard]] std::size_t given() const { return given_; }

 private:
  const BillLimits& limits_;
  BillRowSink& sink_;
  std::size_t read_ = 0;
  std::size_t given_ = 0;
};

// A rejection of bill row `row_number` (1-based, rows only): "row N: <why>".
[[nodiscard]] Failure bill_row_rejected(std::size_t row_number, std::string_view why);

// A WeChat Pay fee in 10^-5 yuan (its bills write five decimals) to minor units, rounded half
// away from zero.
[[nodiscard]] std::int64_t fee_units_to_cents(std::int64_t units);

// total += value; false (total unchanged) when the sum would pass int64.
[[nodiscard]] bool add_exact(std::int64_t& total, std::int64_t value);

// YYYY-MM-DD (digits where digits go): the only bill date a dialect puts into a request.
[[nodiscard]] bool is_bill_date(std::string_view date);

// The fraction digits of WeChat Pay's fee columns.
inline constexpr int kWechatFeeDecimals = 5;

}  // namespace seatflow::channels
