// The `wechat` refund dialect: POST /v3/refund/domestic/refunds signed WECHATPAY2-SHA256-RSA2048
// with the merchant's key (out_refund_no = SeatFlow's refund number, so a retry is the same refund
// at WeChat Pay); every answer, an error's included, verified with the platform key that
// Wechatpay-Serial names, like a notify.
#pragma once

#include <string_view>

#include "channels/refund.hpp"
#include "channels/wechat/wechat_query.hpp"

namespace seatflow::channels {

// The path of the refund API under the gateway's base URL.
inline constexpr std::string_view kWechatRefundPath = "/v3/refund/domestic/refunds";
// WeChat Pay's domestic refunds are in CNY.
inline constexpr std::string_view kWechatRefundCurrency = "CNY";

// The request's JSON body.
[[nodiscard]] std::string wechat_refund_body(const RefundTarget& target);

// The mapping of a verified answer: 200 about this refund and payment with status SUCCESS or
// PROCESSING (accepted; WeChat Pay completes it) = succeeded, CLOSED or ABNORMAL = refused; any
// other HTTP status = refused with the answer's `code`. Exposed for tests.
[[nodiscard]] Result<RefundAnswer> wechat_refund_answer_from(int status, std::string_view body,
                                                             const RefundTarget& target);

class WechatRefund final : public RefundDialect {
 public:
  // The query's configuration: the same merchant, gateway and keys. Throws as WechatQuery does.
  explicit WechatRefund(WechatQueryConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::wechat; }
  // Throws std::runtime_error when OpenSSL cannot sign.
  [[nodiscard]] Result<net::Request> refund_request(const RefundTarget& target,
                                                    std::int64_t now_ms) const override;
  [[nodiscard]] Result<RefundAnswer> refund_answer(const RefundTarget& target,
                                                   const net::Response& response,
                                                   std::int64_t now_ms) const override;

 private:
  WechatQueryConfig config_;
};

}  // namespace seatflow::channels
