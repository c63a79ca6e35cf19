// The gateways' real bills through the engine (SPEC §13): WeChat Pay, Alipay and Stripe, each
// over loopback HTTPS (the test CA as SEATFLOW_QUERY_CA_FILE) from the fake bill servers, keys
// made at test time, on the real PostgreSQL and Redis. Payments are made through the API; one is
// settled by the gateway's signed callback, one left PENDING, one settled with an amount the bill
// does not agree with. POST /api/bill-runs reconciles the day's bill: matched, repaired (the
// PENDING payment SUCCESS, its order PAID) and amount_mismatch (a discrepancy open), and a rerun
// applies nothing twice. A bill that is not whole (a wrong SHA-1, a 交易合计 off by one) fails the
// run with nothing applied; a bill not made yet leaves the run not_ready. A payment repaired from
// a bill reconciled days late is not missing from the repair day's bill. Stripe's pages: a later
// page that does not hold and a refused API key fail the run. Each test has a database
// of its own (a run reads every payment of its channel).
#include <gtest/gtest.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "channels/gateway_signer.hpp"
#include "channels/stripe/stripe_channel.hpp"
#include "support/engine_fixture.hpp"
#include "support/fake_bill_gateways.hpp"
#include "support/fake_stripe.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"
#include "support/test_http_server.hpp"
#include "support/test_keys.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "functional-bill-gateways-token-6a0d3f";
const std::string kAppId = "2021000000000001";
const std::string kMchid = "1900000001";
const std::string kApiV3Key = "functional-apiv3-key-32-bytes-ok";
const std::string kMerchantSerial = "3775B6A45ACD588826D15E583A95F5DD";
const std::string kPlatformSerial = "5157F09EFDC096DE15EBE81A47057A7232F1B8E1";
const std::string kStripeKey = "sk_test_functional_bill_9e2b41c7d3";
const std::string kStripeWebhookSecret = "whsec_functional_bill_gateways_5f7a";
constexpr std::int64_t kAmount = 5000;
constexpr std::int64_t kOtherAmount = 4000;

EnvOverrides base_env(const PrivateDatabase& db, EnvOverrides extra) {
  EnvOverrides env{
      {"SEATFLOW_API_TOKEN", kToken},     {"SEATFLOW_PG_DSN", db.dsn()},
      {"SEATFLOW_EVENT_SLOT", db.slot()}, {"SEATFLOW_QUERY", "off"},
      {"SEATFLOW_QUERY_SCHEDULE", "10m"}, {"SEATFLOW_QUERY_CA_FILE", make_test_ca().ca_pem_path}};
  for (auto& [name, value] : extra) {
    env[name] = value;
  }
  return env;
}

EnvOverrides wechat_env(const PrivateDatabase& db, const FakeWechatBillServer& fake) {
  return base_env(
      db, {{"SEATFLOW_WECHAT_MCHID", kMchid},
           {"SEATFLOW_WECHAT_APIV3_KEY", kApiV3Key},
           {"SEATFLOW_WECHAT_PLATFORM_KEYS",
            kPlatformSerial + "=" + test_key("wechat").public_pem_path},
           {"SEATFLOW_WECHAT_GATEWAY_URL", fake.url()},
           {"SEATFLOW_WECHAT_MERCHANT_KEY", test_key("wechat-query-merchant").private_pem_path},
           {"SEATFLOW_WECHAT_MERCHANT_SERIAL", kMerchantSerial},
           {"SEATFLOW_WECHAT_APPID", "wx8888888888888888"}});
}

EnvOverrides alipay_env(const PrivateDatabase& db, const FakeAlipayBillServer& fake) {
  return base_env(db, {{"SEATFLOW_ALIPAY_APP_ID", kAppId},
                       {"SEATFLOW_ALIPAY_PUBLIC_KEY", test_key("alipay").public_pem_path},
                       {"SEATFLOW_ALIPAY_GATEWAY_URL", fake.url()},
                       {"SEATFLOW_ALIPAY_APP_PRIVATE_KEY",
                        test_key("alipay-query-merchant").private_pem_path}});
}

EnvOverrides stripe_env(const PrivateDatabase& db, const FakeStripe& fake) {
  return base_env(db, {{"SEATFLOW_STRIPE_WEBHOOK_SECRETS", kStripeWebhookSecret},
                       {"SEATFLOW_STRIPE_API_KEY", kStripeKey},
                       {"SEATFLOW_STRIPE_API_URL", fake.url()}});
}

