// stripe payment: the idempotent PaymentIntent create and its cancel, their answers mapped.
#include "channels/stripe/stripe_payment.hpp"

#include <optional>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

// The statuses Stripe answers with an error object the caller can act on: a refusal.
bool stripe_refusal_status(int status) {
  return status == 400 || status == 401 || status == 402 || status == 403 || status == 404;
}

Result<json> stripe_answer_object(int status, std::string_view body) {
  if (status != 200 && !stripe_refusal_status(status)) {
    return rejected_answer("Stripe answered " + std::to_string(status) + " code " +
                           stripe_error_code(body));
  }
  json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("answer is not a JSON object");
  }
  if (status != 200 && codec::json_object(doc, "error") == nullptr) {
    return rejected_answer("a " + std::to_string(status) + " answer without an error object");
  }
  return doc;
}

// The intent's metadata.paymentNo is the payment's.
bool stripe_names_payment(const json& intent, std::string_view payment_no) {
  const json* metadata = codec::json_object(intent, "metadata");
  const std::string* named = metadata == nullptr
                                 ? nullptr
                                 : codec::json_string(*metadata, "paymentNo", codec::kMaxIdBytes);
  return named != nullptr && *named == payment_no;
}

Result<CreateAnswer> stripe_created_intent(const json& intent, std::string_view currency,
                                           const CreateTarget& target) {
  const std::string* object = codec::json_string(intent, "object", kStripeFieldBytesMax);
  const std::string* id = codec::json_string(intent, "id", codec::kLogSafeCodeBytesMax);
  if (object == nullptr || *object != "payment_intent" || id == nullptr ||
      !codec::is_safe_code(*id)) {
    return rejected_answer("answer is not a payment_intent with an id");
  }
  if (!stripe_names_payment(intent, target.payment_no)) {
    return rejected_answer("metadata.paymentNo missing or another payment's");
  }
  const json* amount = codec::json_member(intent, "amount");
  const auto cents = amount == nullptr ? std::nullopt : codec::json_int64(*amount);
  if (!cents || *cents != target.amount_cents) {
    return rejected_answer("amount missing or not the payment's amount");
  }
  const std::string* intent_currency = codec::json_string(intent, "currency", kStripeFieldBytesMax);
  if (intent_currency == nullptr || !codec::iequals_ascii(*intent_currency, currency)) {
    return rejected_answer("currency missing or not the configured currency");
  }
  const std::string* secret = codec::json_string(intent, "client_secret", kPayValueBytesMax);
  if (secret == nullptr || !valid_pay_value(*secret)) {
    return rejected_answer("client_secret missing or not a pay value");
  }
  return CreateAnswer{true, {}, PayKind::client_secret, "clientSecret", *secret, *id};
}

// A 400 payment_intent_unexpected_state about this intent: what its status says.
Result<CloseAnswer> stripe_unexpected_state(const json& error, const CloseTarget& target) {
  const json* intent = codec::json_object(error, "payment_intent");
  const std::string* id =
      intent == nullptr ? nullptr : codec::json_string(*intent, "id", codec::kMaxIdBytes);
  if (id == nullptr || *id != target.gateway_ref) {
    return rejected_answer("error.payment_intent missing or another PaymentIntent");
  }
  const std::string* status = codec::json_string(*intent, "status", kStripeFieldBytesMax);
  const std::string reason = "status " + (status == nullptr ? "?" : codec::log_safe_code(*status));
  if (status != nullptr && (*status == "succeeded" || *status == "processing")) {
    return CloseAnswer{CloseState::paid, reason};
  }
  if (status != nullptr && *status == "canceled") {
    return CloseAnswer{CloseState::closed, reason};
  }
  return CloseAnswer{CloseState::refused, std::string(kStripeUnexpectedState) + " " + reason};
}

}  // namespace

std::string stripe_intent_body(const CreateTarget& target, std::string_view currency) {
  std::string body;
  stripe_form_append(body, "amount", std::to_string(target.amount_cents));
  stripe_form_append(body, "currency", currency);
  stripe_form_append(body, "metadata[paymentNo]", target.payment_no);
  stripe_form_append(body, "metadata[orderNo]", target.order_no);
  stripe_form_append(body, "automatic_payment_methods[enabled]", "true");
  return body;
}

