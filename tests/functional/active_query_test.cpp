// Active query over real HTTP (SPEC §10) with the dev mock gateway as the hmac gateway: a lost
// callback settled by the scheduler, the sweeper applying a paid payment instead of cancelling it
// (and postponing once when the gateway cannot be reached), a sync racing a late callback 100
// times with exactly one application each time, and a restart in the middle of a schedule. Each
// test has a database of its own: a scheduler takes every due payment of its database, and each
// test engine's mock gateway knows only its own payments.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <nlohmann/json.hpp>
#include <thread>

#include "channels/hmac/hmac_channel.hpp"
#include "support/engine_fixture.hpp"
#include "support/fake_gateways.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"
#include "support/test_http_server.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "functional-query-token-5c2d9e";

EnvOverrides query_env(const PrivateDatabase& db, EnvOverrides extra = {}) {
  EnvOverrides env{{"SEATFLOW_API_TOKEN", kToken},
                   {"SEATFLOW_PG_DSN", db.dsn()},
                   {"SEATFLOW_EVENT_SLOT", db.slot()},
                   {"SEATFLOW_QUERY", "on"},
                   {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                   {"SEATFLOW_QUERY_TICK_MS", "50"},
                   {"SEATFLOW_QUERY_SCHEDULE", "300ms,300ms,300ms"}};
  for (auto& [name, value] : extra) {
    env[name] = value;
  }
  return env;
}

Response api(const TestEngine& engine, const std::string& method, const std::string& target,
             const json& body = nullptr) {
  return engine.api(method, target, kToken, body.is_null() ? std::string() : body.dump());
}

// An order of one seat and its hmac payment, both through the API (so the payment has its query
// schedule); returns the payment number.
std::string create_payment(const TestEngine& engine, Stores& stores, const std::string& name) {
  const auto order = stores.id(name + "-o");
  const auto payment = stores.id(name);
  const auto o = api(engine, "POST", "/api/orders",
                     {{"orderNo", order},
                      {"userId", "u1"},
                      {"showId", stores.id("show")},
                      {"seatIds", {name + "-seat"}},
                      {"amountCents", 5000}});
  EXPECT_EQ(o.status, 201) << o.body;
  const auto p = api(engine, "POST", "/api/payments",
                     {{"orderNo", order}, {"channel", "hmac"}, {"paymentNo", payment}});
  EXPECT_EQ(p.status, 201) << p.body;
  return payment;
}

void settle_silently(const TestEngine& engine, const std::string& payment, bool success) {
  const auto r = api(engine, "POST", "/api/mock-gateway/pay",
                     {{"paymentNo", payment}, {"success", success}, {"notify", false}});
  ASSERT_EQ(r.status, 200) << r.body;
}

int count(Stores& stores, const std::string& sql, const std::string& arg) {
  pqxx::work tx(stores.pg());
  return tx.exec_params1(sql, arg)[0].as<int>();
}

TEST(ActiveQuery, ALostCallbackIsSettledByTheSchedulerWithinItsFirstStep) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  TestEngine engine(query_env(db));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto payment = create_payment(engine, stores, "lost");
  settle_silently(engine, payment, true);
  EXPECT_TRUE(wait_until([&] { return stores.payment_status(payment) == 1; }, 10s)) << engine.log();
  EXPECT_EQ(stores.order_status(stores.id("lost-o")), 1);
  EXPECT_EQ(stores.seat(stores.id("show"), "lost-seat"), "2:" + stores.id("lost-o"));
  const auto log = stores.log_row("query:" + payment + ":1");
  ASSERT_TRUE(log.has_value());
  EXPECT_EQ(log->status, 1);
  EXPECT_GE(metric_value(engine.metrics(),
                         R"(seatflow_payment_query_total{channel="hmac",result="paid"})")
                .value_or(0),
            1);
}

TEST(ActiveQuery, APaymentFailedAtTheGatewayIsMovedToFailed) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  TestEngine engine(query_env(db));
  ASSERT_TRUE(engine.healthy());
  const auto payment = create_payment(engine, stores, "declined");
  settle_silently(engine, payment, false);
  EXPECT_TRUE(wait_until([&] { return stores.payment_status(payment) == 2; }, 10s));
  EXPECT_EQ(stores.order_status(stores.id("declined-o")), 0);
}

