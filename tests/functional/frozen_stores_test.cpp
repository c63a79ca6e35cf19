// Functional tests of liveness under frozen stores: a PostgreSQL or Redis of the test's own is
// stopped with SIGSTOP (sockets open, nothing answers) or switched to read-only, and the engine
// must keep answering /healthz and /readyz at once, refuse callbacks with 503, stop within its
// bound on SIGTERM, and apply every callback exactly once after the store is back.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <future>
#include <thread>

#include "support/engine_fixture.hpp"
#include "support/pg_server.hpp"
#include "support/redis_server.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

using Clock = std::chrono::steady_clock;

// A liveness answer must arrive within this (the feature under test).
constexpr int kAnswerTimeoutMs = 1'000;
// How long a store change may take to show in /readyz (probe every 200 ms, bound 500 ms).
constexpr auto kReadyzSettle = std::chrono::seconds(8);

// Short store deadlines so each test takes seconds, not the production defaults' tens.
EnvOverrides short_deadlines() {
  return {
      {"SEATFLOW_PROFILE", "prod"},
      {"SEATFLOW_PG_STATEMENT_TIMEOUT_MS", "1000"},
      {"SEATFLOW_PG_LOCK_TIMEOUT_MS", "1000"},
      {"SEATFLOW_PG_CALL_TIMEOUT_MS", "2000"},
      {"SEATFLOW_PG_CONNECT_TIMEOUT_MS", "2000"},
      {"SEATFLOW_REDIS_TIMEOUT_MS", "1000"},
      {"SEATFLOW_PERSIST_TIMEOUT_MS", "3000"},
      {"SEATFLOW_READY_PROBE_INTERVAL_MS", "200"},
      {"SEATFLOW_READY_PROBE_TIMEOUT_MS", "500"},
  };
}

// GET on a fresh connection that must answer within kAnswerTimeoutMs.
Response quick_get(const TestEngine& engine, std::string_view target) {
  HttpClient client(engine.port(), kAnswerTimeoutMs);
  return client.get(target);
}

