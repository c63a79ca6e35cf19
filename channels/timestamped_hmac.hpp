// The timestamped-HMAC verifier core that the stripe and standard dialects share (SPEC §11).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "channels/channel.hpp"

namespace seatflow::channels {

// A signature header holding more entries than this is malformed (400) before any MAC is
// computed: a header of thousands of entries costs one bounded scan, never thousands of compares.
inline constexpr std::size_t kSignatureEntriesMax = 16;
// A signature header longer than this is malformed (400) without being split at all.
inline constexpr std::size_t kSignatureHeaderBytesMax = 4096;
// Secrets verified at once; more than a rotation needs is a configuration error.
inline constexpr std::size_t kWebhookSecretsMax = 8;
// The default freshness window of a signed timestamp, both ways: |now - t| <= 300 s.
inline constexpr std::int64_t kWebhookWindowMs = 300'000;
// Unix seconds with at most this many digits; 12 reach far past any plausible clock, and keep
// seconds * 1000 inside int64.
inline constexpr std::size_t kUnixSecondsDigitsMax = 12;

// Decimal unix seconds, digits only (no sign, no space), 1 to kUnixSecondsDigitsMax digits.
[[nodiscard]] std::optional<std::int64_t> parse_unix_seconds(std::string_view text);
// |now_ms - timestamp_s * 1000| <= window_ms; `timestamp_s` from parse_unix_seconds.
[[nodiscard]] bool within_window_s(std::int64_t now_ms, std::int64_t timestamp_s,
                                   std::int64_t window_ms);

// `header` cut at every `separator` into its non-empty entries (empty ones, as in "a,,b", are
// skipped). nullopt when the header is over kSignatureHeaderBytesMax or has more than
// kSignatureEntriesMax entries; the scan stops at the first entry beyond the limit.
[[nodiscard]] std::optional<std::vector<std::string_view>> split_signature_entries(
    std::string_view header, char separator);

// A signed request as a dialect parsed it: when it was signed, what the MAC covers (in order,
// never copied together), and every MAC the header offered, decoded to raw bytes.
struct TimestampedMessage {
  std::int64_t timestamp_s = 0;
  std::span<const std::string_view> signed_pieces;
  std::span<const std::string> candidates;
};

// HMAC-SHA256 keys (the raw key bytes, one per configured secret; the first signs) and the
// freshness window. check() passes when the timestamp is within the window and any candidate
// equals the MAC under any key (constant-time compares). Thread-safe; never logs. The keys are
// wiped when the object is destroyed.
class TimestampedHmac {
 public:
  // Throws std::invalid_argument without keys, with more than kWebhookSecretsMax, with an empty
  // key or with a negative window.
  TimestampedHmac(std::vector<std::string> keys, std::int64_t window_ms);
  ~TimestampedHmac();
  TimestampedHmac(const TimestampedHmac&) = delete;
  TimestampedHmac& operator=(const TimestampedHmac&) = delete;

  // Success when the message verifies; else `bad_signature` (no candidate, or none matches any
  // key) or, for an authentic message only, `stale` (outside the window, checked second).
  // `freshness_waived` skips the window (an authenticated replay, SPEC §12), never the MAC.
  [[nodiscard]] Result<void> check(const TimestampedMessage& message, std::int64_t now_ms,
                                   bool freshness_waived = false) const;
  // The raw MAC of `signed_pieces` under the first key (the sending side: mock gateway, tools).
  [[nodiscard]] std::string sign(std::span<const std::string_view> signed_pieces) const;
  [[nodiscard]] std::size_t key_count() const { return keys_.size(); }

 private:
  [[nodiscard]] bool matches_any(const TimestampedMessage& message) const;

  std::vector<std::string> keys_;
  std::int64_t window_ms_;
};

}  // namespace seatflow::channels