Response api(const TestEngine& engine, const std::string& method, const std::string& target,
             const json& body = nullptr) {
  return engine.api(method, target, kToken, body.is_null() ? std::string() : body.dump());
}

json body_of(const Response& response) {
  return json::parse(response.body, nullptr, false);
}

// An order of one seat and its payment in `channel`, both through the API; the payment number.
std::string create_payment(const TestEngine& engine, Stores& stores, const std::string& channel,
                           const std::string& name) {
  const auto order = stores.id(name + "-o");
  const auto o = api(engine, "POST", "/api/orders",
                     {{"orderNo", order},
                      {"userId", "u1"},
                      {"showId", stores.id("show")},
                      {"seatIds", {name + "-seat"}},
                      {"amountCents", kAmount}});
  EXPECT_EQ(o.status, 201) << o.body;
  const auto p = api(engine, "POST", "/api/payments",
                     {{"orderNo", order}, {"channel", channel}, {"paymentNo", stores.id(name)}});
  EXPECT_EQ(p.status, 201) << p.body;
  return stores.id(name);
}

// The gateways' signed success callbacks, as gateway_channels_test and stripe_api_test send them.
Response wechat_paid(const TestEngine& engine, const std::string& payment,
                     const std::string& trade) {
  channels::WechatTransaction transaction;
  transaction.mchid = kMchid;
  transaction.out_trade_no = payment;
  transaction.transaction_id = trade;
  transaction.amount_total_fen = kAmount;
  const auto now = domain::unix_time_ms();
  const auto body = channels::wechat_notification_body(
      "EV-" + trade, channels::wechat_transaction_json(transaction, now), kApiV3Key, "SUCCESS",
      now);
  const auto headers = channels::wechat_sign(body, kPlatformSerial, now / 1000,
                                             test_key("wechat").private_key.get());
  return engine.connect()->request("POST", "/api/payment/notify/wechat", body,
                                   {{"Content-Type", "application/json"},
                                    {"Wechatpay-Timestamp", headers.timestamp},
                                    {"Wechatpay-Nonce", headers.nonce},
                                    {"Wechatpay-Signature", headers.signature},
                                    {"Wechatpay-Serial", headers.serial}});
}

Response alipay_paid(const TestEngine& engine, const std::string& payment,
                     const std::string& trade) {
  channels::AlipayNotice notice;
  notice.app_id = kAppId;
  notice.notify_id = "notify-" + trade;
  notice.out_trade_no = payment;
  notice.trade_no = trade;
  notice.total_amount = "50.00";
  const auto body =
      channels::alipay_signed_form(channels::alipay_notice_params(notice, domain::unix_time_ms()),
                                   test_key("alipay").private_key.get());
  return engine.connect()->request("POST", "/api/payment/notify/alipay", body,
                                   {{"Content-Type", "application/x-www-form-urlencoded"}});
}

Response stripe_paid(const TestEngine& engine, const std::string& payment,
                     const std::string& intent) {
  channels::StripeEvent event;
  event.id = "evt_" + intent;
  event.payment_no = payment;
  event.payment_intent_id = intent;
  event.amount = kAmount;
  event.created_s = domain::unix_time_ms() / 1000;
  const channels::StripeChannel signer(channels::StripeConfig{{kStripeWebhookSecret}});
  const auto body = channels::stripe_event_body(event);
  return engine.connect()->request(
      "POST", "/api/payment/notify/stripe", body,
      {{"Content-Type", "application/json"},
       {"Stripe-Signature",
        channels::stripe_signature_header(signer.keys(), event.created_s, body)}});
}

// The bill day the tests reconcile: two days ago in the bill's zone, a day that has ended whatever
// the edge (SPEC §13: a day still going on is refused). The test's payments, settled now, are moved
// back to it (paid_at and updated_at two days earlier), as if the gateway had settled them then;
// the day's date, its local time text the Chinese bills write, the Unix seconds Stripe writes.
struct BillNow {
  std::string date;
  std::string time;
  std::int64_t unix_s = 0;
};

constexpr const char* kBillDaysAgo = "2 days";

