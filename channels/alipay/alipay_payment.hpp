// The `alipay` payment at the gateway (SPEC §16): a QR trade created with alipay.trade.precreate
// (the common parameter notify_url, the deadline as time_expire) and closed with
// alipay.trade.close, both RSA2-signed with the merchant's key as the query is; each answer
// verified with Alipay's public key over the raw JSON of its response member.
//
// A precreated trade exists at Alipay only once a customer scans its code: closing one nobody
// scanned answers ACQ.TRADE_NOT_EXIST, which is closed here (its code expires at time_expire, the
// order's deadline). Alipay documents ACQ.TRADE_STATUS_ERROR for a close of a trade that no longer
// waits for payment (paid or closed already): it cannot say which, so it is a refusal, and the
// query before the next close attempt tells.
#pragma once

#include <string_view>

#include "channels/alipay/alipay_query.hpp"
#include "channels/payment_gateway.hpp"

namespace seatflow::channels {

inline constexpr std::string_view kAlipayPrecreateMethod = "alipay.trade.precreate";
inline constexpr std::string_view kAlipayPrecreateResponseMember =
    "alipay_trade_precreate_response";
inline constexpr std::string_view kAlipayCloseMethod = "alipay.trade.close";
inline constexpr std::string_view kAlipayCloseResponseMember = "alipay_trade_close_response";
// The sub_codes of a close that are not refusals.
inline constexpr std::string_view kAlipayTradeNotExist = "ACQ.TRADE_NOT_EXIST";
inline constexpr std::string_view kAlipayTradeHasSuccess = "ACQ.TRADE_HAS_SUCCESS";

// The params of the precreate request (without `sign`), in the order they are sent: the OpenAPI
// params with notify_url, biz_content {out_trade_no, total_amount (yuan), subject
// (bounded_description, the payment number when empty), time_expire ("yyyy-MM-dd HH:mm:ss" China
// time, left out when the target has no deadline)}.
[[nodiscard]] FormParams alipay_precreate_params(std::string_view app_id,
                                                 const CreateTarget& target, std::int64_t now_ms);

// The params of the close request (without `sign`): biz_content {out_trade_no}.
[[nodiscard]] FormParams alipay_close_params(std::string_view app_id, std::string_view payment_no,
                                             std::int64_t now_ms);

// The mapping of a verified alipay_trade_precreate_response value (its raw JSON text; exposed for
// tests): code 10000 about this payment with a qr_code = created (qr, "qrCode"); any other code =
// refused, its sub_code (else its code) the reason.
[[nodiscard]] Result<CreateAnswer> alipay_precreate_answer_from(std::string_view response_json,
                                                                const CreateTarget& target);

// The mapping of a verified alipay_trade_close_response value (exposed for tests): code 10000 =
// closed; sub_code ACQ.TRADE_NOT_EXIST = closed (nothing to close), ACQ.TRADE_HAS_SUCCESS = paid;
// any other = refused. An answer that names another out_trade_no is a rejection.
[[nodiscard]] Result<CloseAnswer> alipay_close_answer_from(std::string_view response_json,
                                                           const CloseTarget& target);

class AlipayPayment final : public PaymentGatewayDialect {
 public:
  // The query's configuration: the same app, gateway and keys. Throws std::invalid_argument for an
  // empty app id, an empty gateway host or a null key.
  explicit AlipayPayment(AlipayQueryConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::alipay; }
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
  AlipayQueryConfig config_;
};

}  // namespace seatflow::channels
