// Bill reconciliation through the real binary (SPEC §13): `seatflow reconcile-bill` and its exit
// codes, the bill-run API routes behind the token with their 400s and metrics, and a whole day
// through the dev profile: the mock gateway settles and refunds payments, its bill is reconciled
// end to end. Each test has a database of its own (a run reads every payment of its channel).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "support/bill_world.hpp"
#include "support/engine_fixture.hpp"
#include "support/fake_hmac_bill.hpp"
#include "support/payment_checks.hpp"
#include "support/process.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "functional-bill-token-8e1f4a";
const std::string kDay = "2026-11-20";
const auto kMorning = shanghai_ms(kDay, 10, 0);

ExitResult reconcile_bill(const EnvOverrides& env, const std::string& channel = "hmac",
                          const std::string& date = kDay) {
  return run_to_exit({"reconcile-bill", "--channel", channel, "--date", date}, env);
}

// A SUCCESS hmac payment paid on kDay with trade `trade`.
std::string paid(Stores& stores, const std::string& name, const std::string& trade) {
  const auto payment = stores.id(name);
  stores.create_order(stores.id(name + "-o"), stores.id("show"), {name}, 5000, 1);
  stores.create_payment(payment, stores.id(name + "-o"), "hmac", 5000, 1);
  pqxx::work tx(stores.pg());
  tx.exec_params(
      "UPDATE payment_order SET channel_trade_no = $2, paid_at = to_timestamp($3::bigint / "
      "1000.0) WHERE payment_no = $1",
      payment, trade, kMorning);
  tx.commit();
  return payment;
}

TEST(ReconcileBillCli, ExitCodesSayWhatTheRunFound) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kBillSecret);
  const auto env = bill_cli_env(db, gateway.url());
  const auto match = paid(stores, "match", "T-match");
  gateway.set_bill(kDay, {bill_payment("T-match", match, 5000, kMorning)});
  const auto clean = reconcile_bill(env);
  EXPECT_EQ(clean.exit_code, 0) << clean.output;
  EXPECT_NE(clean.output.find("state=done rows=1 matched=1"), std::string::npos) << clean.output;

  gateway.set_bill(kDay, {bill_payment("T-match", match, 5000, kMorning),
                          bill_payment("T-ghost", "ghost", 100, kMorning)});
  const auto found = reconcile_bill(env);
  EXPECT_EQ(found.exit_code, 1) << found.output;
  EXPECT_NE(found.output.find("discrepancies=1"), std::string::npos) << found.output;

  gateway.set_answer(kDay, 425, "making it", "");
  EXPECT_EQ(reconcile_bill(env).exit_code, 3);
  gateway.set_answer(kDay, 200, "tradeNo,paymentNo,type,amountCents,completedAt\n",
                     std::string(64, '0'));
  const auto forged = reconcile_bill(env);
  EXPECT_EQ(forged.exit_code, 3) << forged.output;
  EXPECT_NE(forged.output.find("state=failed"), std::string::npos) << forged.output;
  auto unreachable = env;
  unreachable["SEATFLOW_HMAC_GATEWAY_URL"] = "http://127.0.0.1:" + std::to_string(free_port());
  EXPECT_EQ(reconcile_bill(unreachable).exit_code, 3);

  EXPECT_EQ(reconcile_bill(env, "paypal").exit_code, 2);
  EXPECT_EQ(reconcile_bill(env, "hmac", "2026-02-30").exit_code, 2);
  EXPECT_EQ(run_to_exit({"reconcile-bill", "--channel", "hmac"}, env).exit_code, 2);
  EXPECT_EQ(reconcile_bill(env, "alipay").exit_code, 2);  // no bill source configured
  auto no_store = env;
  no_store["SEATFLOW_PG_DSN"] = "postgresql://postgres@127.0.0.1:" + std::to_string(free_port()) +
                                "/seatflow?connect_timeout=2";
  EXPECT_EQ(reconcile_bill(no_store).exit_code, 2);
}

