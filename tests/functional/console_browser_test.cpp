// The operations console in a real browser: the engine with real PostgreSQL (a private database,
// so a bill run sees only this test's payments) and Redis, data made by real signed callbacks and a
// real bill run, and a second engine on the same database whose hmac gateway cannot be reached (a
// close it answers 502); then tests/browser/console.test.mjs drives Debian's chromium through
// puppeteer-core (installed by ./test.sh with npm ci) and exits 0 when every step passed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>

#include <nlohmann/json.hpp>

#include "support/bill_world.hpp"
#include "support/engine_fixture.hpp"
#include "support/fake_hmac_bill.hpp"
#include "support/stores.hpp"

#ifndef SEATFLOW_BROWSER_TEST_DIR
#error "tests/CMakeLists.txt defines SEATFLOW_BROWSER_TEST_DIR"
#endif

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;

constexpr const char* kToken = "functional-console-token-2c71a9e3";
// The browser run's own bound (its script stops itself at 80 s); `timeout` enforces it.
constexpr int kBrowserRunTimeoutS = 100;
constexpr std::int64_t kDayMs = 24LL * 3600 * 1000;
constexpr std::int64_t kShanghaiOffsetMs = 8LL * 3600 * 1000;

// The engine's environment on the private database, with `extra` on top.
EnvOverrides console_env(const PrivateDatabase& db, const EnvOverrides& extra = {}) {
  EnvOverrides env{{"SEATFLOW_API_TOKEN", kToken},
                   {"SEATFLOW_PG_DSN", db.dsn()},
                   {"SEATFLOW_EVENT_SLOT", db.slot()},
                   {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                   {"SEATFLOW_SWEEPER", "off"}};
  for (const auto& [name, value] : extra) {
    env[name] = value;
  }
  return env;
}

Response call(const TestEngine& engine, std::string_view method, const std::string& target,
              const json& body = nullptr) {
  return engine.api(method, target, kToken, body.is_null() ? std::string() : body.dump());
}

// An order of one seat with a pending hmac payment; its Redis seats are removed after. The
// payment's create answers `created_status` (502 when the engine's hmac gateway does not create
// it: the payment is still written, PENDING without "pay").
struct Booking {
  Booking(const TestEngine& engine, Stores& stores, const std::string& name,
          int created_status = 201)
      : stores_(stores),
        order(stores.id("ord-" + name)),
        payment(stores.id("pay-" + name)),
        show(stores.id("show-" + name)) {
    EXPECT_EQ(call(engine, "POST", "/api/orders",
                   {{"orderNo", order},
                    {"userId", "user-1"},
                    {"showId", show},
                    {"seatIds", {"A1"}},
                    {"amountCents", 4200}})
                  .status,
              201);
    EXPECT_EQ(call(engine, "POST", "/api/payments",
                   {{"orderNo", order}, {"paymentNo", payment}, {"channel", "hmac"}})
                  .status,
              created_status);
  }
  ~Booking() { (void)stores_.redis().command({"DEL", "seatflow:seats:{" + show + "}"}); }
  Booking(const Booking&) = delete;
  Booking& operator=(const Booking&) = delete;

  Stores& stores_;
  std::string order;
  std::string payment;
  std::string show;
};

// A paid-after-cancel discrepancy made as in production: the payment closed, then its gateway's
// signed success arrives — sent by the test after a close the gateway confirmed, or by the dev mock
// gateway after a close forced here without it (SPEC §16: a gateway that closed the payment takes
// no payment), which then holds the payment as paid and so can refund it.
void paid_after_cancel(const TestEngine& engine, Stores& stores, const Booking& b,
                       bool through_mock_gateway = false) {
  const json force = through_mock_gateway ? json{{"force", true}} : json();
  ASSERT_EQ(call(engine, "POST", "/api/payments/" + b.payment + "/close", force).status, 200);
  if (through_mock_gateway) {
    const auto paid = call(engine, "POST", "/api/mock-gateway/pay",
                           {{"paymentNo", b.payment}, {"success", true}});
    ASSERT_EQ(paid.status, 200) << paid.body;
  } else {
    ASSERT_EQ(engine.notify(signed_body(stores.id("cb-late-" + b.payment), b.payment, 1)).status,
              200);
  }
  ASSERT_EQ(stores.discrepancies(b.payment, "paid_after_cancel"), 1);
}

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (const char c : text) {
    out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  }
  return out + "'";
}

