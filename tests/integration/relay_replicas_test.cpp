// The event relay over Redis Sentinel (SPEC §15): it confirms its slot only once WAIT reports its
// XADDs on SEATFLOW_REDIS_REPLICAS_ACK replicas. A frozen replica leaves the events XADDed on the
// primary but the slot unconfirmed (a failover then would lose nothing: the slot gives them
// again); once the replica answers, only the WAIT is asked again, so nothing is sent twice.
#include <gtest/gtest.h>
#include <signal.h>

#include <chrono>
#include <string>
#include <thread>

#include "http/status.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/jobs/event_relay.hpp"
#include "persistence/stores/callback_store.hpp"
#include "persistence/stores/events.hpp"
#include "persistence/stores/seat_scripts.hpp"
#include "persistence/stores/sql.hpp"
#include "support/sentinel_setup.hpp"
#include "support/stores.hpp"
#include "support/streams.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using persistence::RelayStatus;
constexpr const char* kStream = "seatflow:events";

class RelayReplicasTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(setup_.start()); }

  void pay(const std::string& name) {
    const auto payment = s_.id(name);
    s_.create_pending(payment, s_.id(name + "-o"), s_.id("show"), {name + "-1"});
    const auto cb =
        testing::make_callback(s_.id(name + "-cb"), payment, domain::CallbackKind::success);
    ASSERT_EQ(callbacks_.process(cb).result, domain::CallbackResult::applied);
  }
  // Polls until a poll published or failed (the first polls start the stream, and the WAL of a
  // commit may reach it a poll later); bounded.
  persistence::RelayResult poll(persistence::EventRelay& relay) {
    persistence::RelayResult result;
    for (int i = 0; i < 200; ++i) {
      result = relay.relay_once();
      if (result.status != RelayStatus::busy && result.status != RelayStatus::idle) {
        return result;
      }
    }
    return result;
  }
  std::size_t stream_length() {
    persistence::RedisClient redis(setup_.endpoint(), 2'000, nullptr);
    return testing::read_stream(redis, kStream).size();
  }
  // The slot's confirmed_flush_lsn (readable while the relay streams it).
  std::uint64_t confirmed_lsn() {
    pqxx::nontransaction tx(s_.pg());
    const auto row = tx.exec_params1(
        "SELECT COALESCE(confirmed_flush_lsn::text, '0/0') FROM pg_replication_slots "
        "WHERE slot_name = $1",
        db_.slot());
    return persistence::events::parse_lsn(row[0].as<std::string>()).value_or(0);
  }
  std::uint64_t current_lsn() {
    pqxx::nontransaction tx(s_.pg());
    return persistence::events::parse_lsn(
               tx.exec1("SELECT pg_current_wal_lsn()::text")[0].as<std::string>())
        .value_or(0);
  }
  // Waits (bounded) until the slot is confirmed past `lsn`; the confirmed position then.
  std::uint64_t confirmed_past(std::uint64_t lsn) {
    for (int i = 0; i < 100 && confirmed_lsn() <= lsn; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return confirmed_lsn();
  }

  testing::SentinelSetup setup_;
  testing::PrivateDatabase db_;
  testing::Stores s_{db_.dsn()};
  persistence::PgSession pg_{db_.dsn(), 5000, nullptr, &persistence::prepare_statements};
  persistence::RedisClient seat_redis_{testing::test_redis_endpoint(), 2000, nullptr};
  persistence::SeatStore seats_{seat_redis_};
  persistence::CallbackStore callbacks_{pg_, seats_, nullptr, &http::callback_status};
};

TEST_F(RelayReplicasTest, TheSlotIsConfirmedOnlyOnceAReplicaHasTheEvents) {
  persistence::PgSession relay_pg(db_.dsn(), 5000, nullptr, &persistence::prepare_statements);
  persistence::RedisClient relay_redis(setup_.endpoint(), 2'000, nullptr);
  persistence::RelaySettings settings{kStream, 1'000'000, 100, db_.slot()};
  settings.replicas_ack = 1;
  persistence::EventRelay relay(relay_pg, relay_redis, settings, nullptr);
  pay("a");
  auto result = poll(relay);
  ASSERT_EQ(result.status, RelayStatus::published);
  const auto first = result.published;
  EXPECT_GT(first, 0u);
  EXPECT_EQ(stream_length(), first);
  EXPECT_GT(confirmed_past(0), 0u);
  const auto before = current_lsn();  // the payment below commits past it

  // The replica frozen: WAIT reports no replica, so the XADDed events stay unconfirmed.
  ::kill(setup_.replica().pid(), SIGSTOP);
  pay("b");
  result = poll(relay);
  EXPECT_EQ(result.status, RelayStatus::redis_unavailable);
  EXPECT_EQ(result.published, 0u);
  const auto pending = stream_length() - first;
  EXPECT_GT(pending, 0u) << "the events were XADDed on the primary";
  ::kill(setup_.replica().pid(), SIGCONT);

  // The replica back: the same connection only waits again; nothing is sent twice.
  for (int i = 0; i < 20 && result.status != RelayStatus::published; ++i) {
    result = poll(relay);
  }
  ASSERT_EQ(result.status, RelayStatus::published);
  EXPECT_EQ(result.published, pending);
  EXPECT_EQ(stream_length(), first + pending);
  EXPECT_GT(confirmed_past(before), before);
}

TEST_F(RelayReplicasTest, MoreReplicasThanExistNeverConfirm) {
  persistence::PgSession relay_pg(db_.dsn(), 5000, nullptr, &persistence::prepare_statements);
  persistence::RedisClient relay_redis(setup_.endpoint(), 2'000, nullptr);
  persistence::RelaySettings settings{kStream, 1'000'000, 100, db_.slot()};
  settings.replicas_ack = 2;
  persistence::EventRelay relay(relay_pg, relay_redis, settings, nullptr);
  pay("c");
  const auto result = poll(relay);
  EXPECT_EQ(result.status, RelayStatus::redis_unavailable);
  EXPECT_EQ(result.published, 0u);
  EXPECT_GT(stream_length(), 0u) << "the events were XADDed";
  // The slot still holds them: a relay that stopped here (or a failover) gets them again.
  relay.disconnect();
  std::size_t held = 0;
  for (int i = 0; i < 100 && held == 0; ++i) {
    try {
      for (const auto& event : testing::peek_events(s_.pg(), db_.slot())) {
        held += event.payment_no == s_.id("c") ? 1 : 0;
      }
    } catch (const pqxx::sql_error&) {  // the walsender may hold the slot a moment longer
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_GT(held, 0u);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
