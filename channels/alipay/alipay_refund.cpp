// alipay refund: the signed alipay.trade.refund form and the refund answer's mapping.
#include "channels/alipay/alipay_refund.hpp"

#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "channels/alipay/alipay_channel.hpp"
#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

std::string code_text(const json& doc, const char* name) {
  const std::string* code = codec::json_string(doc, name, kAlipayMaxValueBytes);
  return code == nullptr ? std::string("?") : codec::log_safe_code(*code);
}

}  // namespace

FormParams alipay_refund_params(std::string_view app_id, const RefundTarget& target,
                                std::int64_t now_ms) {
  const json biz_content = {{"out_trade_no", target.payment_no},
                            {"refund_amount", alipay_yuan(target.amount_cents)},
                            {"out_request_no", target.refund_no},
                            {"refund_reason", bounded_reason(target.reason)}};
  return alipay_openapi_params(app_id, kAlipayRefundMethod,
                               biz_content.dump(-1, ' ', false, json::error_handler_t::replace),
                               now_ms);
}

Result<RefundAnswer> alipay_refund_answer_from(std::string_view response_json,
                                               const RefundTarget& target) {
  const json doc = json::parse(response_json, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("alipay_trade_refund_response is not a JSON object");
  }
  const std::string* code = codec::json_string(doc, "code", kAlipayMaxValueBytes);
  if (code == nullptr || *code != kAlipayCodeSuccess) {
    return RefundAnswer{RefundState::refused,
                        "Alipay answered code " + code_text(doc, "code") + " sub_code " +
                            code_text(doc, "sub_code"),
                        {}};
  }
  const std::string* out_trade_no = codec::json_string(doc, "out_trade_no", codec::kMaxIdBytes);
  if (out_trade_no == nullptr || *out_trade_no != target.payment_no) {
    return rejected_answer("out_trade_no missing or another payment's");
  }
  const std::string* refund_fee = codec::json_string(doc, "refund_fee", kAlipayMaxValueBytes);
  const auto refunded = refund_fee == nullptr ? std::nullopt : parse_yuan_to_cents(*refund_fee);
  if (!refunded || *refunded != target.amount_cents) {
    return rejected_answer("refund_fee missing or not the payment's amount");
  }
  const std::string* trade_no = codec::json_string(doc, "trade_no", codec::kMaxIdBytes);
  return RefundAnswer{
      RefundState::succeeded, "fund_change " + code_text(doc, "fund_change"),
      trade_no != nullptr && codec::is_valid_id(*trade_no) ? *trade_no : std::string()};
}

AlipayRefund::AlipayRefund(AlipayQueryConfig config) : config_(std::move(config)) {
  check_alipay_query_config(config_, "alipay refund");
}

Result<net::Request> AlipayRefund::refund_request(const RefundTarget& target,
                                                  std::int64_t now_ms) const {
  return alipay_signed_request(config_, alipay_refund_params(config_.app_id, target, now_ms));
}

Result<RefundAnswer> AlipayRefund::refund_answer(const RefundTarget& target,
                                                 const net::Response& response,
                                                 std::int64_t /*now_ms*/) const {
  const auto raw = alipay_verified_member(response, kAlipayRefundResponseMember,
                                          config_.alipay_public_key.get());
  if (!raw.ok()) {
    return raw.failure();
  }
  return alipay_refund_answer_from(raw.value(), target);
}

}  // namespace seatflow::channels
