// The `stripe` dialect (SPEC §11): Stripe-Signature t=…,v1=… over "t.body", PaymentIntent events.
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

// The lower-cased header name, as the HTTP layer hands it over.
inline constexpr std::string_view kStripeSignatureHeader = "stripe-signature";
inline constexpr std::array<std::string_view, 1> kStripeReadHeaders = {kStripeSignatureHeader};
// SEATFLOW_CURRENCY's default: the currency every payment is charged in.
inline constexpr std::string_view kDefaultCurrency = "cny";
// Bounds on attacker-controlled input.
inline constexpr std::size_t kStripeFieldBytesMax = 128;  // type, currency

inline constexpr std::string_view kStripeSucceeded = "payment_intent.succeeded";
inline constexpr std::string_view kStripeFailed = "payment_intent.payment_failed";

// What start-up reads from SEATFLOW_STRIPE_WEBHOOK_SECRETS and SEATFLOW_CURRENCY.
struct StripeConfig {
  // Endpoint secrets ("whsec_…"), used as HMAC keys byte for byte as written (not decoded). The
  // first signs (mock gateway, `seatflow sign`); all verify. Never logged.
  std::vector<std::string> secrets;
  std::string currency = std::string(kDefaultCurrency);  // lower-case ISO 4217 code
  std::int64_t window_ms = kWebhookWindowMs;
};

// The signature core, as stripe-go computes it: the header's "t" and every "v1" (hex) are read,
// other schemes ("v0" included) are ignored; it passes when |now - t| <= window and any v1 equals
// HMAC-SHA256(secret, t + "." + body) under any secret. nullopt when it passes; malformed (400)
// for a header over kSignatureHeaderBytesMax or with more than kSignatureEntriesMax entries;
// bad_signature (401) for a missing or repeated t, no v1, or no match; stale (401) when a v1
// matches but t is outside the window.
[[nodiscard]] Result<void> verify_stripe_signature(const TimestampedHmac& keys,
                                                   std::string_view header, std::string_view body,
                                                   std::int64_t now_ms,
                                                   bool freshness_waived = false);

// "t=<timestamp_s>,v1=<hex>" under the first secret: the header Stripe would send for `body`.
[[nodiscard]] std::string stripe_signature_header(const TimestampedHmac& keys,
                                                  std::int64_t timestamp_s, std::string_view body);

// Everything after the signature: the event → a callback. payment_intent.succeeded = success,
// payment_intent.payment_failed = failure; any other type is `unhandled_event` (200, nothing
// written). Callback id = event `id`; payment = data.object.metadata.paymentNo; trade =
// data.object.id; data.object.amount (minor units) is the amount; data.object.currency must equal
// `currency` (ASCII case-insensitively), else malformed. Exposed for tests and fuzzing.
[[nodiscard]] Result<domain::VerifiedCallback> stripe_callback_from_event(
    std::string_view body, std::string_view currency);

// The fields of a PaymentIntent event as Stripe sends it (the sending side: mock gateway, tools).
struct StripeEvent {
  std::string id;  // "evt_…"
  std::string type = std::string(kStripeSucceeded);
  std::string payment_no;         // data.object.metadata.paymentNo
  std::string payment_intent_id;  // data.object.id, "pi_…"
  std::int64_t amount = 0;        // minor units
  std::string currency = std::string(kDefaultCurrency);
  std::int64_t created_s = 0;
};
// Its JSON text, shaped like Stripe's (ids must be valid UTF-8).
[[nodiscard]] std::string stripe_event_body(const StripeEvent& event);

class StripeChannel final : public Channel {
 public:
  // Throws std::invalid_argument for no secret, an empty secret, more than kWebhookSecretsMax,
  // an empty currency or a negative window.
  explicit StripeChannel(StripeConfig config);

  [[nodiscard]] domain::Channel id() const override { return domain::Channel::stripe; }
  [[nodiscard]] Result<domain::VerifiedCallback> verify(
      const InboundRequest& request) const override;
  [[nodiscard]] std::string_view ack_body() const override { return "{\"received\":true}"; }
  [[nodiscard]] std::string_view content_type() const override { return "application/json"; }
  // {"error":<message>}
  [[nodiscard]] std::string failure_body(std::string_view message) const override;
  [[nodiscard]] std::span<const std::string_view> read_headers() const override {
    return kStripeReadHeaders;
  }

  [[nodiscard]] const TimestampedHmac& keys() const { return keys_; }

 private:
  TimestampedHmac keys_;
  std::string currency_;
};

}  // namespace seatflow::channels
