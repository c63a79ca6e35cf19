// A single-pass JSON reader for the top-level members of an object. It accepts exactly the
// documents nlohmann::json accepts (tests/unit/json_members_test.cpp compares the two on seeds and
// mutations, fuzz/fuzz_hmac.cpp on whatever the fuzzer finds) and keeps only the members asked for.
#include "codec/json_members.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <optional>
#include <vector>

namespace seatflow::codec {
namespace {

constexpr std::string_view kBom = "\xEF\xBB\xBF";

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// The length of the UTF-8 sequence at `p` (2 to 4 bytes, RFC 3629: no overlong forms, no
// surrogates, nothing above U+10FFFF), or 0 when it is not one. `p` holds a byte >= 0x80.
std::size_t utf8_sequence(const char* p, const char* end) {
  const auto lead = static_cast<unsigned char>(*p);
  std::size_t length = 0;
  unsigned char low = 0x80;
  unsigned char high = 0xBF;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    low = lead == 0xE0 ? 0xA0 : 0x80;
    high = lead == 0xED ? 0x9F : 0xBF;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    low = lead == 0xF0 ? 0x90 : 0x80;
    high = lead == 0xF4 ? 0x8F : 0xBF;
  } else {
    return 0;
  }
  if (static_cast<std::size_t>(end - p) < length) {
    return 0;
  }
  const auto second = static_cast<unsigned char>(p[1]);
  if (second < low || second > high) {
    return 0;
  }
  for (std::size_t k = 2; k < length; ++k) {
    const auto next = static_cast<unsigned char>(p[k]);
    if (next < 0x80 || next > 0xBF) {
      return 0;
    }
  }
  return length;
}

void append_utf8(std::string& out, std::uint32_t code_point) {
  if (code_point < 0x80) {
    out.push_back(static_cast<char>(code_point));
  } else if (code_point < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (code_point >> 6)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else if (code_point < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (code_point >> 12)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (code_point >> 18)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((code_point >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (code_point & 0x3F)));
  }
}

class Reader {
 public:
  Reader(std::string_view body, std::span<const std::string_view> names, std::span<JsonMember> out)
      : p_(body.data()), end_(body.data() + body.size()), names_(names), out_(out) {
    if (body.starts_with(kBom)) {
      p_ += kBom.size();
    }
  }

  bool read() {
    skip_space();
    if (!consume('{')) {
      return false;  // not an object at the top (or not JSON at all)
    }
    skip_space();
    if (!consume('}')) {
      for (;;) {
        if (peek() != '"' || !read_string(&name_)) {
          return false;
        }
        skip_space();
        if (!consume(':')) {
          return false;
        }
        skip_space();
        if (!read_value(target_of(name_))) {
          return false;
        }
        skip_space();
        if (consume(',')) {
          skip_space();
          continue;
        }
        if (consume('}')) {
          break;
        }
        return false;
      }
    }
    skip_space();
    return p_ == end_;
  }

  // The document as a top-level array: the extent of each element, every one checked.
  bool read_elements(std::vector<std::string_view>& out) {
    return read_array([&] {
      const char* const start = p_;
      if (!read_value(nullptr)) {
        return false;
      }
      out.emplace_back(start, static_cast<std::size_t>(p_ - start));
      return true;
    });
  }

  // The document as a top-level array of strings: each one decoded.
  bool read_strings(std::vector<std::string>& out) {
    return read_array([&] { return peek() == '"' && read_string(&out.emplace_back()); });
  }

 private:
  // A top-level array, `element` reading each of its elements at `p_`.
  template <class ReadElement>
  bool read_array(ReadElement element) {
    skip_space();
    if (!consume('[')) {
      return false;
    }
    skip_space();
    if (!consume(']')) {
      for (;;) {
        if (!element()) {
          return false;
        }
        skip_space();
        if (consume(',')) {
          skip_space();
          continue;
        }
        if (consume(']')) {
          break;
        }
        return false;
      }
    }
    skip_space();
    return p_ == end_;
  }

  [[nodiscard]] char peek() const { return p_ == end_ ? '\0' : *p_; }
  bool consume(char c) {
    if (p_ != end_ && *p_ == c) {
      ++p_;
      return true;
    }
    return false;
  }
  void skip_space() {
    while (p_ != end_ && is_space(*p_)) {
      ++p_;
    }
  }

  JsonMember* target_of(std::string_view name) {
    for (std::size_t i = 0; i < names_.size(); ++i) {
      if (names_[i] == name) {
        return &out_[i];
      }
    }
    return nullptr;
  }

  // A top-level member's value; `target` (may be null) records its kind.
  bool read_value(JsonMember* target) {
    switch (peek()) {
      case '"':
        if (target == nullptr) {
          return read_string(nullptr);
        }
        target->kind = JsonMember::Kind::string;
        return read_string(&target->text);
      case '{':
      case '[':
        if (target != nullptr) {
          target->kind = JsonMember::Kind::other;
        }
        return skip_container();
      default:
        return read_scalar(target);
    }
  }

  // A number or a literal (true, false, null).
  bool read_scalar(JsonMember* target) {
    const char c = peek();
    if (c == '-' || is_digit(c)) {
      return read_number(target);
    }
    for (const std::string_view literal : {"true", "false", "null"}) {
      if (c == literal.front()) {
        if (static_cast<std::size_t>(end_ - p_) < literal.size() ||
            std::string_view(p_, literal.size()) != literal) {
          return false;
        }
        p_ += literal.size();
        if (target != nullptr) {
          target->kind = literal == "null" ? JsonMember::Kind::null : JsonMember::Kind::other;
        }
        return true;
      }
    }
    return false;
  }

  bool read_digits() {
    if (!is_digit(peek())) {
      return false;
    }
    while (is_digit(peek())) {
      ++p_;
    }
    return true;
  }

  // -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? ; an integer that fits int64 is kept as one.
  bool read_number(JsonMember* target) {
    const char* const start = p_;
    consume('-');
    if (consume('0')) {
      // A leading zero stands alone; a digit after it starts another (invalid) token.
    } else if (!read_digits()) {
      return false;
    }
    bool integer = true;
    if (consume('.')) {
      integer = false;
      if (!read_digits()) {
        return false;
      }
    }
    if (peek() == 'e' || peek() == 'E') {
      ++p_;
      integer = false;
      if (!consume('+')) {
        consume('-');
      }
      if (!read_digits()) {
        return false;
      }
    }
    if (integer) {
      std::int64_t value = 0;
      const auto parsed = std::from_chars(start, p_, value);
      if (parsed.ec == std::errc{} && parsed.ptr == p_) {
        if (target != nullptr) {
          target->kind = JsonMember::Kind::int64;
          target->value = value;
        }
        return true;
      }
      std::uint64_t unsigned_value = 0;
      const auto as_unsigned = std::from_chars(start, p_, unsigned_value);
      if (as_unsigned.ec == std::errc{} && as_unsigned.ptr == p_) {
        if (target != nullptr) {
          target->kind = JsonMember::Kind::other;  // above INT64_MAX: not an int64
        }
        return true;
      }
    }
    // A fraction, an exponent or an integer beyond 64 bits is a double, which must be finite.
    double value = 0;
    const auto parsed = std::from_chars(start, p_, value);
    if (parsed.ec == std::errc::result_out_of_range) {
      // Out of range both ways; only an overflow (to infinity) is an error, an underflow is 0.
      const std::string copy(start, p_);
      if (!std::isfinite(std::strtod(copy.c_str(), nullptr))) {
        return false;
      }
    } else if (parsed.ec != std::errc{}) {
      return false;
    }
    if (target != nullptr) {
      target->kind = JsonMember::Kind::other;
    }
    return true;
  }

  bool read_hex4(std::uint32_t& out) {
    if (end_ - p_ < 4) {
      return false;
    }
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      std::uint32_t digit = 0;
      if (c >= '0' && c <= '9') {
        digit = static_cast<std::uint32_t>(c - '0');
      } else if (c >= 'a' && c <= 'f') {
        digit = static_cast<std::uint32_t>(c - 'a' + 10);
      } else if (c >= 'A' && c <= 'F') {
        digit = static_cast<std::uint32_t>(c - 'A' + 10);
      } else {
        return false;
      }
      out = out << 4 | digit;
    }
    return true;
  }

  // After a backslash: one escape, decoded into `out` when it is given.
  bool read_escape(std::string* out) {
    if (p_ == end_) {
      return false;
    }
    char decoded = 0;
    switch (*p_++) {
      case '"':
        decoded = '"';
        break;
      case '\\':
        decoded = '\\';
        break;
      case '/':
        decoded = '/';
        break;
      case 'b':
        decoded = '\b';
        break;
      case 'f':
        decoded = '\f';
        break;
      case 'n':
        decoded = '\n';
        break;
      case 'r':
        decoded = '\r';
        break;
      case 't':
        decoded = '\t';
        break;
      case 'u': {
        std::uint32_t code_point = 0;
        if (!read_hex4(code_point)) {
          return false;
        }
        if (code_point >= 0xDC00 && code_point <= 0xDFFF) {
          return false;  // a low surrogate without its high one
        }
        if (code_point >= 0xD800 && code_point <= 0xDBFF) {
          std::uint32_t low = 0;
          if (!consume('\\') || !consume('u') || !read_hex4(low) || low < 0xDC00 || low > 0xDFFF) {
            return false;
          }
          code_point = 0x10000 + ((code_point - 0xD800) << 10) + (low - 0xDC00);
        }
        if (out != nullptr) {
          append_utf8(*out, code_point);
        }
        return true;
      }
      default:
        return false;
    }
    if (out != nullptr) {
      out->push_back(decoded);
    }
    return true;
  }

  // A string at `p_` (its opening quote); decoded into `out` when it is given.
  bool read_string(std::string* out) {
    ++p_;  // the opening quote
    if (out != nullptr) {
      out->clear();
    }
    for (;;) {
      // A run of plain printable ASCII is copied at once.
      const char* run = p_;
      while (p_ != end_) {
        const auto c = static_cast<unsigned char>(*p_);
        if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80) {
          break;
        }
        ++p_;
      }
      if (out != nullptr) {
        out->append(run, p_);
      }
      if (p_ == end_) {
        return false;
      }
      const auto c = static_cast<unsigned char>(*p_);
      if (c == '"') {
        ++p_;
        return true;
      }
      if (c == '\\') {
        ++p_;
        if (!read_escape(out)) {
          return false;
        }
        continue;
      }
      if (c < 0x20) {
        return false;  // control characters must be escaped
      }
      const std::size_t length = utf8_sequence(p_, end_);
      if (length == 0) {
        return false;
      }
      if (out != nullptr) {
        out->append(p_, length);
      }
      p_ += length;
    }
  }

