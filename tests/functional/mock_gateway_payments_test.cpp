// The dev mock gateway as the hmac gateway's payment API (SPEC §16) over real HTTP: creations and
// closes signed both ways, the automatic callback sent to the creation's notify URL (and the
// engine's own one after its commit left out), no payment and no automatic callback after the
// deadline or a close, and a person paying on the checkout page in Debian's chromium
// (tests/browser/checkout.test.mjs through puppeteer-core, as the console's browser test).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include "channels/hmac/hmac_channel.hpp"
#include "channels/hmac/hmac_payment.hpp"
#include "support/engine_fixture.hpp"
#include "support/payment_checks.hpp"
#include "support/stores.hpp"
#include "support/test_http_server.hpp"

#ifndef SEATFLOW_BROWSER_TEST_DIR
#error "tests/CMakeLists.txt defines SEATFLOW_BROWSER_TEST_DIR"
#endif

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr const char* kToken = "functional-mock-payments-token-8d41f2";
// The automatic callback's delay: long enough for a test to create or close a payment at the mock
// before it is due, on a loaded machine.
constexpr const char* kAutoDelayMs = "1000";
constexpr auto kPastTheAutoDelay = 2s;

EnvOverrides mock_env(bool auto_pay) {
  return {{"SEATFLOW_API_TOKEN", kToken},
          {"SEATFLOW_MOCK_GATEWAY_AUTO", auto_pay ? "on" : "off"},
          {"SEATFLOW_MOCK_GATEWAY_DELAY_MS", kAutoDelayMs},
          // These tests create at the mock themselves, as a merchant's own integration would.
          {"SEATFLOW_GATEWAY_CREATE", "off"}};
}

std::string engine_notify_url(const TestEngine& engine) {
  return "http://127.0.0.1:" + std::to_string(engine.port()) + kHmacNotifyPath;
}

json json_of(const Response& response) {
  return json::parse(response.body, nullptr, false);
}

// SeatFlow's own hmac payment dialect (the engine's side of the wire) with the engine's mock
// gateway as its gateway, signing with `secret`.
channels::HmacPayment dialect(const TestEngine& engine, const std::string& secret = kTestSecret) {
  return channels::HmacPayment(channels::HmacConfig{{secret}},
                               net::Url{false, "127.0.0.1", engine.port(), "/"});
}

Response send(const TestEngine& engine, const net::Request& request) {
  return engine.request(request.method, request.url.target, request.body,
                        {{"Content-Type", "application/json"}});
}

// The dialect's create of `payment_no` at the mock, and the mock's answer.
Response create_at_mock(const TestEngine& engine, const std::string& payment_no,
                        std::int64_t amount_cents, std::int64_t expires_at_ms,
                        const std::string& notify_url, const std::string& secret = kTestSecret) {
  const channels::CreateTarget target{payment_no,    "ord-" + payment_no, amount_cents,
                                      expires_at_ms, notify_url,          "two seats"};
  return send(engine,
              dialect(engine, secret).create_request(target, domain::unix_time_ms()).value());
}

// The pay URL of the mock's answer to the dialect's create, which the dialect verified; "" (with
// a failure) otherwise.
std::string created_pay_url(const TestEngine& engine, const std::string& payment_no,
                            std::int64_t amount_cents, std::int64_t expires_at_ms,
                            const std::string& notify_url) {
  const auto response = create_at_mock(engine, payment_no, amount_cents, expires_at_ms, notify_url);
  const channels::CreateTarget target{payment_no, {}, 0, 0, {}, {}};
  const auto answer = dialect(engine).create_answer(target, {response.status, {}, response.body},
                                                    domain::unix_time_ms());
  EXPECT_TRUE(answer.ok()) << answer.detail() << " " << response.body;
  EXPECT_TRUE(answer.ok() && answer.value().created) << response.body;
  return answer.ok() ? answer.value().value : std::string();
}

// The close state the dialect read from the mock's signed answer ("" with a failure otherwise).
std::string close_at_mock(const TestEngine& engine, const std::string& payment_no) {
  const channels::CloseTarget target{payment_no, {}};
  const auto now = domain::unix_time_ms();
  const auto response = send(engine, dialect(engine).close_request(target, now).value());
  const auto answer =
      dialect(engine).close_answer(target, {response.status, {}, response.body}, now);
  EXPECT_TRUE(answer.ok()) << answer.detail() << " " << response.body;
  return answer.ok() ? answer.value().reason : std::string();
}

// The path of a pay URL ("http://127.0.0.1:<port>/api/...": "/api/...").
std::string path_of(const std::string& url) {
  const auto scheme = url.find("://");
  return scheme == std::string::npos ? url : url.substr(url.find('/', scheme + 3));
}