TEST(ActiveQuery, SyncAnswersThePaymentWithTheQueryResult) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  // A long schedule: only the sync asks.
  TestEngine engine(query_env(db, {{"SEATFLOW_QUERY_SCHEDULE", "10m"}}));
  ASSERT_TRUE(engine.healthy());
  const auto payment = create_payment(engine, stores, "sync");
  auto pending = api(engine, "POST", "/api/payments/" + payment + "/sync");
  ASSERT_EQ(pending.status, 200) << pending.body;
  EXPECT_EQ(json::parse(pending.body)["query"]["result"], "pending");
  EXPECT_EQ(json::parse(pending.body)["status"], "PENDING");
  settle_silently(engine, payment, true);
  const auto paid = api(engine, "POST", "/api/payments/" + payment + "/sync");
  ASSERT_EQ(paid.status, 200) << paid.body;
  const auto body = json::parse(paid.body);
  EXPECT_EQ(body["query"]["result"], "paid");
  EXPECT_EQ(body["query"]["outcome"], "applied");
  EXPECT_EQ(body["status"], "SUCCESS");
  EXPECT_EQ(body["orderStatus"], "PAID");
  // Asking again is an ordinary duplicate.
  const auto again = api(engine, "POST", "/api/payments/" + payment + "/sync");
  EXPECT_EQ(json::parse(again.body)["query"]["outcome"], "duplicate");
  EXPECT_EQ(api(engine, "POST", "/api/payments/" + stores.id("nobody") + "/sync").status, 404);
}

TEST(ActiveQuery, TheSweeperAppliesAPaidPaymentInsteadOfCancellingIt) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  TestEngine engine(query_env(db, {{"SEATFLOW_QUERY_SCHEDULE", "10m"},
                                   {"SEATFLOW_ORDER_TIMEOUT_MS", "1000"},
                                   {"SEATFLOW_SWEEPER", "on"},
                                   {"SEATFLOW_SWEEP_INTERVAL_MS", "100"}}));
  ASSERT_TRUE(engine.healthy());
  const auto paid = create_payment(engine, stores, "paid");
  const auto unpaid = create_payment(engine, stores, "unpaid");
  settle_silently(engine, paid, true);
  EXPECT_TRUE(wait_until([&] { return stores.order_status(stores.id("unpaid-o")) == 2; }, 10s));
  EXPECT_TRUE(wait_until([&] { return stores.order_status(stores.id("paid-o")) == 1; }, 10s));
  EXPECT_EQ(stores.payment_status(paid), 1);
  EXPECT_EQ(stores.payment_status(unpaid), 3);
  EXPECT_EQ(stores.seat(stores.id("show"), "paid-seat"), "2:" + stores.id("paid-o"));
  EXPECT_EQ(stores.seat(stores.id("show"), "unpaid-seat"), "");
  EXPECT_EQ(stores.discrepancies(paid, "paid_after_cancel"), 0);
}

TEST(ActiveQuery, AnUnreachableGatewayPostponesTheCancelOnceThenItCancels) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  const auto closed_port = free_port();
  TestEngine engine(query_env(
      db, {{"SEATFLOW_QUERY_SCHEDULE", "1500ms"},
           {"SEATFLOW_HMAC_GATEWAY_URL", "http://127.0.0.1:" + std::to_string(closed_port)},
           // A gateway that is only asked (SPEC §10), never told to create or close.
           {"SEATFLOW_GATEWAY_CREATE", "off"},
           {"SEATFLOW_GATEWAY_CLOSE", "off"},
           {"SEATFLOW_ORDER_TIMEOUT_MS", "1000"},
           {"SEATFLOW_SWEEPER", "on"},
           {"SEATFLOW_SWEEP_INTERVAL_MS", "100"}}));
  ASSERT_TRUE(engine.healthy());
  const auto payment = create_payment(engine, stores, "away");
  const auto delayed = [&] {
    return count(stores,
                 "SELECT count(*) FROM payment_query WHERE payment_no = $1 AND sweep_delayed",
                 payment) == 1;
  };
  EXPECT_TRUE(wait_until(delayed, 10s));
  // Postponed: still pending right after its first expiry.
  EXPECT_EQ(stores.order_status(stores.id("away-o")), 0);
  EXPECT_TRUE(wait_until([&] { return stores.order_status(stores.id("away-o")) == 2; }, 10s));
  EXPECT_GE(metric_value(engine.metrics(),
                         R"(seatflow_payment_query_total{channel="hmac",result="unreachable"})")
                .value_or(0),
            1);
}

