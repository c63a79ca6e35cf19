// stripe refund: the idempotent form POST, then the refund object (or error) mapped.
#include "channels/stripe/stripe_refund.hpp"

#include <optional>
#include <stdexcept>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

// payment_intent as Stripe writes it: an id, or the expanded object's id.
const std::string* refund_intent_id(const json& refund) {
  const json* intent = codec::json_member(refund, "payment_intent");
  if (intent != nullptr && intent->is_object()) {
    return codec::json_string(*intent, "id", codec::kMaxIdBytes);
  }
  return codec::json_string(refund, "payment_intent", codec::kMaxIdBytes);
}

Result<RefundAnswer> refund_object_answer(const json& doc, const RefundTarget& target) {
  const std::string* object = codec::json_string(doc, "object", kStripeFieldBytesMax);
  if (object == nullptr || *object != "refund") {
    return rejected_answer("answer is not a refund object");
  }
  const std::string* intent = refund_intent_id(doc);
  if (intent == nullptr || *intent != target.trade_no) {
    return rejected_answer("payment_intent missing or another PaymentIntent's");
  }
  const json* amount = codec::json_member(doc, "amount");
  const auto refunded = amount == nullptr ? std::nullopt : codec::json_int64(*amount);
  if (!refunded || *refunded != target.amount_cents) {
    return rejected_answer("amount missing or not the payment's amount");
  }
  const json* metadata = codec::json_object(doc, "metadata");
  const json* refund_no = metadata == nullptr ? nullptr : codec::json_member(*metadata, "refundNo");
  if (refund_no != nullptr &&
      (!refund_no->is_string() || refund_no->get_ref<const std::string&>() != target.refund_no)) {
    return rejected_answer("metadata.refundNo is another refund's");
  }
  const std::string* id = codec::json_string(doc, "id", codec::kMaxIdBytes);
  const std::string gateway_no = id != nullptr && codec::is_valid_id(*id) ? *id : std::string();
  const std::string* status = codec::json_string(doc, "status", kStripeFieldBytesMax);
  if (status != nullptr &&
      (*status == "succeeded" || *status == "pending" || *status == "requires_action")) {
    return RefundAnswer{RefundState::succeeded, "status " + *status, gateway_no};
  }
  if (status != nullptr && (*status == "failed" || *status == "canceled")) {
    const std::string* reason =
        codec::json_string(doc, "failure_reason", codec::kLogSafeCodeBytesMax);
    return RefundAnswer{
        RefundState::refused,
        "status " + *status + (reason == nullptr ? "" : " " + codec::log_safe_code(*reason)),
        gateway_no};
  }
  return rejected_answer("status missing or not one Stripe documents");
}

}  // namespace

Result<std::string> stripe_refund_body(const RefundTarget& target) {
  if (target.trade_no.empty()) {
    return reject(errc::unusable, "no PaymentIntent is known for the payment");
  }
  std::string body;
  stripe_form_append(body, "payment_intent", target.trade_no);
  stripe_form_append(body, "amount", std::to_string(target.amount_cents));
  stripe_form_append(body, "metadata[refundNo]", target.refund_no);
  stripe_form_append(body, "metadata[paymentNo]", target.payment_no);
  stripe_form_append(body, "metadata[reason]", bounded_reason(target.reason));
  return body;
}

Result<RefundAnswer> stripe_refund_answer_from(int status, std::string_view body,
                                               const RefundTarget& target) {
  const bool refusal =
      status == 400 || status == 401 || status == 402 || status == 403 || status == 404;
  if (status != 200 && !refusal) {
    return rejected_answer("Stripe answered " + std::to_string(status) + " code " +
                           stripe_error_code(body));
  }
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("answer is not a JSON object");
  }
  if (refusal) {
    if (codec::json_object(doc, "error") == nullptr) {
      return rejected_answer("a " + std::to_string(status) + " answer without an error object");
    }
    return RefundAnswer{
        RefundState::refused,
        "Stripe answered " + std::to_string(status) + " code " + stripe_error_code(body),
        {}};
  }
  return refund_object_answer(doc, target);
}

StripeRefund::StripeRefund(StripeApiConfig config) : config_(std::move(config)) {
  check_stripe_api_config(config_, "stripe refund");
}

Result<net::Request> StripeRefund::refund_request(const RefundTarget& target,
                                                  std::int64_t /*now_ms*/) const {
  net::Request request;
  request.method = "POST";
  request.url = config_.api;
  request.url.target = config_.api.target + std::string(kStripeRefundsPath);
  auto body = stripe_refund_body(target);
  if (!body.ok()) {
    return std::move(body).failure();
  }
  request.body = std::move(body).value();
  request.headers = stripe_headers(config_);
  request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  request.headers.emplace_back("Idempotency-Key", target.refund_no);
  return request;
}

Result<RefundAnswer> StripeRefund::refund_answer(const RefundTarget& target,
                                                 const net::Response& response,
                                                 std::int64_t /*now_ms*/) const {
  if (response.body.empty() || response.body.size() > kGatewayBodyBytesMax) {
    return rejected_answer("answer empty or too large");
  }
  return stripe_refund_answer_from(response.status, response.body, target);
}

}  // namespace seatflow::channels
