// wechat refund: the signed POST, the answer's header signature, then the refund's mapping.
#include "channels/wechat/wechat_refund.hpp"

#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

std::string code_of(const json& doc, const char* name) {
  const std::string* code = codec::json_string(doc, name, kWechatMaxFieldBytes);
  return code == nullptr ? std::string("?") : codec::log_safe_code(*code);
}

}  // namespace

std::string wechat_refund_body(const RefundTarget& target) {
  const json body = {{"out_trade_no", target.payment_no},
                     {"out_refund_no", target.refund_no},
                     {"reason", bounded_reason(target.reason)},
                     {"amount",
                      {{"refund", target.amount_cents},
                       {"total", target.amount_cents},
                       {"currency", kWechatRefundCurrency}}}};
  return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

Result<RefundAnswer> wechat_refund_answer_from(int status, std::string_view body,
                                               const RefundTarget& target) {
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("answer is not a JSON object");
  }
  if (status != 200) {
    return RefundAnswer{
        RefundState::refused,
        "WeChat Pay answered " + std::to_string(status) + " code " + code_of(doc, "code"),
        {}};
  }
  const std::string* out_refund_no = codec::json_string(doc, "out_refund_no", kRefundNoBytesMax);
  const std::string* out_trade_no = codec::json_string(doc, "out_trade_no", codec::kMaxIdBytes);
  if (out_refund_no == nullptr || *out_refund_no != target.refund_no) {
    return rejected_answer("out_refund_no missing or another refund's");
  }
  if (out_trade_no == nullptr || *out_trade_no != target.payment_no) {
    return rejected_answer("out_trade_no missing or another payment's");
  }
  const json* amount = codec::json_object(doc, "amount");
  const json* refund = amount == nullptr ? nullptr : codec::json_member(*amount, "refund");
  const auto refunded = refund == nullptr ? std::nullopt : codec::json_int64(*refund);
  if (!refunded || *refunded != target.amount_cents) {
    return rejected_answer("amount.refund missing or not the payment's amount");
  }
  const std::string* refund_status = codec::json_string(doc, "status", kWechatMaxFieldBytes);
  const std::string* refund_id = codec::json_string(doc, "refund_id", codec::kMaxIdBytes);
  const std::string gateway_no =
      refund_id != nullptr && codec::is_valid_id(*refund_id) ? *refund_id : std::string();
  if (refund_status != nullptr && (*refund_status == "SUCCESS" || *refund_status == "PROCESSING")) {
    return RefundAnswer{RefundState::succeeded, "status " + *refund_status, gateway_no};
  }
  if (refund_status != nullptr && (*refund_status == "CLOSED" || *refund_status == "ABNORMAL")) {
    return RefundAnswer{RefundState::refused, "status " + *refund_status, gateway_no};
  }
  return rejected_answer("status missing or not one WeChat Pay documents");
}

WechatRefund::WechatRefund(WechatQueryConfig config) : config_(std::move(config)) {
  check_wechat_query_config(config_, "wechat refund");
}

Result<net::Request> WechatRefund::refund_request(const RefundTarget& target,
                                                  std::int64_t now_ms) const {
  net::Request request;
  request.method = "POST";
  request.url = config_.gateway;
  request.url.target = config_.gateway.target + std::string(kWechatRefundPath);
  request.body = wechat_refund_body(target);
  request.headers = {
      {"Authorization",
       wechat_authorization(config_, request.method, request.url.target, request.body, now_ms)},
      {"Content-Type", "application/json"},
      {"Accept", "application/json"}};
  return request;
}

Result<RefundAnswer> WechatRefund::refund_answer(const RefundTarget& target,
                                                 const net::Response& response,
                                                 std::int64_t now_ms) const {
  if (auto verified = verify_wechat_answer(config_, response, now_ms); !verified.ok()) {
    return std::move(verified).failure();
  }
  return wechat_refund_answer_from(response.status, response.body, target);
}

}  // namespace seatflow::channels
