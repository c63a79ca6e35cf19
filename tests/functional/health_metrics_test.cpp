// Functional tests: /healthz, /readyz with stores up and down, /metrics, routing 404/405.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/engine_fixture.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

// A loopback URL nobody listens on: a port that was just free.
std::string closed_port_redis_url() {
  return "redis://127.0.0.1:" + std::to_string(free_port());
}
std::string closed_port_pg_dsn() {
  return "postgresql://postgres@127.0.0.1:" + std::to_string(free_port()) + "/seatflow";
}

// /readyz reads the background prober's verdict: polls until it answers `status` with `needle` in
// the body (5 s at most), and returns the last answer.
Response readyz_until(const TestEngine& engine, int status, std::string_view needle) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  Response last = engine.get("/readyz");
  while ((last.status != status || last.body.find(needle) == std::string::npos) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    last = engine.get("/readyz");
  }
  return last;
}

TEST(Health, HealthzAnswersOk) {
  Stores stores;
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto response = engine.get("/healthz");
  EXPECT_EQ(response.status, 200) << response.error;
  EXPECT_EQ(response.body, "ok");
}

TEST(Health, ReadyzIs200WhenBothStoresAreUp) {
  Stores stores;
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto response = readyz_until(engine, 200, "ready");
  EXPECT_EQ(response.status, 200) << response.body << response.error;
  EXPECT_EQ(response.body, "ready");
}

TEST(Health, ReadyzIs503WhenRedisIsUnreachable) {
  Stores stores;
  TestEngine engine(EnvOverrides{{"SEATFLOW_REDIS_URL", closed_port_redis_url()}});
  ASSERT_TRUE(engine.healthy()) << "the engine must start and report, not exit, without Redis";
  const auto response = readyz_until(engine, 503, "redis unreachable");
  EXPECT_EQ(response.status, 503) << response.body << response.error;
  EXPECT_NE(response.body.find("redis unreachable"), std::string::npos) << response.body;
  // Liveness is not readiness: the process itself is fine.
  EXPECT_EQ(engine.get("/healthz").status, 200);
}

TEST(Health, ReadyzIs503WhenPostgresIsUnreachable) {
  Stores stores;
  TestEngine engine(EnvOverrides{{"SEATFLOW_PG_DSN", closed_port_pg_dsn()}});
  ASSERT_TRUE(engine.healthy()) << "the engine must start and report, not exit, without PostgreSQL";
  const auto response = readyz_until(engine, 503, "postgresql unreachable");
  EXPECT_EQ(response.status, 503) << response.body << response.error;
  EXPECT_NE(response.body.find("postgresql unreachable"), std::string::npos) << response.body;
  EXPECT_EQ(engine.get("/healthz").status, 200);
}

TEST(Metrics, ExposesCallbackCountersAndLatencyHistogram) {
  Stores stores;
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  const auto response = engine.get("/metrics");
  ASSERT_EQ(response.status, 200) << response.error;
  EXPECT_EQ(metric_value(response.body, callback_series("applied")), 0.0) << response.body;
  EXPECT_NE(response.body.find("seatflow_payment_callback_duration_seconds_bucket"),
            std::string::npos)
      << response.body;
  EXPECT_EQ(metric_value(response.body,
                         R"(seatflow_payment_callback_duration_seconds_count{channel="hmac"})"),
            0.0);
  for (const char* family :
       {"seatflow_commit_batch_callbacks_count", "seatflow_commit_batch_duration_seconds_count",
        "seatflow_commit_queue_wait_seconds_count"}) {
    EXPECT_EQ(metric_value(response.body, family), 0.0) << family;
  }
}

TEST(Metrics, CountsChangeAfterCallbacks) {
  Stores stores;
  const auto payment = stores.id("pay");
  stores.create_pending(payment, stores.id("ord"), stores.id("show"), {"A1"});
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());

  ASSERT_EQ(engine.notify(signed_body(stores.id("cb1"), payment, 1)).status, 200);
  const auto bad =
      signed_body(stores.id("cb2"), payment, 1, domain::unix_time_ms(), "some-other-secret-123456");
  ASSERT_EQ(engine.notify(bad).status, 401);

  const auto text = engine.metrics();
  EXPECT_EQ(metric_value(text, callback_series("applied")), 1.0) << text;
  EXPECT_EQ(metric_value(text, callback_series("rejected_signature")), 1.0) << text;
  EXPECT_EQ(metric_value(text, callback_series("duplicate")), 0.0) << text;
  // The histogram observes verified callbacks (the applied one) up to the reply.
  EXPECT_EQ(
      metric_value(text, R"(seatflow_payment_callback_duration_seconds_count{channel="hmac"})"),
      1.0)
      << text;
  EXPECT_EQ(
      metric_value(
          text, R"(seatflow_payment_callback_duration_seconds_bucket{channel="hmac",le="+Inf"})"),
      1.0)
      << text;
  // The applied callback went through one group-commit transaction of one; the forged one never
  // reached the batcher.
  EXPECT_EQ(metric_value(text, "seatflow_commit_queue_wait_seconds_count"), 1.0) << text;
  EXPECT_EQ(metric_value(text, R"(seatflow_commit_batch_callbacks_bucket{le="1"})"), 1.0) << text;
  EXPECT_EQ(metric_value(text, "seatflow_commit_batch_callbacks_sum"), 1.0) << text;
  EXPECT_EQ(metric_value(text, "seatflow_commit_batch_duration_seconds_count"), 1.0) << text;
}

TEST(Routing, UnknownPathIs404) {
  Stores stores;
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  EXPECT_EQ(engine.get("/no/such/path").status, 404);
  EXPECT_EQ(engine.connect()->request("POST", "/no/such/path", "{}").status, 404);
  // Every /api/ path but the notify path is authenticated before it is routed.
  EXPECT_EQ(engine.connect()->request("POST", "/api/payment/other", "{}").status, 401);
}

TEST(Routing, GetOnNotifyPathIs405) {
  Stores stores;
  TestEngine engine;
  ASSERT_TRUE(engine.healthy());
  EXPECT_EQ(engine.get(kHmacNotifyPath).status, 405);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
