// Core value types of SeatFlow: statuses, channels and the verified callback; no I/O here.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seatflow::domain {

// Payment status as stored in payment_order.status (SPEC §2).
enum class PaymentStatus : std::int16_t {
  pending = 0,
  success = 1,
  failed = 2,
  closed = 3,
  refunded = 4,
};

// Order status as stored in order_info.status (SPEC §2).
enum class OrderStatus : std::int16_t {
  pending = 0,
  paid = 1,
  cancelled = 2,
  refunded = 3,
  partially_refunded = 4,  // some of its seats or money given back (SPEC §17)
};

// Refund status as stored in refund.status (SPEC §2, §4, §17).
enum class RefundStatus : std::int16_t {
  pending = 0,     // written, not yet accepted by the gateway
  processing = 1,  // accepted, the money not yet back
  succeeded = 2,   // final
  failed = 3,      // final
  abnormal = 4,    // the buyer's account could not take it (WeChat); still settles
};

// Every status, in code order (the domain's tables are derived by going through them).
inline constexpr std::array kPaymentStatuses = {PaymentStatus::pending, PaymentStatus::success,
                                                PaymentStatus::failed, PaymentStatus::closed,
                                                PaymentStatus::refunded};
inline constexpr std::array kOrderStatuses = {OrderStatus::pending, OrderStatus::paid,
                                              OrderStatus::cancelled, OrderStatus::refunded,
                                              OrderStatus::partially_refunded};
inline constexpr std::array kRefundStatuses = {RefundStatus::pending, RefundStatus::processing,
                                               RefundStatus::succeeded, RefundStatus::failed,
                                               RefundStatus::abnormal};

// The gateway dialects SeatFlow speaks (SPEC §5, §11).
enum class Channel : std::uint8_t { hmac = 0, alipay = 1, wechat = 2, stripe = 3, standard = 4 };
inline constexpr std::size_t kChannelCount = 5;

// What a verified callback says about the payment.
enum class CallbackKind : std::uint8_t {
  success,  // the money was taken
  failure,  // the attempt failed; the user may retry
  other,    // a state the channel reports that SeatFlow acknowledges and ignores
};

[[nodiscard]] std::string_view to_string(Channel channel);
[[nodiscard]] std::optional<Channel> parse_channel(std::string_view name);
[[nodiscard]] std::optional<PaymentStatus> payment_status_from_int(int value);
[[nodiscard]] std::optional<OrderStatus> order_status_from_int(int value);
[[nodiscard]] std::optional<RefundStatus> refund_status_from_int(int value);

// The request a verified callback came in, as the callback log keeps it (SPEC §12): the raw body
// bytes and the lower-cased headers its channel reads (signature headers, never a secret).
struct RawRequest {
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
};

// A callback whose signature has been proven; only these reach the actors.
struct VerifiedCallback {
  std::string callback_id;
  std::string payment_no;
  Channel channel = Channel::hmac;
  CallbackKind kind = CallbackKind::other;
  // The amount the gateway says it took, in minor units; absent for dialects that carry none.
  std::optional<std::int64_t> amount_cents;
  std::string channel_trade_no;
  // Lowercase hex SHA-256 of the business content (payment, status, amount, trade number).
  std::string payload_sha256;
  // The request it came in (shared: copies of a message do not copy the body); null for a
  // callback made from a gateway query's answer.
  std::shared_ptr<const RawRequest> raw;
};

}  // namespace seatflow::domain
