// wechat query: the signed GET, the answer's header signature, then the transaction's mapping.
#include "channels/wechat/wechat_query.hpp"

#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {

namespace {

using nlohmann::json;

// The nonce of a request's Authorization, as WeChat Pay's SDKs make it.
constexpr std::size_t kRequestNonceChars = 32;

}  // namespace

// Form encoding, but a space is %20 (a literal '+' is already %2B, so every '+' form_encode
// writes was a space).
std::string wechat_percent_encode(std::string_view bytes) {
  std::string encoded = codec::form_encode(bytes);
  std::string out;
  out.reserve(encoded.size());
  for (const char c : encoded) {
    if (c == '+') {
      out.append("%20");
    } else {
      out.push_back(c);
    }
  }
  return out;
}

namespace {

Result<QueryAnswer> not_found_or_error(std::string_view body) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("the 404 answer is not a JSON object");
  }
  const std::string* code = codec::json_string(doc, "code", kWechatMaxFieldBytes);
  if (code == nullptr || *code != kWechatOrderNotExist) {
    return rejected_answer("WeChat Pay answered 404 code " +
                           (code == nullptr ? std::string("?") : codec::log_safe_code(*code)));
  }
  return QueryAnswer{QueryState::not_found, {}, {}};
}

QueryState wechat_state_of(domain::CallbackKind kind) {
  switch (kind) {
    case domain::CallbackKind::success:
      return QueryState::paid;
    case domain::CallbackKind::failure:
      return QueryState::failed;
    case domain::CallbackKind::other:
      return QueryState::pending;
  }
  return QueryState::pending;
}

}  // namespace

Result<void> verify_wechat_answer(const WechatQueryConfig& config, const net::Response& response,
                                  std::int64_t now_ms, bool empty_body_allowed) {
  if ((response.body.empty() && !empty_body_allowed) ||
      response.body.size() > kGatewayBodyBytesMax) {
    return rejected_answer("answer empty or too large");
  }
  codec::Headers headers;
  for (const auto& [name, value] : response.headers) {
    headers.emplace(name, value);  // the first of a repeated name, as net::Response::header does
  }
  if (auto verified = verify_wechat_signature(config.platform_keys, &headers, response.body, now_ms,
                                              config.window_ms);
      !verified.ok()) {
    return rejected_answer("answer signature: " + verified.detail());
  }
  return {};
}

std::string wechat_authorization(const WechatQueryConfig& config, std::string_view method,
                                 std::string_view target, std::string_view body,
                                 std::int64_t now_ms) {
  const std::string timestamp = std::to_string(now_ms / 1000);
  const std::string nonce = codec::random_alnum(kRequestNonceChars);
  const std::string signature = codec::base64_encode(
      codec::rsa_sha256_sign(config.merchant_private_key.get(),
                             wechat_request_sign_content(method, target, timestamp, nonce, body)));
  std::string authorization(kWechatAuthScheme);
  authorization.append(" mchid=\"").append(config.mchid);
  authorization.append("\",nonce_str=\"").append(nonce);
  authorization.append("\",signature=\"").append(signature);
  authorization.append("\",timestamp=\"").append(timestamp);
  authorization.append("\",serial_no=\"").append(config.merchant_serial).append("\"");
  return authorization;
}

std::string wechat_request_sign_content(std::string_view method, std::string_view target,
                                        std::string_view timestamp, std::string_view nonce,
                                        std::string_view body) {
  std::string content;
  content.reserve(method.size() + target.size() + timestamp.size() + nonce.size() + body.size() +
                  5);
  content.append(method).append("\n").append(target).append("\n");
  content.append(timestamp).append("\n").append(nonce).append("\n");
  content.append(body).append("\n");
  return content;
}

Result<QueryAnswer> wechat_query_answer_from(int status, std::string_view body,
                                             std::string_view mchid, const QueryTarget& target) {
  if (status == 404) {
    return not_found_or_error(body);
  }
  if (status != 200) {
    return rejected_answer("unexpected HTTP status " + std::to_string(status));
  }
  if (!json::accept(body)) {
    return rejected_answer("answer is not JSON");
  }
  auto parsed = parse_wechat_transaction(body, mchid);
  if (!parsed.ok()) {
    return rejected_answer("transaction: " + parsed.detail());
  }
  const auto& transaction = parsed.value();
  if (transaction.payment_no != target.payment_no) {
    return rejected_answer("out_trade_no is another payment's");
  }
  if (transaction.amount_cents && *transaction.amount_cents != target.amount_cents) {
    return rejected_answer("amount.total differs from the payment's amount");
  }
  return QueryAnswer{wechat_state_of(transaction.kind), transaction.channel_trade_no,
                     transaction.amount_cents};
}

void check_wechat_query_config(WechatQueryConfig& config, const char* who) {
  // Both go into the Authorization header between quotes.
  if (!codec::is_safe_code(config.mchid) || !codec::is_safe_code(config.merchant_serial) ||
      config.gateway.host.empty()) {
    throw std::invalid_argument(std::string(who) +
                                ": bad mchid or merchant serial, or no gateway host");
  }
  if (!config.merchant_private_key || config.window_ms < 0) {
    throw std::invalid_argument(std::string(who) + ": no merchant key, or a negative window");
  }
  if (!valid_platform_keys(config.platform_keys)) {
    throw std::invalid_argument(std::string(who) +
                                ": no key, an empty or repeated serial, a null key");
  }
  config.gateway.target = net::base_path(std::move(config.gateway.target));
}

WechatQuery::WechatQuery(WechatQueryConfig config) : config_(std::move(config)) {
  check_wechat_query_config(config_, "wechat query");
}

std::string WechatQuery::target_for(std::string_view payment_no) const {
  std::string target = config_.gateway.target;
  target.append(kWechatQueryPath).append(wechat_percent_encode(payment_no));
  target.append("?mchid=").append(wechat_percent_encode(config_.mchid));
  return target;
}

net::Request WechatQuery::request(const QueryTarget& target, std::int64_t now_ms) const {
  net::Request request;
  request.method = "GET";
  request.url = config_.gateway;
  request.url.target = target_for(target.payment_no);
  request.headers = {{"Authorization", wechat_authorization(config_, request.method,
                                                            request.url.target, "", now_ms)},
                     {"Accept", "application/json"}};
  return request;
}

Result<QueryAnswer> WechatQuery::answer(const QueryTarget& target, const net::Response& response,
                                        std::int64_t now_ms) const {
  if (response.status != 200 && response.status != 404) {
    return rejected_answer("unexpected HTTP status " + std::to_string(response.status));
  }
  if (auto verified = verify_wechat_answer(config_, response, now_ms); !verified.ok()) {
    return std::move(verified).failure();
  }
  return wechat_query_answer_from(response.status, response.body, config_.mchid, target);
}

}  // namespace seatflow::channels
