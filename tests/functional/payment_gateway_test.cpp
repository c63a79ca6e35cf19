// The payment at its gateway over real HTTP (SPEC §16): POST /api/payments creates it at the fake
// hmac gateway and at the fake Stripe (a refusal or no answer is a 502 that keeps the payment
// PENDING, and asking again is the same trade, never a second); the close API closes there first
// (closed, paid → applied and 409, refused or unverified → 502 and nothing moves, force); the
// sweeper cancels only what the gateway closed, tries again, and cancels anyway after the grace;
// SEATFLOW_AUTO_REFUND refunds a paid_after_cancel at once.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/engine_fixture.hpp"
#include "support/fake_gateways.hpp"
#include "support/fake_stripe.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"
#include "support/test_keys.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "functional-gateway-token-3a7d1e";
const std::string kStripeKey = "sk_test_functional_gateway_61c0d9e2";

Response api(const TestEngine& engine, const std::string& method, const std::string& target,
             const json& body = nullptr) {
  return engine.api(method, target, kToken, body.is_null() ? std::string() : body.dump());
}

json body_of(const Response& response) {
  return json::parse(response.body, nullptr, false);
}

EnvOverrides hmac_env(const FakeHmacGateway& gateway, EnvOverrides extra = {}) {
  EnvOverrides env{{"SEATFLOW_API_TOKEN", kToken},
                   {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                   {"SEATFLOW_HMAC_GATEWAY_URL", gateway.url()},
                   {"SEATFLOW_QUERY_SCHEDULE", "10m"}};
  for (auto& [name, value] : extra) {
    env[name] = value;
  }
  return env;
}

// An order of one seat; its number.
std::string order_of(const TestEngine& engine, Stores& stores, const std::string& name) {
  const auto order = stores.id(name + "-o");
  const auto created = api(engine, "POST", "/api/orders",
                           {{"orderNo", order},
                            {"userId", "u1"},
                            {"showId", stores.id("show")},
                            {"seatIds", {name + "-seat"}},
                            {"amountCents", 5000}});
  EXPECT_EQ(created.status, 201) << created.body;
  return order;
}

Response create_payment(const TestEngine& engine, Stores& stores, const std::string& name,
                        const std::string& channel = "hmac") {
  return api(
      engine, "POST", "/api/payments",
      {{"orderNo", stores.id(name + "-o")}, {"channel", channel}, {"paymentNo", stores.id(name)}});
}

double metric(const TestEngine& engine, const std::string& series) {
  return metric_value(engine.metrics(), series).value_or(0);
}

TEST(PaymentGateway, CreateIsOneTradeAtTheGatewayAndARefusalIs502ThatAskingAgainRepairs) {
  FakeHmacGateway gateway(kTestSecret);
  Stores stores;
  TestEngine engine(hmac_env(gateway));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  // Refused: 502, the payment PENDING without "pay"; nothing made at the gateway.
  order_of(engine, stores, "refused");
  gateway.set_answer(FakeAnswer::refuse);
  const auto refused = create_payment(engine, stores, "refused");
  ASSERT_EQ(refused.status, 502) << refused.body;
  EXPECT_EQ(body_of(refused)["result"], "refused");
  EXPECT_EQ(body_of(refused)["payment"]["status"], "PENDING");
  EXPECT_TRUE(body_of(refused)["payment"]["pay"].is_null());
  // An answer that does not verify is no creation either.
  gateway.set_answer(FakeAnswer::bad_signature);
  const auto forged = create_payment(engine, stores, "refused");
  ASSERT_EQ(forged.status, 502) << forged.body;
  EXPECT_EQ(body_of(forged)["result"], "rejected");
  // Asked again: the same trade number, one trade, and its pay URL kept.
  gateway.set_answer(FakeAnswer::honest);
  const auto created = create_payment(engine, stores, "refused");
  ASSERT_EQ(created.status, 200) << created.body;
  const auto pay = body_of(created)["pay"];
  EXPECT_EQ(pay["kind"], "url");
  EXPECT_TRUE(pay["payUrl"].is_string()) << created.body;
  const auto asked = gateway.created(stores.id("refused"));
  ASSERT_TRUE(asked.has_value());
  EXPECT_EQ(asked->amount_cents, 5000);
  EXPECT_GT(asked->expires_at_ms, domain::unix_time_ms());
  EXPECT_EQ(asked->notify_url,
            "http://127.0.0.1:" + std::to_string(engine.port()) + "/api/payment/notify/hmac");
  EXPECT_EQ(gateway.trades_created(), 1);
  // Once created, asking again answers what was kept without a call.
  const int requests = gateway.requests();
  const auto again = create_payment(engine, stores, "refused");
  EXPECT_EQ(again.status, 200);
  EXPECT_EQ(body_of(again)["pay"], pay);
  EXPECT_EQ(gateway.requests(), requests);
  EXPECT_EQ(body_of(api(engine, "GET", "/api/payments/" + stores.id("refused")))["pay"], pay);
  // Another payment number for the order is still another payment: 409.
  const auto other = api(engine, "POST", "/api/payments",
                         {{"orderNo", stores.id("refused-o")},
                          {"channel", "hmac"},
                          {"paymentNo", stores.id("other")}});
  EXPECT_EQ(other.status, 409) << other.body;
  EXPECT_EQ(metric(engine, R"(seatflow_gateway_create_total{channel="hmac",result="ok"})"), 1);
  EXPECT_EQ(metric(engine, R"(seatflow_gateway_create_total{channel="hmac",result="refused"})"), 1);
  EXPECT_EQ(metric(engine, R"(seatflow_gateway_create_total{channel="hmac",result="rejected"})"),
            1);
}

TEST(PaymentGateway, AnUnreachableGatewayIs502AndTheCloseOffersForce) {
  Stores stores;
  TestEngine engine(
      {{"SEATFLOW_API_TOKEN", kToken},
       {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
       {"SEATFLOW_HMAC_GATEWAY_URL", "http://127.0.0.1:" + std::to_string(free_port())},
       {"SEATFLOW_QUERY_SCHEDULE", "10m"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  order_of(engine, stores, "away");
  const auto created = create_payment(engine, stores, "away");
  ASSERT_EQ(created.status, 502) << created.body;
  EXPECT_EQ(body_of(created)["result"], "unreachable");
  const auto path = "/api/payments/" + stores.id("away") + "/close";
  const auto unconfirmed = api(engine, "POST", path);
  ASSERT_EQ(unconfirmed.status, 502) << unconfirmed.body;
  EXPECT_EQ(body_of(unconfirmed)["result"], "unreachable");
  EXPECT_TRUE(body_of(unconfirmed).contains("force"));
  EXPECT_EQ(stores.payment_status(stores.id("away")), 0);
  EXPECT_EQ(stores.order_status(stores.id("away-o")), 0);
  EXPECT_EQ(api(engine, "POST", path, {{"force", "yes"}}).status, 400);
  const auto forced = api(engine, "POST", path, {{"force", true}});
  ASSERT_EQ(forced.status, 200) << forced.body;
  EXPECT_EQ(stores.payment_status(stores.id("away")), 3);
  EXPECT_EQ(stores.order_status(stores.id("away-o")), 2);
  EXPECT_NE(engine.log().find("event=close_forced"), std::string::npos);
}

TEST(PaymentGateway, TheCloseAPIMovesNothingTheGatewayDidNotConfirm) {
  FakeHmacGateway gateway(kTestSecret);
  Stores stores;
  TestEngine engine(hmac_env(gateway));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  for (const auto* name : {"shut", "stuck"}) {
    order_of(engine, stores, name);
    ASSERT_EQ(create_payment(engine, stores, name).status, 201);
  }
  // Refused, then unverified: 502 naming why, and nothing moved here.
  const auto stuck = "/api/payments/" + stores.id("stuck") + "/close";
  gateway.set_answer(FakeAnswer::refuse);
  const auto refused = api(engine, "POST", stuck);
  ASSERT_EQ(refused.status, 502) << refused.body;
  EXPECT_EQ(body_of(refused)["result"], "refused");
  EXPECT_EQ(gateway.trade_state(stores.id("stuck")), FakeTradeState::pending);
  // The gateway may have closed it, but its answer proves nothing: nothing moves here either.
  gateway.set_answer(FakeAnswer::unsigned_answer);
  const auto unsigned_close = api(engine, "POST", stuck);
  ASSERT_EQ(unsigned_close.status, 502) << unsigned_close.body;
  EXPECT_EQ(body_of(unsigned_close)["result"], "rejected");
  EXPECT_EQ(stores.payment_status(stores.id("stuck")), 0);
  EXPECT_EQ(stores.order_status(stores.id("stuck-o")), 0);
  // Confirmed: closed at the gateway, then here; the seat given back.
  gateway.set_answer(FakeAnswer::honest);
  const auto shut = api(engine, "POST", "/api/payments/" + stores.id("shut") + "/close");
  ASSERT_EQ(shut.status, 200) << shut.body;
  EXPECT_EQ(gateway.trade_state(stores.id("shut")), FakeTradeState::closed);
  EXPECT_EQ(stores.payment_status(stores.id("shut")), 3);
  EXPECT_EQ(stores.order_status(stores.id("shut-o")), 2);
  EXPECT_EQ(stores.seat(stores.id("show"), "shut-seat"), "");
  EXPECT_EQ(metric(engine, R"(seatflow_gateway_close_total{channel="hmac",result="ok"})"), 1);
  EXPECT_EQ(metric(engine, R"(seatflow_gateway_close_total{channel="hmac",result="refused"})"), 1);
}

TEST(PaymentGateway, AClosePaidAtTheMockGatewayIsAppliedAnd409) {
  Stores stores;
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken}, {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  order_of(engine, stores, "late");
  const auto created = create_payment(engine, stores, "late");
  ASSERT_EQ(created.status, 201) << created.body;
  EXPECT_EQ(body_of(created)["pay"]["payUrl"], "http://127.0.0.1:" + std::to_string(engine.port()) +
                                                   "/api/mock-gateway/checkout/" +
                                                   stores.id("late"));
  // The customer paid just before the close; the callback is lost.
  ASSERT_EQ(api(engine, "POST", "/api/mock-gateway/pay",
                {{"paymentNo", stores.id("late")}, {"success", true}, {"notify", false}})
                .status,
            200);
  const auto closed = api(engine, "POST", "/api/payments/" + stores.id("late") + "/close");
  ASSERT_EQ(closed.status, 409) << closed.body;
  EXPECT_EQ(body_of(closed)["error"], "already paid");
  EXPECT_EQ(body_of(closed)["payment"]["status"], "SUCCESS");
  EXPECT_EQ(stores.order_status(stores.id("late-o")), 1);
  EXPECT_EQ(stores.discrepancies(stores.id("late"), "paid_after_cancel"), 0);
}

TEST(PaymentGateway, StripeCreatesOneIntentUnderItsKeyAndTheCloseCancelsIt) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeStripe stripe(kStripeKey);
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken},
                     {"SEATFLOW_PG_DSN", db.dsn()},
                     {"SEATFLOW_EVENT_SLOT", db.slot()},
                     {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                     {"SEATFLOW_STRIPE_WEBHOOK_SECRETS", "whsec_functional_gateway_7b3e"},
                     {"SEATFLOW_STRIPE_API_KEY", kStripeKey},
                     {"SEATFLOW_STRIPE_API_URL", stripe.url()},
                     {"SEATFLOW_QUERY_CA_FILE", make_test_ca().ca_pem_path},
                     {"SEATFLOW_QUERY_SCHEDULE", "10m"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  for (const auto* name : {"intent", "paid"}) {
    order_of(engine, stores, name);
    const auto created = create_payment(engine, stores, name, "stripe");
    ASSERT_EQ(created.status, 201) << created.body;
    EXPECT_EQ(body_of(created)["pay"]["kind"], "client_secret");
    EXPECT_TRUE(body_of(created)["gatewayRef"].is_string()) << created.body;
  }
  EXPECT_EQ(stripe.intent_count(stores.id("intent")), 1);
  // Closed: the kept intent canceled at Stripe, then here.
  const auto closed = api(engine, "POST", "/api/payments/" + stores.id("intent") + "/close");
  ASSERT_EQ(closed.status, 200) << closed.body;
  EXPECT_EQ(stripe.trade_state(stores.id("intent")), FakeTradeState::closed);
  EXPECT_EQ(stores.payment_status(stores.id("intent")), 3);
  // Paid at Stripe: the query before the close applies it; never cancelled.
  stripe.pay(stores.id("paid"));
  const auto paid = api(engine, "POST", "/api/payments/" + stores.id("paid") + "/close");
  ASSERT_EQ(paid.status, 409) << paid.body;
  EXPECT_EQ(stores.payment_status(stores.id("paid")), 1);
  EXPECT_EQ(stores.order_status(stores.id("paid-o")), 1);
  EXPECT_EQ(engine.log().find(kStripeKey), std::string::npos);
}

TEST(PaymentGateway, TheSweeperRetriesAnUnconfirmedCloseAndCancelsOnlyAfterTheGrace) {
  FakeHmacGateway gateway(kTestSecret);
  PrivateDatabase db;
  Stores stores(db.dsn());
  TestEngine engine(hmac_env(gateway, {{"SEATFLOW_PG_DSN", db.dsn()},
                                       {"SEATFLOW_EVENT_SLOT", db.slot()},
                                       {"SEATFLOW_ORDER_TIMEOUT_MS", "1000"},
                                       {"SEATFLOW_SWEEPER", "on"},
                                       {"SEATFLOW_SWEEP_INTERVAL_MS", "100"},
                                       {"SEATFLOW_CLOSE_GRACE_MS", "2000"}}));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  // Confirmed: closed at the gateway, then cancelled here.
  order_of(engine, stores, "closes");
  ASSERT_EQ(create_payment(engine, stores, "closes").status, 201);
  ASSERT_TRUE(wait_until([&] { return stores.order_status(stores.id("closes-o")) == 2; }, 10s))
      << engine.log();
  EXPECT_EQ(gateway.trade_state(stores.id("closes")), FakeTradeState::closed);
  // Refused on every pass: retried, and cancelled only once the grace after its expiry passed.
  order_of(engine, stores, "refuses");
  ASSERT_EQ(create_payment(engine, stores, "refuses").status, 201);
  gateway.set_answer(FakeAnswer::refuse);
  ASSERT_TRUE(wait_until([&] { return stores.order_status(stores.id("refuses-o")) == 2; }, 10s))
      << engine.log();
  EXPECT_GE(metric(engine, R"(seatflow_gateway_close_total{channel="hmac",result="refused"})"), 3);
  EXPECT_EQ(metric(engine, R"(seatflow_gateway_close_unconfirmed_total{channel="hmac"})"), 1);
  EXPECT_NE(engine.log().find("event=close_unconfirmed"), std::string::npos);
  pqxx::work tx(stores.pg());
  EXPECT_TRUE(tx.exec_params1("SELECT updated_at - expires_at >= interval '2000 ms' FROM "
                              "order_info WHERE order_no = $1",
                              stores.id("refuses-o"))[0]
                  .as<bool>());
  EXPECT_GE(tx.exec_params1("SELECT close_attempts FROM payment_gateway WHERE payment_no = $1",
                            stores.id("refuses"))[0]
                .as<int>(),
            2);
}

TEST(PaymentGateway, AutoRefundGivesAPaidAfterCancelBackAtOnce) {
  FakeHmacGateway gateway(kTestSecret);
  Stores stores;
  TestEngine engine(hmac_env(gateway, {{"SEATFLOW_AUTO_REFUND", "paid_after_cancel"},
                                       {"SEATFLOW_AUTO_REFUND_INTERVAL_MS", "100"}}));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  order_of(engine, stores, "auto");
  ASSERT_EQ(create_payment(engine, stores, "auto").status, 201);
  const auto payment = stores.id("auto");
  ASSERT_EQ(api(engine, "POST", "/api/payments/" + payment + "/close", {{"force", true}}).status,
            200);
  gateway.pay(payment);
  ASSERT_EQ(engine.notify(signed_body(stores.id("auto-cb"), payment, 1)).status, 200);
  ASSERT_EQ(stores.discrepancies(payment, "paid_after_cancel"), 1);
  ASSERT_TRUE(wait_until([&] { return gateway.refunds_made() == 1; }, 10s)) << engine.log();
  EXPECT_EQ(gateway.refunded_cents(), 5000);
  EXPECT_TRUE(wait_until(
      [&] {
        for (const auto& row : body_of(api(engine, "GET", "/api/discrepancies?limit=500"))) {
          if (row["paymentNo"] == payment) {
            return false;  // still open
          }
        }
        return true;
      },
      10s));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