Response pay_on_demand(const TestEngine& engine, const std::string& payment_no) {
  return engine.api("POST", "/api/mock-gateway/pay", kToken,
                    json{{"paymentNo", payment_no}, {"success", true}}.dump());
}

Response pay_on_checkout(const TestEngine& engine, const std::string& pay_url) {
  return engine.request("POST", path_of(pay_url) + "/pay", R"({"success":true})",
                        {{"Content-Type", "application/json"}});
}

std::string error_of(const Response& response) {
  const auto body = json_of(response);
  return body.is_object() ? body.value("error", "") : std::string();
}

// Requests a merchant's notify endpoint got, kept to look at.
class Merchant {
 public:
  Merchant()
      : server_(
            [this](const ServerRequest& request) {
              const std::lock_guard lock(mutex_);
              bodies_.push_back(request.body);
              return ServerResponse{200, {{"Content-Type", "text/plain"}}, "success"};
            },
            false) {}
  [[nodiscard]] std::string notify_url() const { return server_.base_url() + kHmacNotifyPath; }
  [[nodiscard]] std::vector<std::string> bodies() const {
    const std::lock_guard lock(mutex_);
    return bodies_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<std::string> bodies_;
  TestHttpServer server_;
};

TEST(MockGatewayPayments, CreateIsSignedBothWaysAndItsCallbackGoesToTheNotifyUrl) {
  Stores stores;
  TestEngine engine(mock_env(true));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  // Committed through the API: the engine's hook schedules its own automatic callback too.
  const auto order = stores.id("ord-created");
  const auto payment = stores.id("pay-created");
  const auto show = stores.id("show-created");
  ASSERT_EQ(engine
                .api("POST", "/api/orders", kToken,
                     json{{"orderNo", order},
                          {"userId", "u1"},
                          {"showId", show},
                          {"seatIds", {"A1"}},
                          {"amountCents", 4200}}
                         .dump())
                .status,
            201);
  ASSERT_EQ(engine
                .api("POST", "/api/payments", kToken,
                     json{{"orderNo", order}, {"paymentNo", payment}, {"channel", "hmac"}}.dump())
                .status,
            201);
  Merchant merchant;
  const auto expires = domain::unix_time_ms() + 60'000;

  // A forged creation creates nothing.
  const auto forged =
      create_at_mock(engine, payment, 4200, expires, merchant.notify_url(), "not-the-secret-000");
  EXPECT_EQ(forged.status, 401) << forged.body;
  EXPECT_EQ(engine.get("/api/mock-gateway/checkout/" + payment).status, 404);

  const auto url = created_pay_url(engine, payment, 4200, expires, merchant.notify_url());
  EXPECT_EQ(url, "http://127.0.0.1:" + std::to_string(engine.port()) +
                     "/api/mock-gateway/checkout/" + payment);
  EXPECT_EQ(created_pay_url(engine, payment, 4200, expires, merchant.notify_url()), url);
  const auto other = create_at_mock(engine, payment, 4300, expires, merchant.notify_url());
  EXPECT_EQ(other.status, 409) << other.body;

  // One automatic callback, signed, to the creation's notify URL; none to the engine's own.
  ASSERT_TRUE(wait_until([&] { return !merchant.bodies().empty(); }, 10s)) << engine.log();
  std::this_thread::sleep_for(kPastTheAutoDelay);
  const auto bodies = merchant.bodies();
  ASSERT_EQ(bodies.size(), 1U);
  const channels::HmacChannel verifier(channels::HmacConfig{{kTestSecret}});
  const codec::Headers headers;
  const auto callback = verifier.verify({bodies[0], &headers, domain::unix_time_ms()});
  ASSERT_TRUE(callback.ok()) << bodies[0];
  EXPECT_EQ(callback.value().payment_no, payment);
  EXPECT_EQ(callback.value().kind, domain::CallbackKind::success);
  EXPECT_EQ(stores.log_rows_for_payment(payment), 0) << engine.log();
  EXPECT_EQ(stores.payment_status(payment), 0);
  // Paid at the mock: a close finds it paid.
  EXPECT_EQ(close_at_mock(engine, payment), "paid");
  (void)stores.redis().command({"DEL", "seatflow:seats:{" + show + "}"});
}

TEST(MockGatewayPayments, NoPaymentAndNoAutomaticCallbackAfterTheDeadlineOrAClose) {
  Stores stores;
  TestEngine engine(mock_env(true));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const Pending late(stores, "hmac", "-late");
  const Pending closed(stores, "hmac", "-closed");
  const auto expired_url = created_pay_url(engine, late.payment, 5000, domain::unix_time_ms() + 200,
                                           engine_notify_url(engine));
  const auto closed_url = created_pay_url(
      engine, closed.payment, 5000, domain::unix_time_ms() + 60'000, engine_notify_url(engine));
  EXPECT_EQ(close_at_mock(engine, closed.payment), "closed");
  // Past the deadline and the automatic callback's delay: nothing reached the engine.
  std::this_thread::sleep_for(kPastTheAutoDelay);
  for (const auto* p : {&late, &closed}) {
    EXPECT_EQ(stores.log_rows_for_payment(p->payment), 0) << p->payment << engine.log();
    EXPECT_EQ(stores.payment_status(p->payment), 0) << p->payment;
  }

  for (const auto& [p, url, why] :
       {std::tuple{&late, expired_url, "expired"}, std::tuple{&closed, closed_url, "closed"}}) {
    const auto on_demand = pay_on_demand(engine, p->payment);
    EXPECT_EQ(on_demand.status, 409) << on_demand.body;
    EXPECT_EQ(error_of(on_demand), why) << on_demand.body;
    const auto on_checkout = pay_on_checkout(engine, url);
    EXPECT_EQ(on_checkout.status, 409) << on_checkout.body;
    EXPECT_EQ(error_of(on_checkout), why) << on_checkout.body;
    const auto page = engine.get(path_of(url));
    EXPECT_EQ(page.status, 200);
    EXPECT_NE(page.body.find(std::string("<dd id=\"state\">") + why + "</dd>"), std::string::npos)
        << page.body;
    // Not paid at the gateway: its query answers pending (202), saying why.
    const auto query = engine.get(std::string(channels::kHmacQueryPath) + p->payment);
    EXPECT_EQ(query.status, 202);
    EXPECT_EQ(query.body, why);
    EXPECT_EQ(stores.log_rows_for_payment(p->payment), 0);
  }
  EXPECT_EQ(close_at_mock(engine, closed.payment), "closed");
}

// Runs tests/browser/checkout.test.mjs with `fixture`; its exit status and output.
std::pair<int, std::string> run_browser(const json& fixture, std::uint16_t port) {
  const std::filesystem::path dir(SEATFLOW_BROWSER_TEST_DIR);
  const auto log = std::filesystem::temp_directory_path() /
                   ("seatflow-checkout-" + std::to_string(port) + ".log");
  const auto quoted = [](const std::string& text) {
    std::string out = "'";
    for (const char c : text) {
      out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    }
    return out + "'";
  };
  const std::string command = "SEATFLOW_CHECKOUT_FIXTURE=" + quoted(fixture.dump()) +
                              " timeout 60 node " + quoted((dir / "checkout.test.mjs").string()) +
                              " > " + quoted(log.string()) + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::stringstream output;
  output << in.rdbuf();
  std::filesystem::remove(log);
  return {status, output.str()};
}

TEST(MockGatewayCheckout, APersonPaysOnTheCheckoutPageAndTheOrderIsPaid) {
  const std::filesystem::path dir(SEATFLOW_BROWSER_TEST_DIR);
  ASSERT_TRUE(std::filesystem::exists(dir / "node_modules" / "puppeteer-core"))
      << "puppeteer-core is missing: ./test.sh installs it (cd tests/browser && npm ci)";
  Stores stores;
  TestEngine engine(mock_env(false));
  ASSERT_TRUE(engine.healthy()) << engine.log();
  const Pending p(stores, "hmac", "-checkout");
  const auto url = created_pay_url(engine, p.payment, 5000, domain::unix_time_ms() + 600'000,
                                   engine_notify_url(engine));
  ASSERT_FALSE(url.empty());
  const auto page = engine.get(path_of(url));
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.header("content-security-policy").find("script-src 'self'"), std::string::npos);
  for (const auto* control :
       {"id=\"pay\"", "id=\"fail\"", "50.00 CNY", "/api/mock-gateway/checkout.js"}) {
    EXPECT_NE(page.body.find(control), std::string::npos) << control << "\n" << page.body;
  }
  EXPECT_EQ(engine.get("/api/mock-gateway/checkout.js").status, 200);

  const auto [status, output] = run_browser(
      json{{"payUrl", url}, {"paymentNo", p.payment}, {"amount", "50.00"}}, engine.port());
  EXPECT_EQ(status, 0) << output << "\nengine log:\n" << engine.log();
  EXPECT_NE(output.find("checkout browser test: passed"), std::string::npos) << output;
  // The purchase went through the engine's notify path: the order is PAID, its seats sold.
  EXPECT_TRUE(wait_until([&] { return stores.order_status(p.order) == 1; }, 5s));
  EXPECT_EQ(stores.payment_status(p.payment), 1);
  EXPECT_EQ(stores.log_rows_for_payment(p.payment), 1);
  for (const auto& seat : p.seats) {
    EXPECT_EQ(stores.seat(p.show, seat), "2:" + p.order) << seat;
  }
  // Paid now: the mock refuses to close it.
  EXPECT_EQ(close_at_mock(engine, p.payment), "paid");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
