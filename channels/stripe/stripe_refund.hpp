// The `stripe` refund dialect (SPEC §12, §13): POST /v1/refunds, form-encoded, payment_intent = the
// payment's PaymentIntent, the whole amount, SeatFlow's refund number as the Idempotency-Key (so a
// retry is the same refund at Stripe, never a second one) and in metadata[refundNo]. Stripe's
// `reason` takes only its own three values (duplicate, fraudulent, requested_by_customer), none of
// which says "paid after the order was cancelled": SeatFlow's reason goes in metadata[reason].
#pragma once

#include <string>
#include <string_view>

#include "channels/refund.hpp"
#include "channels/stripe/stripe_query.hpp"

namespace seatflow::channels {

inline constexpr std::string_view kStripeRefundsPath = "/v1/refunds";

// The request's form body; errc::unusable when the target names no PaymentIntent (target.trade_no
// empty): Stripe refunds an intent, not a payment number.
[[nodiscard]] Result<std::string> stripe_refund_body(const RefundTarget& target);

// The mapping of an answer (exposed for tests): 200 with a refund of this PaymentIntent, amount
// and refund number (metadata.refundNo, when present) whose status is succeeded, pending or
// requires_action (accepted; Stripe completes it) = succeeded, failed or canceled = refused; an
// error object with 400, 401, 402, 403 or 404 = refused with its code. 409 (the same key in use
// by a request still running), 429 and 5xx prove nothing: rejections, retried under the same key.
[[nodiscard]] Result<RefundAnswer> stripe_refund_answer_from(int status, std::string_view body,
                                                             const RefundTarget& target);

class StripeRefund final : public RefundDialect {
 public:
  // The query's configuration: the same key and API. Throws as StripeQuery does.
  explicit StripeRefund(StripeApiConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::stripe; }
  // errc::unusable as stripe_refund_body.
  [[nodiscard]] Result<net::Request> refund_request(const RefundTarget& target,
                                                    std::int64_t now_ms) const override;
  [[nodiscard]] Result<RefundAnswer> refund_answer(const RefundTarget& target,
                                                   const net::Response& response,
                                                   std::int64_t now_ms) const override;

 private:
  StripeApiConfig config_;
};

}  // namespace seatflow::channels