TEST(ActiveQuery, ASyncRacingALateCallbackAppliesOnceEveryTime) {
  constexpr int kRounds = 100;
  PrivateDatabase db;
  Stores stores(db.dsn());
  TestEngine engine(query_env(db, {{"SEATFLOW_QUERY_SCHEDULE", "10m"}}));
  ASSERT_TRUE(engine.healthy());
  const channels::HmacChannel gateway(channels::HmacConfig{{kTestSecret}, 300'000});
  for (int i = 0; i < kRounds; ++i) {
    const auto payment = create_payment(engine, stores, "race" + std::to_string(i));
    settle_silently(engine, payment, true);
    const auto now_ms = domain::unix_time_ms();
    auto sync = std::async(std::launch::async, [&] {
      return api(engine, "POST", "/api/payments/" + payment + "/sync");
    });
    const auto late = engine.notify(gateway.signed_body("late-" + payment, payment, 1, now_ms));
    const auto synced = sync.get();
    ASSERT_EQ(late.status, 200) << late.body;
    ASSERT_EQ(synced.status, 200) << synced.body;
    EXPECT_EQ(stores.payment_status(payment), 1);
    // Exactly one of the two made the move.
    const auto order = stores.id("race" + std::to_string(i) + "-o");
    int succeeded = 0;
    int paid = 0;
    for (const auto& event : stores.events(payment, order)) {
      succeeded += event.event_id == "payment.succeeded:" + payment ? 1 : 0;
      paid += event.event_id == "order.paid:" + order ? 1 : 0;
    }
    EXPECT_EQ(succeeded, 1) << "round " << i;
    EXPECT_EQ(paid, 1) << "round " << i;
  }
}

TEST(ActiveQuery, ARestartInTheMiddleOfAScheduleNeitherLosesNorDoublesIt) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  std::atomic<int> asked{0};
  TestHttpServer gateway(
      [&](const ServerRequest&) {
        ++asked;
        return ServerResponse{202, {}, "", 0};
      },
      false);
  const EnvOverrides env{{"SEATFLOW_HMAC_GATEWAY_URL", gateway.base_url()},
                         {"SEATFLOW_GATEWAY_CREATE", "off"},
                         {"SEATFLOW_QUERY_SCHEDULE", "200ms,400ms,2s,400ms,10m"}};
  std::string payment;
  int before = 0;
  {
    TestEngine first(query_env(db, env));
    ASSERT_TRUE(first.healthy());
    payment = create_payment(first, stores, "restart");
    const auto attempts = [&] {
      return count(stores, "SELECT attempts FROM payment_query WHERE payment_no = $1", payment);
    };
    ASSERT_TRUE(wait_until([&] { return attempts() >= 2; }, 10s));
    EXPECT_EQ(first.process().stop(), 0);
    before = attempts();
  }
  TestEngine second(query_env(db, env));
  ASSERT_TRUE(second.healthy());
  EXPECT_TRUE(wait_until(
      [&] {
        return count(stores, "SELECT attempts FROM payment_query WHERE payment_no = $1", payment) ==
               4;
      },
      10s));
  // The schedule went on where it was: four queries 200 ms, 400 ms, 2 s and 400 ms apart, the fifth
  // step ten minutes away; every attempt asked the gateway exactly once.
  EXPECT_GE(before, 2);
  EXPECT_LT(before, 4);
  EXPECT_EQ(asked.load(), 4);
  EXPECT_EQ(count(stores, "SELECT attempts FROM payment_query WHERE payment_no = $1", payment), 4);
  EXPECT_EQ(count(stores,
                  "SELECT count(*) FROM payment_query WHERE payment_no = $1 AND "
                  "next_at > now() + interval '5 minutes' AND next_at < 'infinity'",
                  payment),
            1);
}

// `seatflow query <paymentNo>` asks the gateway (here the running engine's mock gateway) and
// applies the answer once; asking again is a duplicate; an unknown payment exits 1.
TEST(ActiveQuery, TheQueryCommandSettlesAPaymentFromTheCommandLine) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  TestEngine engine(query_env(db, {{"SEATFLOW_QUERY_SCHEDULE", "10m"}}));
  ASSERT_TRUE(engine.healthy());
  const auto payment = create_payment(engine, stores, "cli");
  settle_silently(engine, payment, true);
  const EnvOverrides env{
      {"SEATFLOW_PROFILE", "dev"},
      {"SEATFLOW_PG_DSN", db.dsn()},
      {"SEATFLOW_REDIS_URL", test_redis_url()},
      {"SEATFLOW_CALLBACK_SECRETS", kTestSecret},
      {"SEATFLOW_HMAC_GATEWAY_URL", "http://127.0.0.1:" + std::to_string(engine.port())},
      {"SEATFLOW_LOG_LEVEL", "warn"}};
  const auto first = run_to_exit({"query", payment}, env);
  EXPECT_EQ(first.exit_code, 0) << first.output;
  EXPECT_NE(first.output.find("result=paid outcome=applied"), std::string::npos) << first.output;
  EXPECT_EQ(stores.payment_status(payment), 1);
  EXPECT_EQ(stores.order_status(stores.id("cli-o")), 1);
  const auto again = run_to_exit({"query", payment}, env);
  EXPECT_EQ(again.exit_code, 0) << again.output;
  EXPECT_NE(again.output.find("outcome=duplicate"), std::string::npos) << again.output;
  const auto unknown = run_to_exit({"query", stores.id("nobody")}, env);
  EXPECT_EQ(unknown.exit_code, 1) << unknown.output;
}

