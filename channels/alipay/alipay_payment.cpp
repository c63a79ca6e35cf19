// alipay payment: the signed precreate and close forms and their answers' mappings.
#include "channels/alipay/alipay_payment.hpp"

#include <utility>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_channel.hpp"
#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

// The answer's JSON object; a rejection when it is not one.
Result<json> alipay_answer_object(std::string_view response_json, std::string_view member) {
  json doc = json::parse(response_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer(std::string(member) + " is not a JSON object");
  }
  return doc;
}

// The log-safe sub_code of an answer, else its code, else "?".
std::string alipay_refusal_reason(const json& doc) {
  for (const char* name : {"sub_code", "code"}) {
    const std::string* code = codec::json_string(doc, name, kAlipayMaxValueBytes);
    if (code != nullptr && !code->empty()) {
      return codec::log_safe_code(*code);
    }
  }
  return "?";
}

// An out_trade_no that is there must be the payment's.
bool alipay_names_other_payment(const json& doc, std::string_view payment_no) {
  if (!doc.contains("out_trade_no")) {
    return false;
  }
  const std::string* out_trade_no = codec::json_string(doc, "out_trade_no", codec::kMaxIdBytes);
  return out_trade_no == nullptr || *out_trade_no != payment_no;
}

bool alipay_code_is(const json& doc, const char* name, std::string_view expected) {
  const std::string* code = codec::json_string(doc, name, kAlipayMaxValueBytes);
  return code != nullptr && *code == expected;
}

}  // namespace

FormParams alipay_precreate_params(std::string_view app_id, const CreateTarget& target,
                                   std::int64_t now_ms) {
  std::string subject = bounded_description(target.description);
  if (subject.empty()) {
    subject = bounded_description(target.payment_no);
  }
  json biz_content = {{"out_trade_no", target.payment_no},
                      {"total_amount", alipay_yuan(target.amount_cents)},
                      {"subject", subject}};
  if (target.expires_at_ms > 0) {
    biz_content["time_expire"] = codec::china_time(target.expires_at_ms, false);
  }
  FormParams params = alipay_openapi_params(
      app_id, kAlipayPrecreateMethod,
      biz_content.dump(-1, ' ', false, json::error_handler_t::replace), now_ms);
  // A common parameter: beside the others, before biz_content.
  params.insert(params.end() - 1, {"notify_url", target.notify_url});
  return params;
}

FormParams alipay_close_params(std::string_view app_id, std::string_view payment_no,
                               std::int64_t now_ms) {
  const json biz_content = {{"out_trade_no", std::string(payment_no)}};
  return alipay_openapi_params(app_id, kAlipayCloseMethod,
                               biz_content.dump(-1, ' ', false, json::error_handler_t::replace),
                               now_ms);
}

Result<CreateAnswer> alipay_precreate_answer_from(std::string_view response_json,
                                                  const CreateTarget& target) {
  auto parsed = alipay_answer_object(response_json, kAlipayPrecreateResponseMember);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  const json& doc = parsed.value();
  if (!alipay_code_is(doc, "code", kAlipayCodeSuccess)) {
    return CreateAnswer{false, alipay_refusal_reason(doc), PayKind::qr, {}, {}, {}};
  }
  const std::string* out_trade_no = codec::json_string(doc, "out_trade_no", codec::kMaxIdBytes);
  if (out_trade_no == nullptr || *out_trade_no != target.payment_no) {
    return rejected_answer("out_trade_no missing or another payment's");
  }
  const std::string* qr_code = codec::json_string(doc, "qr_code", kPayValueBytesMax);
  if (qr_code == nullptr || !valid_pay_value(*qr_code)) {
    return rejected_answer("qr_code missing or not a pay value");
  }
  return CreateAnswer{true, {}, PayKind::qr, "qrCode", *qr_code, {}};
}

Result<CloseAnswer> alipay_close_answer_from(std::string_view response_json,
                                             const CloseTarget& target) {
  auto parsed = alipay_answer_object(response_json, kAlipayCloseResponseMember);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  const json& doc = parsed.value();
  if (alipay_names_other_payment(doc, target.payment_no)) {
    return rejected_answer("out_trade_no is another payment's");
  }
  if (alipay_code_is(doc, "code", kAlipayCodeSuccess)) {
    return CloseAnswer{CloseState::closed, {}};
  }
  const std::string reason = alipay_refusal_reason(doc);
  if (alipay_code_is(doc, "sub_code", kAlipayTradeNotExist)) {
    return CloseAnswer{CloseState::closed, reason};
  }
  if (alipay_code_is(doc, "sub_code", kAlipayTradeHasSuccess)) {
    return CloseAnswer{CloseState::paid, reason};
  }
  return CloseAnswer{CloseState::refused, reason};
}

AlipayPayment::AlipayPayment(AlipayQueryConfig config) : config_(std::move(config)) {
  check_alipay_query_config(config_, "alipay payment");
}

Result<net::Request> AlipayPayment::create_request(const CreateTarget& target,
                                                   std::int64_t now_ms) const {
  if (target.payment_no.empty() || target.amount_cents <= 0 || target.notify_url.empty()) {
    return reject(errc::unusable, "no payment number, amount or notify URL to create");
  }
  return alipay_signed_request(config_, alipay_precreate_params(config_.app_id, target, now_ms));
}

Result<CreateAnswer> AlipayPayment::create_answer(const CreateTarget& target,
                                                  const net::Response& response,
                                                  std::int64_t /*now_ms*/) const {
  const auto raw = alipay_verified_member(response, kAlipayPrecreateResponseMember,
                                          config_.alipay_public_key.get());
  if (!raw.ok()) {
    return raw.failure();
  }
  return alipay_precreate_answer_from(raw.value(), target);
}

Result<net::Request> AlipayPayment::close_request(const CloseTarget& target,
                                                  std::int64_t now_ms) const {
  if (target.payment_no.empty()) {
    return reject(errc::unusable, "no payment number to close");
  }
  return alipay_signed_request(config_,
                               alipay_close_params(config_.app_id, target.payment_no, now_ms));
}

Result<CloseAnswer> AlipayPayment::close_answer(const CloseTarget& target,
                                                const net::Response& response,
                                                std::int64_t /*now_ms*/) const {
  const auto raw =
      alipay_verified_member(response, kAlipayCloseResponseMember, config_.alipay_public_key.get());
  if (!raw.ok()) {
    return raw.failure();
  }
  return alipay_close_answer_from(raw.value(), target);
}

}  // namespace seatflow::channels
