// The `hmac` gateway's refund dialect: POST {base}/api/gateway/refunds with a JSON body signed
// like a callback (SPEC §5: lowercase hex HMAC-SHA256 under the first callback secret over
// newline-joined fields), answered 200 with a JSON body signed the same way, verified under any
// secret and within the callback window. Both sides live here: SeatFlow's request and answer
// check, and the gateway's request check and answer (the dev mock gateway and the tests use them).
//
// Request: {"refundNo", "paymentNo", "amountCents", "timestamp" (epoch ms), "sign"} with
//   sign = HMAC(refundNo \n paymentNo \n amountCents \n timestamp).
// Answer:  {"refundNo", "paymentNo", "amountCents", "status": "succeeded"|"refused", "reason",
//   "timestamp", "sign"} with sign = HMAC(refundNo \n paymentNo \n amountCents \n status \n
//   reason \n timestamp). The gateway refunds a refund number at most once: a repeated request
//   answers the first outcome.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "channels/hmac/hmac_channel.hpp"
#include "channels/refund.hpp"

namespace seatflow::channels {

// The path of the refund endpoint under the gateway's base URL.
inline constexpr std::string_view kHmacRefundPath = "/api/gateway/refunds";
// Request and answer bodies larger than this are malformed.
inline constexpr std::size_t kHmacRefundBodyBytesMax = 4096;

// A refund request as the gateway reads it.
struct HmacRefundRequest {
  std::string refund_no;
  std::string payment_no;
  std::int64_t amount_cents = 0;
  std::int64_t timestamp_ms = 0;
};

[[nodiscard]] std::string hmac_refund_request_canonical(const HmacRefundRequest& request);
[[nodiscard]] std::string hmac_refund_answer_canonical(const HmacRefundRequest& request,
                                                       std::string_view status,
                                                       std::string_view reason,
                                                       std::int64_t timestamp_ms);

// The gateway's side: the request checked (shape, signature under any secret, window); refused
// otherwise as malformed, bad_signature or stale, the detail saying why.
[[nodiscard]] Result<HmacRefundRequest> hmac_refund_read_request(
    std::string_view body, const std::vector<std::string>& secrets, std::int64_t now_ms,
    std::int64_t window_ms);
// The gateway's signed answer body (`reason` must be printable ASCII: see bounded_reason).
[[nodiscard]] std::string hmac_refund_answer_body(std::string_view secret,
                                                  const HmacRefundRequest& request, bool succeeded,
                                                  std::string_view reason, std::int64_t now_ms);

class HmacRefund final : public RefundDialect {
 public:
  // `config.secrets` are the callback secrets (the first signs); `gateway` is the base URL
  // (SEATFLOW_HMAC_GATEWAY_URL). Throws std::invalid_argument without a secret, with an empty one
  // or a negative window.
  HmacRefund(HmacConfig config, net::Url gateway);
  ~HmacRefund() override;
  HmacRefund(const HmacRefund&) = delete;
  HmacRefund& operator=(const HmacRefund&) = delete;

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::hmac; }
  [[nodiscard]] Result<net::Request> refund_request(const RefundTarget& target,
                                                    std::int64_t now_ms) const override;
  [[nodiscard]] Result<RefundAnswer> refund_answer(const RefundTarget& target,
                                                   const net::Response& response,
                                                   std::int64_t now_ms) const override;

 private:
  HmacConfig config_;
  net::Url gateway_;
};

}  // namespace seatflow::channels
