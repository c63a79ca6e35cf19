// Unit tests for the stripe and hmac payment dialects (SPEC §16): the create and close requests as
// the gateways take them (Stripe's form under its Idempotency-Key, the hmac gateway's signed JSON,
// read back by the gateway's own side), and every class of their answers.
#include <gtest/gtest.h>

#include <array>
#include <vector>

#include <nlohmann/json.hpp>

#include "channels/hmac/hmac_payment.hpp"
#include "channels/stripe/stripe_payment.hpp"
#include "codec/crypto.hpp"
#include "codec/digest.hpp"
#include "support/rejections.hpp"

namespace seatflow::channels {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using testing::reason_of;
using testing::rejection_detail;

constexpr std::int64_t kNow = 1'700'000'000'000;
constexpr std::int64_t kExpires = 1'796'695'200'000;
const CreateTarget kCreate{
    "P-0001",         "O-0001", 5000, kExpires, "https://seatflow.test/api/payment/notify/hmac",
    "2 seats, Hall A"};
const std::string kIntent = "pi_3MtwBwLkdIwHu7ix28a3tqPa";
const CloseTarget kClose{"P-0001", kIntent};

std::string header_of(const net::Request& request, const std::string& name) {
  for (const auto& [key, value] : request.headers) {
    if (key == name) {
      return value;
    }
  }
  return {};
}

// --- stripe -----------------------------------------------------------------------------------

StripePayment stripe() {
  return StripePayment(StripeApiConfig{"sk_test_4eC39HqLyjWDarjtT1zdp7dc",
                                       net::parse_url("https://api.stripe.test/").value(), "cny"});
}

// A PaymentIntent as Stripe's API reference shows it (the members SeatFlow reads, and some more).
json intent(const std::string& status) {
  return {{"id", kIntent},
          {"object", "payment_intent"},
          {"amount", 5000},
          {"automatic_payment_methods", {{"enabled", true}}},
          {"client_secret", kIntent + "_secret_YrKJUKribcBjcG8HVhfZluoGH"},
          {"currency", "cny"},
          {"metadata", {{"paymentNo", "P-0001"}, {"orderNo", "O-0001"}}},
          {"status", status}};
}

json stripe_error(const std::string& code, const json& payment_intent = nullptr) {
  json error = {{"type", "invalid_request_error"}, {"code", code}, {"message", "…"}};
  if (!payment_intent.is_null()) {
    error["payment_intent"] = payment_intent;
  }
  return {{"error", error}};
}

TEST(StripePayment, CreatePostsTheIntentFormUnderItsIdempotencyKey) {
  const auto request = stripe().create_request(kCreate, kNow).value();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url.target, "/v1/payment_intents");
  EXPECT_EQ(request.body,
            "amount=5000&currency=cny&metadata%5BpaymentNo%5D=P-0001&metadata%5BorderNo%5D=O-0001"
            "&automatic_payment_methods%5Benabled%5D=true");
  EXPECT_EQ(header_of(request, "Idempotency-Key"), "create-P-0001");
  EXPECT_EQ(header_of(request, "Authorization"), "Bearer sk_test_4eC39HqLyjWDarjtT1zdp7dc");
  EXPECT_EQ(header_of(request, "Content-Type"), "application/x-www-form-urlencoded");
  // Asking again is the same request, byte for byte (Stripe refuses a key with other parameters).
  EXPECT_EQ(stripe().create_request(kCreate, kNow + 60'000).value().body, request.body);
}

TEST(StripePayment, CreateAnswersAreCreatedRefusedOrRejected) {
  const auto created =
      stripe().create_answer(kCreate, {200, {}, intent("requires_payment_method").dump()}, kNow);
  ASSERT_TRUE(created.ok()) << rejection_detail(created);
  EXPECT_TRUE(created.value().created);
  EXPECT_EQ(created.value().kind, PayKind::client_secret);
  EXPECT_EQ(created.value().field, "clientSecret");
  EXPECT_EQ(created.value().value, kIntent + "_secret_YrKJUKribcBjcG8HVhfZluoGH");
  EXPECT_EQ(created.value().gateway_ref, kIntent);
  const auto refused =
      stripe().create_answer(kCreate, {400, {}, stripe_error("amount_too_small").dump()}, kNow);
  ASSERT_TRUE(refused.ok()) << rejection_detail(refused);
  EXPECT_FALSE(refused.value().created);
  EXPECT_EQ(refused.value().reason, "amount_too_small");
  auto other_payment = intent("requires_payment_method");
  other_payment["metadata"]["paymentNo"] = "P-0002";
  auto other_amount = intent("requires_payment_method");
  other_amount["amount"] = 5001;
  auto no_secret = intent("requires_payment_method");
  no_secret.erase("client_secret");
  const std::vector<std::pair<net::Response, std::string>> rejected = {
      {{200, {}, other_payment.dump()}, "metadata.paymentNo missing or another payment's"},
      {{200, {}, other_amount.dump()}, "amount missing or not the payment's amount"},
      {{200, {}, no_secret.dump()}, "client_secret missing or not a pay value"},
      {{200, {}, "{\"id\":"}, "answer is not a JSON object"},
      {{409, {}, stripe_error("idempotency_key_in_use").dump()},
       "Stripe answered 409 code idempotency_key_in_use"},
      {{400, {}, "{}"}, "a 400 answer without an error object"},
  };
  for (const auto& [response, detail] : rejected) {
    EXPECT_EQ(rejection_detail(stripe().create_answer(kCreate, response, kNow)), detail);
  }
}

TEST(StripePayment, CloseCancelsTheKeptIntentAndReadsWhyItCouldNot) {
  EXPECT_FALSE(stripe().close_needs_call({"P-0001", ""}));
  EXPECT_TRUE(stripe().close_needs_call(kClose));
  EXPECT_EQ(reason_of(stripe().close_request({"P-0001", "pi_1/../x"}, kNow)), errc::unusable);
  const auto request = stripe().close_request(kClose, kNow).value();
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url.target, "/v1/payment_intents/" + kIntent + "/cancel");
  EXPECT_EQ(header_of(request, "Authorization"), "Bearer sk_test_4eC39HqLyjWDarjtT1zdp7dc");
  struct Row {
    int status;
    json body;
    CloseState state;
  };
  const auto unexpected = [](const std::string& status) {
    return stripe_error("payment_intent_unexpected_state", intent(status));
  };
  const std::vector<Row> rows = {
      {200, intent("canceled"), CloseState::closed},
      {400, unexpected("succeeded"), CloseState::paid},
      {400, unexpected("processing"), CloseState::paid},
      {400, unexpected("canceled"), CloseState::closed},
      {400, unexpected("requires_capture"), CloseState::refused},
      {404, stripe_error("resource_missing"), CloseState::refused},
  };
  for (const auto& row : rows) {
    const auto answer = stripe().close_answer(kClose, {row.status, {}, row.body.dump()}, kNow);
    ASSERT_TRUE(answer.ok()) << row.body << ": " << rejection_detail(answer);
    EXPECT_EQ(answer.value().state, row.state) << row.body;
  }
  auto other_intent = intent("succeeded");
  other_intent["id"] = "pi_other";
  const std::vector<std::pair<net::Response, std::string>> rejected = {
      {{400, {}, stripe_error("payment_intent_unexpected_state", other_intent).dump()},
       "error.payment_intent missing or another PaymentIntent"},
      {{200, {}, intent("requires_payment_method").dump()},
       "a cancel answered 200 with a status other than canceled"},
      {{200, {}, other_intent.dump()}, "id missing or another PaymentIntent"},
      {{500, {}, stripe_error("api_error").dump()}, "Stripe answered 500 code api_error"},
  };
  for (const auto& [response, detail] : rejected) {
    EXPECT_EQ(rejection_detail(stripe().close_answer(kClose, response, kNow)), detail);
  }
}

// --- hmac -------------------------------------------------------------------------------------

const std::string kSecret = "payment-unit-secret";

HmacPayment hmac() {
  return HmacPayment(HmacConfig{{kSecret, "older-secret"}, 300'000},
                     net::parse_url("http://gateway.test:9000/base/").value());
}

std::string mac(const std::string& secret, std::string_view content) {
  const std::array<std::string_view, 1> pieces{content};
  return codec::to_lower_hex(codec::hmac_sha256(secret, pieces));
}

TEST(HmacPayment, TheSignedContentsAreTheNewlineJoinedFields) {
  EXPECT_EQ(hmac_create_sign_content({"P-0001", 5000, kExpires, "https://n.test/x", kNow}),
            "P-0001\n5000\n1796695200000\nhttps://n.test/x\n1700000000000");
  EXPECT_EQ(hmac_create_answer_sign_content("P-0001", "https://pay.test/P-0001", kNow),
            "P-0001\nhttps://pay.test/P-0001\n1700000000000");
  EXPECT_EQ(hmac_close_sign_content("P-0001", kNow), "P-0001\n1700000000000");
  EXPECT_EQ(hmac_close_answer_sign_content("P-0001", "not_found", kNow),
            "P-0001\nnot_found\n1700000000000");
  EXPECT_EQ(hmac_refusal_sign_content("P-0001", "expired", kNow),
            "refusal\nP-0001\nexpired\n1700000000000");
  EXPECT_EQ(hmac_close_path("P:1 2"), "/api/gateway/payments/P%3A1+2/close");
  EXPECT_EQ(hmac_close_payment_no("/api/gateway/payments/P%3A1+2/close"), "P:1 2");
  EXPECT_EQ(hmac_close_payment_no("/api/gateway/payments/P/1/close"), std::nullopt);
  EXPECT_EQ(hmac_close_payment_no("/api/gateway/payments//close"), std::nullopt);
}

TEST(HmacPayment, RequestsAreSignedAndTheGatewayReadsThem) {
  const auto create = hmac().create_request(kCreate, kNow).value();
  EXPECT_EQ(create.method, "POST");
  EXPECT_EQ(create.url.target, "/base/api/gateway/payments");
  const auto body = json::parse(create.body);
  EXPECT_EQ(body["paymentNo"], "P-0001");
  EXPECT_EQ(body["amountCents"], 5000);
  EXPECT_EQ(body["expiresAt"], kExpires);
  EXPECT_EQ(body["notifyUrl"], kCreate.notify_url);
  EXPECT_EQ(body["timestamp"], kNow);
  EXPECT_EQ(body["sign"],
            mac(kSecret, "P-0001\n5000\n1796695200000\n" + kCreate.notify_url + "\n1700000000000"));
  const auto read = hmac_create_read_request(create.body, {"other", kSecret}, kNow, 300'000);
  ASSERT_TRUE(read.ok()) << rejection_detail(read);
  EXPECT_EQ(read.value().expires_at_ms, kExpires);
  EXPECT_EQ(reason_of(hmac_create_read_request(create.body, {"other"}, kNow, 300'000)),
            errc::bad_signature);
  EXPECT_EQ(reason_of(hmac_create_read_request(create.body, {kSecret}, kNow + 400'000, 300'000)),
            errc::stale);
  auto changed = body;
  changed["expiresAt"] = kExpires + 1;
  EXPECT_EQ(reason_of(hmac_create_read_request(changed.dump(), {kSecret}, kNow, 300'000)),
            errc::bad_signature);
  const auto close = hmac().close_request(kClose, kNow).value();
  EXPECT_EQ(close.url.target, "/base/api/gateway/payments/P-0001/close");
  EXPECT_EQ(json::parse(close.body)["sign"], mac(kSecret, "P-0001\n1700000000000"));
  const auto closing = hmac_close_read_request(close.body, {kSecret}, kNow, 300'000);
  ASSERT_TRUE(closing.ok()) << rejection_detail(closing);
  EXPECT_EQ(closing.value().payment_no, "P-0001");
  auto no_notify = kCreate;
  no_notify.notify_url = "https://n.test/\n";
  EXPECT_EQ(reason_of(hmac().create_request(no_notify, kNow)), errc::unusable);
}

TEST(HmacPayment, CreateAnswersAreCreatedRefusedOrRejected) {
  const auto answer = [](int status, std::string body) {
    return hmac().create_answer(kCreate, {status, {}, std::move(body)}, kNow);
  };
  const std::string pay_url = "http://gateway.test:9000/pay/P-0001";
  const auto created = answer(200, hmac_create_answer_body(kSecret, "P-0001", pay_url, kNow));
  ASSERT_TRUE(created.ok()) << rejection_detail(created);
  EXPECT_EQ(created.value().kind, PayKind::url);
  EXPECT_EQ(created.value().field, "payUrl");
  EXPECT_EQ(created.value().value, pay_url);
  EXPECT_TRUE(answer(200, hmac_create_answer_body("older-secret", "P-0001", pay_url, kNow)).ok());
  const auto refused = answer(409, hmac_refusal_body(kSecret, "P-0001", "expired", kNow));
  ASSERT_TRUE(refused.ok()) << rejection_detail(refused);
  EXPECT_FALSE(refused.value().created);
  EXPECT_EQ(refused.value().reason, "expired");
  auto tampered = json::parse(hmac_create_answer_body(kSecret, "P-0001", pay_url, kNow));
  tampered["payUrl"] = "http://evil.test/pay";
  const std::vector<std::pair<net::Response, std::string>> rejected = {
      {{200, {}, hmac_create_answer_body("impostor", "P-0001", pay_url, kNow)},
       "answer signature does not verify"},
      {{200, {}, tampered.dump()}, "answer signature does not verify"},
      {{200, {}, hmac_create_answer_body(kSecret, "P-0001", pay_url, kNow - 600'000)},
       "answer timestamp outside the accepted window"},
      {{200, {}, hmac_create_answer_body(kSecret, "P-0002", pay_url, kNow)},
       "the answer names another payment"},
      {{200, {}, "{\"paymentNo\":"}, "answer empty, too large or not a JSON object"},
      {{500, {}, "oops"},
       "HTTP status 500 without a signed refusal: answer empty, too large or not a JSON object"},
      {{409, {}, hmac_refusal_body(kSecret, "P-0002", "expired", kNow)},
       "the answer names another payment"},
  };
  for (const auto& [response, detail] : rejected) {
    EXPECT_EQ(rejection_detail(hmac().create_answer(kCreate, response, kNow)), detail);
  }
}

TEST(HmacPayment, CloseAnswersAreClosedPaidRefusedOrRejected) {
  const auto answer = [](int status, std::string body) {
    return hmac().close_answer(kClose, {status, {}, std::move(body)}, kNow);
  };
  const std::vector<std::pair<HmacCloseStatus, CloseState>> rows = {
      {HmacCloseStatus::closed, CloseState::closed},
      {HmacCloseStatus::not_found, CloseState::closed},
      {HmacCloseStatus::paid, CloseState::paid},
  };
  for (const auto& [status, state] : rows) {
    const auto closed = answer(200, hmac_close_answer_body(kSecret, "P-0001", status, kNow));
    ASSERT_TRUE(closed.ok()) << rejection_detail(closed);
    EXPECT_EQ(closed.value().state, state);
  }
  const auto refused = answer(409, hmac_refusal_body(kSecret, "P-0001", "busy", kNow));
  ASSERT_TRUE(refused.ok()) << rejection_detail(refused);
  EXPECT_EQ(refused.value().state, CloseState::refused);
  EXPECT_EQ(refused.value().reason, "busy");
  auto open = json::parse(hmac_close_answer_body(kSecret, "P-0001", HmacCloseStatus::paid, kNow));
  open["status"] = "open";
  open["sign"] = mac(kSecret, "P-0001\nopen\n1700000000000");
  EXPECT_EQ(rejection_detail(answer(200, open.dump())),
            "answer: status is not closed, paid or not_found");
  EXPECT_EQ(rejection_detail(answer(
                200, hmac_close_answer_body("impostor", "P-0001", HmacCloseStatus::closed, kNow))),
            "answer signature does not verify");
  EXPECT_EQ(rejection_detail(answer(
                200, hmac_close_answer_body(kSecret, "P-0002", HmacCloseStatus::closed, kNow))),
            "the answer names another payment");
  // A refusal's error must be a code that starts with a letter.
  EXPECT_EQ(rejection_detail(answer(409, hmac_refusal_body(kSecret, "P-0001", "1", kNow))),
            "the refusal's error is not a code");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::channels
