// Lines, CSV fields, header columns, exact decimals and China time of gateway bills (see the
// header).
#include "codec/bill_text.hpp"

#include <limits>

namespace seatflow::codec {
namespace {

constexpr std::string_view kUtf8Bom = "\xEF\xBB\xBF";
constexpr std::string_view kYuanSuffix = "\xEF\xBC\x88\xE5\x85\x83\xEF\xBC\x89";  // （元）
constexpr std::string_view kAsciiYuanSuffix = "(\xE5\x85\x83)";                   // (元)
constexpr int kDecimalsMax = 9;
constexpr std::int64_t kChinaOffsetS = 8 * 3600;

std::string_view trim_blanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) {
    text.remove_prefix(1);
  }
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) {
    text.remove_suffix(1);
  }
  return text;
}

std::string field_text(std::string_view raw) {
  std::string_view text = trim_blanks(raw);
  if (!text.empty() && text.front() == '`') {
    text.remove_prefix(1);
  }
  return std::string(text);
}

std::string_view without_cr(std::string_view line) {
  if (!line.empty() && line.back() == '\r') {
    line.remove_suffix(1);
  }
  return line;
}

// A field in double quotes starting at line[i] == '"'; `i` ends at the ',' after it or the end.
bool quoted_field(std::string_view line, std::size_t& i, std::string& field) {
  ++i;
  for (;;) {
    if (i >= line.size()) {
      return false;
    }
    if (line[i] == '"') {
      if (i + 1 < line.size() && line[i + 1] == '"') {
        field.push_back('"');
        i += 2;
        continue;
      }
      ++i;
      break;
    }
    field.push_back(line[i++]);
  }
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) {
    ++i;
  }
  return i == line.size() || line[i] == ',';
}

bool append_digits(std::string_view digits, std::int64_t& value) {
  for (const char c : digits) {
    if (c < '0' || c > '9') {
      return false;
    }
    const int digit = c - '0';
    if (value > (std::numeric_limits<std::int64_t>::max() - digit) / 10) {
      return false;
    }
    value = value * 10 + digit;
  }
  return true;
}

std::optional<int> number_at(std::string_view text, std::size_t at, std::size_t width) {
  int value = 0;
  for (std::size_t i = at; i < at + width; ++i) {
    if (text[i] < '0' || text[i] > '9') {
      return std::nullopt;
    }
    value = value * 10 + (text[i] - '0');
  }
  return value;
}

// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t y, int m, int d) {
  y -= m <= 2 ? 1 : 0;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const std::int64_t yoe = y - era * 400;
  const std::int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const std::int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int days_in_month(int year, int month) {
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

}  // namespace

bool LineSplitter::feed(std::string_view chunk, const LineSink& sink) {
  std::size_t start = 0;
  for (;;) {
    const auto newline = chunk.find('\n', start);
    const auto piece = chunk.substr(
        start, newline == std::string_view::npos ? std::string_view::npos : newline - start);
    if (partial_.size() + piece.size() > line_bytes_max_) {
      too_long_ = true;
      return false;
    }
    if (newline == std::string_view::npos) {
      partial_.append(piece);
      return true;
    }
    bool ok = false;
    if (partial_.empty()) {
      ok = sink(without_cr(piece));
    } else {
      partial_.append(piece);
      ok = sink(without_cr(partial_));
      partial_.clear();
    }
    if (!ok) {
      return false;
    }
    start = newline + 1;
  }
}

bool LineSplitter::finish(const LineSink& sink) {
  if (partial_.empty()) {
    return true;
  }
  const bool ok = sink(without_cr(partial_));
  partial_.clear();
  return ok;
}

bool split_csv_line(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  std::size_t i = 0;
  for (;;) {
    std::string field;
    if (i < line.size() && line[i] == '"') {
      if (!quoted_field(line, i, field)) {
        return false;
      }
    } else {
      const auto comma = line.find(',', i);
      const auto end = comma == std::string_view::npos ? line.size() : comma;
      field.assign(line.substr(i, end - i));
      i = end;
    }
    fields.push_back(field_text(field));
    if (fields.size() > kBillFieldsMax) {
      return false;
    }
    if (i >= line.size()) {
      return true;
    }
    ++i;  // the ','
  }
}

bool split_backtick_line(std::string_view line, std::vector<std::string>& fields) {
  fields.clear();
  if (line.empty() || line.front() != '`') {
    return false;
  }
  std::size_t start = 0;
  for (;;) {
    const auto next = line.find(",`", start);
    const auto end = next == std::string_view::npos ? line.size() : next;
    fields.push_back(field_text(line.substr(start, end - start)));
    if (fields.size() > kBillFieldsMax) {
      return false;
    }
    if (next == std::string_view::npos) {
      return true;
    }
    start = next + 1;
  }
}

std::string_view column_name(std::string_view header_field) {
  std::string_view name = trim_blanks(header_field);
  if (name.starts_with(kUtf8Bom)) {
    name.remove_prefix(kUtf8Bom.size());
  }
  if (name.ends_with(kYuanSuffix)) {
    name.remove_suffix(kYuanSuffix.size());
  } else if (name.ends_with(kAsciiYuanSuffix)) {
    name.remove_suffix(kAsciiYuanSuffix.size());
  }
  return trim_blanks(name);
}

CsvColumns::CsvColumns(const std::vector<std::string>& header) {
  names_.reserve(header.size());
  for (const auto& field : header) {
    names_.emplace_back(column_name(field));
  }
}

std::optional<std::size_t> CsvColumns::find(std::string_view name) const {
  std::optional<std::size_t> found;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) {
      if (found) {
        return std::nullopt;
      }
      found = i;
    }
  }
  return found;
}

std::optional<std::int64_t> parse_decimal_units(std::string_view text, int decimals) {
  if (decimals < 0 || decimals > kDecimalsMax) {
    return std::nullopt;
  }
  bool negative = false;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    negative = text.front() == '-';
    text.remove_prefix(1);
  }
  const auto dot = text.find('.');
  const auto whole = text.substr(0, dot);
  const auto fraction = dot == std::string_view::npos ? std::string_view{} : text.substr(dot + 1);
  if (whole.empty() || (dot != std::string_view::npos && fraction.empty()) ||
      fraction.size() > static_cast<std::size_t>(decimals)) {
    return std::nullopt;
  }
  std::int64_t value = 0;
  if (!append_digits(whole, value) || !append_digits(fraction, value)) {
    return std::nullopt;
  }
  for (std::size_t i = fraction.size(); i < static_cast<std::size_t>(decimals); ++i) {
    if (!append_digits("0", value)) {
      return std::nullopt;
    }
  }
  return negative ? -value : value;
}

std::optional<std::int64_t> parse_china_time_ms(std::string_view text) {
  if (text.size() != 19 || text[4] != '-' || text[7] != '-' || text[10] != ' ' || text[13] != ':' ||
      text[16] != ':') {
    return std::nullopt;
  }
  const auto year = number_at(text, 0, 4);
  const auto month = number_at(text, 5, 2);
  const auto day = number_at(text, 8, 2);
  const auto hour = number_at(text, 11, 2);
  const auto minute = number_at(text, 14, 2);
  const auto second = number_at(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second || *month < 1 || *month > 12 ||
      *day < 1 || *day > days_in_month(*year, *month) || *hour > 23 || *minute > 59 ||
      *second > 59) {
    return std::nullopt;
  }
  const std::int64_t seconds = days_from_civil(*year, *month, *day) * 86400 + *hour * 3600 +
                               *minute * 60 + *second - kChinaOffsetS;
  return seconds * 1000;
}

}  // namespace seatflow::codec
