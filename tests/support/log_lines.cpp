// The strict log-line reader: written apart from observability::quoted so that a test of the two
// together checks the format, not one implementation against itself.
#include "support/log_lines.hpp"

#include <cstdint>

namespace seatflow::testing {
namespace {

bool is_key_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || c == '_' || (!first && c >= '0' && c <= '9');
}

bool is_bare_char(char c) {
  return c > ' ' && c < 0x7F && c != '"' && c != '\\' && c != '=';
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') {
    return c - '0';
  }
  if (c >= 'a' && c <= 'f') {
    return c - 'a' + 10;
  }
  if (c >= 'A' && c <= 'F') {
    return c - 'A' + 10;
  }
  return -1;
}

std::optional<unsigned> hex_number(std::string_view text, std::size_t digits) {
  if (text.size() < digits) {
    return std::nullopt;
  }
  unsigned value = 0;
  for (std::size_t i = 0; i < digits; ++i) {
    const int digit = hex_value(text[i]);
    if (digit < 0) {
      return std::nullopt;
    }
    value = value * 16 + static_cast<unsigned>(digit);
  }
  return value;
}

void append_utf8(std::string& out, std::uint32_t code) {
  if (code < 0x80) {
    out.push_back(static_cast<char>(code));
  } else if (code < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code >> 6)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else if (code < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code & 0x3F)));
  }
}

// Reads the escape after a backslash at the start of `rest`; the characters it used, 0 if bad.
std::size_t read_escape(std::string_view rest, std::string& out) {
  if (rest.empty()) {
    return 0;
  }
  switch (rest[0]) {
    case '"':
    case '\\':
      out.push_back(rest[0]);
      return 1;
    case 'n':
      out.push_back('\n');
      return 1;
    case 'r':
      out.push_back('\r');
      return 1;
    case 't':
      out.push_back('\t');
      return 1;
    case 'x': {
      const auto byte = hex_number(rest.substr(1), 2);
      if (!byte) {
        return 0;
      }
      out.push_back(static_cast<char>(*byte));
      return 3;
    }
    case 'u':
      break;
    default:
      return 0;
  }
  const auto unit = hex_number(rest.substr(1), 4);
  if (!unit) {
    return 0;
  }
  if (*unit >= 0xD800 && *unit <= 0xDBFF) {
    const auto low = rest.size() >= 7 && rest.substr(5, 2) == "\\u" ? hex_number(rest.substr(7), 4)
                                                                    : std::nullopt;
    if (!low || *low < 0xDC00 || *low > 0xDFFF) {
      return 0;
    }
    append_utf8(out, 0x10000 + ((*unit - 0xD800) << 10) + (*low - 0xDC00));
    return 11;
  }
  if (*unit >= 0xDC00 && *unit <= 0xDFFF) {
    return 0;
  }
  append_utf8(out, *unit);
  return 5;
}

// Reads one value at the start of `rest` into `out`; the characters it used, 0 when malformed.
std::size_t read_value(std::string_view rest, std::string& out) {
  if (rest.empty() || rest[0] != '"') {
    std::size_t end = 0;
    while (end < rest.size() && rest[end] != ' ') {
      if (!is_bare_char(rest[end])) {
        return 0;
      }
      ++end;
    }
    out.assign(rest.substr(0, end));
    return end;
  }
  std::size_t i = 1;
  while (i < rest.size()) {
    const char c = rest[i];
    if (c == '"') {
      return i + 1;
    }
    if (c == '\\') {
      const std::size_t used = read_escape(rest.substr(i + 1), out);
      if (used == 0) {
        return 0;
      }
      i += 1 + used;
      continue;
    }
    out.push_back(c);
    ++i;
  }
  return 0;  // no closing quote
}

// A raw control byte or a raw line-breaking code point anywhere in the line.
bool has_raw_break(std::string_view line) {
  for (std::size_t i = 0; i < line.size(); ++i) {
    const auto byte = static_cast<unsigned char>(line[i]);
    if (byte < 0x20 || byte == 0x7F) {
      return true;
    }
    if (byte == 0xC2 && i + 1 < line.size() && static_cast<unsigned char>(line[i + 1]) == 0x85) {
      return true;
    }
    if (byte == 0xE2 && line.substr(i + 1, 1) == "\x80" && i + 2 < line.size() &&
        (static_cast<unsigned char>(line[i + 2]) == 0xA8 ||
         static_cast<unsigned char>(line[i + 2]) == 0xA9)) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<std::string> LogLine::keys() const {
  std::vector<std::string> out;
  out.reserve(fields.size());
  for (const auto& field : fields) {
    out.push_back(field.first);
  }
  return out;
}

std::optional<std::string> LogLine::value(std::string_view key) const {
  for (const auto& field : fields) {
    if (field.first == key) {
      return field.second;
    }
  }
  return std::nullopt;
}

std::optional<LogLine> parse_log_line(std::string_view line, std::string& why) {
  if (has_raw_break(line)) {
    why = "a raw control character or line separator";
    return std::nullopt;
  }
  LogLine parsed;
  const auto space = line.find(' ');
  parsed.time = std::string(line.substr(0, space));
  if (space == std::string_view::npos || parsed.time.empty()) {
    why = "no time stamp followed by fields";
    return std::nullopt;
  }
  std::string_view rest = line.substr(space + 1);
  while (true) {
    std::size_t eq = 0;
    while (eq < rest.size() && is_key_char(rest[eq], eq == 0)) {
      ++eq;
    }
    if (eq == 0 || eq == rest.size() || rest[eq] != '=') {
      why = "a field that is not key=value at: " + std::string(rest.substr(0, 40));
      return std::nullopt;
    }
    std::string key(rest.substr(0, eq));
    std::string value;
    const std::size_t used = read_value(rest.substr(eq + 1), value);
    if (used == 0) {
      why = "a malformed value of " + key;
      return std::nullopt;
    }
    if (parsed.value(key)) {
      why = "the key " + key + " twice";
      return std::nullopt;
    }
    parsed.fields.emplace_back(std::move(key), std::move(value));
    rest.remove_prefix(eq + 1 + used);
    if (rest.empty()) {
      return parsed;
    }
    if (rest[0] != ' ' || rest.size() == 1) {
      why = "fields not separated by one space";
      return std::nullopt;
    }
    rest.remove_prefix(1);
  }
}

std::vector<std::string_view> log_lines(std::string_view log) {
  std::vector<std::string_view> lines;
  while (!log.empty()) {
    const auto end = log.find('\n');
    lines.push_back(log.substr(0, end));
    if (end == std::string_view::npos) {
      break;
    }
    log.remove_prefix(end + 1);
  }
  return lines;
}

}  // namespace seatflow::testing
