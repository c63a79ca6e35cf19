// The `standard` dialect (SPEC §11): Standard Webhooks webhook-id/-timestamp/-signature headers.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "channels/channel.hpp"
#include "channels/timestamped_hmac.hpp"

namespace seatflow::channels {

// Lower-cased header names, as the HTTP layer hands them over.
inline constexpr std::string_view kStandardIdHeader = "webhook-id";
inline constexpr std::string_view kStandardTimestampHeader = "webhook-timestamp";
inline constexpr std::string_view kStandardSignatureHeader = "webhook-signature";
inline constexpr std::array<std::string_view, 3> kStandardReadHeaders = {
    kStandardIdHeader, kStandardTimestampHeader, kStandardSignatureHeader};
// The prefix of a Standard Webhooks secret; the base64 key follows it.
inline constexpr std::string_view kStandardSecretPrefix = "whsec_";
// Bounds on attacker-controlled input and on configured keys.
inline constexpr std::size_t kStandardFieldBytesMax = 128;  // type
inline constexpr std::size_t kStandardKeyBytesMax = 256;    // a decoded secret

inline constexpr std::string_view kStandardSucceeded = "payment.succeeded";
inline constexpr std::string_view kStandardFailed = "payment.failed";

// What start-up reads from SEATFLOW_STANDARD_WEBHOOK_SECRETS.
struct StandardConfig {
  // "whsec_<base64>" as written (the base64 may be unpadded); the first signs, all verify. Never
  // logged.
  std::vector<std::string> secrets;
  std::int64_t window_ms = kWebhookWindowMs;
};

// The HMAC key a secret stands for: the base64 after "whsec_" (the prefix may be left out, as the
// reference libraries allow), padded or not. nullopt when it is not base64, decodes to nothing or
// to more than kStandardKeyBytesMax bytes.
[[nodiscard]] std::optional<std::string> standard_secret_key(std::string_view secret);

// The signature core: `signature_header` is space-separated entries, each "v1,<base64>" (other
// versions are ignored, and so is a v1 whose base64 is not a 32-byte MAC). Passes (nullopt) when
// |now - timestamp| <= window and any v1 equals HMAC-SHA256(key, id + "." + timestamp + "." +
// body) under any key. malformed (400) for a header over kSignatureHeaderBytesMax or with more
// than kSignatureEntriesMax entries; bad_signature (401) for a timestamp that is not unix seconds,
// no v1 or no match; stale (401) when a v1 matches but the timestamp is outside the window.
[[nodiscard]] Result<void> verify_standard_signature(const TimestampedHmac& keys,
                                                     std::string_view id,
                                                     std::string_view timestamp,
                                                     std::string_view signature_header,
                                                     std::string_view body, std::int64_t now_ms,
                                                     bool freshness_waived = false);

// "v1,<base64>" under the first key: the webhook-signature a sender puts on `body`.
[[nodiscard]] std::string standard_signature(const TimestampedHmac& keys, std::string_view id,
                                             std::int64_t timestamp_s, std::string_view body);

// Everything after the signature: {"type": "payment.succeeded"|"payment.failed", "timestamp",
// "data": {"paymentNo", "amountCents", "tradeNo"}} → a callback whose id is `webhook_id`. Another
// type is `unhandled_event` (200, nothing written); tradeNo is required for a success. Exposed
// for tests and fuzzing.
[[nodiscard]] Result<domain::VerifiedCallback> standard_callback_from_body(
    std::string_view body, std::string_view webhook_id);

// The sending side (mock gateway, tools): the SeatFlow event body.
struct StandardEvent {
  std::string type = std::string(kStandardSucceeded);
  std::string payment_no;
  std::int64_t amount_cents = 0;
  std::string trade_no;  // left out when empty
  std::int64_t timestamp_s = 0;
};
[[nodiscard]] std::string standard_event_body(const StandardEvent& event);

class StandardChannel final : public Channel {
 public:
  // Throws std::invalid_argument for no secret, more than kWebhookSecretsMax, a secret that
  // standard_secret_key refuses, or a negative window.
  explicit StandardChannel(const StandardConfig& config);

  [[nodiscard]] domain::Channel id() const override { return domain::Channel::standard; }
  [[nodiscard]] Result<domain::VerifiedCallback> verify(
      const InboundRequest& request) const override;
  // Standard Webhooks: any 2xx is success; SeatFlow answers 200 with an empty body.
  [[nodiscard]] std::string_view ack_body() const override { return ""; }
  [[nodiscard]] std::string_view content_type() const override { return "text/plain"; }
  [[nodiscard]] std::string failure_body(std::string_view message) const override;
  [[nodiscard]] std::span<const std::string_view> read_headers() const override {
    return kStandardReadHeaders;
  }

  [[nodiscard]] const TimestampedHmac& keys() const { return keys_; }

 private:
  TimestampedHmac keys_;
};

// The decoded keys of `secrets`, for TimestampedHmac; throws std::invalid_argument naming the
// position (never the value) of a secret standard_secret_key refuses.
[[nodiscard]] std::vector<std::string> standard_keys(const std::vector<std::string>& secrets);

}  // namespace seatflow::channels