std::string stripe_create_idempotency_key(std::string_view payment_no) {
  return std::string(kStripeCreateKeyPrefix) + std::string(payment_no);
}

Result<CreateAnswer> stripe_create_answer_from(int status, std::string_view body,
                                               std::string_view currency,
                                               const CreateTarget& target) {
  auto parsed = stripe_answer_object(status, body);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  if (status != 200) {
    return CreateAnswer{false, stripe_error_code(body), PayKind::client_secret, {}, {}, {}};
  }
  return stripe_created_intent(parsed.value(), currency, target);
}

Result<CloseAnswer> stripe_cancel_answer_from(int status, std::string_view body,
                                              const CloseTarget& target) {
  auto parsed = stripe_answer_object(status, body);
  if (!parsed.ok()) {
    return std::move(parsed).failure();
  }
  const json& doc = parsed.value();
  if (status != 200) {
    const json& error = *codec::json_object(doc, "error");
    const std::string* code = codec::json_string(error, "code", kStripeFieldBytesMax);
    if (status == 400 && code != nullptr && *code == kStripeUnexpectedState) {
      return stripe_unexpected_state(error, target);
    }
    return CloseAnswer{CloseState::refused, stripe_error_code(body)};
  }
  const std::string* id = codec::json_string(doc, "id", codec::kMaxIdBytes);
  if (id == nullptr || *id != target.gateway_ref) {
    return rejected_answer("id missing or another PaymentIntent");
  }
  if (!stripe_names_payment(doc, target.payment_no)) {
    return rejected_answer("metadata.paymentNo missing or another payment's");
  }
  const std::string* intent_status = codec::json_string(doc, "status", kStripeFieldBytesMax);
  if (intent_status == nullptr || *intent_status != "canceled") {
    return rejected_answer("a cancel answered 200 with a status other than canceled");
  }
  return CloseAnswer{CloseState::closed, {}};
}

StripePayment::StripePayment(StripeApiConfig config) : config_(std::move(config)) {
  check_stripe_api_config(config_, "stripe payment");
}

Result<net::Request> StripePayment::create_request(const CreateTarget& target,
                                                   std::int64_t /*now_ms*/) const {
  if (target.payment_no.empty() || target.amount_cents <= 0) {
    return reject(errc::unusable, "no payment number or amount to create");
  }
  net::Request request;
  request.method = "POST";
  request.url = config_.api;
  request.url.target = config_.api.target + std::string(kStripeIntentsPath);
  request.body = stripe_intent_body(target, config_.currency);
  request.headers = stripe_headers(config_);
  request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  request.headers.emplace_back("Idempotency-Key", stripe_create_idempotency_key(target.payment_no));
  return request;
}

Result<CreateAnswer> StripePayment::create_answer(const CreateTarget& target,
                                                  const net::Response& response,
                                                  std::int64_t /*now_ms*/) const {
  if (response.body.empty() || response.body.size() > kGatewayBodyBytesMax) {
    return rejected_answer("answer empty or too large");
  }
  return stripe_create_answer_from(response.status, response.body, config_.currency, target);
}

bool StripePayment::close_needs_call(const CloseTarget& target) const {
  return !target.gateway_ref.empty();
}

Result<net::Request> StripePayment::close_request(const CloseTarget& target,
                                                  std::int64_t /*now_ms*/) const {
  // The id goes into the path: only what Stripe's ids are made of.
  if (!codec::is_safe_code(target.gateway_ref)) {
    return reject(errc::unusable, "no PaymentIntent id to cancel");
  }
  net::Request request;
  request.method = "POST";
  request.url = config_.api;
  request.url.target = config_.api.target + std::string(kStripeIntentsPath) + "/" +
                       target.gateway_ref + std::string(kStripeCancelPathSuffix);
  request.headers = stripe_headers(config_);
  request.headers.emplace_back("Content-Type", "application/x-www-form-urlencoded");
  return request;
}

Result<CloseAnswer> StripePayment::close_answer(const CloseTarget& target,
                                                const net::Response& response,
                                                std::int64_t /*now_ms*/) const {
  if (response.body.empty() || response.body.size() > kGatewayBodyBytesMax) {
    return rejected_answer("answer empty or too large");
  }
  return stripe_cancel_answer_from(response.status, response.body, target);
}

}  // namespace seatflow::channels
