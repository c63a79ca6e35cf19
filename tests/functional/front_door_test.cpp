// Functional tests of the front door under hostile traffic (SPEC §14): connections that never send
// a byte, too many connections from one source, unverified notify floods (per-source token
// buckets, X-Forwarded-For from trusted proxies only) and per-channel source allowlists. Each
// hostile request is answered and leaves the payment as it was.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "support/engine_fixture.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// A pending hmac payment; expect_unchanged() checks that no hostile request touched it.
struct Pending {
  Pending(Stores& s, const std::string& name)
      : stores(s), payment(s.id("pay-" + name)), order(s.id("ord-" + name)) {
    s.create_pending(payment, order, s.id("show-" + name), {"F1"});
  }
  void expect_unchanged() {
    EXPECT_EQ(stores.payment_status(payment), 0);
    EXPECT_EQ(stores.order_status(order), 0);
    EXPECT_EQ(stores.log_rows_for_payment(payment), 0);
  }
  Stores& stores;
  std::string payment;
  std::string order;
};

// Connections held open until the cap is reached with each of them answered once (the fixture's
// own health probes may take a moment to be torn down server-side).
std::vector<std::unique_ptr<HttpClient>> hold(const TestEngine& engine, int count) {
  std::vector<std::unique_ptr<HttpClient>> held;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (std::chrono::steady_clock::now() < deadline) {
    held.clear();
    bool all = true;
    for (int i = 0; i < count && all; ++i) {
      held.push_back(engine.connect());
      all = held.back()->get("/healthz").status == 200;
    }
    if (all) {
      return held;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  ADD_FAILURE() << count << " connections were not all accepted";
  return held;
}

TEST(FrontDoor, ConnectionsThatSendNothingAreClosedAtTheHeaderTimeout) {
  Stores stores;
  TestEngine engine(
      EnvOverrides{{"SEATFLOW_HEADER_TIMEOUT_MS", "300"}, {"SEATFLOW_MAX_CONNECTIONS", "6"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  // A keep-alive connection that was answered waits for the idle timeout (60 s), not this one.
  auto answered = engine.connect();
  ASSERT_EQ(answered->get("/healthz").status, 200);
  // Five sockets that never send a byte fill every other slot.
  std::vector<std::unique_ptr<HttpClient>> silent;
  for (int i = 0; i < 5; ++i) {
    silent.push_back(engine.connect());
    ASSERT_TRUE(silent.back()->connected());
  }
  for (auto& client : silent) {
    EXPECT_TRUE(client->is_closed_by_peer(3'000)) << "a silent connection outlived the deadline";
    EXPECT_TRUE(client->buffered().empty()) << "closed without an answer: " << client->buffered();
  }
  // Their slots are free again, and the answered connection is still open.
  const auto health = engine.get("/healthz");
  EXPECT_EQ(health.status, 200) << health.error;
  EXPECT_EQ(answered->get("/healthz").status, 200);
}

TEST(FrontDoor, ConnectionsOverTheSourceCapAre503AndWriteNothing) {
  Stores stores;
  Pending pending(stores, "cap");
  TestEngine engine(EnvOverrides{{"SEATFLOW_CONNECTIONS_PER_SOURCE_MAX", "3"}});
  ASSERT_TRUE(engine.healthy()) << engine.log();
  auto held = hold(engine, 3);
  ASSERT_EQ(held.size(), 3U);

  auto excess = engine.connect();
  const auto refused = excess->read_response(3'000);  // answered at once, before any request
  EXPECT_EQ(refused.status, 503) << refused.error;
  EXPECT_EQ(refused.header("retry-after"), "1");
  EXPECT_TRUE(excess->is_closed_by_peer(2'000));
  (void)excess->send_raw("POST " + std::string(kHmacNotifyPath) + " HTTP/1.1\r\nHost: t\r\n\r\n");
  pending.expect_unchanged();

  // The held connections still work; one closed gives its place back.
  const auto metrics = held.front()->get("/metrics");
  EXPECT_GE(metric_value(metrics.body, "seatflow_connections_refused_total").value_or(0), 1.0);
  held.back().reset();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  Response applied;
  while (std::chrono::steady_clock::now() < deadline) {
    applied = engine.notify(signed_body(stores.id("cb-cap"), pending.payment, 1));
    if (applied.status != 503) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_EQ(applied.status, 200) << applied.body << applied.error;
  EXPECT_EQ(stores.payment_status(pending.payment), 1);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
