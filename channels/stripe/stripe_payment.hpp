// The `stripe` payment at the gateway (SPEC §16): a PaymentIntent created with
// POST /v1/payment_intents (form-encoded, Idempotency-Key `create-<paymentNo>`, so asking again is
// the same intent, never a second one) and cancelled with POST /v1/payment_intents/{id}/cancel.
// Stripe has no deadline: the cancel is what ends an intent. Its API signs nothing: an answer is
// trusted as the TLS connection's, authenticated by the secret key (as the query's is), and checked
// for the payment, intent and amount it must be about.
#pragma once

#include <string>
#include <string_view>

#include "channels/payment_gateway.hpp"
#include "channels/stripe/stripe_query.hpp"

namespace seatflow::channels {

inline constexpr std::string_view kStripeIntentsPath = "/v1/payment_intents";
inline constexpr std::string_view kStripeCancelPathSuffix = "/cancel";
inline constexpr std::string_view kStripeCreateKeyPrefix = "create-";
// The error code of a cancel that finds the intent in a state it cannot leave by cancelling.
inline constexpr std::string_view kStripeUnexpectedState = "payment_intent_unexpected_state";

// The create request's form body: amount, currency, metadata[paymentNo], metadata[orderNo],
// automatic_payment_methods[enabled]=true. The same target gives the same bytes (Stripe refuses a
// reused Idempotency-Key with other parameters).
[[nodiscard]] std::string stripe_intent_body(const CreateTarget& target, std::string_view currency);

// `create-<paymentNo>`.
[[nodiscard]] std::string stripe_create_idempotency_key(std::string_view payment_no);

// The mapping of a create answer (exposed for tests): 200 with a payment_intent whose
// metadata.paymentNo, amount and currency are the payment's, an id and a client_secret = created
// (client_secret, "clientSecret", gateway_ref = the id); an error object with 400, 401, 402, 403 or
// 404 = refused with its code. 409 (the same key in use by a request still running), 429 and 5xx
// prove nothing: rejections, asked again under the same key.
[[nodiscard]] Result<CreateAnswer> stripe_create_answer_from(int status, std::string_view body,
                                                             std::string_view currency,
                                                             const CreateTarget& target);

// The mapping of a cancel answer (exposed for tests): 200 with this intent canceled = closed; 400
// payment_intent_unexpected_state whose error.payment_intent is this intent: succeeded or
// processing = paid, canceled = closed, another status = refused; another error object with 400,
// 401, 402, 403 or 404 = refused. 409, 429 and 5xx are rejections.
[[nodiscard]] Result<CloseAnswer> stripe_cancel_answer_from(int status, std::string_view body,
                                                            const CloseTarget& target);

class StripePayment final : public PaymentGatewayDialect {
 public:
  // The query's configuration: the same key, API and currency. Throws as StripeQuery does.
  explicit StripePayment(StripeApiConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::stripe; }
  // errc::unusable without a payment number or a positive amount. The deadline is not Stripe's.
  [[nodiscard]] Result<net::Request> create_request(const CreateTarget& target,
                                                    std::int64_t now_ms) const override;
  [[nodiscard]] Result<CreateAnswer> create_answer(const CreateTarget& target,
                                                   const net::Response& response,
                                                   std::int64_t now_ms) const override;
  // No PaymentIntent known (gateway_ref empty): nothing to cancel, closed without a call.
  [[nodiscard]] bool close_needs_call(const CloseTarget& target) const override;
  // errc::unusable when gateway_ref is empty or not an id Stripe makes.
  [[nodiscard]] Result<net::Request> close_request(const CloseTarget& target,
                                                   std::int64_t now_ms) const override;
  [[nodiscard]] Result<CloseAnswer> close_answer(const CloseTarget& target,
                                                 const net::Response& response,
                                                 std::int64_t now_ms) const override;

 private:
  StripeApiConfig config_;
};

}  // namespace seatflow::channels