  // A nested object or array at `p_`, checked and skipped without recursion: `closers_` holds the
  // closing bracket of every container still open.
  bool skip_container() {
    closers_.clear();
    for (;;) {
      // At the opening bracket of a container.
      closers_.push_back(*p_ == '{' ? '}' : ']');
      ++p_;
      skip_space();
      Element element = Element::done;
      if (consume(closers_.back())) {
        closers_.pop_back();
      } else {
        element = open_element();
      }
      // After a complete element: a comma and the next one, or closing brackets.
      while (element == Element::done) {
        if (closers_.empty()) {
          return true;
        }
        skip_space();
        if (consume(',')) {
          skip_space();
          element = open_element();
        } else if (consume(closers_.back())) {
          closers_.pop_back();
        } else {
          return false;
        }
      }
      if (element == Element::invalid) {
        return false;
      }
      // Element::container: `p_` is at its opening bracket.
    }
  }

  enum class Element { invalid, done, container };

  // Starts one element of the innermost container: its name and colon in an object, then its
  // value when that is a scalar (done); a nested container is left at its opening bracket.
  Element open_element() {
    if (closers_.back() == '}') {
      if (peek() != '"' || !read_string(nullptr)) {
        return Element::invalid;
      }
      skip_space();
      if (!consume(':')) {
        return Element::invalid;
      }
      skip_space();
    }
    bool ok = false;
    switch (peek()) {
      case '{':
      case '[':
        return Element::container;
      case '"':
        ok = read_string(nullptr);
        break;
      default:
        ok = read_scalar(nullptr);
        break;
    }
    return ok ? Element::done : Element::invalid;
  }

  const char* p_;
  const char* const end_;
  std::span<const std::string_view> names_;
  std::span<JsonMember> out_;
  std::string name_;     // the member name being read, reused
  std::string closers_;  // brackets still open while a nested value is skipped, reused
};

}  // namespace

bool read_json_members(std::string_view body, std::span<const std::string_view> names,
                       std::span<JsonMember> out) {
  return out.size() == names.size() && Reader(body, names, out).read();
}

std::optional<std::vector<std::string_view>> json_array_elements(std::string_view body) {
  std::vector<std::string_view> elements;
  if (!Reader(body, {}, {}).read_elements(elements)) {
    return std::nullopt;
  }
  return elements;
}

std::optional<std::vector<std::string>> json_string_array(std::string_view body) {
  std::vector<std::string> strings;
  if (!Reader(body, {}, {}).read_strings(strings)) {
    return std::nullopt;
  }
  return strings;
}

}  // namespace seatflow::codec
