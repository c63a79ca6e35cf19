// The `wechat` payment at the gateway (SPEC §16): a Native order created with
// POST /v3/pay/transactions/native and closed with
// POST /v3/pay/transactions/out-trade-no/{no}/close, both signed WECHATPAY2-SHA256-RSA2048 with the
// merchant's key as the query is; every answer verified with the platform key that
// Wechatpay-Serial names. WeChat Pay signs its 204 (the close's answer) over the empty body, as
// its SDKs check it (wechatpay-go validates every 2xx answer, body empty or not).
#pragma once

#include <string>
#include <string_view>

#include "channels/payment_gateway.hpp"
#include "channels/wechat/wechat_query.hpp"

namespace seatflow::channels {

// The paths under the gateway's base URL: the Native order; the close is kWechatQueryPath, the
// payment number, kWechatClosePathSuffix.
inline constexpr std::string_view kWechatNativePath = "/v3/pay/transactions/native";
inline constexpr std::string_view kWechatClosePathSuffix = "/close";
// WeChat Pay's Native orders are in CNY.
inline constexpr std::string_view kWechatPaymentCurrency = "CNY";
// The error codes of a close that are not refusals: the order is paid (query again), or is already
// closed (nothing can be paid any more). ORDER_NOT_EXIST (kWechatOrderNotExist) is closed too.
inline constexpr std::string_view kWechatOrderPaid = "ORDERPAID";
inline constexpr std::string_view kWechatOrderClosed = "ORDER_CLOSED";

// The create request's JSON body: appid, mchid, description (bounded_description, the payment
// number when empty), out_trade_no, time_expire (the deadline in China time with its offset, left
// out when the target has none), notify_url and amount {total, currency}.
[[nodiscard]] std::string wechat_native_body(const CreateTarget& target, std::string_view appid,
                                             std::string_view mchid);

// The mapping of a verified create answer (exposed for tests): 200 with a code_url = created
// (qr, "codeUrl"); any other status with an error `code` = refused, the code the reason.
[[nodiscard]] Result<CreateAnswer> wechat_create_answer_from(int status, std::string_view body);

// The mapping of a verified close answer (exposed for tests): 204 = closed; an error `code`
// ORDERPAID = paid, ORDER_CLOSED or ORDER_NOT_EXIST = closed, any other = refused.
[[nodiscard]] Result<CloseAnswer> wechat_close_answer_from(int status, std::string_view body);

class WechatPayment final : public PaymentGatewayDialect {
 public:
  // The query's configuration (the same merchant, gateway and keys) and the app the orders are
  // created for (SEATFLOW_WECHAT_APPID). Throws std::invalid_argument as WechatQuery does, and for
  // an appid that is not is_safe_code.
  WechatPayment(WechatQueryConfig config, std::string appid);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::wechat; }
  // errc::unusable without a payment number, a positive amount or a notify URL. Throws
  // std::runtime_error when OpenSSL cannot sign.
  [[nodiscard]] Result<net::Request> create_request(const CreateTarget& target,
                                                    std::int64_t now_ms) const override;
  [[nodiscard]] Result<CreateAnswer> create_answer(const CreateTarget& target,
                                                   const net::Response& response,
                                                   std::int64_t now_ms) const override;
  // errc::unusable without a payment number. Throws std::runtime_error when OpenSSL cannot sign.
  [[nodiscard]] Result<net::Request> close_request(const CloseTarget& target,
                                                   std::int64_t now_ms) const override;
  [[nodiscard]] Result<CloseAnswer> close_answer(const CloseTarget& target,
                                                 const net::Response& response,
                                                 std::int64_t now_ms) const override;

 private:
  // A signed JSON POST of `body` to `target` under the gateway.
  [[nodiscard]] net::Request signed_post(std::string target, std::string body,
                                         std::int64_t now_ms) const;

  WechatQueryConfig config_;
  std::string appid_;
};

}  // namespace seatflow::channels