TEST(ReconcileBillCli, ARunOfTheSameDayInProgressIsRefused) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kBillSecret);
  {
    pqxx::work tx(stores.pg());
    tx.exec_params(
        "INSERT INTO bill_run (channel, bill_date, state, lease_until) "
        "VALUES ('hmac', $1::date, 'running', now() + interval '1 hour')",
        kDay);
    tx.commit();
  }
  const auto refused = reconcile_bill(bill_cli_env(db, gateway.url()));
  EXPECT_EQ(refused.exit_code, 2) << refused.output;
  EXPECT_NE(refused.output.find("in progress"), std::string::npos) << refused.output;
  EXPECT_EQ(gateway.requests(), 0);
}

Response api(const TestEngine& engine, const std::string& method, const std::string& target,
             const json& body = nullptr) {
  return engine.api(method, target, kToken, body.is_null() ? std::string() : body.dump());
}

// The run once it is no longer running.
json finished_run(const TestEngine& engine, std::int64_t id) {
  json run;
  EXPECT_TRUE(wait_until(
      [&] {
        const auto r = api(engine, "GET", "/api/bill-runs/" + std::to_string(id));
        run = json::parse(r.body, nullptr, false);
        return r.status == 200 && run.value("state", "") != "running";
      },
      20s));
  return run;
}

TEST(BillRunsApi, StartListReadAndPageARun) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kTestSecret);
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken},
                     {"SEATFLOW_PG_DSN", db.dsn()},
                     {"SEATFLOW_EVENT_SLOT", db.slot()},
                     {"SEATFLOW_HMAC_GATEWAY_URL", gateway.url()}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto match = paid(stores, "match", "T-match");
  gateway.set_bill(kDay, {bill_payment("T-match", match, 5000, kMorning),
                          bill_payment("T-g1", "ghost-1", 100, kMorning),
                          bill_payment("T-g2", "ghost-2", 100, kMorning)});
  const auto started = api(engine, "POST", "/api/bill-runs", {{"channel", "hmac"}, {"date", kDay}});
  ASSERT_EQ(started.status, 202) << started.body;
  const auto id = json::parse(started.body).at("id").get<std::int64_t>();
  EXPECT_EQ(json::parse(started.body).at("date"), kDay);
  const auto run = finished_run(engine, id);
  EXPECT_EQ(run.value("state", ""), "done") << run.dump();
  EXPECT_EQ(run.value("matched", 0), 1);
  EXPECT_EQ(run.value("discrepancies", 0), 2);
  EXPECT_EQ(run.at("counts").value("unknown_payment", 0), 2);

  const auto list = api(engine, "GET", "/api/bill-runs?channel=hmac&from=2026-11-01&to=2026-11-30");
  ASSERT_EQ(list.status, 200) << list.body;
  EXPECT_EQ(json::parse(list.body).at("runs").size(), 1u);
  const auto none = api(engine, "GET", "/api/bill-runs?channel=hmac&from=2026-12-01");
  EXPECT_EQ(json::parse(none.body).at("runs").size(), 0u);

  const auto page =
      api(engine, "GET",
          "/api/bill-runs/" + std::to_string(id) + "/items?outcome=unknown_payment&limit=1");
  ASSERT_EQ(page.status, 200) << page.body;
  const auto first = json::parse(page.body);
  ASSERT_EQ(first.at("items").size(), 1u);
  EXPECT_EQ(first.at("items")[0].at("outcome"), "unknown_payment");
  const auto cursor = first.at("nextCursor").get<std::string>();
  const auto rest = json::parse(api(engine, "GET",
                                    "/api/bill-runs/" + std::to_string(id) +
                                        "/items?outcome=unknown_payment&cursor=" + cursor)
                                    .body);
  EXPECT_EQ(rest.at("items").size(), 1u);
  EXPECT_TRUE(rest.at("nextCursor").is_null());

  EXPECT_EQ(
      metric_value(engine.metrics(), R"(seatflow_bill_runs_total{channel="hmac",state="done"})")
          .value_or(0),
      1);
  EXPECT_EQ(metric_value(engine.metrics(),
                         R"(seatflow_bill_items_total{channel="hmac",outcome="unknown_payment"})")
                .value_or(0),
            2);
}

