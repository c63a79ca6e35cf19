// Unit tests for Stripe's API dialects (SPEC §13): the PaymentIntent search query and every status
// mapping, the idempotent refund and its answers, on JSON shaped as Stripe's API reference shows
// it.
#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "channels/stripe/stripe_query.hpp"
#include "channels/stripe/stripe_refund.hpp"
#include "codec/text.hpp"
#include "support/rejections.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using testing::rejection_detail;

const QueryTarget kTarget{"P-0001", 5000};
const RefundTarget kRefund{"P-0001", "rfd_7Qx", 5000, "paid after the order was cancelled",
                           "pi_3MtwBwLkdIwHu7ix28a3tqPa"};

StripeApiConfig config(const std::string& url = "https://api.stripe.com") {
  return StripeApiConfig{"sk_test_4eC39HqLyjWDarjtT1zdp7dc", net::parse_url(url).value(), "cny"};
}

// A PaymentIntent as the search API returns it (the members SeatFlow reads, and some it does not).
json intent(const std::string& status, std::int64_t amount = 5000) {
  return {{"id", "pi_3MtwBwLkdIwHu7ix28a3tqPa"},
          {"object", "payment_intent"},
          {"amount", amount},
          {"amount_capturable", 0},
          {"amount_details", {{"tip", json::object()}}},
          {"amount_received", status == "succeeded" ? amount : 0},
          {"automatic_payment_methods", {{"enabled", true}}},
          {"canceled_at", nullptr},
          {"capture_method", "automatic"},
          {"client_secret", "pi_3MtwBwLkdIwHu7ix28a3tqPa_secret_YrKJUKribcBjcG8HVhfZluoGH"},
          {"created", 1680800504},
          {"currency", "cny"},
          {"last_payment_error", nullptr},
          {"livemode", false},
          {"metadata", {{"paymentNo", "P-0001"}}},
          {"status", status}};
}

std::string search_result(const json& data, bool has_more = false) {
  return json{{"object", "search_result"},
              {"url", "/v1/payment_intents/search"},
              {"has_more", has_more},
              {"next_page", nullptr},
              {"data", data}}
      .dump();
}

Result<QueryAnswer> answer_of(const json& data) {
  return stripe_query_answer_from(200, search_result(data), "cny", kTarget);
}

TEST(StripeQuery, SearchesTheIntentByItsPaymentNoWithTheBearerKeyAndAPinnedVersion) {
  const StripeQuery query(config("https://api.stripe.test/base/"));
  const auto request = query.request(QueryTarget{"P-0'1\\x y", 5000}, 0);
  EXPECT_EQ(request.method, "GET");
  EXPECT_EQ(request.url.host, "api.stripe.test");
  EXPECT_EQ(request.url.target, "/base/v1/payment_intents/search?query=" +
                                    codec::form_encode("metadata['paymentNo']:'P-0\\'1\\\\x y'"));
  EXPECT_EQ(stripe_search_query("P-0001"), "metadata['paymentNo']:'P-0001'");
  const net::HeaderList expected{{"Authorization", "Bearer sk_test_4eC39HqLyjWDarjtT1zdp7dc"},
                                 {"Stripe-Version", std::string(kStripeApiVersion)},
                                 {"Accept", "application/json"}};
  EXPECT_EQ(request.headers, expected);
}

TEST(StripeQuery, MapsEveryPaymentIntentStatus) {
  const auto paid = answer_of(json::array({intent("succeeded")}));
  ASSERT_TRUE(paid.ok()) << paid.detail();
  EXPECT_EQ(paid.value().state, QueryState::paid);
  EXPECT_EQ(paid.value().trade_no, "pi_3MtwBwLkdIwHu7ix28a3tqPa");
  EXPECT_EQ(paid.value().amount_cents, 5000);
  auto declined = intent("requires_payment_method");
  declined["last_payment_error"] = {{"type", "card_error"}, {"code", "card_declined"}};
  const std::vector<std::pair<json, QueryState>> cases{
      {intent("canceled"), QueryState::failed},
      {declined, QueryState::failed},
      {intent("requires_payment_method"), QueryState::pending},
      {intent("requires_confirmation"), QueryState::pending},
      {intent("requires_action"), QueryState::pending},
      {intent("requires_capture"), QueryState::pending},
      {intent("processing"), QueryState::pending}};
  for (const auto& [object, state] : cases) {
    const auto mapped = answer_of(json::array({object}));
    ASSERT_TRUE(mapped.ok()) << object["status"] << ": " << mapped.detail();
    EXPECT_EQ(mapped.value().state, state) << object["status"];
  }
  const auto none = answer_of(json::array());
  ASSERT_TRUE(none.ok());
  EXPECT_EQ(none.value().state, QueryState::not_found);
}

TEST(StripeQuery, AnAnswerAboutAnythingElseIsARejection) {
  auto other_payment = intent("succeeded");
  other_payment["metadata"]["paymentNo"] = "P-0002";
  auto other_currency = intent("succeeded");
  other_currency["currency"] = "usd";
  auto short_received = intent("succeeded");
  short_received["amount_received"] = 4999;
  auto unknown_status = intent("requires_magic");
  const std::vector<std::pair<std::string, std::string>> cases{
      {search_result(json::array({intent("succeeded"), intent("canceled")})), "more than one"},
      {search_result(json::array({intent("succeeded")}), true), "more than one"},
      {search_result(json::array({other_payment})), "another payment's"},
      {search_result(json::array({intent("succeeded", 5001)})), "not the payment's amount"},
      {search_result(json::array({short_received})), "amount_received"},
      {search_result(json::array({other_currency})), "currency"},
      {search_result(json::array({unknown_status})), "status"},
      {R"({"object":"list","data":[]})", "search_result"},
      {R"({"object":"search_result","data":[)", "not a JSON object"}};
  for (const auto& [body, needle] : cases) {
    const auto result = stripe_query_answer_from(200, body, "cny", kTarget);
    EXPECT_NE(rejection_detail(result).find(needle), std::string::npos)
        << body << " → " << rejection_detail(result);
  }
  const auto unauthorized = stripe_query_answer_from(
      401,
      R"({"error":{"message":"Invalid API Key provided: sk_test_***","type":"invalid_request_error"}})",
      "cny", kTarget);
  EXPECT_EQ(rejection_detail(unauthorized), "Stripe answered 401 code invalid_request_error");
}

