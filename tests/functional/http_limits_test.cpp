// Functional tests: HTTP limits (body, headers, garbage, pipelining, slow loris, connections).
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/engine_fixture.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// A raw request with a Content-Length, for tests that write bytes themselves.
std::string raw_request(std::string_view method, std::string_view target, std::string_view body,
                        std::string_view extra_headers = {}) {
  std::string wire;
  wire.append(method).append(" ").append(target).append(" HTTP/1.1\r\nHost: test\r\n");
  wire.append(extra_headers);
  if (!body.empty() || method == "POST") {
    wire.append("Content-Type: application/json\r\nContent-Length: ")
        .append(std::to_string(body.size()))
        .append("\r\n");
  }
  wire.append("\r\n").append(body);
  return wire;
}

// After abuse, the engine must still apply a good callback on a new connection.
void expect_serves_good_callback(const TestEngine& engine, Stores& stores) {
  const auto payment = stores.id("pay-after");
  const auto order = stores.id("ord-after");
  stores.create_pending(payment, order, stores.id("show-after"), {"Z1"});
  const auto response = engine.notify(signed_body(stores.id("cb-after"), payment, 1));
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  EXPECT_EQ(stores.payment_status(payment), 1);
  EXPECT_EQ(stores.order_status(order), 1);
}

TEST(HttpLimits, BodyOverTheLimitIs413) {
  Stores stores;
  TestEngine engine(EnvOverrides{{"SEATFLOW_BODY_BYTES_MAX", "1024"}});
  ASSERT_TRUE(engine.healthy());
  const std::string body(2000, 'x');
  const auto response = engine.connect()->post_json(kHmacNotifyPath, body);
  EXPECT_EQ(response.status, 413) << response.error;
  EXPECT_EQ(engine.callbacks("rejected_param") + engine.callbacks("applied"), 0.0)
      << "an oversized body must not reach the channel";
  expect_serves_good_callback(engine, stores);
}

TEST(HttpLimits, OversizedHeadersAre431) {
  Stores stores;
  TestEngine engine(EnvOverrides{{"SEATFLOW_HEADER_BYTES_MAX", "1024"}});
  ASSERT_TRUE(engine.healthy());
  const auto response =
      engine.connect()->request("GET", "/healthz", {}, {{"X-Padding", std::string(4096, 'h')}});
  EXPECT_EQ(response.status, 431) << response.error;
  expect_serves_good_callback(engine, stores);
}

TEST(HttpLimits, GarbageIsRejectedOrClosedAndTheEngineKeepsServing) {
  Stores stores;
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  // A TLS ClientHello's first bytes (NUL bytes included), a non-HTTP line, bad lengths.
  constexpr char kTlsHello[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03 garbage\r\n\r\n";
  for (const std::string& garbage :
       {std::string(kTlsHello, sizeof kTlsHello - 1), std::string("NOT HTTP AT ALL\r\n\r\n"),
        std::string("GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n"),
        std::string("POST /api/payment/notify/hmac HTTP/1.1\r\nContent-Length: -5\r\n\r\n")}) {
    auto client = engine.connect();
    ASSERT_TRUE(client->send_raw(garbage));
    const auto response = client->read_response(3000);
    if (response.status != 0) {
      EXPECT_EQ(response.status, 400) << "for garbage: " << garbage;
    } else {
      EXPECT_TRUE(client->is_closed_by_peer(3000)) << "neither 400 nor closed: " << response.error;
    }
  }
  EXPECT_EQ(engine.get("/healthz").status, 200);
  expect_serves_good_callback(engine, stores);
}

TEST(HttpLimits, PipelinedRequestsAreAnsweredInOrderOnOneConnection) {
  Stores stores;
  const auto payment = stores.id("pay");
  const auto order = stores.id("ord");
  stores.create_pending(payment, order, stores.id("show"), {"P1"});
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());

  const auto body = signed_body(stores.id("cb1"), payment, 1);
  const auto wire = raw_request("GET", "/healthz", {}) +
                    raw_request("POST", kHmacNotifyPath, body) +
                    raw_request("GET", "/metrics", {}) + raw_request("GET", "/nope", {});
  auto client = engine.connect();
  ASSERT_TRUE(client->send_raw(wire));

  const auto first = client->read_response();
  EXPECT_EQ(first.status, 200) << first.error;
  EXPECT_EQ(first.body, "ok");
  const auto second = client->read_response();
  EXPECT_EQ(second.status, 200) << second.error;
  EXPECT_EQ(second.body, "success");
  const auto third = client->read_response();
  EXPECT_EQ(third.status, 200) << third.error;
  // The metrics were rendered after the callback's reply: they already count it.
  EXPECT_EQ(metric_value(third.body, callback_series("applied")), 1.0) << third.body;
  const auto fourth = client->read_response();
  EXPECT_EQ(fourth.status, 404) << fourth.error;
  EXPECT_EQ(stores.payment_status(payment), 1);

  // The connection is still usable afterwards.
  EXPECT_EQ(client->get("/healthz").status, 200);
}

