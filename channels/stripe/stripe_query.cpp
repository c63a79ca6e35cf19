// stripe query: the search request, then the search result's one PaymentIntent mapped.
#include "channels/stripe/stripe_query.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "codec/json_fields.hpp"
#include "codec/text.hpp"

namespace seatflow::channels {
namespace {

using nlohmann::json;

// A PaymentIntent's status; Stripe documents these seven.
Result<QueryState> intent_state(const std::string& status, const json& intent) {
  if (status == "succeeded") {
    return QueryState::paid;
  }
  if (status == "canceled") {
    return QueryState::failed;
  }
  if (status == "requires_payment_method") {
    // A fresh intent waits for its first payment method; after a declined attempt it waits for
    // another one, and Stripe keeps the failure in last_payment_error.
    const json* error = codec::json_member(intent, "last_payment_error");
    return error != nullptr && error->is_object() ? QueryState::failed : QueryState::pending;
  }
  if (status == "processing" || status == "requires_confirmation" || status == "requires_action" ||
      status == "requires_capture") {
    return QueryState::pending;
  }
  return rejected_answer("status is not one Stripe documents");
}

std::optional<std::int64_t> intent_int(const json& object, const char* name) {
  const json* value = codec::json_member(object, name);
  return value == nullptr ? std::nullopt : codec::json_int64(*value);
}

Result<QueryAnswer> intent_answer(const json& intent, std::string_view currency,
                                  const QueryTarget& target) {
  const json* metadata = codec::json_object(intent, "metadata");
  const std::string* payment_no =
      metadata == nullptr ? nullptr
                          : codec::json_string(*metadata, "paymentNo", codec::kMaxIdBytes);
  if (payment_no == nullptr || *payment_no != target.payment_no) {
    return rejected_answer("metadata.paymentNo missing or another payment's");
  }
  const std::string* id = codec::json_string(intent, "id", codec::kMaxIdBytes);
  if (id == nullptr || !codec::is_valid_id(*id)) {
    return rejected_answer("id missing or not an id");
  }
  const auto amount = intent_int(intent, "amount");
  if (!amount || *amount != target.amount_cents) {
    return rejected_answer("amount missing or not the payment's amount");
  }
  const std::string* intent_currency = codec::json_string(intent, "currency", kStripeFieldBytesMax);
  if (intent_currency == nullptr || !codec::iequals_ascii(*intent_currency, currency)) {
    return rejected_answer("currency missing or not the configured currency");
  }
  const std::string* status = codec::json_string(intent, "status", kStripeFieldBytesMax);
  if (status == nullptr) {
    return rejected_answer("status missing");
  }
  auto state = intent_state(*status, intent);
  if (!state.ok()) {
    return std::move(state).failure();
  }
  if (state.value() != QueryState::paid) {
    return QueryAnswer{state.value(), *id, amount};
  }
  const auto received = intent_int(intent, "amount_received");
  if (!received || *received != target.amount_cents) {
    return rejected_answer("amount_received missing or not the payment's amount");
  }
  return QueryAnswer{QueryState::paid, *id, received};
}

}  // namespace

bool valid_stripe_api_key(std::string_view key) {
  if (key.empty() || key.size() > kStripeApiKeyBytesMax) {
    return false;
  }
  for (const char c : key) {
    if (c <= ' ' || c >= 0x7F) {
      return false;
    }
  }
  return true;
}

net::HeaderList stripe_headers(const StripeApiConfig& config) {
  return {{"Authorization", "Bearer " + config.api_key},
          {"Stripe-Version", std::string(kStripeApiVersion)},
          {"Accept", "application/json"}};
}

void stripe_form_append(std::string& body, std::string_view name, std::string_view value) {
  if (!body.empty()) {
    body.push_back('&');
  }
  body.append(codec::form_encode(name)).append("=").append(codec::form_encode(value));
}

std::string stripe_search_query(std::string_view payment_no) {
  std::string query = "metadata['paymentNo']:'";
  for (const char c : payment_no) {
    if (c == '\'' || c == '\\') {
      query.push_back('\\');
    }
    query.push_back(c);
  }
  query.push_back('\'');
  return query;
}

std::string stripe_error_code(std::string_view body) {
  const json doc = json::parse(body, nullptr, false);
  const json* error =
      doc.is_discarded() || !doc.is_object() ? nullptr : codec::json_object(doc, "error");
  if (error == nullptr) {
    return "?";
  }
  for (const char* name : {"code", "type"}) {
    if (const std::string* code = codec::json_string(*error, name, codec::kLogSafeCodeBytesMax)) {
      return codec::log_safe_code(*code);
    }
  }
  return "?";
}

Result<QueryAnswer> stripe_query_answer_from(int status, std::string_view body,
                                             std::string_view currency, const QueryTarget& target) {
  if (status != 200) {
    return rejected_answer("Stripe answered " + std::to_string(status) + " code " +
                           stripe_error_code(body));
  }
  const json doc = json::parse(body, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    return rejected_answer("answer is not a JSON object");
  }
  const std::string* object = codec::json_string(doc, "object", kStripeFieldBytesMax);
  const json* data = codec::json_member(doc, "data");
  if (object == nullptr || *object != "search_result" || data == nullptr || !data->is_array()) {
    return rejected_answer("answer is not a search_result with a data array");
  }
  if (data->empty()) {
    return QueryAnswer{QueryState::not_found, {}, {}};
  }
  const json* has_more = codec::json_member(doc, "has_more");
  if (data->size() > 1 ||
      (has_more != nullptr && has_more->is_boolean() && has_more->get<bool>())) {
    return rejected_answer("more than one PaymentIntent has this paymentNo");
  }
  if (!data->front().is_object()) {
    return rejected_answer("data[0] is not an object");
  }
  return intent_answer(data->front(), currency, target);
}

void check_stripe_api_config(StripeApiConfig& config, const char* who) {
  if (!valid_stripe_api_key(config.api_key) || config.api.host.empty() || config.currency.empty() ||
      config.currency.size() > kStripeFieldBytesMax) {
    throw std::invalid_argument(std::string(who) +
                                ": bad API key, no API host, or an empty or overlong currency");
  }
  config.api.target = net::base_path(std::move(config.api.target));
}

StripeQuery::StripeQuery(StripeApiConfig config) : config_(std::move(config)) {
  check_stripe_api_config(config_, "stripe query");
}

net::Request StripeQuery::request(const QueryTarget& target, std::int64_t /*now_ms*/) const {
  net::Request request;
  request.method = "GET";
  request.url = config_.api;
  request.url.target = config_.api.target + std::string(kStripeSearchPath) +
                       "?query=" + codec::form_encode(stripe_search_query(target.payment_no));
  request.headers = stripe_headers(config_);
  return request;
}

Result<QueryAnswer> StripeQuery::answer(const QueryTarget& target, const net::Response& response,
                                        std::int64_t /*now_ms*/) const {
  if (response.body.empty() || response.body.size() > kGatewayBodyBytesMax) {
    return rejected_answer("answer empty or too large");
  }
  return stripe_query_answer_from(response.status, response.body, config_.currency, target);
}

}  // namespace seatflow::channels
