// The timestamped-HMAC core: bounded header splitting, the freshness window, any-key-any-MAC check.
#include "channels/timestamped_hmac.hpp"

#include <openssl/crypto.h>

#include <stdexcept>
#include <utility>

#include "codec/crypto.hpp"

namespace seatflow::channels {

std::optional<std::int64_t> parse_unix_seconds(std::string_view text) {
  if (text.empty() || text.size() > kUnixSecondsDigitsMax) {
    return std::nullopt;
  }
  std::int64_t seconds = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') {
      return std::nullopt;
    }
    seconds = seconds * 10 + (c - '0');
  }
  return seconds;
}

bool within_window_s(std::int64_t now_ms, std::int64_t timestamp_s, std::int64_t window_ms) {
  // timestamp_s has at most 12 digits, so the product cannot overflow; now_ms is our own clock.
  const std::int64_t stamp_ms = timestamp_s * 1000;
  const std::int64_t distance = now_ms >= stamp_ms ? now_ms - stamp_ms : stamp_ms - now_ms;
  return distance <= window_ms;
}

std::optional<std::vector<std::string_view>> split_signature_entries(std::string_view header,
                                                                     char separator) {
  if (header.size() > kSignatureHeaderBytesMax) {
    return std::nullopt;
  }
  std::vector<std::string_view> entries;
  std::size_t start = 0;
  while (start <= header.size()) {
    auto end = header.find(separator, start);
    if (end == std::string_view::npos) {
      end = header.size();
    }
    if (end > start) {
      if (entries.size() == kSignatureEntriesMax) {
        return std::nullopt;
      }
      entries.push_back(header.substr(start, end - start));
    }
    start = end + 1;
  }
  return entries;
}

TimestampedHmac::TimestampedHmac(std::vector<std::string> keys, std::int64_t window_ms)
    : keys_(std::move(keys)), window_ms_(window_ms) {
  if (keys_.empty() || keys_.size() > kWebhookSecretsMax) {
    throw std::invalid_argument("timestamped hmac: no key, or more keys than a rotation needs");
  }
  for (const auto& key : keys_) {
    if (key.empty()) {
      throw std::invalid_argument("timestamped hmac: empty key");
    }
  }
  if (window_ms_ < 0) {
    throw std::invalid_argument("timestamped hmac: negative window");
  }
}

TimestampedHmac::~TimestampedHmac() {
  for (auto& key : keys_) {
    OPENSSL_cleanse(key.data(), key.size());
  }
}

Result<void> TimestampedHmac::check(const TimestampedMessage& message, std::int64_t now_ms,
                                    bool freshness_waived) const {
  if (message.candidates.empty()) {
    return reject(RejectReason::bad_signature, "no v1 signature in the signature header");
  }
  // The signature first, the clock after: a forgery with an old timestamp stays a forgery, and
  // only an authentic message is called stale (SPEC §14).
  if (!matches_any(message)) {
    return reject(RejectReason::bad_signature, "no signature verifies under any secret");
  }
  if (!freshness_waived && !within_window_s(now_ms, message.timestamp_s, window_ms_)) {
    return reject_stale(now_ms, message.timestamp_s * 1000);
  }
  return {};
}

bool TimestampedHmac::matches_any(const TimestampedMessage& message) const {
  for (const auto& key : keys_) {
    const auto expected = codec::hmac_sha256(key, message.signed_pieces);
    for (const auto& candidate : message.candidates) {
      if (codec::constant_time_equal(expected, candidate)) {
        return true;
      }
    }
  }
  return false;
}

std::string TimestampedHmac::sign(std::span<const std::string_view> signed_pieces) const {
  return codec::hmac_sha256(keys_.front(), signed_pieces);
}

}  // namespace seatflow::channels