// Moves the test's paid payments (or only `payment`) back to the bill day.
void backdate(Stores& stores, const std::string& payment = {}) {
  pqxx::work tx(stores.pg());
  tx.exec_params(std::string("UPDATE payment_order SET paid_at = paid_at - interval '") +
                     kBillDaysAgo + "', updated_at = updated_at - interval '" + kBillDaysAgo +
                     "' WHERE paid_at IS NOT NULL AND (payment_no = $2 OR ($2 = '' AND "
                     "starts_with(payment_no, $1)))",
                 stores.prefix(), payment);
  tx.commit();
}

BillNow bill_now(Stores& stores, const std::string& zone) {
  backdate(stores);
  pqxx::work tx(stores.pg());
  const auto row =
      tx.exec_params1(std::string("WITH t AS (SELECT now() - interval '") + kBillDaysAgo +
                          "' AS at) SELECT (t.at AT TIME ZONE $1)::date::text, "
                          "to_char(t.at AT TIME ZONE $1, 'YYYY-MM-DD HH24:MI:SS'), extract(epoch "
                          "FROM t.at)::bigint "
                          "FROM t",
                      zone);
  return {row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::int64_t>()};
}

// The three payments of a day and their gateway trade numbers.
struct DayPayments {
  std::string matched, pending, mismatch;
  std::string matched_trade, pending_trade, mismatch_trade;
};

using Settle = std::function<Response(const std::string& payment, const std::string& trade)>;

// One payment settled by its callback, one PENDING, one settled (its bill row another amount).
DayPayments make_day(const TestEngine& engine, Stores& stores, const std::string& channel,
                     const std::string& trade_prefix, const Settle& settle) {
  DayPayments day;
  day.matched = create_payment(engine, stores, channel, "matched");
  day.pending = create_payment(engine, stores, channel, "pending");
  day.mismatch = create_payment(engine, stores, channel, "mismatch");
  day.matched_trade = trade_prefix + stores.id("m");
  day.pending_trade = trade_prefix + stores.id("p");
  day.mismatch_trade = trade_prefix + stores.id("x");
  for (const auto& [payment, trade] :
       {std::pair{day.matched, day.matched_trade}, std::pair{day.mismatch, day.mismatch_trade}}) {
    const auto settled = settle(payment, trade);
    EXPECT_EQ(settled.status, 200) << settled.body << settled.error;
    EXPECT_EQ(stores.payment_status(payment), 1);
    EXPECT_EQ(stores.channel_trade_no(payment), trade);
  }
  EXPECT_EQ(stores.payment_status(day.pending), 0);
  return day;
}

// The Chinese bills' rows of the day (WeChat Pay's fee in 10^-5 yuan, Alipay's in cents).
std::vector<FakeBillRow> china_rows(const DayPayments& day, const std::string& time,
                                    std::int64_t fee) {
  return {{false, day.matched_trade, day.matched, "", kAmount, fee, time},
          {false, day.pending_trade, day.pending, "", kAmount, fee, time},
          {false, day.mismatch_trade, day.mismatch, "", kOtherAmount, fee, time}};
}

// POST /api/bill-runs → 202; the run's id.
std::int64_t start_run(const TestEngine& engine, const std::string& channel,
                       const std::string& date) {
  const auto started =
      api(engine, "POST", "/api/bill-runs", {{"channel", channel}, {"date", date}});
  EXPECT_EQ(started.status, 202) << started.body;
  const auto body = body_of(started);
  EXPECT_EQ(body.value("channel", ""), channel) << started.body;
  EXPECT_EQ(body.value("date", ""), date) << started.body;
  return body.is_object() ? body.value("id", std::int64_t{0}) : 0;
}

// The run once it is no longer running.
json finished_run(const TestEngine& engine, std::int64_t id) {
  json run;
  EXPECT_TRUE(wait_until(
      [&] {
        const auto r = api(engine, "GET", "/api/bill-runs/" + std::to_string(id));
        run = body_of(r);
        return r.status == 200 && run.value("state", "") != "running";
      },
      20s))
      << run.dump();
  return run;
}

json run_bill(const TestEngine& engine, const std::string& channel, const std::string& date) {
  return finished_run(engine, start_run(engine, channel, date));
}

