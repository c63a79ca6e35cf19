// The `wechat` query dialect (SPEC §10): GET /v3/pay/transactions/out-trade-no/{no}?mchid=, signed
// WECHATPAY2-SHA256-RSA2048 with the merchant's key; the answer verified with the platform key
// that Wechatpay-Serial names, like a notify.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "channels/query.hpp"
#include "channels/timestamped_hmac.hpp"
#include "channels/wechat/wechat_channel.hpp"
#include "codec/crypto.hpp"

namespace seatflow::channels {

// What start-up hands over: the merchant, the gateway base URL and the keys, already loaded.
struct WechatQueryConfig {
  std::string mchid;
  net::Url gateway;                       // the API base, e.g. https://api.mch.weixin.qq.com
  codec::SharedKey merchant_private_key;  // signs the requests
  std::string merchant_serial;            // the serial of the merchant's API certificate
  WechatPlatformKeys platform_keys;
  std::int64_t window_ms = kWebhookWindowMs;  // |now - Wechatpay-Timestamp| bound
};

// The path of the query under the gateway's base URL; the payment number follows.
inline constexpr std::string_view kWechatQueryPath = "/v3/pay/transactions/out-trade-no/";
inline constexpr std::string_view kWechatAuthScheme = "WECHATPAY2-SHA256-RSA2048";
// The `code` of a 404 answer about a payment WeChat Pay does not know.
inline constexpr std::string_view kWechatOrderNotExist = "ORDER_NOT_EXIST";

// What the merchant signs: `method\ntarget\ntimestamp\nnonce\nbody\n` (target = path and query as
// sent; body empty for a GET).
[[nodiscard]] std::string wechat_request_sign_content(std::string_view method,
                                                      std::string_view target,
                                                      std::string_view timestamp,
                                                      std::string_view nonce,
                                                      std::string_view body);

// The Authorization header of a merchant API request: WECHATPAY2-SHA256-RSA2048 with mchid, a
// fresh nonce, the signature of wechat_request_sign_content, the timestamp and serial_no. Throws
// std::runtime_error when OpenSSL cannot sign.
[[nodiscard]] std::string wechat_authorization(const WechatQueryConfig& config,
                                               std::string_view method, std::string_view target,
                                               std::string_view body, std::int64_t now_ms);

// Checks what the query, refund and bill dialects need of the configuration (`who` names the
// dialect in the exception's text) and drops the gateway URL's trailing slashes. Throws
// std::invalid_argument: a start-up error.
void check_wechat_query_config(WechatQueryConfig& config, const char* who);

// A query, refund or bill answer's body is not empty, within kGatewayBodyBytesMax, and signed by a
// platform key of `config` within its window (the notify check, on the answer's headers: the first
// of a repeated name); errc::rejected_answer and why otherwise. `empty_body_allowed`: an answer
// without a body (a close's 204), its signature over the empty body, as WeChat Pay signs it.
[[nodiscard]] Result<void> verify_wechat_answer(const WechatQueryConfig& config,
                                                const net::Response& response, std::int64_t now_ms,
                                                bool empty_body_allowed = false);

// A path segment or query value, percent-encoded (a space is %20).
[[nodiscard]] std::string wechat_percent_encode(std::string_view bytes);

// The mapping of a verified answer (status 200 with a transaction, or 404). Exposed for tests and
// fuzzing.
[[nodiscard]] Result<QueryAnswer> wechat_query_answer_from(int status, std::string_view body,
                                                           std::string_view mchid,
                                                           const QueryTarget& target);

class WechatQuery final : public QueryDialect {
 public:
  // Throws std::invalid_argument for an mchid or merchant serial that is not is_safe_code, an
  // empty gateway host, a null merchant key, platform keys that valid_platform_keys refuses, or a
  // negative window.
  explicit WechatQuery(WechatQueryConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::wechat; }
  // Throws std::runtime_error when OpenSSL cannot sign.
  [[nodiscard]] net::Request request(const QueryTarget& target, std::int64_t now_ms) const override;
  [[nodiscard]] Result<QueryAnswer> answer(const QueryTarget& target, const net::Response& response,
                                           std::int64_t now_ms) const override;

  // The request target for a payment: the gateway's path, kWechatQueryPath, the payment number
  // percent-encoded, `?mchid=`.
  [[nodiscard]] std::string target_for(std::string_view payment_no) const;

 private:
  WechatQueryConfig config_;
};

}  // namespace seatflow::channels
