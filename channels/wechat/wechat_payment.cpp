// wechat payment: the signed Native order and close, their answers' signatures and mappings.
#include "channels/wechat/wechat_payment.hpp"

#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

// The `code` of a verified error answer; nullopt when the body is not an object with a code.
std::optional<std::string> wechat_error_code(std::string_view body) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return std::nullopt;
  }
  const std::string* code = codec::json_string(doc, "code", kWechatMaxFieldBytes);
  if (code == nullptr || code->empty()) {
    return std::nullopt;
  }
  return codec::log_safe_code(*code);
}

}  // namespace

std::string wechat_native_body(const CreateTarget& target, std::string_view appid,
                               std::string_view mchid) {
  std::string description = bounded_description(target.description);
  if (description.empty()) {
    description = bounded_description(target.payment_no);
  }
  json body = {{"appid", appid},
               {"mchid", mchid},
               {"description", description},
               {"out_trade_no", target.payment_no},
               {"notify_url", target.notify_url},
               {"amount", {{"total", target.amount_cents}, {"currency", kWechatPaymentCurrency}}}};
  if (target.expires_at_ms > 0) {
    body["time_expire"] = codec::china_time(target.expires_at_ms, true);
  }
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<CreateAnswer> wechat_create_answer_from(int status, std::string_view body) {
  if (status != 200) {
    const auto code = wechat_error_code(body);
    if (!code) {
      return rejected_answer("a " + std::to_string(status) + " answer without an error code");
    }
    return CreateAnswer{false, *code, PayKind::qr, {}, {}, {}};
  }
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("answer is not a JSON object");
  }
  const std::string* code_url = codec::json_string(doc, "code_url", kPayValueBytesMax);
  if (code_url == nullptr || !valid_pay_value(*code_url)) {
    return rejected_answer("code_url missing or not a pay value");
  }
  return CreateAnswer{true, {}, PayKind::qr, "codeUrl", *code_url, {}};
}

Result<CloseAnswer> wechat_close_answer_from(int status, std::string_view body) {
  if (status == 204) {
    return CloseAnswer{CloseState::closed, {}};
  }
  if (status >= 200 && status < 300) {
    return rejected_answer("unexpected HTTP status " + std::to_string(status));
  }
  const auto code = wechat_error_code(body);
  if (!code) {
    return rejected_answer("a " + std::to_string(status) + " answer without an error code");
  }
  if (*code == kWechatOrderPaid) {
    return CloseAnswer{CloseState::paid, *code};
  }
  if (*code == kWechatOrderClosed || *code == kWechatOrderNotExist) {
    return CloseAnswer{CloseState::closed, *code};
  }
  return CloseAnswer{CloseState::refused, *code};
}

WechatPayment::WechatPayment(WechatQueryConfig config, std::string appid)
    : config_(std::move(config)), appid_(std::move(appid)) {
  check_wechat_query_config(config_, "wechat payment");
  if (!codec::is_safe_code(appid_)) {
    throw std::invalid_argument("wechat payment: an appid that is not a code");
  }
}

net::Request WechatPayment::signed_post(std::string target, std::string body,
                                        std::int64_t now_ms) const {
  net::Request request;
  request.method = "POST";
  request.url = config_.gateway;
  request.url.target = std::move(target);
  request.body = std::move(body);
  request.headers = {
      {"Authorization",
       wechat_authorization(config_, request.method, request.url.target, request.body, now_ms)},
      {"Content-Type", "application/json"},
      {"Accept", "application/json"}};
  return request;
}

Result<net::Request> WechatPayment::create_request(const CreateTarget& target,
                                                   std::int64_t now_ms) const {
  if (target.payment_no.empty() || target.amount_cents <= 0 || target.notify_url.empty()) {
    return reject(errc::unusable, "no payment number, amount or notify URL to create");
  }
  return signed_post(config_.gateway.target + std::string(kWechatNativePath),
                     wechat_native_body(target, appid_, config_.mchid), now_ms);
}

Result<CreateAnswer> WechatPayment::create_answer(const CreateTarget& /*target*/,
                                                  const net::Response& response,
                                                  std::int64_t now_ms) const {
  if (auto verified = verify_wechat_answer(config_, response, now_ms); !verified.ok()) {
    return std::move(verified).failure();
  }
  return wechat_create_answer_from(response.status, response.body);
}

Result<net::Request> WechatPayment::close_request(const CloseTarget& target,
                                                  std::int64_t now_ms) const {
  if (target.payment_no.empty()) {
    return reject(errc::unusable, "no payment number to close");
  }
  std::string path = config_.gateway.target;
  path.append(kWechatQueryPath).append(wechat_percent_encode(target.payment_no));
  path.append(kWechatClosePathSuffix);
  const json body = {{"mchid", config_.mchid}};
  return signed_post(std::move(path), body.dump(), now_ms);
}

Result<CloseAnswer> WechatPayment::close_answer(const CloseTarget& /*target*/,
                                                const net::Response& response,
                                                std::int64_t now_ms) const {
  // Only a 204 comes without a body; an error always names its code.
  if (auto verified = verify_wechat_answer(config_, response, now_ms, response.status == 204);
      !verified.ok()) {
    return std::move(verified).failure();
  }
  return wechat_close_answer_from(response.status, response.body);
}

}  // namespace seatflow::channels
