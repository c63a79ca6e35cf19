// The text of gateway bills (SPEC §13): lines out of a stream of chunks, CSV fields (quoted,
// WeChat Pay's backtick-prefixed), columns found by header name (a trailing （元） ignored, never
// by position), exact decimal amounts and China Standard Time timestamps. Pure: no I/O.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace seatflow::codec {

// A bill line longer than this is malformed (a WeChat Pay or Alipay row is well under 1 KiB).
inline constexpr std::size_t kBillLineBytesMax = 64 * 1024;
// A bill line with more fields than this is malformed (the widest layouts have under 40).
inline constexpr std::size_t kBillFieldsMax = 128;

// Receives each line without its '\n' (and without a '\r' before it); false stops.
using LineSink = std::function<bool(std::string_view line)>;

// Cuts a stream of chunks into lines, keeping at most one partial line (≤ line_bytes_max bytes).
class LineSplitter {
 public:
  explicit LineSplitter(std::size_t line_bytes_max = kBillLineBytesMax)
      : line_bytes_max_(line_bytes_max) {}

  // Hands every line the chunk completes to `sink`. False when a line passes the limit
  // (too_long() then says so) or the sink returned false.
  [[nodiscard]] bool feed(std::string_view chunk, const LineSink& sink);
  // The last line when the stream did not end with '\n'. False when the sink returned false.
  [[nodiscard]] bool finish(const LineSink& sink);
  [[nodiscard]] bool too_long() const { return too_long_; }

 private:
  std::size_t line_bytes_max_;
  std::string partial_;
  bool too_long_ = false;
};

// The fields of one CSV line: separated by ',', a field in double quotes may hold ',' and '""'
// (RFC 4180); each field then trimmed of spaces and tabs (Alipay pads ids with a tab) and of one
// leading '`' (WeChat Pay's guard against spreadsheets). False for an unclosed quote, text after a
// closing quote, or more than kBillFieldsMax fields.
[[nodiscard]] bool split_csv_line(std::string_view line, std::vector<std::string>& fields);

// The fields of a WeChat Pay bill line whose every field starts with '`': split at each ",`", so a
// ',' inside a field (a product name) stays in it. Trimmed as split_csv_line does. False when the
// line does not start with '`' or has more than kBillFieldsMax fields.
[[nodiscard]] bool split_backtick_line(std::string_view line, std::vector<std::string>& fields);

// A header's column names, each trimmed and without a trailing "（元）" (or "(元)").
class CsvColumns {
 public:
  CsvColumns() = default;
  explicit CsvColumns(const std::vector<std::string>& header);
  // The index of the column called `name`; nullopt when there is none, or more than one.
  [[nodiscard]] std::optional<std::size_t> find(std::string_view name) const;
  [[nodiscard]] std::size_t size() const { return names_.size(); }

 private:
  std::vector<std::string> names_;
};

// A column name as CsvColumns keeps it.
[[nodiscard]] std::string_view column_name(std::string_view header_field);

// A decimal amount ("12.34", "-0.01", "+3", "0.00006") in units of 10^-decimals, exactly (no
// floating point): an optional sign, at least one digit, and when a '.' is present one to
// `decimals` digits after it. nullopt for anything else (spaces, "1e3", "¥1", ".5", "1.", more
// fraction digits than `decimals`) and for a value beyond int64. `decimals` is 0 to 9.
[[nodiscard]] std::optional<std::int64_t> parse_decimal_units(std::string_view text, int decimals);

// "yyyy-MM-dd HH:mm:ss" in China Standard Time (UTC+8, the gateways' bills) as Unix ms; nullopt
// for any other shape or an impossible date or time.
[[nodiscard]] std::optional<std::int64_t> parse_china_time_ms(std::string_view text);

}  // namespace seatflow::codec
