// The one id validator and the UTF-8 check it uses.
#include "domain/ids.hpp"

#include <algorithm>

namespace seatflow::domain {
namespace {

// The length of the UTF-8 sequence that starts with `lead`, 0 for a byte that cannot start one.
std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80U) {
    return 1;
  }
  if (lead >= 0xC2U && lead <= 0xDFU) {
    return 2;
  }
  if (lead >= 0xE0U && lead <= 0xEFU) {
    return 3;
  }
  if (lead >= 0xF0U && lead <= 0xF4U) {
    return 4;
  }
  return 0;
}

// The allowed range of the second byte after `lead` (RFC 3629 table: no overlongs, no
// surrogates, nothing above U+10FFFF).
bool second_byte_ok(unsigned char lead, unsigned char second) {
  unsigned char low = 0x80U;
  unsigned char high = 0xBFU;
  if (lead == 0xE0U) {
    low = 0xA0U;
  } else if (lead == 0xEDU) {
    high = 0x9FU;
  } else if (lead == 0xF0U) {
    low = 0x90U;
  } else if (lead == 0xF4U) {
    high = 0x8FU;
  }
  return second >= low && second <= high;
}

bool is_control(char c) {
  const auto byte = static_cast<unsigned char>(c);
  return byte < 0x20U || byte == 0x7FU;
}

bool is_key_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-' || c == '.' || c == ':';
}

}  // namespace

bool is_valid_utf8(std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto lead = static_cast<unsigned char>(text[i]);
    const std::size_t length = sequence_length(lead);
    if (length == 0 || text.size() - i < length) {
      return false;
    }
    if (length > 1 && !second_byte_ok(lead, static_cast<unsigned char>(text[i + 1]))) {
      return false;
    }
    for (std::size_t k = 2; k < length; ++k) {
      const auto next = static_cast<unsigned char>(text[i + k]);
      if (next < 0x80U || next > 0xBFU) {
        return false;
      }
    }
    i += length;
  }
  return true;
}

bool valid_id(std::string_view id, IdRule rule) {
  if (id.empty() || id.size() > id_bytes_max) {
    return false;
  }
  switch (rule) {
    case IdRule::api_key:
      return std::all_of(id.begin(), id.end(), is_key_char);
    case IdRule::gateway_text:
      return std::none_of(id.begin(), id.end(), is_control) && is_valid_utf8(id);
    case IdRule::printable_bytes:
      return std::none_of(id.begin(), id.end(), is_control);
  }
  return false;
}

}  // namespace seatflow::domain
