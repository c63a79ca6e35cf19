// Module loggers live in spdlog's registry under their module's name; they are never dropped, so a
// reference handed out stays valid. quoted_value: a strict UTF-8 decoder and the escape table.
#include "observability/logger.hpp"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <array>
#include <cstdint>
#include <mutex>

namespace seatflow::observability {
namespace {

std::mutex& loggers_mutex() {
  static std::mutex mutex;
  return mutex;
}

// One decoded code point and how many bytes it took; `bytes` is 0 when the sequence at the start
// is not well-formed UTF-8 (an overlong form, a surrogate, above U+10FFFF, cut short).
struct Decoded {
  char32_t code = 0;
  std::size_t bytes = 0;
};

Decoded decode_utf8(std::string_view text) {
  const auto lead = static_cast<unsigned char>(text[0]);
  std::size_t length = 0;
  char32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1FU;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0FU;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07U;
  } else {
    return {};
  }
  if (text.size() < length) {
    return {};
  }
  for (std::size_t i = 1; i < length; ++i) {
    const auto next = static_cast<unsigned char>(text[i]);
    if ((next & 0xC0U) != 0x80U) {
      return {};
    }
    code = (code << 6U) | (next & 0x3FU);
  }
  constexpr std::array<char32_t, 5> kSmallest{0, 0, 0x80, 0x800, 0x10000};
  if (code < kSmallest[length] || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
    return {};
  }
  return {code, length};
}

// Code points a reader would not see, or could take for a line or field break.
bool needs_escape(char32_t code) {
  if (code < 0x20 || (code >= 0x7F && code <= 0xA0) || code == 0xAD) {
    return true;  // C0, DEL, C1 (NEL), no-break space, soft hyphen
  }
  if (code == 0x061C || code == 0x1680 || code == 0x180E || code == 0x3000 || code == 0xFEFF) {
    return true;  // Arabic letter mark, Ogham space, Mongolian separator, ideographic space, BOM
  }
  if ((code >= 0x2000 && code <= 0x200F) || (code >= 0x2028 && code <= 0x202F) ||
      (code >= 0x205F && code <= 0x206F)) {
    return true;  // spaces, zero widths, marks, line/paragraph separators, embeddings, joiners
  }
  if ((code >= 0xFDD0 && code <= 0xFDEF) || (code & 0xFFFEU) == 0xFFFEU ||
      (code >= 0xFFF9 && code <= 0xFFFB) || (code >= 0xE0000 && code <= 0xE007F)) {
    return true;  // noncharacters, interlinear annotation, tags
  }
  return false;
}

void append_u_escape(std::string& out, unsigned value) {
  constexpr std::string_view kHex = "0123456789abcdef";
  out += "\\u";
  for (int shift = 12; shift >= 0; shift -= 4) {
    out.push_back(kHex[(value >> static_cast<unsigned>(shift)) & 0xFU]);
  }
}

void append_escaped(std::string& out, char32_t code) {
  switch (code) {
    case '"':
      out += "\\\"";
      return;
    case '\\':
      out += "\\\\";
      return;
    case '\n':
      out += "\\n";
      return;
    case '\r':
      out += "\\r";
      return;
    case '\t':
      out += "\\t";
      return;
    default:
      break;
  }
  if (code > 0xFFFF) {
    const auto offset = static_cast<unsigned>(code - 0x10000);
    append_u_escape(out, 0xD800U + (offset >> 10U));
    append_u_escape(out, 0xDC00U + (offset & 0x3FFU));
  } else {
    append_u_escape(out, static_cast<unsigned>(code));
  }
}

}  // namespace

std::string quoted_value(std::string_view text) {
  constexpr std::string_view kHex = "0123456789abcdef";
  std::string out;
  out.reserve(text.size() + 2);
  out.push_back('"');
  while (!text.empty()) {
    const auto byte = static_cast<unsigned char>(text[0]);
    Decoded decoded{byte, 1};
    if (byte >= 0x80) {
      decoded = decode_utf8(text);
      if (decoded.bytes == 0) {
        out += "\\x";
        out.push_back(kHex[byte >> 4U]);
        out.push_back(kHex[byte & 0xFU]);
        text.remove_prefix(1);
        continue;
      }
    }
    if (decoded.code == '"' || decoded.code == '\\' || needs_escape(decoded.code)) {
      append_escaped(out, decoded.code);
    } else {
      out.append(text.substr(0, decoded.bytes));
    }
    text.remove_prefix(decoded.bytes);
  }
  out.push_back('"');
  return out;
}

spdlog::logger& logger(const std::string& module) {
  const std::lock_guard lock(loggers_mutex());
  if (auto existing = spdlog::get(module)) {
    return *existing;
  }
  auto created = spdlog::default_logger()->clone(module);
  spdlog::register_logger(created);
  return *created;
}

void init_logging(const std::string& level) {
  const std::lock_guard lock(loggers_mutex());
  auto sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  sink->set_pattern(kLogPattern);
  const auto parsed = spdlog::level::from_str(level);
  auto process = std::make_shared<spdlog::logger>("seatflow", sink);
  process->set_level(parsed);
  process->flush_on(spdlog::level::warn);
  // Loggers made before this call (none in serve; a tool may log while loading) get the new sink.
  spdlog::apply_all([&](const std::shared_ptr<spdlog::logger>& made) {
    made->sinks().assign(1, sink);
    made->set_level(parsed);
    made->flush_on(spdlog::level::warn);
  });
  spdlog::set_default_logger(process);
}

}  // namespace seatflow::observability
