// The `alipay` query dialect (SPEC §10): alipay.trade.query signed RSA2 with the merchant's key,
// the answer verified with Alipay's public key over the raw alipay_trade_query_response JSON.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "channels/alipay/alipay_channel.hpp"
#include "channels/gateway_signer.hpp"
#include "channels/query.hpp"
#include "codec/crypto.hpp"

namespace seatflow::channels {

// What start-up hands over: the app, the gateway URL and both keys, already loaded.
struct AlipayQueryConfig {
  std::string app_id;
  net::Url gateway;  // the full OpenAPI URL, e.g. https://openapi.alipay.com/gateway.do
  codec::SharedKey app_private_key;    // the merchant's RSA key: signs the requests
  codec::SharedKey alipay_public_key;  // Alipay's RSA key: verifies the answers
};

inline constexpr std::string_view kAlipayQueryMethod = "alipay.trade.query";
// The member of the answer that Alipay signs, and the one it uses for gateway-level errors.
inline constexpr std::string_view kAlipayQueryResponseMember = "alipay_trade_query_response";
inline constexpr std::string_view kAlipayErrorResponseMember = "error_response";
// Nesting deeper than this in an answer is malformed; Alipay's answers nest two levels.
inline constexpr std::size_t kAlipayAnswerDepthMax = 16;
// Top-level members of an answer beyond this are malformed; Alipay sends two or three.
inline constexpr std::size_t kAlipayAnswerMembersMax = 16;

// The raw text of the value of the top-level member `name` of the JSON object `text`, exactly as
// it appears (no re-serialising), found by scanning the text. nullopt when `text` is not an object
// as scanned, nests deeper than kAlipayAnswerDepthMax, has more than kAlipayAnswerMembersMax
// members, lacks `name` or has it twice. Keys are compared as raw bytes between the quotes.
[[nodiscard]] std::optional<std::string_view> raw_json_member(std::string_view text,
                                                              std::string_view name);

// Minor units as the yuan text Alipay's amounts take: 5000 → "50.00" (never a float).
[[nodiscard]] std::string alipay_yuan(std::int64_t cents);

// The params of an OpenAPI request of `method` (without `sign`), in the order they are sent.
[[nodiscard]] FormParams alipay_openapi_params(std::string_view app_id, std::string_view method,
                                               std::string biz_content, std::int64_t now_ms);

// The params of the query request (without `sign`), in the order they are sent.
[[nodiscard]] FormParams alipay_query_params(std::string_view app_id, std::string_view payment_no,
                                             std::int64_t now_ms);

// The content that is RSA2-signed: every param but `sign` (`sign_type` included, as Alipay's
// OpenAPI signs requests — only notifies leave `sign_type` out), sorted by key, `k=v` joined
// with `&`.
[[nodiscard]] std::string alipay_request_sign_content(const FormParams& params);

// Checks what the query, refund and bill dialects need of the configuration (`who` names the
// dialect in the exception's text). Throws std::invalid_argument: a start-up error.
void check_alipay_query_config(const AlipayQueryConfig& config, const char* who);

// The POST of `params` to the gateway, RSA2-signed with the app's private key. Throws
// std::runtime_error when OpenSSL cannot sign.
[[nodiscard]] net::Request alipay_signed_request(const AlipayQueryConfig& config,
                                                 const FormParams& params);

// The raw JSON text of the answer's `member` (alipay_trade_query_response, ...), its signature
// verified with Alipay's public key over exactly those bytes; errc::rejected_answer otherwise.
// The view points into `response.body`.
[[nodiscard]] Result<std::string_view> alipay_verified_member(const net::Response& response,
                                                              std::string_view member,
                                                              EVP_PKEY* alipay_public_key);

// The mapping of a verified alipay_trade_query_response value (its raw JSON text). Exposed for
// tests and fuzzing.
[[nodiscard]] Result<QueryAnswer> alipay_query_answer_from(std::string_view response_json,
                                                           const QueryTarget& target);

class AlipayQuery final : public QueryDialect {
 public:
  // Throws std::invalid_argument for an empty app id, an empty gateway host or a null key.
  explicit AlipayQuery(AlipayQueryConfig config);

  [[nodiscard]] domain::Channel channel() const override { return domain::Channel::alipay; }
  // Throws std::runtime_error when OpenSSL cannot sign.
  [[nodiscard]] net::Request request(const QueryTarget& target, std::int64_t now_ms) const override;
  [[nodiscard]] Result<QueryAnswer> answer(const QueryTarget& target, const net::Response& response,
                                           std::int64_t now_ms) const override;

 private:
  AlipayQueryConfig config_;
};

}  // namespace seatflow::channels