TEST(BillRunsApi, RefusalsAreClear) {
  PrivateDatabase db;
  FakeHmacBill gateway(kTestSecret);
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken},
                     {"SEATFLOW_PG_DSN", db.dsn()},
                     {"SEATFLOW_EVENT_SLOT", db.slot()},
                     {"SEATFLOW_HMAC_GATEWAY_URL", gateway.url()}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  EXPECT_EQ(engine.api("GET", "/api/bill-runs", "").status, 401);
  EXPECT_EQ(
      engine.api("POST", "/api/bill-runs", "", R"({"channel":"hmac","date":"2026-11-20"})").status,
      401);
  const auto field_of = [](const Response& r) {
    return json::parse(r.body, nullptr, false).value("field", "");
  };
  const auto bad_channel =
      api(engine, "POST", "/api/bill-runs", {{"channel", "paypal"}, {"date", kDay}});
  EXPECT_EQ(bad_channel.status, 400);
  EXPECT_EQ(field_of(bad_channel), "channel");
  const auto bad_date =
      api(engine, "POST", "/api/bill-runs", {{"channel", "hmac"}, {"date", "2026-13-01"}});
  EXPECT_EQ(bad_date.status, 400);
  EXPECT_EQ(field_of(bad_date), "date");
  EXPECT_EQ(api(engine, "POST", "/api/bill-runs", {{"channel", "alipay"}, {"date", kDay}}).status,
            409);  // no bill source for alipay here
  {
    // A run of that channel and date in progress (another engine's, or the CLI's).
    Stores stores(db.dsn());
    pqxx::work tx(stores.pg());
    tx.exec_params(
        "INSERT INTO bill_run (channel, bill_date, state, lease_until) "
        "VALUES ('hmac', $1::date, 'running', now() + interval '1 hour')",
        kDay);
    tx.commit();
  }
  const auto busy = api(engine, "POST", "/api/bill-runs", {{"channel", "hmac"}, {"date", kDay}});
  EXPECT_EQ(busy.status, 409) << busy.body;
  EXPECT_EQ(gateway.requests(), 0);
  EXPECT_EQ(api(engine, "GET", "/api/bill-runs?from=yesterday").status, 400);
  EXPECT_EQ(api(engine, "GET", "/api/bill-runs?limit=0").status, 400);
  EXPECT_EQ(api(engine, "GET", "/api/bill-runs?colour=red").status, 400);
  EXPECT_EQ(api(engine, "GET", "/api/bill-runs/abc").status, 400);
  EXPECT_EQ(api(engine, "GET", "/api/bill-runs/999999").status, 404);
  EXPECT_EQ(api(engine, "GET", "/api/bill-runs/999999/items").status, 404);
  EXPECT_EQ(api(engine, "GET", "/api/bill-runs/1/items?outcome=lost").status, 400);
  EXPECT_EQ(api(engine, "GET", "/api/bill-runs/1/items?cursor=-1").status, 400);
}

TEST(BillSchedule, YesterdaysBillIsRunByTheSchedule) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeHmacBill gateway(kTestSecret);
  std::string yesterday;
  {
    pqxx::work tx(stores.pg());
    yesterday = tx.exec1("SELECT ((now() AT TIME ZONE 'Asia/Shanghai')::date - 1)::text")[0]
                    .as<std::string>();
  }
  gateway.set_bill(yesterday, {bill_payment("T-ghost", "ghost", 100, kMorning)});
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken},
                     {"SEATFLOW_PG_DSN", db.dsn()},
                     {"SEATFLOW_EVENT_SLOT", db.slot()},
                     {"SEATFLOW_HMAC_GATEWAY_URL", gateway.url()},
                     {"SEATFLOW_BILL_RECON", "on"},
                     {"SEATFLOW_BILL_RECON_AT", "00:00"},
                     // Yesterday has ended at any time of today (the default edge would hold it
                     // back for the first 15 minutes of the day).
                     {"SEATFLOW_BILL_EDGE_MS", "0"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  json runs;
  EXPECT_TRUE(wait_until(
      [&] {
        runs = json::parse(api(engine, "GET", "/api/bill-runs?channel=hmac").body, nullptr, false);
        return runs.is_object() && runs.at("runs").size() == 1 &&
               runs.at("runs")[0].value("state", "") == "done";
      },
      20s))
      << runs.dump() << engine.log();
  EXPECT_EQ(runs.at("runs")[0].value("date", ""), yesterday);
  EXPECT_EQ(runs.at("runs")[0].value("discrepancies", 0), 1);
  EXPECT_EQ(gateway.requests(), 1);
}

