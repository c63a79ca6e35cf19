// The operations console in a real browser: the engine with real PostgreSQL and Redis, data made
// by real signed callbacks, then tests/browser/console.test.mjs drives Debian's chromium through
// puppeteer-core (installed by ./test.sh with npm ci) and exits 0 when every step passed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "support/engine_fixture.hpp"
#include "support/stores.hpp"

#ifndef SEATFLOW_BROWSER_TEST_DIR
#error "tests/CMakeLists.txt defines SEATFLOW_BROWSER_TEST_DIR"
#endif

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;

constexpr const char* kToken = "functional-console-token-2c71a9e3";
// The browser run's own bound (its script stops itself at 55 s); `timeout` enforces it.
constexpr int kBrowserRunTimeoutS = 75;

Response call(const TestEngine& engine, std::string_view method, const std::string& target,
              const json& body = nullptr) {
  return engine.api(method, target, kToken, body.is_null() ? std::string() : body.dump());
}

// An order of one seat with a pending hmac payment; its Redis seats are removed after.
struct Booking {
  Booking(const TestEngine& engine, Stores& stores, const std::string& name)
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
              201);
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
// signed success arrives — sent by the test, or by the dev mock gateway, which then holds the
// payment as paid and so can refund it.
void paid_after_cancel(const TestEngine& engine, Stores& stores, const Booking& b,
                       bool through_mock_gateway = false) {
  ASSERT_EQ(call(engine, "POST", "/api/payments/" + b.payment + "/close").status, 200);
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

TEST(ConsoleBrowser, DrivesTheConsoleInChromium) {
  const std::filesystem::path dir(SEATFLOW_BROWSER_TEST_DIR);
  ASSERT_TRUE(std::filesystem::exists(dir / "node_modules" / "puppeteer-core"))
      << "puppeteer-core is missing: ./test.sh installs it (cd tests/browser && npm ci)";
  Stores stores;
  TestEngine engine(EnvOverrides{{"SEATFLOW_API_TOKEN", kToken},
                                 {"SEATFLOW_MOCK_GATEWAY_AUTO", "off"},
                                 {"SEATFLOW_SWEEPER", "off"}});
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

  const json fixture = {{"baseUrl", "http://127.0.0.1:" + std::to_string(engine.port())},
                        {"token", kToken},
                        {"resolvePayment", resolved.payment},
                        {"refundPayment", refunded.payment},
                        {"replayPayment", replayed.payment},
                        {"replayCallback", replay_callback},
                        {"xssCallback", xss_callback}};
  const char* shots_env = std::getenv("SEATFLOW_CONSOLE_SCREENSHOTS");
  const std::string shots =
      shots_env != nullptr ? shots_env : (std::filesystem::current_path() / "console-screenshots");
  const auto log = std::filesystem::temp_directory_path() /
                   ("seatflow-console-" + std::to_string(engine.port()) + ".log");
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
  EXPECT_EQ(status, 0) << output.str() << "\nengine log:\n" << engine.log();
  EXPECT_NE(output.str().find("console browser test: passed"), std::string::npos) << output.str();
  // What the browser did is in the database too: the replay counted as a copy, the resolve.
  EXPECT_EQ(stores.await_duplicate_count(replay_callback, 1), 1);
  pqxx::work tx(stores.pg());
  EXPECT_EQ(tx.exec_params1("SELECT count(*) FROM payment_discrepancy WHERE payment_no = $1 AND "
                            "resolved_at IS NOT NULL",
                            resolved.payment)[0]
                .as<int>(),
            1);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