// An alipay payment whose notify never came, settled through alipay.trade.query against a fake
// Alipay over real HTTPS (the test CA as SEATFLOW_QUERY_CA_FILE), with the merchant key signing the
// requests and Alipay's key the answers; a forged answer changes nothing and is counted.
TEST(ActiveQuery, AnAlipayPaymentIsSettledByAlipayTradeQueryOverHttps) {
  constexpr const char* kAppId = "2021000000000001";
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeAlipay alipay(kAppId, test_key("merchant"), test_key("alipay"));
  TestEngine engine(
      query_env(db, {{"SEATFLOW_ALIPAY_APP_ID", kAppId},
                     {"SEATFLOW_ALIPAY_PUBLIC_KEY", test_key("alipay").public_pem_path},
                     {"SEATFLOW_ALIPAY_GATEWAY_URL", alipay.url()},
                     {"SEATFLOW_ALIPAY_APP_PRIVATE_KEY", test_key("merchant").private_pem_path},
                     {"SEATFLOW_QUERY_CA_FILE", make_test_ca().ca_pem_path},
                     {"SEATFLOW_QUERY_SCHEDULE", "10m"}}));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto order = stores.id("ali-o");
  const auto payment = stores.id("ali");
  ASSERT_EQ(api(engine, "POST", "/api/orders",
                {{"orderNo", order},
                 {"userId", "u1"},
                 {"showId", stores.id("show")},
                 {"seatIds", {"ali-seat"}},
                 {"amountCents", 5000}})
                .status,
            201);
  ASSERT_EQ(api(engine, "POST", "/api/payments",
                {{"orderNo", order}, {"channel", "alipay"}, {"paymentNo", payment}})
                .status,
            201);
  alipay.set_trade(payment, {"TRADE_SUCCESS", 5000, "2026120122001"});
  alipay.set_answer(FakeAnswer::bad_signature);
  const auto forged = json::parse(api(engine, "POST", "/api/payments/" + payment + "/sync").body);
  EXPECT_EQ(forged["query"]["result"], "rejected");
  EXPECT_EQ(forged["status"], "PENDING");
  alipay.set_answer(FakeAnswer::honest);
  const auto paid = json::parse(api(engine, "POST", "/api/payments/" + payment + "/sync").body);
  EXPECT_EQ(paid["query"]["result"], "paid");
  EXPECT_EQ(paid["query"]["outcome"], "applied");
  EXPECT_EQ(paid["status"], "SUCCESS");
  EXPECT_EQ(paid["channelTradeNo"], "2026120122001");
  EXPECT_EQ(alipay.refused_signatures(), 0);  // every request was signed with the merchant key
  EXPECT_EQ(metric_value(engine.metrics(),
                         R"(seatflow_payment_query_total{channel="alipay",result="rejected"})"),
            1);
  // The forged answer's body is never logged.
  EXPECT_EQ(engine.log().find("alipay_trade_query_response"), std::string::npos);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