// The day reconciled end to end: two days ago in the bill's zone (a day that has ended; SPEC §13
// refuses one still going on), from PostgreSQL (the engine computes its days there too); its
// date and a moment of it (Unix ms).
struct PastDay {
  std::string date;
  std::int64_t at_ms = 0;
};

PastDay past_day(Stores& stores) {
  pqxx::work tx(stores.pg());
  const auto row = tx.exec1(
      "SELECT ((now() - interval '2 days') AT TIME ZONE 'Asia/Shanghai')::date::text, "
      "(extract(epoch FROM now() - interval '2 days') * 1000)::bigint");
  return {row[0].as<std::string>(), row[1].as<std::int64_t>()};
}

// The payment paid here on the day (its paid_at moved back to `at_ms`).
void paid_on(Stores& stores, const std::string& payment, std::int64_t at_ms) {
  pqxx::work tx(stores.pg());
  tx.exec_params(
      "UPDATE payment_order SET paid_at = to_timestamp($2::bigint / 1000.0) WHERE payment_no = $1",
      payment, at_ms);
  tx.commit();
}

std::string create_payment(const TestEngine& engine, Stores& stores, const std::string& name) {
  const auto order = stores.id(name + "-o");
  const auto o = api(engine, "POST", "/api/orders",
                     {{"orderNo", order},
                      {"userId", "u1"},
                      {"showId", stores.id("show")},
                      {"seatIds", {name + "-seat"}},
                      {"amountCents", 5000}});
  EXPECT_EQ(o.status, 201) << o.body;
  const auto p = api(engine, "POST", "/api/payments",
                     {{"orderNo", order}, {"channel", "hmac"}, {"paymentNo", stores.id(name)}});
  EXPECT_EQ(p.status, 201) << p.body;
  return stores.id(name);
}

// Settled at the mock gateway without its callback (lost), on the day of `at_ms` when not 0.
void mock_pay(const TestEngine& engine, const std::string& payment, bool notify,
              std::int64_t at_ms = 0) {
  json body = {{"paymentNo", payment}, {"success", true}, {"notify", notify}};
  if (at_ms > 0) {
    body["atMs"] = at_ms;
  }
  const auto r = api(engine, "POST", "/api/mock-gateway/pay", body);
  ASSERT_EQ(r.status, 200) << r.body;
}

std::vector<std::string> outcomes_of(const TestEngine& engine, std::int64_t id,
                                     const std::string& payment) {
  const auto page =
      json::parse(api(engine, "GET", "/api/bill-runs/" + std::to_string(id) + "/items").body);
  std::vector<std::string> out;
  for (const auto& item : page.at("items")) {
    if (item.at("paymentNo") == payment) {
      out.push_back(item.at("outcome").get<std::string>() + "/" +
                    item.at("kind").get<std::string>());
    }
  }
  return out;
}

