// The payment dialects against the fake gateways (SPEC §16): each channel's real create and close
// requests through net::HttpClient over loopback (HTTPS with the test CA, plain HTTP for hmac) to a
// fake that checks the merchant's signature and answers in the gateway's own format — one trade
// per payment number however often it is asked, a waiting trade closed, a paid one answered paid,
// and the fake's refusals and bad answers.
#include <gtest/gtest.h>

#include <vector>

#include "channels/alipay/alipay_payment.hpp"
#include "channels/hmac/hmac_payment.hpp"
#include "channels/stripe/stripe_payment.hpp"
#include "channels/wechat/wechat_payment.hpp"
#include "domain/clock.hpp"
#include "net/http_client.hpp"
#include "support/fake_gateways.hpp"
#include "support/fake_stripe.hpp"
#include "support/rejections.hpp"
#include "support/test_http_server.hpp"
#include "support/test_keys.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using channels::CloseState;
using channels::CloseTarget;
using channels::CreateAnswer;
using channels::CreateTarget;
using testing::FakeAnswer;
using testing::FakeTradeState;
using testing::rejection_detail;
using testing::test_key;

const std::string kMchid = "1900000001";
const std::string kMerchantSerial = "3775B6A45ACD588826D15E583A95F5DD";
const std::string kPlatformSerial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";
const std::string kAppId = "2021000000000001";
const std::string kStripeKey = "sk_test_payment_dialects";
const std::string kSecret = "payment-integration-secret";
constexpr net::ClientLimits kLimits{1000, 1000, 256 * 1024};

const net::HttpClient& client() {
  static const net::HttpClient instance(kLimits, testing::make_test_ca().ca_pem_path);
  return instance;
}

net::Url url_of(const std::string& text) {
  return net::parse_url(text).value();
}

CreateTarget target(const std::string& payment_no) {
  return {payment_no,
          "O-" + payment_no,
          5000,
          domain::unix_time_ms() + 900'000,
          "https://seatflow.test/api/payment/notify/x",
          "2 seats"};
}

channels::Result<CreateAnswer> create(const channels::PaymentGatewayDialect& dialect,
                                      const CreateTarget& payment) {
  const auto now = domain::unix_time_ms();
  auto request = dialect.create_request(payment, now);
  if (!request.ok()) {
    return std::move(request).failure();
  }
  const auto response = client().send(request.value());
  if (!response.ok()) {
    return channels::rejected_answer("no answer: " + response.detail());
  }
  return dialect.create_answer(payment, response.value(), now);
}

channels::Result<channels::CloseAnswer> close(const channels::PaymentGatewayDialect& dialect,
                                              const CloseTarget& payment) {
  if (!dialect.close_needs_call(payment)) {
    return channels::CloseAnswer{CloseState::closed, {}};
  }
  const auto now = domain::unix_time_ms();
  auto request = dialect.close_request(payment, now);
  if (!request.ok()) {
    return std::move(request).failure();
  }
  const auto response = client().send(request.value());
  if (!response.ok()) {
    return channels::rejected_answer("no answer: " + response.detail());
  }
  return dialect.close_answer(payment, response.value(), now);
}

CloseState closed_as(const channels::PaymentGatewayDialect& dialect, const CloseTarget& payment) {
  const auto answer = close(dialect, payment);
  EXPECT_TRUE(answer.ok()) << payment.payment_no << ": " << rejection_detail(answer);
  return answer.ok() ? answer.value().state : CloseState::refused;
}