TEST(HttpLimits, SlowLorisIsDisconnectedWhileOthersAreServed) {
  Stores stores;
  TestEngine engine(EnvOverrides{{"SEATFLOW_READ_TIMEOUT_MS", "300"}});
  ASSERT_TRUE(engine.healthy());
  auto slow = engine.connect();
  ASSERT_TRUE(slow->send_raw("POST /api/payment/notify/hmac HT"));

  // A good client is served while the slow one stalls.
  const auto good = engine.get("/healthz");
  EXPECT_EQ(good.status, 200) << good.error;
  expect_serves_good_callback(engine, stores);

  EXPECT_TRUE(slow->is_closed_by_peer(2000))
      << "a half-sent request must be cut off after the read timeout";
  EXPECT_EQ(engine.get("/healthz").status, 200);
}

TEST(HttpLimits, AnIdleConnectionIsClosedAfterTheIdleTimeoutAndABusyOneIsKept) {
  Stores stores;
  TestEngine engine(EnvOverrides{{"SEATFLOW_IDLE_TIMEOUT_MS", "300"}});
  ASSERT_TRUE(engine.healthy());
  auto idle = engine.connect();
  ASSERT_EQ(idle->get("/healthz").status, 200);
  EXPECT_TRUE(idle->is_closed_by_peer(2000)) << "a keep-alive connection idle past the timeout";

  // Requests spaced well inside the timeout keep one connection open for three timeouts' time:
  // each request starts the idle deadline afresh.
  auto busy = engine.connect();
  for (int i = 0; i < 10; ++i) {
    const auto response = busy->get("/healthz");
    ASSERT_EQ(response.status, 200) << "request " << i << ": " << response.error;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

TEST(HttpLimits, ConnectionsOverTheCapGet503OrAreClosed) {
  Stores stores;
  TestEngine engine(EnvOverrides{{"SEATFLOW_CONNECTIONS_MAX", "2"}});
  ASSERT_TRUE(engine.healthy());

  // The health probe's own connection may take a moment to be torn down server-side.
  std::unique_ptr<HttpClient> first;
  std::unique_ptr<HttpClient> second;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  bool both = false;
  while (!both && std::chrono::steady_clock::now() < deadline) {
    first.reset();
    second.reset();
    first = engine.connect();
    second = engine.connect();
    both = first->get("/healthz").status == 200 && second->get("/healthz").status == 200;
    if (!both) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_TRUE(both) << "two connections must be accepted under a cap of 2";

  auto third = engine.connect();
  third->send_raw(raw_request("GET", "/healthz", {}));
  const auto refused = third->read_response(3000);
  if (refused.status != 0) {
    EXPECT_EQ(refused.status, 503) << refused.body;
  } else {
    EXPECT_TRUE(third->is_closed_by_peer(3000)) << refused.error;
  }
  third.reset();

  // The two held connections still work.
  EXPECT_EQ(first->get("/healthz").status, 200);
  EXPECT_EQ(second->get("/healthz").status, 200);
  const auto text = first->get("/metrics");
  const auto refused_total = metric_value(text.body, "seatflow_connections_refused_total");
  ASSERT_TRUE(refused_total.has_value()) << text.body;
  EXPECT_GE(*refused_total, 1.0);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
