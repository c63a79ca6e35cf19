// Multi-host PostgreSQL DSNs (SPEC §15): every connection carries target_session_attrs=read-write,
// so a DSN that names a dead or read-only server first still lands on the writable one — the
// engine's sessions and the event relay's logical replication connection alike.
#include <gtest/gtest.h>

#include <pqxx/pqxx>
#include <string>

#include "persistence/drivers/pg.hpp"
#include "persistence/jobs/event_relay.hpp"
#include "persistence/stores/sql.hpp"
#include "support/pg_server.hpp"
#include "support/process.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

// postgresql://user@host:port/db[?params] with `first` ("host:port") put before its host.
std::string with_first_host(const std::string& dsn, const std::string& first) {
  const auto at = dsn.find('@');
  return dsn.substr(0, at + 1) + first + "," + dsn.substr(at + 1);
}

// The port of the server a session landed on.
int server_port(persistence::PgSession& pg) {
  pqxx::nontransaction tx(pg.connection());
  return tx.exec1("SELECT inet_server_port()")[0].as<int>();
}

int test_server_port() {
  persistence::PgSession pg(testing::test_pg_dsn(), 5000, nullptr);
  return server_port(pg);
}

TEST(PgMultiHostTest, ADeadFirstHostIsPassedOver) {
  const auto dsn =
      with_first_host(testing::test_pg_dsn(), "127.0.0.1:" + std::to_string(testing::free_port()));
  persistence::PgSession pg(dsn, 5000, nullptr);
  EXPECT_EQ(server_port(pg), test_server_port());
}

TEST(PgMultiHostTest, AReadOnlyFirstHostIsPassedOverLikeAStandby) {
  testing::PgServer read_only;
  ASSERT_TRUE(read_only.start());
  read_only.set_read_only(true);
  const auto dsn =
      with_first_host(testing::test_pg_dsn(), "127.0.0.1:" + std::to_string(read_only.port()));
  persistence::PgSession pg(dsn, 5000, nullptr);
  EXPECT_EQ(server_port(pg), test_server_port());
}

// The relay's replication connection is built from the same DSN: it streams from the writable
// server and confirms the slot there.
TEST(PgMultiHostTest, TheRelaysReplicationConnectionFindsTheWritableServer) {
  testing::PrivateDatabase db;
  testing::PgServer read_only;
  ASSERT_TRUE(read_only.start());
  const auto name = db.dsn().substr(db.dsn().rfind('/') + 1);
  {
    pqxx::connection conn("postgresql://postgres@127.0.0.1:" + std::to_string(read_only.port()) +
                          "/postgres");
    pqxx::nontransaction tx(conn);
    tx.exec("CREATE DATABASE " + name);
  }
  read_only.set_read_only(true);
  const auto dsn = with_first_host(db.dsn(), "127.0.0.1:" + std::to_string(read_only.port()));
  persistence::PgSession relay_pg(dsn, 5000, nullptr, &persistence::prepare_statements);
  persistence::RedisClient redis(testing::test_redis_endpoint(), 2'000, nullptr);
  persistence::RelaySettings settings{"seatflow:events:" + name, 1'000'000, 100, db.slot()};
  persistence::EventRelay relay(relay_pg, redis, settings, nullptr);
  persistence::RelayResult result;
  for (int i = 0; i < 100; ++i) {
    result = relay.relay_once();
    if (result.status == persistence::RelayStatus::idle && !result.more) {
      break;
    }
  }
  EXPECT_EQ(result.status, persistence::RelayStatus::idle);
  testing::Stores s(db.dsn());
  pqxx::nontransaction tx(s.pg());
  EXPECT_EQ(
      tx.exec_params1("SELECT active FROM pg_replication_slots WHERE slot_name = $1", db.slot())[0]
          .as<bool>(),
      true)
      << "the relay streams the slot on the writable server";
  relay.disconnect();
  (void)redis.command({"DEL", settings.stream});
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
