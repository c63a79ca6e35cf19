// Functional tests: rejected hmac callbacks answer their status and leave nothing behind.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "support/engine_fixture.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// A pending payment with one locked seat; checks that nothing about it has changed.
struct Untouched {
  explicit Untouched(Stores& s)
      : stores(s), payment(s.id("pay")), order(s.id("ord")), show(s.id("show")) {
    s.create_pending(payment, order, show, {"C1"});
  }
  void expect_unchanged() {
    EXPECT_EQ(stores.payment_status(payment), 0);
    EXPECT_FALSE(stores.payment_paid_at_set(payment));
    EXPECT_EQ(stores.order_status(order), 0);
    EXPECT_EQ(stores.seat(show, "C1"), "1:" + order);
    EXPECT_EQ(stores.log_rows_for_payment(payment), 0);
  }
  Stores& stores;
  std::string payment;
  std::string order;
  std::string show;
};

TEST(Rejection, BadSignatureIs401AndWritesNothing) {
  Stores stores;
  Untouched u(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto callback_id = stores.id("cb1");
  // Signed with a secret the engine does not know.
  const auto body =
      signed_body(callback_id, u.payment, 1, domain::unix_time_ms(), "not-the-configured-secret");

  const auto response = engine.notify(body);
  EXPECT_EQ(response.status, 401) << response.body << response.error;
  EXPECT_FALSE(stores.log_row(callback_id).has_value());
  u.expect_unchanged();
  EXPECT_EQ(engine.callbacks("rejected_signature"), 1.0);
  EXPECT_EQ(engine.callbacks("applied"), 0.0);
}

TEST(Rejection, TamperedSignatureIs401) {
  Stores stores;
  Untouched u(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  auto body = signed_body(stores.id("cb1"), u.payment, 1);
  const auto sign = sign_of(body);
  ASSERT_EQ(sign.size(), 64U);
  auto tampered = sign;
  tampered[10] = tampered[10] == '0' ? '1' : '0';
  body.replace(body.find(sign), sign.size(), tampered);

  EXPECT_EQ(engine.notify(body).status, 401);
  u.expect_unchanged();
}

// SPEC §14 "a wrong clock is visible": an authentic callback signed ten minutes ago (as an engine
// whose clock runs ten minutes ahead sees it) is 401 counted as `stale`, logged once a minute at
// most with the skew; a forgery with the same old timestamp stays rejected_signature.
TEST(Rejection, StaleTimestampIs401CountedStaleLoggedOnceAndWritesNothing) {
  Stores stores;
  Untouched u(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto callback_id = stores.id("cb1");
  const auto old_ms = domain::unix_time_ms() - 600'000;
  for (int i = 0; i < 3; ++i) {
    const auto response = engine.notify(signed_body(callback_id, u.payment, 1, old_ms));
    EXPECT_EQ(response.status, 401) << response.body << response.error;
  }
  const auto forged = engine.notify(
      signed_body(stores.id("cb2"), u.payment, 1, old_ms, "not-the-functional-test-secret"));
  EXPECT_EQ(forged.status, 401) << forged.body << forged.error;

  EXPECT_FALSE(stores.log_row(callback_id).has_value());
  EXPECT_FALSE(stores.log_row(stores.id("cb2")).has_value());
  u.expect_unchanged();
  EXPECT_EQ(engine.callbacks("stale"), 3.0);
  EXPECT_EQ(engine.callbacks("rejected_signature"), 1.0);
  const auto log = engine.await_log("event=clock_skew");
  const auto first = log.find("event=clock_skew channel=hmac skew_ms=");
  ASSERT_NE(first, std::string::npos) << log;
  EXPECT_EQ(log.find("event=clock_skew", first + 1), std::string::npos) << "one line a minute";
  const auto skew = std::stoll(
      log.substr(first + std::string_view("event=clock_skew channel=hmac skew_ms=").size()));
  EXPECT_GE(skew, 600'000);
  EXPECT_LT(skew, 660'000);
}

TEST(Rejection, SignedUnknownStatusIs400AndWritesNothing) {
  Stores stores;
  Untouched u(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto callback_id = stores.id("cb1");

  const auto response = engine.notify(signed_body(callback_id, u.payment, 3));
  EXPECT_EQ(response.status, 400) << response.body << response.error;
  EXPECT_FALSE(stores.log_row(callback_id).has_value());
  u.expect_unchanged();
  EXPECT_EQ(engine.callbacks("rejected_param"), 1.0);
}

TEST(Rejection, MalformedJsonIs400) {
  Stores stores;
  Untouched u(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  EXPECT_EQ(engine.notify("{\"callbackId\": \"x\", \"paymentNo\": ").status, 400);
  EXPECT_EQ(engine.notify("not json at all").status, 400);
  EXPECT_EQ(engine.notify("[1,2,3]").status, 400);
  u.expect_unchanged();
}

TEST(Rejection, UnknownPaymentIs404WithNoLogRow) {
  Stores stores;
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto callback_id = stores.id("cb1");
  const auto payment = stores.id("no-such-payment");

  const auto response = engine.notify(signed_body(callback_id, payment, 1));
  EXPECT_EQ(response.status, 404) << response.body << response.error;
  EXPECT_FALSE(stores.log_row(callback_id).has_value());
  EXPECT_EQ(stores.log_rows_for_payment(payment), 0);
  EXPECT_EQ(engine.callbacks("unknown_payment"), 1.0);
}

TEST(Rejection, CallbackOnAnotherChannelsPaymentIs400AndWritesNothing) {
  Stores stores;
  const auto payment = stores.id("pay");
  const auto order = stores.id("ord");
  const auto show = stores.id("show");
  stores.create_order(order, show, {"D1"}, 5000);
  stores.create_payment(payment, order, "alipay", 5000);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto callback_id = stores.id("cb1");

  const auto response = engine.notify(signed_body(callback_id, payment, 1));
  EXPECT_EQ(response.status, 400) << response.body << response.error;
  EXPECT_FALSE(stores.log_row(callback_id).has_value());
  EXPECT_EQ(stores.payment_status(payment), 0);
  EXPECT_EQ(stores.order_status(order), 0);
  EXPECT_EQ(stores.seat(show, "D1"), "1:" + order);
}

TEST(Rejection, UnconfiguredChannelsAre404) {
  Stores stores;
  Untouched u(stores);
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto body = signed_body(stores.id("cb1"), u.payment, 1);
  EXPECT_EQ(engine.notify(body, "alipay").status, 404);
  EXPECT_EQ(engine.notify(body, "wechat").status, 404);
  EXPECT_EQ(engine.notify(body, "nosuchchannel").status, 404);
  u.expect_unchanged();
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
