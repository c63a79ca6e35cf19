// A strict reader of the engine's log lines (SPEC §14: a log line parses to exactly the keys the
// engine wrote): `<time> key=value key="quoted" ...`, one space between fields.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seatflow::testing {

// One parsed line: its time stamp and its fields in order, quoted values decoded.
struct LogLine {
  std::string time;
  std::vector<std::pair<std::string, std::string>> fields;

  [[nodiscard]] std::vector<std::string> keys() const;
  // The decoded value of `key` (nullopt when the line has no such key).
  [[nodiscard]] std::optional<std::string> value(std::string_view key) const;
};

// Parses one line (without its newline). Refused, with `why` set: a raw control byte, a raw
// U+0085, U+2028 or U+2029 anywhere; a key that is not [a-z_][a-z0-9_]*; a bare value that is
// empty or holds anything but printable ASCII other than space, `"`, `\` and `=`; a quoted value
// with an unknown escape or no closing quote; a repeated key; two spaces or a trailing space.
// Quoted values understand \" \\ \n \r \t \uXXXX (surrogate pairs joined) and \xNN (a raw byte).
[[nodiscard]] std::optional<LogLine> parse_log_line(std::string_view line, std::string& why);

// The lines of a whole log (split on '\n' only; the last line may lack its newline).
[[nodiscard]] std::vector<std::string_view> log_lines(std::string_view log);

}  // namespace seatflow::testing
