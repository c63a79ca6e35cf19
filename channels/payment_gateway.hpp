// The payment at the gateway (SPEC §16): each channel creates a payment at its gateway with the
// order's deadline and SeatFlow's notify URL, and closes it there before its order is cancelled.
// The trade number is the payment number (stored before the call), so asking again is the same
// payment at the gateway, never a second one (Stripe: `Idempotency-Key: create-<paymentNo>`).
// Every answer is verified before it is believed: one that does not verify, is malformed or names
// another payment is errc::rejected_answer and changes nothing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "channels/errc.hpp"
#include "domain/types.hpp"
#include "net/message.hpp"

namespace seatflow::channels {

// The payment to create.
struct CreateTarget {
  std::string payment_no;  // the trade number at the gateway (out_trade_no, metadata[paymentNo])
  std::string order_no;
  std::int64_t amount_cents = 0;
  std::int64_t expires_at_ms = 0;  // the order's deadline (epoch ms); 0 = the order has none
  std::string notify_url;          // {SEATFLOW_NOTIFY_BASE_URL}/api/payment/notify/<channel>
  std::string description;         // printable ASCII, at most kDescriptionBytesMax
};

// The description sent to the gateway, at most this long (WeChat Pay allows 127 bytes).
inline constexpr std::size_t kDescriptionBytesMax = 64;

// How the customer pays: the answer's "pay" object (SPEC §16).
enum class PayKind : std::uint8_t {
  qr,             // wechat `codeUrl`, alipay `qrCode`
  client_secret,  // stripe `clientSecret`
  url,            // hmac `payUrl`
};

[[nodiscard]] std::string_view to_string(PayKind kind);

struct CreateAnswer {
  bool created = false;  // false: the gateway refused (a verified answer); `reason` says why
  std::string reason;    // log-safe; the gateway's code for a refusal
  PayKind kind = PayKind::url;
  std::string field;        // the "pay" field: codeUrl | qrCode | clientSecret | payUrl
  std::string value;        // its value (never logged: a client secret is a credential)
  std::string gateway_ref;  // the gateway's own id to keep (Stripe's PaymentIntent id), or empty
};

// The payment to close.
struct CloseTarget {
  std::string payment_no;
  // The gateway's id of the payment when SeatFlow knows it (Stripe's PaymentIntent: the kept one,
  // else the one the query before the close found); empty for the channels that close by number.
  std::string gateway_ref;
};

enum class CloseState : std::uint8_t {
  closed,   // the gateway closed it, or it has nothing to close: no payment can be taken any more
  paid,     // the gateway says it is paid: query again and apply it
  refused,  // a verified answer that closes nothing (`reason` says why)
};

struct CloseAnswer {
  CloseState state = CloseState::refused;
  std::string reason;  // log-safe; the gateway's code
};

// One channel's create and close dialect. Implementations are pure (OpenSSL only) and safe from
// any thread. A request builder returns errc::unusable when the target lacks what the dialect
// needs; it throws only when signing itself fails (a fault of the process).
class PaymentGatewayDialect {
 public:
  virtual ~PaymentGatewayDialect() = default;
  [[nodiscard]] virtual domain::Channel channel() const = 0;
  [[nodiscard]] virtual Result<net::Request> create_request(const CreateTarget& target,
                                                            std::int64_t now_ms) const = 0;
  [[nodiscard]] virtual Result<CreateAnswer> create_answer(const CreateTarget& target,
                                                           const net::Response& response,
                                                           std::int64_t now_ms) const = 0;
  // Whether a close needs a request at all: Stripe with no PaymentIntent has nothing to close.
  [[nodiscard]] virtual bool close_needs_call(const CloseTarget& target) const {
    (void)target;
    return true;
  }
  [[nodiscard]] virtual Result<net::Request> close_request(const CloseTarget& target,
                                                           std::int64_t now_ms) const = 0;
  [[nodiscard]] virtual Result<CloseAnswer> close_answer(const CloseTarget& target,
                                                         const net::Response& response,
                                                         std::int64_t now_ms) const = 0;
};

// A pay value as an answer may carry it (a code URL, a client secret, a pay URL): 1 to
// kPayValueBytesMax bytes of printable ASCII without spaces; anything else is a malformed answer.
inline constexpr std::size_t kPayValueBytesMax = 1024;
[[nodiscard]] bool valid_pay_value(std::string_view value);

// The notify URL of `channel` under the base (no trailing '/' expected; one is dropped).
[[nodiscard]] std::string notify_url(std::string_view base, domain::Channel channel);
// The description as sent: cut to kDescriptionBytesMax, bytes outside printable ASCII → '?'.
[[nodiscard]] std::string bounded_description(std::string_view text);

}  // namespace seatflow::channels
