// The `alipay` refund dialect: alipay.trade.refund signed RSA2 with the merchant's key
// (out_request_no = SeatFlow's refund number, so a retry is the same refund at Alipay), the answer
// verified with Alipay's public key over the raw alipay_trade_refund_response JSON.
#pragma once

#include <string_view>

#include "channels/alipay/alipay_query.hpp"
#include "channels/refund.hpp"

namespace seatflow::channels {

inline constexpr std::string_view kAlipayRefundMethod = "alipay.trade.refund";
inline constexpr std::string_view kAlipayRefundResponseMember = "alipay_trade_refund_response";

// The params of the refund request (without `sign`), in the order they are sent.
[[nodiscard]] FormParams alipay_refund_params(std::string_view app_id, const RefundTarget& target,
                                              std::int64_t now_ms);

// The mapping of a verified alipay_trade_refund_response value (its raw JSON text): code 10000
// about this payment with refund_fee (the trade's refunded total) equal to the amount = succeeded
// (fund_change "N" is a retry of a refund already made); any other code = refused, its code and
// sub_code the reason. Exposed for tests.
[[nodiscard]] Result<RefundAnswer> alipay_refund_answer_from(std::string_view response_json,
                                                             const RefundTarget& target);

class AlipayRefund final : public RefundDialect {
 public:
  // The query's configuration: the same app, gateway and keys. Throws std::invalid_argument for an
  // empty app id, an empty gateway host or a null key.
  explicit AlipayRefund(AlipayQueryConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::alipay; }
  // Throws std::runtime_error when OpenSSL cannot sign.
  [[nodiscard]] Result<net::Request> refund_request(const RefundTarget& target,
                                                    std::int64_t now_ms) const override;
  [[nodiscard]] Result<RefundAnswer> refund_answer(const RefundTarget& target,
                                                   const net::Response& response,
                                                   std::int64_t now_ms) const override;

 private:
  AlipayQueryConfig config_;
};

}  // namespace seatflow::channels