// Every item of a run, by payment number (every bill row here names its payment).
std::map<std::string, json> items_of(const TestEngine& engine, std::int64_t id) {
  const auto page = api(engine, "GET", "/api/bill-runs/" + std::to_string(id) + "/items");
  EXPECT_EQ(page.status, 200) << page.body;
  std::map<std::string, json> out;
  const auto body = body_of(page);  // kept: a range over a temporary's member would dangle
  for (const auto& item : body.at("items")) {
    EXPECT_EQ(out.count(item.at("paymentNo")), 0U) << item.dump();
    out[item.at("paymentNo").get<std::string>()] = item;
  }
  return out;
}

// The open discrepancies of a payment and kind on GET /api/discrepancies: their ids.
std::vector<std::int64_t> open_discrepancies(const TestEngine& engine, const std::string& payment,
                                             const std::string& kind) {
  std::vector<std::int64_t> ids;
  for (const auto& row : body_of(api(engine, "GET", "/api/discrepancies?limit=500"))) {
    if (row.at("paymentNo") == payment && row.at("kind") == kind) {
      ids.push_back(row.at("id").get<std::int64_t>());
    }
  }
  return ids;
}

int succeeded_events(Stores& stores, const std::string& payment) {
  int count = 0;
  for (const auto& event : stores.events(payment)) {
    count += event.event_id == "payment.succeeded:" + payment ? 1 : 0;
  }
  return count;
}

void expect_first_run(const TestEngine& engine, Stores& stores, const json& run,
                      const DayPayments& day, std::int64_t fees_cents) {
  ASSERT_EQ(run.value("state", ""), "done") << run.dump() << engine.log();
  EXPECT_EQ(run.value("rows", 0), 3);
  EXPECT_EQ(run.value("matched", 0), 1) << run.dump();
  EXPECT_EQ(run.value("repaired", 0), 1) << run.dump();
  EXPECT_EQ(run.value("discrepancies", 0), 1) << run.dump();
  EXPECT_EQ(run.at("counts").value("amount_mismatch", 0), 1) << run.dump();
  EXPECT_EQ(run.value("feesCents", 0), fees_cents);
  EXPECT_EQ(run.at("billSha256").get<std::string>().size(), 64U);
  EXPECT_EQ(stores.payment_status(day.pending), 1);
  EXPECT_EQ(stores.order_status(stores.id("pending-o")), 1);
  EXPECT_EQ(stores.channel_trade_no(day.pending), day.pending_trade);
  EXPECT_EQ(stores.seat(stores.id("show"), "pending-seat"), "2:" + stores.id("pending-o"));
  EXPECT_EQ(stores.payment_status(day.mismatch), 1);  // recorded, never applied
  const auto items = items_of(engine, run.at("id").get<std::int64_t>());
  ASSERT_EQ(items.size(), 3U);
  EXPECT_EQ(items.at(day.matched).value("outcome", ""), "matched");
  EXPECT_EQ(items.at(day.pending).value("outcome", ""), "repaired");
  EXPECT_EQ(items.at(day.pending).value("tradeNo", ""), day.pending_trade);
  const auto& mismatch = items.at(day.mismatch);
  EXPECT_EQ(mismatch.value("outcome", ""), "amount_mismatch");
  EXPECT_EQ(mismatch.value("gatewayAmountCents", 0), kOtherAmount);
  EXPECT_EQ(mismatch.value("localAmountCents", 0), kAmount);
  const auto open = open_discrepancies(engine, day.mismatch, "amount_mismatch");
  ASSERT_EQ(open.size(), 1U);
  EXPECT_EQ(mismatch.value("discrepancyId", std::int64_t{0}), open[0]);
  EXPECT_EQ(succeeded_events(stores, day.pending), 1);
  EXPECT_TRUE(
      stores.log_row("bill:" + run.value("channel", std::string()) + ":" + day.pending_trade));
}

