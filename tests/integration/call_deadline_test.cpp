// Integration tests of the client-side call deadline against the real servers: a PostgreSQL
// statement or a Redis command that the server holds (pg_sleep, BLPOP) past the call's deadline is
// cut by the watchdog, the session recovers in the next call, a disarmed call is never cut, a
// connection cut while idle is not used again, and after abort_all every call fails at once.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <thread>

#include "persistence/drivers/call_watchdog.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/drivers/redis.hpp"
#include "persistence/stores/sql.hpp"
#include "support/stores.hpp"

namespace seatflow::persistence {
namespace {
namespace SEATFLOW_UNITY_ID {

using Clock = CallWatchdog::Clock;

// Server-side bounds far beyond the call deadline: only the watchdog can end these calls.
PgLimits long_server_limits() {
  PgLimits limits;
  limits.statement_ms_max = 60'000;
  limits.lock_wait_ms_max = 60'000;
  limits.call_ms_max = 120'000;
  return limits;
}

constexpr auto kCallDeadline = std::chrono::milliseconds(300);
// Only a broken watchdog lets a call run this long (the server would hold it 30 s).
constexpr auto kCutWithin = std::chrono::seconds(15);

struct BothCalls {
  CallScope pg;
  CallScope redis;
};

BothCalls watch_both(PgSession& pg, RedisClient& redis, Clock::time_point deadline) {
  return {pg.watch_call(deadline), redis.watch_call(deadline)};
}

TEST(CallDeadline, APostgresStatementHeldPastItsDeadlineIsCutAndTheSessionRecovers) {
  auto watchdog = std::make_shared<CallWatchdog>();
  PgSession pg(testing::test_pg_dsn(), long_server_limits(), nullptr, watchdog,
               &prepare_statements);
  {
    const auto call = pg.watch_call(Clock::now() + std::chrono::seconds(30));
    pqxx::nontransaction tx(pg.connection());
    tx.exec("SELECT 1");
  }
  const auto started = Clock::now();
  bool broken = false;
  {
    const auto call = pg.watch_call(Clock::now() + kCallDeadline);
    try {
      pqxx::nontransaction tx(pg.connection());
      tx.exec("SELECT pg_sleep(30)");
    } catch (const std::exception& error) {
      broken = needs_reset(error);
      EXPECT_TRUE(pg.reset_if_broken(error));
    }
    // Within the expired call nothing reconnects.
    EXPECT_THROW((void)pg.connection(), pqxx::broken_connection);
  }
  EXPECT_TRUE(broken) << "the statement was not cut";
  EXPECT_LT(Clock::now() - started, kCutWithin);
  EXPECT_EQ(watchdog->deadline_cuts(), 1U);
  // The next call reconnects, and a call that ends in time is never cut.
  {
    const auto call = pg.watch_call(Clock::now() + std::chrono::seconds(30));
    pqxx::nontransaction tx(pg.connection());
    EXPECT_EQ(tx.exec1("SELECT 41 + 1")[0].as<int>(), 42);
  }
  EXPECT_EQ(watchdog->deadline_cuts(), 1U);
}

TEST(CallDeadline, ARedisCommandHeldPastItsDeadlineIsCutAndTheClientRecovers) {
  auto watchdog = std::make_shared<CallWatchdog>();
  // A socket timeout far beyond the call deadline: only the watchdog can end the BLPOP.
  RedisClient redis(testing::test_redis_endpoint(), 60'000, nullptr, watchdog);
  ASSERT_TRUE(redis.ping());
  const auto started = Clock::now();
  {
    const auto call = redis.watch_call(Clock::now() + kCallDeadline);
    // Blocks only this connection (the key is nobody's), unlike DEBUG SLEEP.
    const auto reply = redis.command({"BLPOP", "seatflow:test:call-deadline:no-such-list", "30"});
    EXPECT_FALSE(reply.ok) << "the BLPOP was not cut";
    EXPECT_FALSE(redis.ping()) << "no reconnect within the expired call";
  }
  EXPECT_LT(Clock::now() - started, kCutWithin);
  EXPECT_EQ(watchdog->deadline_cuts(), 1U);
  const auto call = redis.watch_call(Clock::now() + std::chrono::seconds(30));
  EXPECT_TRUE(redis.ping()) << "the next call reconnects";
}

// A scope can outlive its last command (the event relay's poll waits on its replication stream
// with both stores armed): the watchdog then cuts a socket that nothing was using, and the client
// must not send its next command on it.
TEST(CallDeadline, ConnectionsCutWhileIdleAreReplacedBeforeTheNextCall) {
  auto watchdog = std::make_shared<CallWatchdog>();
  PgSession pg(testing::test_pg_dsn(), long_server_limits(), nullptr, watchdog,
               &prepare_statements);
  RedisClient redis(testing::test_redis_endpoint(), 60'000, nullptr, watchdog);
  int backend = 0;
  {
    const auto call = watch_both(pg, redis, Clock::now() + kCallDeadline);
    ASSERT_TRUE(redis.ping());
    pqxx::nontransaction tx(pg.connection());
    backend = tx.exec1("SELECT pg_backend_pid()")[0].as<int>();
    // Idle until past the deadline: both sockets are cut with no command on them.
    const auto until = Clock::now() + kCutWithin;
    while (watchdog->deadline_cuts() < 2 && Clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ASSERT_EQ(watchdog->deadline_cuts(), 2U);
  const auto call = watch_both(pg, redis, Clock::now() + std::chrono::seconds(30));
  EXPECT_TRUE(redis.ping()) << "the cut Redis socket was used again";
  pqxx::nontransaction tx(pg.connection());
  EXPECT_NE(tx.exec1("SELECT pg_backend_pid()")[0].as<int>(), backend)
      << "the cut PostgreSQL connection was used again";
  EXPECT_EQ(watchdog->deadline_cuts(), 2U);
}

TEST(CallDeadline, AfterAbortAllEveryCallFailsAtOnce) {
  auto watchdog = std::make_shared<CallWatchdog>();
  PgSession pg(testing::test_pg_dsn(), long_server_limits(), nullptr, watchdog,
               &prepare_statements);
  RedisClient redis(testing::test_redis_endpoint(), 2'000, nullptr, watchdog);
  ASSERT_TRUE(redis.ping());
  watchdog->abort_all();
  const auto pg_call = pg.watch_call(Clock::now() + std::chrono::seconds(30));
  const auto redis_call = redis.watch_call(Clock::now() + std::chrono::seconds(30));
  EXPECT_THROW((void)pg.connection(), pqxx::broken_connection);
  EXPECT_FALSE(redis.ping());
  EXPECT_EQ(watchdog->deadline_cuts(), 0U) << "an abort is not a deadline cut";
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::persistence
