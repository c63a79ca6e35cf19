// Functional tests of `seatflow check`, `seatflow reconcile --once` and the engine's reconciler
// actor: the real binary against the test PostgreSQL and Redis, drift made on purpose.
#include <gtest/gtest.h>

#include <optional>

#include <thread>

#include "persistence/stores/seat_scripts.hpp"
#include "support/engine_fixture.hpp"
#include "support/stores.hpp"

namespace seatflow::testing {
namespace {
namespace SEATFLOW_UNITY_ID {

EnvOverrides tool_env() {
  return {{"SEATFLOW_PROFILE", "dev"},
          {"SEATFLOW_PG_DSN", test_pg_dsn()},
          {"SEATFLOW_REDIS_URL", test_redis_url()},
          {"SEATFLOW_LOG_LEVEL", "warn"}};
}

// A paid order whose seat A2 was lost, and a cancelled order whose lock on C1 was left behind.
void make_drift(Stores& s) {
  const auto show = s.id("show");
  s.create_order(s.id("o-paid"), show, {"A1", "A2"}, 5000, 1);
  s.create_payment(s.id("p-paid"), s.id("o-paid"), "hmac", 5000, 1);
  {
    pqxx::work tx(s.pg());
    tx.exec_params("UPDATE payment_order SET paid_at = now() WHERE payment_no = $1",
                   s.id("p-paid"));
    tx.commit();
  }
  s.set_seat(show, "A1", "2:" + s.id("o-paid"));
  s.create_order(s.id("o-cancel"), show, {"C1"}, 5000, 2);
  s.create_payment(s.id("p-cancel"), s.id("o-cancel"), "hmac", 5000, 3);
  s.set_seat(show, "C1", "1:" + s.id("o-cancel"));
}

TEST(ReconcileCli, CheckReportsDriftReconcileRepairsItCheckPassesAfter) {
  Stores s;
  make_drift(s);
  const auto scope = "--scope-prefix=" + s.prefix();
  const auto before = run_to_exit({"check", scope}, tool_env());
  EXPECT_EQ(before.exit_code, 1) << before.output;
  EXPECT_NE(before.output.find("violation kind=paid_seat_not_sold subject=" + s.id("show") + "/A2"),
            std::string::npos)
      << before.output;
  EXPECT_NE(before.output.find("violation kind=finished_order_holds_seat subject=" + s.id("show") +
                               "/C1"),
            std::string::npos)
      << before.output;
  EXPECT_NE(before.output.find("violations=2 "), std::string::npos) << before.output;

  const auto repaired = run_to_exit({"reconcile", "--once", scope}, tool_env());
  EXPECT_EQ(repaired.exit_code, 0) << repaired.output;
  EXPECT_NE(repaired.output.find("orders_scanned=2 orders_repaired=2 seats_sold=1 "
                                 "seats_released=1 seats_relocked=0 seat_conflicts=0"),
            std::string::npos)
      << repaired.output;
  EXPECT_EQ(s.seat(s.id("show"), "A2"), "2:" + s.id("o-paid"));
  EXPECT_EQ(s.seat(s.id("show"), "C1"), "");

  const auto after = run_to_exit({"check", scope}, tool_env());
  EXPECT_EQ(after.exit_code, 0) << after.output;
  EXPECT_NE(after.output.find("check: orders=2 seat_fields=2 violations=0"), std::string::npos)
      << after.output;
}

// Without --once: a pass every interval until SIGTERM, then exit 0.
TEST(ReconcileCli, LoopRepairsDriftMadeAfterItStartedAndStopsOnSigterm) {
  Stores s;
  make_drift(s);
  auto env = tool_env();
  env["SEATFLOW_RECONCILE_INTERVAL_MS"] = "100";
  EngineProcess loop({"reconcile", "--scope-prefix=" + s.prefix()}, env);
  ASSERT_TRUE(loop.started());
  const auto wait_for = [&](const std::string& seat, const std::string& want) {
    for (int i = 0; i < 200 && s.seat(s.id("show"), seat) != want; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return s.seat(s.id("show"), seat);
  };
  EXPECT_EQ(wait_for("A2", "2:" + s.id("o-paid")), "2:" + s.id("o-paid"));
  s.delete_seat(s.id("show"), "A1");  // new drift: the next pass repairs it too
  EXPECT_EQ(wait_for("A1", "2:" + s.id("o-paid")), "2:" + s.id("o-paid"));
  EXPECT_EQ(loop.stop(std::chrono::seconds(10)), 0) << loop.log();
}

TEST(ReconcileCli, UnreachableStoresExitTwo) {
  auto env = tool_env();
  env["SEATFLOW_PG_DSN"] = "postgresql://postgres@127.0.0.1:1/seatflow?connect_timeout=2";
  const auto check = run_to_exit({"check"}, env);
  EXPECT_EQ(check.exit_code, 2) << check.output;
  const auto reconcile = run_to_exit({"reconcile", "--once"}, env);
  EXPECT_EQ(reconcile.exit_code, 2) << reconcile.output;
}

TEST(ReconcileCli, BadReconcileSettingIsAConfigError) {
  auto env = tool_env();
  env["SEATFLOW_RECONCILE_BATCH_ORDERS_MAX"] = "0";
  const auto result = run_to_exit({"reconcile", "--once"}, env);
  EXPECT_EQ(result.exit_code, 2) << result.output;
  EXPECT_NE(result.output.find("SEATFLOW_RECONCILE_BATCH_ORDERS_MAX"), std::string::npos)
      << result.output;
}

// The engine's reconciler actor on a private PostgreSQL database and a private Redis database (so
// it neither heals the drift other tests make in database 0 nor holds their rows' locks while it
// repairs every order of the shared database): a paid order's seats appear there, counted in
// /metrics.
TEST(ReconcileCli, EngineReconcilerRebuildsSeatsAndCountsRepairs) {
  constexpr int kPrivateDb = 7;
  PrivateDatabase db;
  Stores s(db.dsn());
  auto endpoint = test_redis_endpoint();
  endpoint.db = kPrivateDb;
  persistence::RedisClient private_redis(endpoint, 2000, nullptr);
  ASSERT_TRUE(private_redis.command({"FLUSHDB"}).ok);
  make_drift(s);
  TestEngine engine({{"SEATFLOW_PG_DSN", db.dsn()},
                     {"SEATFLOW_EVENT_SLOT", db.slot()},
                     {"SEATFLOW_REDIS_URL", test_redis_url() + "/" + std::to_string(kPrivateDb)},
                     {"SEATFLOW_RECONCILE_INTERVAL_MS", "100"},
                     {"SEATFLOW_RECONCILE_BATCH_ORDERS_MAX", "50"}});
  ASSERT_TRUE(engine.healthy());
  const auto key = persistence::seat_key(s.id("show"));
  std::string seat;
  for (int i = 0; i < 300 && seat.empty(); ++i) {
    const auto reply = private_redis.command({"HGET", key, "A2"});
    seat = reply.ok ? reply.str : "";
    if (seat.empty()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_EQ(seat, "2:" + s.id("o-paid"));
  EXPECT_EQ(private_redis.command({"HGET", key, "A1"}).str, "2:" + s.id("o-paid"));
  EXPECT_TRUE(private_redis.command({"HGET", key, "C1"}).is_nil);
  // The batch's counts are published when its step ends, a moment after its repairs reached
  // Redis: poll (bounded) instead of reading once.
  std::optional<double> sold;
  for (int i = 0; i < 100 && !(sold && *sold >= 2); ++i) {
    sold = metric_value(engine.metrics(), R"(seatflow_reconcile_repairs_total{kind="seat_sold"})");
    if (!(sold && *sold >= 2)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ASSERT_TRUE(sold);
  EXPECT_GE(*sold, 2);
  EXPECT_TRUE(metric_value(engine.metrics(), "seatflow_reconcile_passes_total"));
  (void)private_redis.command({"FLUSHDB"});
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::testing
