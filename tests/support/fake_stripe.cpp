// The fake Stripe API (see the header): bearer key, search, idempotent refunds and creates, the
// cancel, listed pages.
#include "support/fake_stripe.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <utility>

#include "codec/text.hpp"
#include "domain/clock.hpp"

namespace seatflow::testing {
namespace {

using nlohmann::json;

constexpr std::string_view kSearchPrefix = "metadata['paymentNo']:'";

// "key=value&…" form-decoded (the last of a repeated key wins).
std::map<std::string, std::string> parse_form(std::string_view text) {
  std::map<std::string, std::string> fields;
  while (!text.empty()) {
    const auto amp = text.find('&');
    const auto pair = text.substr(0, amp);
    text = amp == std::string_view::npos ? std::string_view{} : text.substr(amp + 1);
    const auto eq = pair.find('=');
    const auto key = codec::form_decode(pair.substr(0, eq));
    const auto value = codec::form_decode(eq == std::string_view::npos ? "" : pair.substr(eq + 1));
    if (key && value) {
      fields[*key] = *value;
    }
  }
  return fields;
}

ServerResponse json_answer(int status, const json& body) {
  return ServerResponse{status, {{"Content-Type", "application/json"}}, body.dump(), 0};
}

ServerResponse error_answer(int status, const std::string& type, const std::string& code,
                            const std::string& message) {
  json error = {{"type", type}, {"message", message}};
  if (!code.empty()) {
    error["code"] = code;
  }
  return json_answer(status, {{"error", error}});
}

// The paymentNo of a search query, its backslash escapes undone; "" when it is not one.
std::string searched_payment(const std::string& query) {
  if (!query.starts_with(kSearchPrefix) || query.size() <= kSearchPrefix.size() ||
      query.back() != '\'') {
    return {};
  }
  std::string out;
  const auto inner =
      std::string_view(query).substr(kSearchPrefix.size(), query.size() - kSearchPrefix.size() - 1);
  for (std::size_t i = 0; i < inner.size(); ++i) {
    if (inner[i] == '\\' && i + 1 < inner.size()) {
      ++i;
    }
    out.push_back(inner[i]);
  }
  return out;
}

json intent_json(const std::string& payment_no, const FakeIntent& intent) {
  json body = {{"id", intent.id},
               {"object", "payment_intent"},
               {"amount", intent.amount},
               {"amount_capturable", 0},
               {"amount_received", intent.status == "succeeded" ? intent.amount : 0},
               {"capture_method", "automatic"},
               {"created", domain::unix_time_ms() / 1000},
               {"currency", intent.currency},
               {"last_payment_error", nullptr},
               {"livemode", false},
               {"metadata", {{"paymentNo", payment_no}}},
               {"status", intent.status}};
  if (!intent.order_no.empty()) {
    body["metadata"]["orderNo"] = intent.order_no;
  }
  if (intent.failed_attempt) {
    body["last_payment_error"] = {
        {"type", "card_error"}, {"code", "card_declined"}, {"decline_code", "insufficient_funds"}};
  }
  return body;
}

// The answer as the mode distorts it on its way out (Stripe's own record stays the truth).
ServerResponse distorted(ServerResponse response, FakeAnswer mode,
                         const std::function<void(json&)>& other_payment,
                         const std::function<void(json&)>& other_amount) {
  if (mode == FakeAnswer::stall) {
    response.delay_ms = kFakeStallMs;
  }
  if (response.status != 200) {
    return response;
  }
  if (mode == FakeAnswer::other_payment || mode == FakeAnswer::other_amount) {
    json body = json::parse(response.body);
    (mode == FakeAnswer::other_payment ? other_payment : other_amount)(body);
    response.body = body.dump();
  }
  if (mode == FakeAnswer::malformed_json) {
    response.body.resize(response.body.size() / 2);
  }
  return response;
}

}  // namespace

FakeStripe::FakeStripe(std::string api_key)
    : api_key_(std::move(api_key)),
      server_(std::make_unique<TestHttpServer>(
          [this](const ServerRequest& request) { return handle(request); }, true)) {}

void FakeStripe::add_intent(const std::string& payment_no, FakeIntent intent) {
  const std::lock_guard lock(stripe_mutex_);
  intents_.emplace(payment_no, std::move(intent));
}

std::vector<std::string> FakeStripe::bill_requests() const {
  const std::lock_guard lock(stripe_mutex_);
  return bill_requests_;
}

std::map<std::string, std::string> FakeStripe::last_refund_form() const {
  const std::lock_guard lock(stripe_mutex_);
  return last_refund_form_;
}

ServerResponse FakeStripe::handle(const ServerRequest& request) {
  if (request.header("authorization") != "Bearer " + api_key_) {
    count_refused();
    return error_answer(401, "invalid_request_error", "", "Invalid API Key provided");
  }
  const auto question = request.target.find('?');
  const auto path = request.target.substr(0, question);
  const auto params = parse_form(question == std::string::npos
                                     ? std::string_view{}
                                     : std::string_view(request.target).substr(question + 1));
  if (request.method == "GET" && path == "/v1/payment_intents/search") {
    return search(params);
  }
  if (request.method == "POST" && path == "/v1/refunds") {
    return refund_request(request);
  }
  const std::string intents = "/v1/payment_intents";
  if (request.method == "POST" && path == intents) {
    return create_intent(request);
  }
  if (request.method == "POST" && path.starts_with(intents + "/") && path.ends_with("/cancel")) {
    return cancel_intent(path.substr(intents.size() + 1, path.size() - intents.size() - 8));
  }
  if (request.method == "GET" && path == "/v1/balance_transactions") {
    {
      const std::lock_guard lock(stripe_mutex_);
      bill_requests_.push_back(request.target);
    }
    return list(params);
  }
  return error_answer(404, "invalid_request_error", "resource_missing", "Unrecognized request URL");
}

ServerResponse FakeStripe::search(const std::map<std::string, std::string>& params) {
  const auto query = params.find("query");
  const auto payment_no = query == params.end() ? std::string() : searched_payment(query->second);
  if (payment_no.empty()) {
    return error_answer(400, "invalid_request_error", "parameter_invalid", "bad search query");
  }
  json data = json::array();
  {
    const std::lock_guard lock(stripe_mutex_);
    const auto [first, last] = intents_.equal_range(payment_no);
    for (auto it = first; it != last; ++it) {
      data.push_back(intent_json(payment_no, it->second));
    }
  }
  const json body = {{"object", "search_result"},
                     {"url", "/v1/payment_intents/search"},
                     {"has_more", false},
                     {"next_page", nullptr},
                     {"data", data}};
  return distorted(
      json_answer(200, body), answer(),
      [](json& b) {
        for (auto& intent : b["data"]) {
          intent["metadata"]["paymentNo"] =
              intent["metadata"]["paymentNo"].get<std::string>() + "-OTHER";
        }
      },
      [](json& b) {
        for (auto& intent : b["data"]) {
          intent["amount"] = intent["amount"].get<std::int64_t>() + 1;
          intent["amount_received"] = intent["amount_received"].get<std::int64_t>() + 1;
        }
      });
}

ServerResponse FakeStripe::refund_request(const ServerRequest& request) {
  const auto key = request.header("idempotency-key");
  if (key.empty()) {
    return error_answer(400, "invalid_request_error", "parameter_missing",
                        "this fake wants an Idempotency-Key");
  }
  note_refund_request(key);
  const auto form = parse_form(request.body);
  ServerResponse response;
  {
    const std::lock_guard lock(stripe_mutex_);
    last_refund_form_ = form;
    const auto seen = keys_.find(key);
    if (seen != keys_.end() && seen->second.first != form) {
      return error_answer(400, "idempotency_error", "",
                          "Keys for idempotent requests can only be used with the same parameters");
    }
    if (seen != keys_.end()) {
      response = seen->second.second;
      response.headers.emplace_back("Idempotent-Replayed", "true");
    } else {
      response = new_refund(key, form);
      keys_[key] = {form, response};
    }
  }
  return distorted(
      std::move(response), answer(),
      [](json& b) { b["payment_intent"] = b["payment_intent"].get<std::string>() + "_other"; },
      [](json& b) { b["amount"] = b["amount"].get<std::int64_t>() + 1; });
}

ServerResponse FakeStripe::new_refund(const std::string& key,
                                      const std::map<std::string, std::string>& form) {
  const auto field = [&form](const std::string& name) {
    const auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  };
  const auto intent_id = field("payment_intent");
  const auto intent = std::find_if(intents_.begin(), intents_.end(),
                                   [&](const auto& entry) { return entry.second.id == intent_id; });
  if (intent == intents_.end() || intent->second.status != "succeeded") {
    return error_answer(404, "invalid_request_error", "resource_missing",
                        "No such payment_intent, or nothing to refund on it");
  }
  if (answer() == FakeAnswer::refuse) {
    return error_answer(400, "invalid_request_error", "balance_insufficient",
                        "Your balance is not enough for this refund");
  }
  if (refunded_.count(intent_id) != 0) {
    return error_answer(400, "invalid_request_error", "charge_already_refunded",
                        "Charge has already been refunded");
  }
  if (field("amount") != std::to_string(intent->second.amount)) {
    return error_answer(400, "invalid_request_error", "amount_too_large",
                        "Refund amount is not the charge's");
  }
  const auto refund_id = "re_fake_" + std::to_string(refunded_.size() + 1) + "_" + intent_id;
  refunded_[intent_id] = refund_id;
  bool again = false;
  refund(key, intent->second.amount, &again);
  json metadata = json::object();
  for (const auto& [name, value] : form) {
    if (name.starts_with("metadata[") && name.ends_with("]")) {
      metadata[name.substr(9, name.size() - 10)] = value;
    }
  }
  return json_answer(200, {{"id", refund_id},
                           {"object", "refund"},
                           {"amount", intent->second.amount},
                           {"balance_transaction", "txn_" + refund_id},
                           {"charge", "ch_" + intent_id},
                           {"created", domain::unix_time_ms() / 1000},
                           {"currency", intent->second.currency},
                           {"metadata", metadata},
                           {"payment_intent", intent_id},
                           {"reason", nullptr},
                           {"status", "succeeded"}});
}

int FakeStripe::intent_count(const std::string& payment_no) const {
  const std::lock_guard lock(stripe_mutex_);
  return static_cast<int>(intents_.count(payment_no));
}

FakeTradeState FakeStripe::trade_state(const std::string& payment_no) const {
  const std::lock_guard lock(stripe_mutex_);
  const auto it = intents_.find(payment_no);
  if (it == intents_.end()) {
    return FakeTradeState::unknown;
  }
  if (it->second.status == "succeeded") {
    return FakeTradeState::paid;
  }
  return it->second.status == "canceled" ? FakeTradeState::closed : FakeTradeState::pending;
}

void FakeStripe::pay(const std::string& payment_no) {
  const std::lock_guard lock(stripe_mutex_);
  const auto it = intents_.find(payment_no);
  if (it != intents_.end()) {
    it->second.status = "succeeded";
  }
}

ServerResponse FakeStripe::create_intent(const ServerRequest& request) {
  const auto key = request.header("idempotency-key");
  if (key.empty()) {
    return error_answer(400, "invalid_request_error", "parameter_missing",
                        "this fake wants an Idempotency-Key");
  }
  const auto form = parse_form(request.body);
  ServerResponse response;
  {
    const std::lock_guard lock(stripe_mutex_);
    const auto seen = keys_.find(key);
    if (seen != keys_.end() && seen->second.first != form) {
      return error_answer(400, "idempotency_error", "",
                          "Keys for idempotent requests can only be used with the same parameters");
    }
    if (seen != keys_.end()) {
      response = seen->second.second;
      response.headers.emplace_back("Idempotent-Replayed", "true");
      // Asked again: recorded, and the trade the first request made stays the only one.
      const auto& replayed = seen->second.first;
      create_trade(replayed.at("metadata[paymentNo]"),
                   {std::stoll(replayed.at("amount")), 0, "", 0});
    } else {
      response = new_intent(form);
      if (response.status == 200) {
        keys_[key] = {form, response};
      }
    }
  }
  return distorted(
      std::move(response), answer(),
      [](json& b) {
        b["metadata"]["paymentNo"] = b["metadata"]["paymentNo"].get<std::string>() + "-OTHER";
      },
      [](json& b) { b["amount"] = b["amount"].get<std::int64_t>() + 1; });
}

// Under stripe_mutex_.
ServerResponse FakeStripe::new_intent(const std::map<std::string, std::string>& form) {
  const auto field = [&form](const std::string& name) {
    const auto it = form.find(name);
    return it == form.end() ? std::string() : it->second;
  };
  const auto payment_no = field("metadata[paymentNo]");
  const auto amount = field("amount");
  if (payment_no.empty() || amount.empty() ||
      amount.find_first_not_of("0123456789") != std::string::npos || field("currency").empty() ||
      field("automatic_payment_methods[enabled]") != "true") {
    return error_answer(400, "invalid_request_error", "parameter_missing",
                        "amount, currency, metadata[paymentNo] and automatic payment methods");
  }
  if (answer() == FakeAnswer::refuse) {
    return error_answer(400, "invalid_request_error", "amount_too_small",
                        "Amount must be at least the currency's minimum");
  }
  FakeIntent intent{"pi_fake_" + std::to_string(intents_.size() + 1),
                    "requires_payment_method",
                    std::stoll(amount),
                    field("currency"),
                    false,
                    field("metadata[orderNo]")};
  json body = intent_json(payment_no, intent);
  body["client_secret"] = intent.id + "_secret_fake";
  intents_.emplace(payment_no, std::move(intent));
  create_trade(payment_no, {body["amount"].get<std::int64_t>(), 0, "", 0});
  return json_answer(200, body);
}

ServerResponse FakeStripe::cancel_intent(const std::string& intent_id) {
  const auto mode = answer();
  ServerResponse response;
  {
    const std::lock_guard lock(stripe_mutex_);
    const auto it = std::find_if(intents_.begin(), intents_.end(),
                                 [&](const auto& entry) { return entry.second.id == intent_id; });
    if (it == intents_.end()) {
      return error_answer(404, "invalid_request_error", "resource_missing",
                          "No such payment_intent");
    }
    count_close();
    auto& intent = it->second;
    if (mode == FakeAnswer::refuse) {
      response = error_answer(400, "invalid_request_error", "payment_intent_invalid_parameter",
                              "This fake refuses the cancel");
    } else if (intent.status == "succeeded" || intent.status == "processing" ||
               intent.status == "canceled") {
      response = json_answer(
          400, {{"error",
                 {{"type", "invalid_request_error"},
                  {"code", "payment_intent_unexpected_state"},
                  {"message", "You cannot cancel this PaymentIntent because it has a status of " +
                                  intent.status + "."},
                  {"payment_intent", intent_json(it->first, intent)}}}});
    } else {
      intent.status = "canceled";
      response = json_answer(200, intent_json(it->first, intent));
    }
  }
  return distorted(
      std::move(response), mode,
      [](json& b) {
        b["metadata"]["paymentNo"] = b["metadata"]["paymentNo"].get<std::string>() + "-OTHER";
      },
      [](json& b) { b["amount"] = b["amount"].get<std::int64_t>() + 1; });
}

}  // namespace seatflow::testing