TEST(BillFullDay, TheMockGatewaysBillIsReconciledEndToEnd) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  TestEngine engine({{"SEATFLOW_API_TOKEN", kToken},
                     {"SEATFLOW_PG_DSN", db.dsn()},
                     {"SEATFLOW_EVENT_SLOT", db.slot()},
                     {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                     {"SEATFLOW_BILL_EDGE_MS", "0"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto day = past_day(stores);
  // Settled at the gateway on the day, its callback then sent (here, by hand) and paid here.
  const auto paid_one = create_payment(engine, stores, "paid");
  mock_pay(engine, paid_one, false, day.at_ms);
  ASSERT_EQ(engine.notify(signed_body("cb-" + paid_one, paid_one, 1)).status, 200);
  paid_on(stores, paid_one, day.at_ms);
  const auto lost = create_payment(engine, stores, "lost");
  mock_pay(engine, lost, false, day.at_ms);  // settled at the gateway, its callback lost
  const auto cancelled = create_payment(engine, stores, "cancelled");
  // Closed here without the gateway (force): the gateway took the money after all.
  ASSERT_EQ(api(engine, "POST", "/api/payments/" + cancelled + "/close", {{"force", true}}).status,
            200);
  mock_pay(engine, cancelled, false, day.at_ms);
  const auto unbooked = create_payment(engine, stores, "unbooked");
  // Paid here by a callback the mock gateway never sent: its bill does not list it.
  ASSERT_EQ(engine.notify(signed_body("cb-" + unbooked, unbooked, 1)).status, 200);
  paid_on(stores, unbooked, day.at_ms);
  ASSERT_EQ(stores.payment_status(paid_one), 1);
  ASSERT_EQ(stores.payment_status(lost), 0);
  // A dated settlement is for a lost callback only.
  EXPECT_EQ(api(engine, "POST", "/api/mock-gateway/pay",
                {{"paymentNo", lost}, {"success", true}, {"atMs", day.at_ms}})
                .status,
            400);

  const auto date = day.date;
  const auto started = api(engine, "POST", "/api/bill-runs", {{"channel", "hmac"}, {"date", date}});
  ASSERT_EQ(started.status, 202) << started.body;
  const auto id = json::parse(started.body).at("id").get<std::int64_t>();
  const auto run = finished_run(engine, id);
  ASSERT_EQ(run.value("state", ""), "done") << run.dump() << engine.log();
  EXPECT_EQ(run.value("rows", 0), 3);
  EXPECT_EQ(outcomes_of(engine, id, paid_one), std::vector<std::string>{"matched/payment"});
  EXPECT_EQ(outcomes_of(engine, id, lost), std::vector<std::string>{"repaired/payment"});
  EXPECT_EQ(stores.payment_status(lost), 1);
  EXPECT_EQ(stores.order_status(stores.id("lost-o")), 1);
  EXPECT_EQ(stores.seat(stores.id("show"), "lost-seat"), "2:" + stores.id("lost-o"));
  EXPECT_EQ(outcomes_of(engine, id, cancelled),
            std::vector<std::string>{"paid_after_cancel/payment"});
  EXPECT_EQ(stores.discrepancies(cancelled, "paid_after_cancel"), 1);
  EXPECT_EQ(outcomes_of(engine, id, unbooked),
            std::vector<std::string>{"missing_at_gateway/payment"});
  EXPECT_EQ(stores.discrepancies(unbooked, "missing_at_gateway"), 1);

  // The discrepancy refund goes through the mock gateway (its bill lists the refund on the day it
  // made it: today, a day not reconciled here); the money it gave back is no discrepancy more.
  const auto list = json::parse(api(engine, "GET", "/api/discrepancies").body);
  std::int64_t refundable = 0;
  for (const auto& d : list) {
    if (d.at("paymentNo") == cancelled && d.at("kind") == "paid_after_cancel") {
      refundable = d.at("id").get<std::int64_t>();
    }
  }
  ASSERT_NE(refundable, 0) << list.dump();
  const auto refund =
      api(engine, "POST", "/api/discrepancies/" + std::to_string(refundable) + "/refund");
  ASSERT_EQ(refund.status, 200) << refund.body;
  const auto again = api(engine, "POST", "/api/bill-runs", {{"channel", "hmac"}, {"date", date}});
  ASSERT_EQ(again.status, 202) << again.body;
  const auto second_id = json::parse(again.body).at("id").get<std::int64_t>();
  const auto second = finished_run(engine, second_id);
  ASSERT_EQ(second.value("state", ""), "done") << second.dump();
  EXPECT_EQ(second.value("rows", 0), 3);
  EXPECT_EQ(outcomes_of(engine, second_id, lost), std::vector<std::string>{"matched/payment"});
  EXPECT_EQ(outcomes_of(engine, second_id, cancelled), std::vector<std::string>{"matched/payment"});
  EXPECT_EQ(stores.discrepancies(unbooked, "missing_at_gateway"), 1);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