// The same bill again: everything agrees but the mismatch, already recorded.
void expect_rerun(const TestEngine& engine, Stores& stores, const std::string& channel,
                  const std::string& date, const DayPayments& day) {
  const auto run = run_bill(engine, channel, date);
  ASSERT_EQ(run.value("state", ""), "done") << run.dump() << engine.log();
  EXPECT_EQ(run.value("matched", 0), 2) << run.dump();
  EXPECT_EQ(run.value("repaired", 0), 0) << run.dump();
  EXPECT_EQ(run.at("counts").value("amount_mismatch", 0), 1) << run.dump();
  const auto items = items_of(engine, run.at("id").get<std::int64_t>());
  ASSERT_EQ(items.size(), 3U);
  EXPECT_EQ(items.at(day.pending).value("outcome", ""), "matched");
  EXPECT_EQ(open_discrepancies(engine, day.mismatch, "amount_mismatch").size(), 1U);
  EXPECT_EQ(stores.discrepancies(day.mismatch, "amount_mismatch"), 1);
  EXPECT_EQ(succeeded_events(stores, day.pending), 1);
  EXPECT_EQ(stores.payment_status(day.pending), 1);
}

double runs_metric(const TestEngine& engine, const std::string& channel, const std::string& state) {
  return metric_value(engine.metrics(), "seatflow_bill_runs_total{channel=\"" + channel +
                                            "\",state=\"" + state + "\"}")
      .value_or(-1);
}

// A run that ended without applying anything: the PENDING payment still PENDING, no item.
void expect_nothing_applied(const TestEngine& engine, Stores& stores, const json& run,
                            const DayPayments& day) {
  EXPECT_EQ(items_of(engine, run.at("id").get<std::int64_t>()).size(), 0U);
  EXPECT_EQ(run.value("rows", -1), 0) << run.dump();
  EXPECT_EQ(run.value("matched", -1), 0) << run.dump();
  EXPECT_EQ(stores.payment_status(day.pending), 0);
  EXPECT_EQ(stores.order_status(stores.id("pending-o")), 0);
  EXPECT_EQ(open_discrepancies(engine, day.mismatch, "amount_mismatch").size(), 0U);
  EXPECT_EQ(stores.discrepancies(day.mismatch, "amount_mismatch"), 0);
}

struct WechatWorld {
  PrivateDatabase db;
  Stores stores{db.dsn()};
  FakeWechatBillServer fake{kMchid, kMerchantSerial, test_key("wechat-query-merchant"),
                            kPlatformSerial, test_key("wechat")};
  TestEngine engine{wechat_env(db, fake)};
};

TEST(BillGateways, WechatPaysBillIsReconciledThroughTheEngine) {
  WechatWorld w;
  ASSERT_TRUE(w.engine.healthy()) << w.engine.log();
  const auto day = make_day(w.engine, w.stores, "wechat", "4200",
                            [&](const std::string& payment, const std::string& trade) {
                              return wechat_paid(w.engine, payment, trade);
                            });
  const auto now = bill_now(w.stores, "Asia/Shanghai");
  w.fake.set_bill(now.date, china_rows(day, now.time, 30000));  // 0.30 yuan each
  expect_first_run(w.engine, w.stores, run_bill(w.engine, "wechat", now.date), day, 90);
  expect_rerun(w.engine, w.stores, "wechat", now.date, day);
  EXPECT_EQ(w.fake.refused_signatures(), 0);  // every request signed with the merchant key
  EXPECT_EQ(w.fake.bill_requests(), 2);
  EXPECT_EQ(w.fake.downloads(), 2);
  EXPECT_EQ(runs_metric(w.engine, "wechat", "done"), 2);
  EXPECT_EQ(metric_value(w.engine.metrics(),
                         R"(seatflow_bill_items_total{channel="wechat",outcome="repaired"})"),
            1);
}

TEST(BillGateways, WechatPaysBillNotWholeOrNotReadyAppliesNothing) {
  WechatWorld w;
  ASSERT_TRUE(w.engine.healthy()) << w.engine.log();
  const auto day = make_day(w.engine, w.stores, "wechat", "4200",
                            [&](const std::string& payment, const std::string& trade) {
                              return wechat_paid(w.engine, payment, trade);
                            });
  const auto now = bill_now(w.stores, "Asia/Shanghai");
  w.fake.set_bill(now.date, china_rows(day, now.time, 30000));
  w.fake.set_mode(FakeBillMode::wrong_hash);
  const auto forged = run_bill(w.engine, "wechat", now.date);
  EXPECT_EQ(forged.value("state", ""), "failed") << forged.dump();
  EXPECT_NE(forged.value("reason", "").find("SHA-1"), std::string::npos) << forged.dump();
  expect_nothing_applied(w.engine, w.stores, forged, day);

  w.fake.set_mode(FakeBillMode::not_ready);
  const auto creating = run_bill(w.engine, "wechat", now.date);
  EXPECT_EQ(creating.value("state", ""), "not_ready") << creating.dump();
  expect_nothing_applied(w.engine, w.stores, creating, day);
  EXPECT_EQ(runs_metric(w.engine, "wechat", "failed"), 1);
  EXPECT_EQ(runs_metric(w.engine, "wechat", "not_ready"), 1);
  EXPECT_EQ(runs_metric(w.engine, "wechat", "done"), 0);

  // Whole again: the same day reconciles as if nothing had been tried.
  w.fake.set_mode(FakeBillMode::honest);
  expect_first_run(w.engine, w.stores, run_bill(w.engine, "wechat", now.date), day, 90);
  EXPECT_EQ(runs_metric(w.engine, "wechat", "done"), 1);
}