// Polls /readyz until it answers `status`; every answer must come within kAnswerTimeoutMs.
// Returns the last response.
Response await_readyz(const TestEngine& engine, int status) {
  const auto deadline = Clock::now() + kReadyzSettle;
  Response last;
  while (Clock::now() < deadline) {
    const auto started = Clock::now();
    last = quick_get(engine, "/readyz");
    EXPECT_NE(last.status, 0) << "/readyz gave no answer within " << kAnswerTimeoutMs
                              << " ms: " << last.error;
    EXPECT_LT(Clock::now() - started, std::chrono::milliseconds(kAnswerTimeoutMs));
    if (last.status == status) {
      return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return last;
}

// Posts the callback until it is ACKed, like a gateway, for at most 15 s.
Response resend_until_acked(const TestEngine& engine, const std::string& body) {
  const auto deadline = Clock::now() + std::chrono::seconds(15);
  Response last;
  while (Clock::now() < deadline) {
    last = engine.notify(body);
    if (last.status == 200) {
      return last;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  return last;
}

class FrozenPostgres : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(pg_.start());
    stores_ = std::make_unique<Stores>(pg_.dsn());
  }

  [[nodiscard]] EnvOverrides env() const {
    auto env = short_deadlines();
    env["SEATFLOW_PG_DSN"] = pg_.dsn();
    return env;
  }

  PgServer pg_;
  std::unique_ptr<Stores> stores_;
};

TEST_F(FrozenPostgres, ReadyzAnswers503AtOnceWhileFrozenAndCallbacksAreAppliedOnceAfterTheThaw) {
  auto& stores = *stores_;
  const auto before = stores.id("pay-before");
  const auto during = stores.id("pay-during");
  stores.create_pending(before, stores.id("ord-before"), stores.id("show"), {"A1"});
  stores.create_pending(during, stores.id("ord-during"), stores.id("show"), {"A2"});
  TestEngine engine(env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_EQ(await_readyz(engine, 200).status, 200);
  ASSERT_EQ(engine.notify(signed_body(stores.id("cb-before"), before, 1)).status, 200);

  pg_.freeze();
  const auto frozen = await_readyz(engine, 503);
  EXPECT_EQ(frozen.status, 503) << frozen.body;
  EXPECT_NE(frozen.body.find("postgresql"), std::string::npos) << frozen.body;
  const auto health = quick_get(engine, "/healthz");
  EXPECT_EQ(health.status, 200) << health.error;

  const auto body = signed_body(stores.id("cb-during"), during, 1);
  const auto refused = engine.notify(body);
  EXPECT_EQ(refused.status, 503) << refused.body << refused.error;
  // Still answering at once while the callback path waits on the frozen server.
  EXPECT_EQ(quick_get(engine, "/readyz").status, 503);
  const auto cuts = metric_value(engine.metrics(), "seatflow_store_call_deadline_cuts_total");
  EXPECT_GE(cuts.value_or(0.0), 1.0) << "the callback's call was not cut at its deadline";

  pg_.thaw();
  EXPECT_EQ(await_readyz(engine, 200).status, 200) << "not ready again after the thaw";
  EXPECT_EQ(resend_until_acked(engine, body).status, 200);
  EXPECT_EQ(stores.payment_status(during), 1);
  EXPECT_EQ(stores.order_status(stores.id("ord-during")), 1);
  EXPECT_EQ(stores.log_rows_for_payment(during), 1);
  EXPECT_EQ(stores.payment_status(before), 1);
}

TEST_F(FrozenPostgres, SigtermWhileFrozenExitsWithinTheBoundAndNeverAcksTheUncommitted) {
  auto& stores = *stores_;
  const auto payment = stores.id("pay");
  stores.create_pending(payment, stores.id("ord"), stores.id("show"), {"A1"});
  auto environment = env();
  // A persist timeout longer than the stop bound: the callback is still in flight at the stop.
  environment["SEATFLOW_PERSIST_TIMEOUT_MS"] = "60000";
  environment["SEATFLOW_PG_CALL_TIMEOUT_MS"] = "60000";
  environment["SEATFLOW_SHUTDOWN_TIMEOUT_MS"] = "5000";
  TestEngine engine(environment);
  ASSERT_TRUE(engine.healthy());
  ASSERT_EQ(await_readyz(engine, 200).status, 200);

  pg_.freeze();
  auto in_flight = std::async(std::launch::async, [&engine, &stores, &payment] {
    HttpClient client(engine.port(), 30'000);
    return client.post_json(kHmacNotifyPath, signed_body(stores.id("cb"), payment, 1));
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto stop_started = Clock::now();
  engine.process().signal(SIGTERM);
  const int code = engine.process().wait_exit(std::chrono::seconds(12));
  const auto stop_took = Clock::now() - stop_started;
  EXPECT_NE(code, -1) << "still running 12 s after SIGTERM; its output:\n" << engine.log();
  // The bound is 5 s; the margin is for a loaded machine.
  EXPECT_LT(stop_took, std::chrono::seconds(9));
  const auto answer = in_flight.get();
  EXPECT_NE(answer.status, 200) << "an uncommitted callback was ACKed";
  pg_.thaw();
  if (code == -1) {
    engine.process().signal(SIGKILL);
  }
  EXPECT_EQ(stores.payment_status(payment), 0) << "nothing committed after the stop";
}

TEST_F(FrozenPostgres, ReadOnlySwitchMakesReadyzAndCallbacks503AndSwitchingBackRecovers) {
  auto& stores = *stores_;
  const auto payment = stores.id("pay");
  stores.create_pending(payment, stores.id("ord"), stores.id("show"), {"A1"});
  TestEngine engine(env());
  ASSERT_TRUE(engine.healthy());
  ASSERT_EQ(await_readyz(engine, 200).status, 200);

  pg_.set_read_only(true);
  const auto read_only = await_readyz(engine, 503);
  EXPECT_EQ(read_only.status, 503);
  EXPECT_NE(read_only.body.find("read-only"), std::string::npos) << read_only.body;
  const auto body = signed_body(stores.id("cb"), payment, 1);
  const auto refused = engine.notify(body);
  EXPECT_EQ(refused.status, 503) << refused.body;
  EXPECT_EQ(stores.payment_status(payment), 0);

  pg_.set_read_only(false);
  EXPECT_EQ(await_readyz(engine, 200).status, 200);
  EXPECT_EQ(resend_until_acked(engine, body).status, 200);
  EXPECT_EQ(stores.payment_status(payment), 1);
  EXPECT_EQ(stores.log_rows_for_payment(payment), 1);
}

TEST(FrozenRedis, ReadyzAnswers503AtOnceWhileFrozenAndCallbacksAreAppliedOnceAfterTheThaw) {
  RedisServer redis;
  ASSERT_TRUE(redis.start());
  Stores stores;
  const auto payment = stores.id("pay");
  stores.create_pending(payment, stores.id("ord"), stores.id("show"), {"A1"});
  auto env = short_deadlines();
  env["SEATFLOW_REDIS_URL"] = redis.url();
  TestEngine engine(env);
  ASSERT_TRUE(engine.healthy());
  ASSERT_EQ(await_readyz(engine, 200).status, 200);

  ASSERT_EQ(::kill(redis.pid(), SIGSTOP), 0);
  const auto frozen = await_readyz(engine, 503);
  EXPECT_EQ(frozen.status, 503);
  EXPECT_NE(frozen.body.find("redis"), std::string::npos) << frozen.body;
  EXPECT_EQ(quick_get(engine, "/healthz").status, 200);
  const auto body = signed_body(stores.id("cb"), payment, 1);
  const auto refused = engine.notify(body);
  EXPECT_EQ(refused.status, 503) << refused.body << refused.error;
  EXPECT_EQ(stores.payment_status(payment), 0) << "the sale failed, so the move rolled back";

  ASSERT_EQ(::kill(redis.pid(), SIGCONT), 0);
  EXPECT_EQ(await_readyz(engine, 200).status, 200);
  EXPECT_EQ(resend_until_acked(engine, body).status, 200);
  EXPECT_EQ(stores.payment_status(payment), 1);
  EXPECT_EQ(stores.log_rows_for_payment(payment), 1);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