// The calendar day `offset` days from today in Asia/Shanghai (UTC+8, no DST), the hmac bill's zone.
std::string shanghai_day(int offset) {
  const std::int64_t ms = domain::unix_time_ms() + kShanghaiOffsetMs + offset * kDayMs;
  const std::time_t seconds = static_cast<std::time_t>(ms / 1000);
  std::tm parts{};
  gmtime_r(&seconds, &parts);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &parts);
  return text;
}

// The run once it is no longer running (the API answered 202 with it opened).
json settled_run(const TestEngine& engine, std::int64_t id) {
  json run;
  for (int i = 0; i < 200; ++i) {
    const auto got = call(engine, "GET", "/api/bill-runs/" + std::to_string(id));
    run = json::parse(got.body, nullptr, false);
    if (got.status != 200 || !run.is_object() || run["state"] != "running") {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return run;
}

// Yesterday's hmac bill (in the gateway's zone) run for real by an engine whose hmac gateway is a
// fake bill server: one payment matched, one pending payment repaired through the pipeline, one
// paid for another amount (amount_mismatch). The fake serves no payment API, so each creation at
// the gateway answers 502 (the payment is written PENDING all the same). That engine stops before
// the console's starts: the console's engine keeps the dev mock gateway for its refund.
struct BillRun {
  std::int64_t id = 0;
  std::string date;
  std::string matched;
  std::string repaired;
  std::string mismatched;
};

BillRun make_bill_run(const PrivateDatabase& db, Stores& stores) {
  FakeHmacBill gateway(kTestSecret);
  TestEngine engine(console_env(db, {{"SEATFLOW_HMAC_GATEWAY_URL", gateway.url()}}));
  EXPECT_TRUE(engine.healthy()) << engine.log();
  const Booking matched(engine, stores, "bill-matched", 502);
  const Booking repaired(engine, stores, "bill-repaired", 502);
  const Booking mismatched(engine, stores, "bill-mismatch", 502);
  for (const auto* paid : {&matched, &mismatched}) {
    EXPECT_EQ(engine.notify(signed_body(stores.id("cb-" + paid->payment), paid->payment, 1)).status,
              200);
  }
  BillRun run{0, shanghai_day(-1), matched.payment, repaired.payment, mismatched.payment};
  const auto at = shanghai_ms(run.date, 12, 0);
  gateway.set_bill(run.date,
                   {bill_payment(stores.id("T-matched"), matched.payment, 4200, at),
                    bill_payment(stores.id("T-repaired"), repaired.payment, 4200, at + 1),
                    bill_payment(stores.id("T-mismatch"), mismatched.payment, 4250, at + 2)});
  const auto opened =
      call(engine, "POST", "/api/bill-runs", {{"channel", "hmac"}, {"date", run.date}});
  EXPECT_EQ(opened.status, 202) << opened.body << engine.log();
  run.id = json::parse(opened.body, nullptr, false).value("id", std::int64_t{0});
  const auto done = settled_run(engine, run.id);
  EXPECT_EQ(done.value("state", ""), "done") << done.dump() << engine.log();
  EXPECT_EQ(done.value("matched", -1), 1) << done.dump();
  EXPECT_EQ(done.value("repaired", -1), 1) << done.dump();
  EXPECT_EQ(done.value("discrepancies", -1), 1) << done.dump();
  EXPECT_EQ(stores.discrepancies(mismatched.payment, "amount_mismatch"), 1);
  return run;
}

// Runs the browser script with `fixture`; its exit status and output.
std::pair<int, std::string> run_browser(const json& fixture, std::uint16_t port) {
  const std::filesystem::path dir(SEATFLOW_BROWSER_TEST_DIR);
  const char* shots_env = std::getenv("SEATFLOW_CONSOLE_SCREENSHOTS");
  const std::string shots =
      shots_env != nullptr ? shots_env : (std::filesystem::current_path() / "console-screenshots");
  const auto log = std::filesystem::temp_directory_path() /
                   ("seatflow-console-" + std::to_string(port) + ".log");
  const std::string command = "SEATFLOW_CONSOLE_FIXTURE=" + shell_quote(fixture.dump()) +
                              " SEATFLOW_CONSOLE_SCREENSHOTS=" + shell_quote(shots) + " timeout " +
                              std::to_string(kBrowserRunTimeoutS) + " node " +
                              shell_quote((dir / "console.test.mjs").string()) + " > " +
                              shell_quote(log.string()) + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::stringstream output;
  output << in.rdbuf();
  std::filesystem::remove(log);
  return {status, output.str()};
}

TEST(ConsoleBrowser, DrivesTheConsoleInChromium) {
  const std::filesystem::path dir(SEATFLOW_BROWSER_TEST_DIR);
  ASSERT_TRUE(std::filesystem::exists(dir / "node_modules" / "puppeteer-core"))
      << "puppeteer-core is missing: ./test.sh installs it (cd tests/browser && npm ci)";
  PrivateDatabase db;
  Stores stores(db.dsn());
  const auto bill = make_bill_run(db, stores);
  TestEngine engine(console_env(db));
  ASSERT_TRUE(engine.healthy()) << engine.log();

  Booking resolved(engine, stores, "console-resolve");
  paid_after_cancel(engine, stores, resolved);
  Booking refunded(engine, stores, "console-refund");
  paid_after_cancel(engine, stores, refunded, true);
  Booking replayed(engine, stores, "console-replay");
  const auto replay_callback = stores.id("cb-console-replay");
  ASSERT_EQ(engine.notify(signed_body(replay_callback, replayed.payment, 1)).status, 200);
  // Markup in a stored callback (its id is in the signed body): the console must show it as text.
  Booking marked(engine, stores, "console-markup");
  const auto xss_callback = stores.id("x") + "<img src=x onerror=window.__seatflowXss=1>";
  ASSERT_EQ(engine.notify(signed_body(xss_callback, marked.payment, 1)).status, 200);

  // SPEC §16: a second engine on the same database whose hmac gateway is a closed port, so its
  // payment's close answers 502 unreachable until the console forces it. Its relay is off: the
  // console's engine publishes the events of both from the one slot.
  TestEngine gateway_down(console_env(
      db, {{"SEATFLOW_HMAC_GATEWAY_URL", "http://127.0.0.1:" + std::to_string(free_port())},
           {"SEATFLOW_MOCK_GATEWAY", "off"},
           {"SEATFLOW_EVENT_RELAY", "off"}}));
  ASSERT_TRUE(gateway_down.healthy()) << gateway_down.log();
  Booking unconfirmed(gateway_down, stores, "console-close", 502);

  // The page's Reconcile form runs the mock gateway's bill of a day it settled nothing in.
  const auto form_date = shanghai_day(-2);
  const auto down_url = "http://127.0.0.1:" + std::to_string(gateway_down.port());
  const json fixture = {{"baseUrl", "http://127.0.0.1:" + std::to_string(engine.port())},
                        {"token", kToken},
                        {"resolvePayment", resolved.payment},
                        {"refundPayment", refunded.payment},
                        {"replayPayment", replayed.payment},
                        {"replayCallback", replay_callback},
                        {"xssCallback", xss_callback},
                        {"billRunId", bill.id},
                        {"billDate", bill.date},
                        {"billMatched", bill.matched},
                        {"billRepaired", bill.repaired},
                        {"billMismatch", bill.mismatched},
                        {"formDate", form_date},
                        {"gatewayDownUrl", down_url},
                        {"closePayment", unconfirmed.payment}};
  const auto [status, output] = run_browser(fixture, engine.port());
  EXPECT_EQ(status, 0) << output << "\nengine log:\n"
                       << engine.log() << "\ngateway-down engine log:\n"
                       << gateway_down.log();
  EXPECT_NE(output.find("console browser test: passed"), std::string::npos) << output;
  // What the browser did is in the database too: the replay counted as a copy, the resolve, the
  // run the form started, the forced close (payment CLOSED, order CANCELLED).
  EXPECT_EQ(stores.await_duplicate_count(replay_callback, 1), 1);
  EXPECT_EQ(stores.payment_status(unconfirmed.payment), 3);
  EXPECT_EQ(stores.order_status(unconfirmed.order), 2);
  EXPECT_NE(gateway_down.log().find("event=close_forced"), std::string::npos) << gateway_down.log();
  pqxx::work tx(stores.pg());
  EXPECT_EQ(tx.exec_params1("SELECT count(*) FROM payment_discrepancy WHERE payment_no = $1 AND "
                            "resolved_at IS NOT NULL",
                            resolved.payment)[0]
                .as<int>(),
            1);
  EXPECT_EQ(tx.exec_params1("SELECT count(*) FROM bill_run WHERE channel = 'hmac' AND bill_date = "
                            "$1::date AND state = 'done'",
                            form_date)[0]
                .as<int>(),
            1);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