// The life of payments at one gateway, then the bad answers it can give (`bad_modes`: what its
// answers carry that can go wrong).
void expect_lifecycle(const channels::PaymentGatewayDialect& dialect,
                      testing::FakeGatewayState& fake, const std::vector<FakeAnswer>& bad_modes) {
  const auto first = create(dialect, target("P-1"));
  ASSERT_TRUE(first.ok()) << rejection_detail(first);
  ASSERT_TRUE(first.value().created) << first.value().reason;
  const auto again = create(dialect, target("P-1"));
  ASSERT_TRUE(again.ok()) << rejection_detail(again);
  EXPECT_EQ(again.value().value, first.value().value);
  EXPECT_EQ(fake.trades_created(), 1);
  EXPECT_EQ(fake.created("P-1")->requests, 2);
  EXPECT_EQ(fake.created("P-1")->amount_cents, 5000);
  EXPECT_EQ(fake.trade_state("P-1"), FakeTradeState::pending);
  EXPECT_EQ(closed_as(dialect, {"P-1", first.value().gateway_ref}), CloseState::closed);
  EXPECT_EQ(fake.trade_state("P-1"), FakeTradeState::closed);
  EXPECT_EQ(fake.closes(), 1);
  const auto paid = create(dialect, target("P-2"));
  ASSERT_TRUE(paid.ok()) << rejection_detail(paid);
  fake.pay("P-2");
  EXPECT_EQ(closed_as(dialect, {"P-2", paid.value().gateway_ref}), CloseState::paid);
  EXPECT_EQ(closed_as(dialect, {"P-unknown", ""}), CloseState::closed);
  fake.set_answer(FakeAnswer::refuse);
  const auto refused = create(dialect, target("P-3"));
  ASSERT_TRUE(refused.ok()) << rejection_detail(refused);
  EXPECT_FALSE(refused.value().created);
  EXPECT_EQ(closed_as(dialect, {"P-2", paid.value().gateway_ref}), CloseState::refused);
  EXPECT_EQ(fake.trade_state("P-3"), FakeTradeState::unknown);
  for (const auto mode : bad_modes) {
    fake.set_answer(mode);
    EXPECT_EQ(testing::reason_of(create(dialect, target("P-4"))), channels::errc::rejected_answer)
        << static_cast<int>(mode);
  }
  EXPECT_EQ(fake.refused_signatures(), 0);
}

TEST(GatewayPayment, WechatCreatesAndClosesNativeOrders) {
  testing::FakeWechatPay fake(kMchid, kMerchantSerial, test_key("wechat-query-merchant"),
                              kPlatformSerial, test_key("wechat"));
  const channels::WechatPayment dialect({kMchid,
                                         url_of(fake.url()),
                                         test_key("wechat-query-merchant").private_key,
                                         kMerchantSerial,
                                         {{kPlatformSerial, test_key("wechat").public_key}}},
                                        "wx8888888888888888");
  // Its answer to a Native order names no payment: nothing for other_payment to change.
  expect_lifecycle(dialect, fake,
                   {FakeAnswer::malformed_json, FakeAnswer::unsigned_answer,
                    FakeAnswer::bad_signature, FakeAnswer::unknown_serial});
  EXPECT_GT(fake.created("P-1")->expires_at_ms, 0);
}

TEST(GatewayPayment, AlipayPrecreatesAndClosesTrades) {
  testing::FakeAlipay fake(kAppId, test_key("alipay-query-merchant"), test_key("alipay"));
  const channels::AlipayPayment dialect({kAppId, url_of(fake.url()),
                                         test_key("alipay-query-merchant").private_key,
                                         test_key("alipay").public_key});
  expect_lifecycle(dialect, fake,
                   {FakeAnswer::malformed_json, FakeAnswer::other_payment,
                    FakeAnswer::unsigned_answer, FakeAnswer::bad_signature});
  EXPECT_EQ(fake.created("P-1")->notify_url, "https://seatflow.test/api/payment/notify/x");
}

TEST(GatewayPayment, StripeCreatesOneIntentPerPaymentAndCancelsIt) {
  testing::FakeStripe fake(kStripeKey);
  const channels::StripePayment dialect({kStripeKey, url_of(fake.url()), "cny"});
  // Stripe signs nothing: its answers go wrong in what they say.
  expect_lifecycle(
      dialect, fake,
      {FakeAnswer::malformed_json, FakeAnswer::other_payment, FakeAnswer::other_amount});
  EXPECT_EQ(fake.intent_count("P-1"), 1);
}

TEST(GatewayPayment, HmacCreatesAndClosesPayments) {
  testing::FakeHmacGateway fake(kSecret);
  const channels::HmacPayment dialect({{kSecret}, 300'000}, url_of(fake.url()));
  expect_lifecycle(dialect, fake,
                   {FakeAnswer::malformed_json, FakeAnswer::other_payment,
                    FakeAnswer::unsigned_answer, FakeAnswer::bad_signature});
  EXPECT_GT(fake.created("P-1")->expires_at_ms, 0);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
