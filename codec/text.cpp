// Ids, strict UTF-8 validation, GBK<->UTF-8 through glibc iconv, form (URL) encoding, China time.
#include "codec/text.hpp"

#include "domain/ids.hpp"

#include <iconv.h>

#include <algorithm>
#include <array>
#include <ctime>

namespace seatflow::codec {

namespace {

// One iconv descriptor. iconv_t keeps conversion state and is not thread-safe, so each thread
// owns its own (see thread_converter) and resets it before every conversion.
class Converter {
 public:
  Converter(const char* to, const char* from) : cd_(iconv_open(to, from)) {}
  ~Converter() {
    if (usable()) {
      iconv_close(cd_);
    }
  }
  Converter(const Converter&) = delete;
  Converter& operator=(const Converter&) = delete;

  [[nodiscard]] bool usable() const { return cd_ != reinterpret_cast<iconv_t>(-1); }

  // The whole input converted, or nullopt on an invalid or incomplete sequence.
  [[nodiscard]] std::optional<std::string> convert(std::string_view input) {
    if (!usable()) {
      return std::nullopt;
    }
    iconv(cd_, nullptr, nullptr, nullptr, nullptr);
    // GBK -> UTF-8 grows a byte into at most 3 (a lone 0x80 is the euro sign); 4x always fits.
    std::string output(input.size() * 4 + 8, '\0');
    char* in = const_cast<char*>(input.data());
    std::size_t in_left = input.size();
    char* out = output.data();
    std::size_t out_left = output.size();
    if (iconv(cd_, &in, &in_left, &out, &out_left) == static_cast<std::size_t>(-1) ||
        in_left != 0 ||
        iconv(cd_, nullptr, nullptr, &out, &out_left) == static_cast<std::size_t>(-1)) {
      return std::nullopt;
    }
    output.resize(output.size() - out_left);
    return output;
  }

 private:
  iconv_t cd_;
};

Converter& gbk_decoder() {
  thread_local Converter converter("UTF-8", "GBK");
  return converter;
}

Converter& gbk_encoder() {
  thread_local Converter converter("GBK", "UTF-8");
  return converter;
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  return domain::is_valid_utf8(text);
}

bool is_valid_id(std::string_view id) {
  return domain::valid_id(id, domain::IdRule::gateway_text);
}

std::optional<std::string> gbk_to_utf8(std::string_view gbk) {
  return gbk_decoder().convert(gbk);
}

std::optional<std::string> utf8_to_gbk(std::string_view utf8) {
  if (!is_valid_utf8(utf8)) {
    return std::nullopt;
  }
  return gbk_encoder().convert(utf8);
}

std::optional<std::string> form_decode(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+') {
      out.push_back(' ');
      continue;
    }
    if (c != '%') {
      out.push_back(c);
      continue;
    }
    if (text.size() - i < 3) {
      return std::nullopt;
    }
    const int high = hex_digit_value(text[i + 1]);
    const int low = hex_digit_value(text[i + 2]);
    if (high < 0 || low < 0) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>((high << 4) | low));
    i += 2;
  }
  return out;
}

std::string form_encode(std::string_view bytes) {
  constexpr std::string_view kHex = "0123456789ABCDEF";
  std::string out;
  out.reserve(bytes.size() * 3);
  for (const char c : bytes) {
    const auto byte = static_cast<unsigned char>(c);
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '*' || c == '-' || c == '.' || c == '_';
    if (plain) {
      out.push_back(c);
    } else if (c == ' ') {
      out.push_back('+');
    } else {
      out.push_back('%');
      out.push_back(kHex[byte >> 4U]);
      out.push_back(kHex[byte & 0x0FU]);
    }
  }
  return out;
}

bool iequals_ascii(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) {
    return false;
  }
  for (std::size_t i = 0; i < a.size(); ++i) {
    auto x = static_cast<unsigned char>(a[i]);
    auto y = static_cast<unsigned char>(b[i]);
    x = (x >= 'A' && x <= 'Z') ? static_cast<unsigned char>(x + 32) : x;
    y = (y >= 'A' && y <= 'Z') ? static_cast<unsigned char>(y + 32) : y;
    if (x != y) {
      return false;
    }
  }
  return true;
}

std::string china_time(std::int64_t now_ms, bool iso) {
  constexpr std::time_t kUtcPlus8 = 8 * 3600;
  const std::time_t seconds = static_cast<std::time_t>(now_ms / 1000) + kUtcPlus8;
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  std::array<char, 40> text{};
  const char* format = iso ? "%Y-%m-%dT%H:%M:%S+08:00" : "%Y-%m-%d %H:%M:%S";
  const auto size = std::strftime(text.data(), text.size(), format, &parts);
  return std::string(text.data(), size);
}

bool is_safe_code(std::string_view code) {
  return !code.empty() && code.size() <= kLogSafeCodeBytesMax &&
         std::all_of(code.begin(), code.end(), [](char c) {
           return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-';
         });
}

std::string log_safe_code(std::string_view code) {
  return is_safe_code(code) ? std::string(code) : std::string("?");
}

}  // namespace seatflow::codec
