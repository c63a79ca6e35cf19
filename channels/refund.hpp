// Gateway refunds for discrepancies (SPEC §10 `refund(payment)`, SPEC §12): each channel asks its
// gateway to give back a payment's money that the business could not honour, under a refund number
// that is stable per discrepancy (so a retry is the same refund at the gateway, never a second
// one), and turns the verified answer into succeeded | refused. An answer that fails verification,
// is malformed or names another payment, refund number or amount is a rejection: the outcome is
// unknown, so the discrepancy stays open and a retry reuses the refund number.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "channels/errc.hpp"
#include "domain/types.hpp"
#include "net/message.hpp"

namespace seatflow::channels {

// What is refunded: the whole payment.
struct RefundTarget {
  std::string payment_no;
  std::string refund_no;  // SeatFlow's refund number: out_request_no / out_refund_no / refundNo
  std::int64_t amount_cents = 0;
  std::string reason;  // told to the gateway (ASCII, at most kRefundReasonBytesMax)
  // The gateway's trade number of the money to give back, when SeatFlow knows it (the late
  // callback's, else the payment's): Stripe refunds a PaymentIntent, not a payment number.
  std::string trade_no = {};
};

// A refund number: 1-64 bytes of [A-Za-z0-9_-] (what Alipay's out_request_no and WeChat Pay's
// out_refund_no both accept).
inline constexpr std::size_t kRefundNoBytesMax = 64;
// The reason sent to the gateway, and the reason kept from its answer, at most this long.
inline constexpr std::size_t kRefundReasonBytesMax = 80;
[[nodiscard]] bool valid_refund_no(std::string_view refund_no);

enum class RefundState : std::uint8_t {
  succeeded,  // the gateway took the refund (done, or accepted and completing on its side)
  refused,    // the gateway said no (a verified answer); `reason` says why
};

struct RefundAnswer {
  RefundState state = RefundState::refused;
  std::string reason;             // log-safe; the gateway's code for a refusal
  std::string gateway_refund_no;  // the gateway's own refund (or trade) number, when it gave one
};

// One channel's refund dialect. Implementations are pure (OpenSSL only) and safe from any thread.
class RefundDialect {
 public:
  virtual ~RefundDialect() = default;
  [[nodiscard]] virtual domain::Channel channel() const = 0;
  // The signed request that asks the gateway to refund the target; errc::unusable when the target
  // lacks what the dialect needs (Stripe's PaymentIntent). Throws only when signing itself fails
  // (OpenSSL out of resources, a key that cannot sign): a fault of the process, not of the target.
  [[nodiscard]] virtual Result<net::Request> refund_request(const RefundTarget& target,
                                                            std::int64_t now_ms) const = 0;
  // The gateway's answer, verified and mapped; one that proves nothing is errc::rejected_answer
  // (its detail log-safe: never a body, a signature or a key).
  [[nodiscard]] virtual Result<RefundAnswer> refund_answer(const RefundTarget& target,
                                                           const net::Response& response,
                                                           std::int64_t now_ms) const = 0;
};

// The reason as kept: cut to kRefundReasonBytesMax, every byte outside printable ASCII replaced
// by '?' (so a cut never splits a character and the text is always valid UTF-8).
[[nodiscard]] std::string bounded_reason(std::string_view text);
// `text` cut to `bytes_max`, every byte outside printable ASCII replaced by '?' (the reason's and
// the payment description's rule).
[[nodiscard]] std::string bounded_printable(std::string_view text, std::size_t bytes_max);

}  // namespace seatflow::channels