TEST(StripeQuery, RefusesAKeyAHeaderCannotCarry) {
  for (const std::string& key :
       std::vector<std::string>{"", "sk_test with space", "sk_test_\n", std::string(257, 'k')}) {
    auto bad = config();
    bad.api_key = key;
    EXPECT_THROW(StripeQuery{bad}, std::invalid_argument) << key;
  }
  EXPECT_TRUE(valid_stripe_api_key("rk_live_51H8x"));
}

json refund_object(const std::string& status, const std::string& intent_id = kRefund.trade_no,
                   std::int64_t amount = 5000) {
  return {{"id", "re_3MtwBwLkdIwHu7ix0oJTr4tj"},
          {"object", "refund"},
          {"amount", amount},
          {"balance_transaction", "txn_3MtwBwLkdIwHu7ix0Wv4RSek"},
          {"charge", "ch_3MtwBwLkdIwHu7ix0snN0B15"},
          {"created", 1680800514},
          {"currency", "cny"},
          {"metadata", {{"refundNo", "rfd_7Qx"}, {"paymentNo", "P-0001"}}},
          {"payment_intent", intent_id},
          {"reason", nullptr},
          {"receipt_number", nullptr},
          {"source_transfer_reversal", nullptr},
          {"status", status},
          {"transfer_reversal", nullptr}};
}

TEST(StripeRefund, PostsTheIntentTheAmountAndTheRefundNumberUnderItsIdempotencyKey) {
  const StripeRefund refund(config());
  const auto request = refund.refund_request(kRefund, 0).value();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url.target, "/v1/refunds");
  EXPECT_EQ(request.body,
            "payment_intent=pi_3MtwBwLkdIwHu7ix28a3tqPa&amount=5000&metadata%5BrefundNo%5D=rfd_7Qx"
            "&metadata%5BpaymentNo%5D=P-0001&metadata%5Breason%5D=paid+after+the+order+was+"
            "cancelled");
  EXPECT_NE(std::find(request.headers.begin(), request.headers.end(),
                      std::pair<std::string, std::string>{"Idempotency-Key", "rfd_7Qx"}),
            request.headers.end());
  EXPECT_NE(std::find(request.headers.begin(), request.headers.end(),
                      std::pair<std::string, std::string>{"Content-Type",
                                                          "application/x-www-form-urlencoded"}),
            request.headers.end());
  auto unknown_intent = kRefund;
  unknown_intent.trade_no.clear();
  EXPECT_EQ(refund.refund_request(unknown_intent, 0).error(), errc::unusable);
}

TEST(StripeRefund, MapsTheRefundStatusAndTheErrorObjects) {
  for (const std::string status : {"succeeded", "pending", "requires_action"}) {
    const auto mapped = stripe_refund_answer_from(200, refund_object(status).dump(), kRefund);
    ASSERT_TRUE(mapped.ok()) << mapped.detail();
    EXPECT_EQ(mapped.value().state, RefundState::succeeded) << status;
    EXPECT_EQ(mapped.value().gateway_refund_no, "re_3MtwBwLkdIwHu7ix0oJTr4tj");
  }
  auto failed = refund_object("failed");
  failed["failure_reason"] = "expired_or_canceled_card";
  const auto refused = stripe_refund_answer_from(200, failed.dump(), kRefund);
  ASSERT_TRUE(refused.ok());
  EXPECT_EQ(refused.value().state, RefundState::refused);
  EXPECT_EQ(refused.value().reason, "status failed expired_or_canceled_card");
  const auto already = stripe_refund_answer_from(
      400,
      R"({"error":{"code":"charge_already_refunded","doc_url":"https://stripe.com/docs/error-codes/charge-already-refunded","message":"Charge ch_1 has already been refunded.","type":"invalid_request_error"}})",
      kRefund);
  ASSERT_TRUE(already.ok());
  EXPECT_EQ(already.value().state, RefundState::refused);
  EXPECT_EQ(already.value().reason, "Stripe answered 400 code charge_already_refunded");
}

TEST(StripeRefund, AnAnswerThatProvesNothingIsARejection) {
  auto other_refund = refund_object("succeeded");
  other_refund["metadata"]["refundNo"] = "rfd_other";
  const std::vector<std::pair<int, std::string>> cases{
      {200, refund_object("succeeded", "pi_other").dump()},
      {200, refund_object("succeeded", kRefund.trade_no, 4999).dump()},
      {200, other_refund.dump()},
      {200, refund_object("mysterious").dump()},
      {200, R"({"object":"refund",)"},
      {409, R"({"error":{"code":"idempotency_key_in_use","type":"invalid_request_error"}})"},
      {429, R"({"error":{"code":"rate_limit","type":"invalid_request_error"}})"},
      {500, R"({"error":{"type":"api_error"}})"},
      {400, R"({"id":"re_1"})"}};
  for (const auto& [status, body] : cases) {
    const auto result = stripe_refund_answer_from(status, body, kRefund);
    EXPECT_FALSE(result.ok()) << status << " " << body;
    EXPECT_EQ(testing::reason_of(result), errc::rejected_answer);
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels
