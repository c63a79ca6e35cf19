// Unit tests for the store limits: DSN defaulting, session set-up, error classification, the
// readiness verdict and the SEATFLOW_PG_* / shutdown settings.
#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include "actors/readiness.hpp"
#include "app/config.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/drivers/pg_limits.hpp"
#include "support/config_settings.hpp"

namespace seatflow::persistence {
namespace {
namespace SEATFLOW_UNITY_ID {

const PgLimits kDefaults{};

TEST(DsnDefaults, UriWithoutQueryGetsEveryDefault) {
  const auto dsn =
      with_connection_defaults("postgresql://postgres@127.0.0.1:5432/seatflow", kDefaults);
  EXPECT_EQ(dsn,
            "postgresql://postgres@127.0.0.1:5432/seatflow?connect_timeout=3&keepalives=1"
            "&keepalives_idle=10&keepalives_interval=3&keepalives_count=3"
            "&tcp_user_timeout=10000&target_session_attrs=read-write");
}

TEST(DsnDefaults, UriKeepsTheParametersItSetsAndAppendsTheRest) {
  const auto dsn = with_connection_defaults(
      "postgres://u@h/db?connect_timeout=30&target_session_attrs=any", kDefaults);
  EXPECT_EQ(dsn.find("connect_timeout=3&"), std::string::npos) << dsn;
  EXPECT_NE(dsn.find("connect_timeout=30"), std::string::npos) << dsn;
  EXPECT_EQ(dsn.find("target_session_attrs=read-write"), std::string::npos) << dsn;
  EXPECT_TRUE(dsn.starts_with("postgres://u@h/db?connect_timeout=30&target_session_attrs=any&"))
      << dsn;
  EXPECT_NE(dsn.find("&keepalives=1"), std::string::npos) << dsn;
  EXPECT_NE(dsn.find("&tcp_user_timeout=10000"), std::string::npos) << dsn;
}

TEST(DsnDefaults, KeywordFormKeepsQuotedValuesAndItsOwnSettings) {
  const auto dsn = with_connection_defaults(
      "host=127.0.0.1 password='a b keepalives=0' keepalives = 0 dbname=seatflow", kDefaults);
  EXPECT_TRUE(
      dsn.starts_with("host=127.0.0.1 password='a b keepalives=0' keepalives = 0 "
                      "dbname=seatflow connect_timeout=3 "))
      << dsn;
  EXPECT_EQ(dsn.find("keepalives=1"), std::string::npos) << dsn;
  EXPECT_NE(dsn.find(" keepalives_idle=10"), std::string::npos) << dsn;
  EXPECT_NE(dsn.find(" target_session_attrs=read-write"), std::string::npos) << dsn;
}

TEST(DsnDefaults, EmptyDsnGetsKeywordDefaults) {
  const auto dsn = with_connection_defaults("", kDefaults);
  EXPECT_TRUE(dsn.starts_with("connect_timeout=3 keepalives=1")) << dsn;
}

TEST(DsnDefaults, ConnectTimeoutIsWholeSecondsRoundedUpAndAtLeastTwo) {
  PgLimits limits;
  limits.connect_ms_max = 2'500;
  EXPECT_NE(with_connection_defaults("host=h", limits).find("connect_timeout=3"),
            std::string::npos);
  limits.connect_ms_max = 1'000;
  EXPECT_NE(with_connection_defaults("host=h", limits).find("connect_timeout=2"),
            std::string::npos);
}

TEST(DsnDefaults, ParameterDetectionMatchesWholeKeysOnly) {
  EXPECT_TRUE(dsn_has_parameter("postgresql://h/db?keepalives=0", "keepalives"));
  EXPECT_FALSE(dsn_has_parameter("postgresql://h/db?keepalives_idle=5", "keepalives"));
  EXPECT_FALSE(dsn_has_parameter("postgresql://h/keepalives", "keepalives"));
  EXPECT_TRUE(dsn_has_parameter("dbname=x  keepalives_count=9", "keepalives_count"));
  EXPECT_FALSE(dsn_has_parameter("application_name='keepalives=1'", "keepalives"));
}

TEST(SessionSetup, SetsEveryTimeoutAndSynchronousCommit) {
  PgLimits limits;
  limits.statement_ms_max = 1'234;
  limits.lock_wait_ms_max = 567;
  limits.idle_in_transaction_ms_max = 8'910;
  const auto sql = session_setup_sql(limits);
  EXPECT_NE(sql.find("SET statement_timeout = 1234"), std::string::npos) << sql;
  EXPECT_NE(sql.find("SET lock_timeout = 567"), std::string::npos) << sql;
  EXPECT_NE(sql.find("SET idle_in_transaction_session_timeout = 8910"), std::string::npos) << sql;
  EXPECT_NE(sql.find("SET synchronous_commit = on"), std::string::npos) << sql;
}

pqxx::sql_error sql_error(const char* state) {
  return pqxx::sql_error("error", "SELECT 1", state);
}

TEST(PgErrors, ConnectionShutdownAndReadOnlyErrorsResetTheConnection) {
  for (const char* state :
       {"08000", "08003", "08006", "08001", "25006", "57P01", "57P02", "57P03"}) {
    const auto error = sql_error(state);
    EXPECT_TRUE(needs_reset(error)) << state;
    EXPECT_EQ(classify(error), PgErrorClass::retryable) << state;
  }
  EXPECT_TRUE(needs_reset(pqxx::broken_connection("cut")));
  EXPECT_TRUE(needs_reset(pqxx::in_doubt_error("commit outcome unknown")));
}

TEST(PgErrors, StatementErrorsKeepTheConnection) {
  for (const char* state : {"57014", "55P03", "40001", "40P01", "23505", "22P02", "42P01"}) {
    EXPECT_FALSE(needs_reset(sql_error(state))) << state;
  }
  EXPECT_FALSE(needs_reset(std::runtime_error("not from libpqxx")));
  EXPECT_EQ(classify(sql_error("55P03")), PgErrorClass::retryable) << "lock_timeout";
  EXPECT_EQ(classify(sql_error("57014")), PgErrorClass::retryable) << "statement_timeout";
  EXPECT_EQ(classify(sql_error("23505")), PgErrorClass::unique_violation);
  EXPECT_EQ(classify(sql_error("42P01")), PgErrorClass::permanent);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::persistence

namespace seatflow::actors {
namespace {
namespace SEATFLOW_UNITY_ID {

using Clock = Readiness::Clock;

TEST(Readiness, NotReadyBeforeTheFirstVerdict) {
  const Readiness readiness(std::chrono::milliseconds(1'000));
  EXPECT_FALSE(readiness.read(Clock::now()).ready);
}

TEST(Readiness, AProbeOverrunningItsBoundIsNotReadyBeforeItEnds) {
  Readiness readiness(std::chrono::milliseconds(1'000));
  const auto t0 = Clock::time_point{} + std::chrono::hours(1);
  readiness.probe_started("postgresql", t0);
  readiness.publish({true, ""});
  readiness.probe_started("postgresql", t0 + std::chrono::seconds(2));
  EXPECT_TRUE(readiness.read(t0 + std::chrono::milliseconds(2'900)).ready)
      << "within its bound the last verdict holds";
  const auto late = readiness.read(t0 + std::chrono::milliseconds(3'100));
  EXPECT_FALSE(late.ready);
  EXPECT_EQ(late.reason, "postgresql missed its deadline");
  readiness.publish({true, ""});
  EXPECT_TRUE(readiness.read(t0 + std::chrono::seconds(4)).ready) << "recovers with a verdict";
}

TEST(Readiness, PublishedReasonIsReadBack) {
  Readiness readiness(std::chrono::milliseconds(1'000));
  readiness.publish({false, "redis unreachable"});
  const auto state = readiness.read(Clock::now());
  EXPECT_FALSE(state.ready);
  EXPECT_EQ(state.reason, "redis unreachable");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::actors

namespace seatflow::app {
namespace {
namespace SEATFLOW_UNITY_ID {

TEST(StoreDeadlineConfig, DefaultsAndSettingsAreRead) {
  auto result = testing::load_settings({});
  ASSERT_TRUE(result.config.has_value()) << result.error;
  EXPECT_EQ(result.config->engine.store.pg.call_ms_max, 6'000U);
  EXPECT_EQ(result.config->engine.store.pg.plan_refresh_ms, 1'000U);
  EXPECT_EQ(result.config->shutdown_ms_max, 15'000U);
  result = testing::load_settings({{"SEATFLOW_PG_CONNECT_TIMEOUT_MS", "4000"},
                                   {"SEATFLOW_PG_KEEPALIVE_IDLE_S", "20"},
                                   {"SEATFLOW_PG_TCP_USER_TIMEOUT_MS", "0"},
                                   {"SEATFLOW_PG_IDLE_IN_TRANSACTION_TIMEOUT_MS", "2000"},
                                   {"SEATFLOW_PG_CALL_TIMEOUT_MS", "7000"},
                                   {"SEATFLOW_PG_PLAN_REFRESH_MS", "0"},
                                   {"SEATFLOW_READY_PROBE_TIMEOUT_MS", "300"},
                                   {"SEATFLOW_SHUTDOWN_TIMEOUT_MS", "5000"}});
  ASSERT_TRUE(result.config.has_value()) << result.error;
  const auto& engine = result.config->engine;
  EXPECT_EQ(engine.store.pg.connect_ms_max, 4'000U);
  EXPECT_EQ(engine.store.pg.keepalive_idle_s, 20U);
  EXPECT_EQ(engine.store.pg.tcp_unacked_ms_max, 0U);
  EXPECT_EQ(engine.store.pg.idle_in_transaction_ms_max, 2'000U);
  EXPECT_EQ(engine.store.pg.call_ms_max, 7'000U);
  EXPECT_EQ(engine.store.pg.plan_refresh_ms, 0U);
  EXPECT_EQ(engine.prober.probe_ms_max, 300U);
  EXPECT_EQ(result.config->shutdown_ms_max, 5'000U);
}

TEST(StoreDeadlineConfig, CallDeadlineMustExceedTheStatementTimeout) {
  const auto result = testing::load_settings(
      {{"SEATFLOW_PG_STATEMENT_TIMEOUT_MS", "5000"}, {"SEATFLOW_PG_CALL_TIMEOUT_MS", "5000"}});
  ASSERT_FALSE(result.config.has_value());
  EXPECT_NE(result.error.find("SEATFLOW_PG_CALL_TIMEOUT_MS"), std::string::npos) << result.error;
}

TEST(StoreDeadlineConfig, LockTimeoutMayNotExceedTheStatementTimeout) {
  const auto result = testing::load_settings(
      {{"SEATFLOW_PG_STATEMENT_TIMEOUT_MS", "1000"}, {"SEATFLOW_PG_LOCK_TIMEOUT_MS", "2000"}});
  ASSERT_FALSE(result.config.has_value());
  EXPECT_NE(result.error.find("SEATFLOW_PG_LOCK_TIMEOUT_MS"), std::string::npos) << result.error;
}

TEST(StoreDeadlineConfig, APlanRefreshOverAnHourIsRefused) {
  const auto result = testing::load_settings({{"SEATFLOW_PG_PLAN_REFRESH_MS", "3600001"}});
  ASSERT_FALSE(result.config.has_value());
  EXPECT_NE(result.error.find("SEATFLOW_PG_PLAN_REFRESH_MS"), std::string::npos) << result.error;
}

TEST(StoreDeadlineConfig, ShutdownBoundBelowOneSecondIsRefused) {
  const auto result = testing::load_settings({{"SEATFLOW_SHUTDOWN_TIMEOUT_MS", "500"}});
  ASSERT_FALSE(result.config.has_value());
  EXPECT_NE(result.error.find("SEATFLOW_SHUTDOWN_TIMEOUT_MS"), std::string::npos);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::app
