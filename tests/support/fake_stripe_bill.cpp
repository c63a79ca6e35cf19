// The fake Stripe API's balance transactions (see support/fake_stripe.hpp): what the test adds,
// listed newest first in pages as Stripe lists them, the sources expanded when asked.
#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <utility>

#include "support/fake_stripe.hpp"

namespace seatflow::testing {
namespace {

using nlohmann::json;

constexpr int kListLimitMax = 100;
constexpr int kListLimitDefault = 10;
constexpr std::int64_t kAvailableAfterS = 2 * 24 * 3600;

ServerResponse list_error(const std::string& code, const std::string& message) {
  const json body = {
      {"error", {{"type", "invalid_request_error"}, {"code", code}, {"message", message}}}};
  return ServerResponse{400, {{"Content-Type", "application/json"}}, body.dump(), 0};
}

std::int64_t number_param(const std::map<std::string, std::string>& params, const std::string& name,
                          std::int64_t fallback) {
  const auto it = params.find(name);
  return it == params.end() ? fallback : std::stoll(it->second);
}

json balance_transaction(const std::string& type, std::int64_t amount, std::int64_t fee,
                         std::int64_t created_s, json source) {
  return {{"object", "balance_transaction"},
          {"amount", amount},
          {"available_on", created_s + kAvailableAfterS},
          {"created", created_s},
          {"currency", "cny"},
          {"description", nullptr},
          {"exchange_rate", nullptr},
          {"fee", fee},
          {"fee_details", fee == 0 ? json::array()
                                   : json::array({{{"amount", fee},
                                                   {"currency", "cny"},
                                                   {"description", "Stripe processing fees"},
                                                   {"type", "stripe_fee"}}})},
          {"net", amount - fee},
          {"reporting_category", type == "refund" ? "refund" : type},
          {"status", "available"},
          {"type", type},
          {"source", std::move(source)}};
}

}  // namespace

void FakeStripe::add_transaction(json txn) {
  const std::lock_guard lock(stripe_mutex_);
  std::array<char, 32> id{};
  std::snprintf(id.data(), id.size(), "txn_%08zu", transactions_.size() + 1);
  txn["id"] = id.data();
  if (txn["source"].is_object() && txn["source"].contains("balance_transaction")) {
    txn["source"]["balance_transaction"] = id.data();
  }
  transactions_.push_back(std::move(txn));
}

void FakeStripe::add_charge(const std::string& intent_id, const std::string& payment_no,
                            std::int64_t amount, std::int64_t fee, std::int64_t created_s) {
  json charge = {{"id", "ch_" + intent_id},
                 {"object", "charge"},
                 {"amount", amount},
                 {"amount_captured", amount},
                 {"amount_refunded", 0},
                 {"balance_transaction", ""},
                 {"created", created_s},
                 {"currency", "cny"},
                 {"metadata", json::object()},
                 {"paid", true},
                 {"payment_intent", intent_id},
                 {"status", "succeeded"}};
  if (!payment_no.empty()) {
    charge["metadata"]["paymentNo"] = payment_no;
  }
  add_transaction(balance_transaction("charge", amount, fee, created_s, std::move(charge)));
}

void FakeStripe::add_refund(const std::string& intent_id, const std::string& refund_id,
                            const std::string& refund_no, std::int64_t amount,
                            std::int64_t created_s) {
  json refund = {
      {"id", refund_id},           {"object", "refund"},          {"amount", amount},
      {"balance_transaction", ""}, {"charge", "ch_" + intent_id}, {"created", created_s},
      {"currency", "cny"},         {"metadata", json::object()},  {"payment_intent", intent_id},
      {"reason", nullptr},         {"status", "succeeded"}};
  if (!refund_no.empty()) {
    refund["metadata"]["refundNo"] = refund_no;
  }
  add_transaction(balance_transaction("refund", -amount, 0, created_s, std::move(refund)));
}

void FakeStripe::add_other(const std::string& type, std::int64_t amount, std::int64_t created_s) {
  json source = {
      {"id", "po_" + std::to_string(created_s)}, {"object", "payout"}, {"amount", amount}};
  add_transaction(balance_transaction(type, amount, 0, created_s, std::move(source)));
}

ServerResponse FakeStripe::list(const std::map<std::string, std::string>& params) {
  const auto gte = number_param(params, "created[gte]", 0);
  const auto lt = number_param(params, "created[lt]", INT64_MAX);
  const auto limit = number_param(params, "limit", kListLimitDefault);
  if (limit < 1 || limit > kListLimitMax) {
    return list_error("parameter_invalid_integer", "limit must be between 1 and 100");
  }
  const auto after = params.count("starting_after") != 0 ? params.at("starting_after") : "";
  const bool expand = params.count("expand[]") != 0 && params.at("expand[]") == "data.source";
  std::vector<json> listed;
  {
    const std::lock_guard lock(stripe_mutex_);
    for (const auto& txn : transactions_) {
      const auto created = txn["created"].get<std::int64_t>();
      if (created >= gte && created < lt) {
        listed.push_back(txn);
      }
    }
  }
  // Newest first, as Stripe lists (ids break ties).
  std::sort(listed.begin(), listed.end(), [](const json& a, const json& b) {
    return std::make_pair(a["created"].get<std::int64_t>(), a["id"].get<std::string>()) >
           std::make_pair(b["created"].get<std::int64_t>(), b["id"].get<std::string>());
  });
  auto begin = listed.begin();
  if (!after.empty()) {
    begin =
        std::find_if(listed.begin(), listed.end(), [&](const json& t) { return t["id"] == after; });
    if (begin == listed.end()) {
      return list_error("resource_missing", "No such balance transaction: starting_after");
    }
    ++begin;
  }
  json data = json::array();
  for (auto it = begin; it != listed.end() && static_cast<std::int64_t>(data.size()) < limit;
       ++it) {
    json txn = *it;
    if (!expand) {
      txn["source"] = txn["source"]["id"];
    }
    data.push_back(std::move(txn));
  }
  const bool has_more = (begin - listed.begin()) + static_cast<std::int64_t>(data.size()) <
                        static_cast<std::int64_t>(listed.size());
  const json body = {{"object", "list"},
                     {"url", "/v1/balance_transactions"},
                     {"has_more", has_more},
                     {"data", std::move(data)}};
  ServerResponse response{200, {{"Content-Type", "application/json"}}, body.dump(), 0};
  if (answer() == FakeAnswer::malformed_json) {
    response.body.resize(response.body.size() / 2);
  }
  return response;
}

}  // namespace seatflow::testing