TEST(BillGateways, AlipaysBillIsReconciledThroughTheEngineAndABadTotalFails) {
  PrivateDatabase db;
  Stores stores(db.dsn());
  FakeAlipayBillServer fake(kAppId, test_key("alipay-query-merchant"), test_key("alipay"));
  TestEngine engine(alipay_env(db, fake));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const auto day = make_day(engine, stores, "alipay", "2026",
                            [&](const std::string& payment, const std::string& trade) {
                              return alipay_paid(engine, payment, trade);
                            });
  const auto now = bill_now(stores, "Asia/Shanghai");
  fake.set_bill(now.date, china_rows(day, now.time, 30));  // 0.30 yuan each
  fake.set_mode(FakeBillMode::bad_total);
  const auto short_bill = run_bill(engine, "alipay", now.date);
  EXPECT_EQ(short_bill.value("state", ""), "failed") << short_bill.dump();
  EXPECT_NE(short_bill.value("reason", "").find("count"), std::string::npos) << short_bill.dump();
  expect_nothing_applied(engine, stores, short_bill, day);

  fake.set_mode(FakeBillMode::honest);
  expect_first_run(engine, stores, run_bill(engine, "alipay", now.date), day, 90);
  expect_rerun(engine, stores, "alipay", now.date, day);
  EXPECT_EQ(fake.refused_signatures(), 0);
  EXPECT_EQ(runs_metric(engine, "alipay", "failed"), 1);
  EXPECT_EQ(runs_metric(engine, "alipay", "done"), 2);
}

struct StripeWorld {
  PrivateDatabase db;
  Stores stores{db.dsn()};
  FakeStripe fake{kStripeKey};
  TestEngine engine{stripe_env(db, fake)};
  BillNow now;

  // The day's three payments through the engine and their charges at Stripe (fees 175, 175, 146).
  DayPayments charged_day() {
    const auto day = make_day(engine, stores, "stripe", "pi_",
                              [&](const std::string& payment, const std::string& intent) {
                                return stripe_paid(engine, payment, intent);
                              });
    now = bill_now(stores, "UTC");
    fake.add_charge(day.matched_trade, day.matched, kAmount, 175, now.unix_s);
    fake.add_charge(day.pending_trade, day.pending, kAmount, 175, now.unix_s);
    fake.add_charge(day.mismatch_trade, day.mismatch, kOtherAmount, 146, now.unix_s);
    return day;
  }
};

TEST(BillGateways, StripesBalanceTransactionsAreReconciledThroughTheEngine) {
  StripeWorld w;
  ASSERT_TRUE(w.engine.healthy()) << w.engine.log();
  const auto day = w.charged_day();
  w.fake.add_other("payout", -10000, w.now.unix_s);  // not a row of the bill
  expect_first_run(w.engine, w.stores, run_bill(w.engine, "stripe", w.now.date), day,
                   175 + 175 + 146);
  expect_rerun(w.engine, w.stores, "stripe", w.now.date, day);
  EXPECT_EQ(w.fake.refused_signatures(), 0);
  const auto requests = w.fake.bill_requests();
  ASSERT_EQ(requests.size(), 2U);
  EXPECT_NE(
      requests[0].find("created%5Bgte%5D=" + std::to_string(w.now.unix_s - w.now.unix_s % 86400)),
      std::string::npos)
      << requests[0];
  EXPECT_EQ(runs_metric(w.engine, "stripe", "done"), 2);
}

