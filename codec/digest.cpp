// SHA-256 hex helpers and the business-content digest that detects "same callback id, new content".
#include "codec/digest.hpp"

#include <openssl/evp.h>

#include <array>
#include <charconv>
#include <memory>
#include <new>
#include <stdexcept>

#include "codec/crypto.hpp"
#include "codec/text.hpp"

namespace seatflow::codec {

namespace {

constexpr std::string_view kHexDigits = "0123456789abcdef";

std::string_view kind_token(domain::CallbackKind kind) {
  switch (kind) {
    case domain::CallbackKind::success:
      return "success";
    case domain::CallbackKind::failure:
      return "failure";
    case domain::CallbackKind::other:
      return "other";
  }
  return "unknown";
}

// Appends "<name>=<byte length>:<bytes>;" so that no value can be confused with a separator.
void append_field(std::string& out, std::string_view name, std::string_view value) {
  std::array<char, 24> length{};
  const auto result = std::to_chars(length.data(), length.data() + length.size(), value.size());
  out.append(name);
  out.push_back('=');
  out.append(length.data(), result.ptr);
  out.push_back(':');
  out.append(value);
  out.push_back(';');
}

}  // namespace

std::string to_lower_hex(std::string_view bytes) {
  std::string out(bytes.size() * 2, '\0');
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    const auto byte = static_cast<unsigned char>(bytes[i]);
    out[2 * i] = kHexDigits[byte >> 4U];
    out[2 * i + 1] = kHexDigits[byte & 0x0FU];
  }
  return out;
}

std::optional<std::string> hex_decode(std::string_view hex) {
  if (hex.size() % 2 != 0) {
    return std::nullopt;
  }
  std::string out;
  out.reserve(hex.size() / 2);
  for (std::size_t i = 0; i < hex.size(); i += 2) {
    const int high = hex_digit_value(hex[i]);
    const int low = hex_digit_value(hex[i + 1]);
    if (high < 0 || low < 0) {
      return std::nullopt;
    }
    out.push_back(static_cast<char>((high << 4) | low));
  }
  return out;
}

std::string sha256_hex(std::string_view data) {
  std::array<unsigned char, EVP_MAX_MD_SIZE> md{};
  unsigned int md_len = 0;
  if (EVP_Digest(data.data(), data.size(), md.data(), &md_len, sha256_md(), nullptr) != 1) {
    // The only way a built-in SHA-256 fails is resource exhaustion.
    throw std::bad_alloc();
  }
  return to_lower_hex(std::string_view(reinterpret_cast<const char*>(md.data()), md_len));
}

std::string business_digest(const domain::VerifiedCallback& callback) {
  std::string canonical = "seatflow-business-v1;";
  append_field(canonical, "payment_no", callback.payment_no);
  append_field(canonical, "kind", kind_token(callback.kind));
  if (callback.amount_cents) {
    std::array<char, 24> amount{};
    const auto result =
        std::to_chars(amount.data(), amount.data() + amount.size(), *callback.amount_cents);
    append_field(canonical, "amount", std::string_view(amount.data(), result.ptr - amount.data()));
  } else {
    append_field(canonical, "amount", "-");
  }
  append_field(canonical, "channel_trade_no", callback.channel_trade_no);
  return sha256_hex(canonical);
}

}  // namespace seatflow::codec