// Stripe's bill is pages: a page that does not hold (here the last page's charge without an
// expanded charge source) fails the run after the earlier pages' rows were staged, and nothing is
// applied; an API key Stripe refuses fails the run with Stripe's answer.
TEST(BillGateways, StripesBillBrokenOnALaterPageOrRefusedAppliesNothing) {
  StripeWorld w;
  ASSERT_TRUE(w.engine.healthy()) << w.engine.log();
  const auto day = w.charged_day();
  for (int i = 0; i < 120; ++i) {
    w.fake.add_other("payout", -100, w.now.unix_s);  // a page and more before the broken row
  }
  // The day's oldest: listed last.
  w.fake.add_other("charge", 5000, w.now.unix_s - w.now.unix_s % 86400);
  const auto broken = run_bill(w.engine, "stripe", w.now.date);
  EXPECT_EQ(broken.value("state", ""), "failed") << broken.dump();
  EXPECT_NE(broken.value("reason", "").find("expanded charge"), std::string::npos) << broken.dump();
  EXPECT_EQ(w.fake.bill_requests().size(), 2U);  // the second page was read
  expect_nothing_applied(w.engine, w.stores, broken, day);
  EXPECT_EQ(runs_metric(w.engine, "stripe", "failed"), 1);

  PrivateDatabase other_db;
  FakeStripe refusing("sk_test_another_account_7c1d");
  TestEngine refused_engine(stripe_env(other_db, refusing));
  ASSERT_TRUE(refused_engine.healthy()) << refused_engine.log();
  const auto refused = run_bill(refused_engine, "stripe", w.now.date);
  EXPECT_EQ(refused.value("state", ""), "failed") << refused.dump();
  EXPECT_NE(refused.value("reason", "").find("401"), std::string::npos) << refused.dump();
  EXPECT_EQ(refused.value("rows", -1), 0) << refused.dump();
}

// The gateway took a payment days ago; its callback was lost, and that day's bill is reconciled
// only today (late, by hand): the repair pays it today. Today's bill does not list it (the gateway
// booked it on its own day), and it is not missing at the gateway: a bill listed it. A payment
// paid today by its callback that today's bill does not list is.
TEST(BillGateways, APaymentRepairedFromAnOlderBillIsNotMissingFromTodays) {
  WechatWorld w;
  ASSERT_TRUE(w.engine.healthy()) << w.engine.log();
  const auto late = create_payment(w.engine, w.stores, "wechat", "late");
  const auto unbooked = create_payment(w.engine, w.stores, "wechat", "unbooked");
  ASSERT_EQ(wechat_paid(w.engine, unbooked, "4200" + w.stores.id("u")).status, 200);
  const auto now = bill_now(w.stores, "Asia/Shanghai");
  std::string old_date;
  {
    pqxx::work tx(w.stores.pg());
    old_date = tx.exec_params1("SELECT ($1::date - 3)::text", now.date)[0].as<std::string>();
  }
  const auto late_trade = "4200" + w.stores.id("l");
  w.fake.set_bill(old_date,
                  {{false, late_trade, late, "", kAmount, 30000, old_date + " 10:00:00"}});
  const auto old_run = run_bill(w.engine, "wechat", old_date);
  ASSERT_EQ(old_run.value("state", ""), "done") << old_run.dump();
  EXPECT_EQ(old_run.value("repaired", 0), 1) << old_run.dump();
  ASSERT_EQ(w.stores.payment_status(late), 1);
  backdate(w.stores, late);  // repaired on the day reconciled next

  w.fake.set_bill(now.date, {});  // no trade today: NO_STATEMENT_EXIST would say the same
  const auto today = run_bill(w.engine, "wechat", now.date);
  ASSERT_EQ(today.value("state", ""), "done") << today.dump();
  const auto items = items_of(w.engine, today.at("id").get<std::int64_t>());
  EXPECT_EQ(items.count(late), 0U) << today.dump();
  EXPECT_EQ(w.stores.discrepancies(late, "missing_at_gateway"), 0);
  ASSERT_EQ(items.count(unbooked), 1U) << today.dump();
  EXPECT_EQ(items.at(unbooked).value("outcome", ""), "missing_at_gateway");
  EXPECT_EQ(today.value("discrepancies", 0), 1) << today.dump();
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
