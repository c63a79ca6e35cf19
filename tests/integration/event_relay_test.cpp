// The outbox relay against a private database and a Redis server of the test's own: events wait
// in the WAL while Redis is down and all go out, in per-payment order, when it is back; two
// relays at once neither lose nor reorder; a publish whose slot confirm is lost is repeated with
// the same event id; a relay ends its own lost stream that still holds the slot, never another
// relay's; an invalidated slot is reported, never replaced.
#include <gtest/gtest.h>
#include <signal.h>

#include <cerrno>
#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <thread>

#include "http/status.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/jobs/event_relay.hpp"
#include "persistence/stores/callback_store.hpp"
#include "persistence/stores/migrations.hpp"
#include "persistence/stores/order_store.hpp"
#include "persistence/stores/sql.hpp"
#include "support/failpoints.hpp"
#include "support/pg_server.hpp"
#include "support/redis_server.hpp"
#include "support/store_connections.hpp"
#include "support/stores.hpp"
#include "support/streams.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using domain::CallbackKind;
using domain::CallbackResult;
using persistence::RelayStatus;
using testing::make_callback;
using testing::StreamEntry;

constexpr const char* kStream = "seatflow:events";

std::vector<StreamEntry> read_stream(const persistence::RedisEndpoint& endpoint) {
  persistence::RedisClient redis(endpoint, 5000, nullptr);
  return testing::read_stream(redis, kStream);
}

// Writers of the private database: callbacks and the API stores (seats in the shared test Redis).
struct Writers {
  explicit Writers(const std::string& dsn)
      : pg(dsn, 5000, nullptr, &persistence::prepare_statements),
        redis(testing::test_redis_endpoint(), 2000, nullptr),
        seats(redis),
        callbacks(pg, seats, nullptr, &http::callback_status),
        orders(pg, seats) {}
  persistence::PgSession pg;
  persistence::RedisClient redis;
  persistence::SeatStore seats;
  persistence::CallbackStore callbacks;
  persistence::OrderStore orders;
};

// One relay with its own connections, as the relay actor has.
struct Relay {
  Relay(const std::string& dsn, const std::string& slot, const persistence::RedisEndpoint& endpoint,
        std::size_t batch, persistence::Failpoints* failpoints = nullptr,
        std::size_t maxlen = 1'000'000)
      : pg(dsn, 5000, failpoints, &persistence::prepare_statements),
        redis(endpoint, 500, failpoints),
        relay(pg, redis, persistence::RelaySettings{kStream, maxlen, batch, slot}, failpoints) {}
  Relay(const std::string& dsn, const persistence::RedisEndpoint& endpoint,
        persistence::RelaySettings settings, const persistence::PgLimits& limits)
      : pg(dsn, limits, nullptr, nullptr, &persistence::prepare_statements),
        redis(endpoint, 500, nullptr),
        relay(pg, redis, std::move(settings), nullptr) {}
  // Relays until a poll finds nothing; the number of events published (bounded loop).
  std::size_t drain() {
    std::size_t published = 0;
    for (int i = 0; i < 1'000; ++i) {
      const auto result = relay.relay_once();
      published += result.published;
      if (result.status == RelayStatus::idle && !result.more) {
        return published;
      }
      if (result.status != RelayStatus::published && result.status != RelayStatus::busy) {
        ADD_FAILURE() << "relay failed with status " << static_cast<int>(result.status);
        return published;
      }
      if (result.status == RelayStatus::busy) {
        // The other relay's poll decodes the WAL of the whole server since its last confirm,
        // which other tests keep writing: give it time rather than spinning through the bound.
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
    }
    ADD_FAILURE() << "the outbox did not drain";
    return published;
  }
  persistence::PgSession pg;
  persistence::RedisClient redis;
  persistence::EventRelay relay;
};

class EventRelayTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(redis_.start()); }

  std::string pending(const std::string& name) {
    const auto payment = s_.id(name);
    s_.create_pending(payment, s_.id(name + "-o"), s_.id("show"), {name + "-1"});
    return payment;
  }
  void pay(const std::string& payment, const std::string& cb, CallbackKind kind) {
    const auto result = w_.callbacks.process(make_callback(s_.id(cb), payment, kind)).result;
    ASSERT_EQ(result, CallbackResult::applied) << payment << " " << cb;
  }
  // The events the database's slot holds unconfirmed (a relay that just dropped its stream may
  // hold the slot a moment longer: the peek waits for it).
  std::size_t unpublished() {
    for (int i = 0;; ++i) {
      try {
        return testing::peek_events(s_.pg(), db_.slot()).size();
      } catch (const pqxx::sql_error&) {
        if (i >= 100) {
          throw;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }
  persistence::RelaySettings short_sender_timeout() {
    persistence::RelaySettings settings{kStream, 1'000'000, 10, db_.slot()};
    settings.sender_timeout_ms = 1'000;
    return settings;
  }
  // The walsender streaming the slot (0 when none).
  int slot_holder() {
    pqxx::nontransaction tx(s_.pg());
    return tx
        .exec_params1(
            "SELECT COALESCE(active_pid, 0) FROM pg_replication_slots "
            "WHERE slot_name = $1",
            db_.slot())[0]
        .as<int>();
  }
  // The slot's confirmed_flush_lsn.
  std::uint64_t confirmed_lsn() {
    pqxx::nontransaction tx(s_.pg());
    const auto text = tx.exec_params1(
                            "SELECT confirmed_flush_lsn::text FROM pg_replication_slots "
                            "WHERE slot_name = $1",
                            db_.slot())[0]
                          .as<std::string>();
    return persistence::events::parse_lsn(text).value_or(0);
  }
  // Waits (bounded) until the walsender streaming the slot has sent the WAL up to `lsn`, so a
  // poll's read finds it on the socket rather than on its way.
  void wait_until_sent(std::uint64_t lsn) {
    for (int i = 0; i < 400; ++i) {
      pqxx::nontransaction tx(s_.pg());
      const auto sent = tx.exec_params(
          "SELECT r.sent_lsn::text FROM pg_stat_replication r "
          "JOIN pg_replication_slots s ON s.active_pid = r.pid WHERE s.slot_name = $1",
          db_.slot());
      if (!sent.empty() && !sent[0][0].is_null() &&
          persistence::events::parse_lsn(sent[0][0].as<std::string>()).value_or(0) >= lsn) {
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    }
    ADD_FAILURE() << "the walsender did not send the WAL up to the payments within 10 s";
  }
  std::uint64_t current_lsn() {
    pqxx::nontransaction tx(s_.pg());
    return persistence::events::parse_lsn(
               tx.exec1("SELECT pg_current_wal_lsn()::text")[0].as<std::string>())
        .value_or(0);
  }

  // Every event of the database is on the stream exactly `copies` times at most and at least once,
  // each payment's events in seq order (first copies), each copy with the same fields.
  void expect_stream_matches_outbox(bool allow_repeats) {
    const auto entries = read_stream(redis_.endpoint());
    const auto events = s_.all_events();
    std::map<std::string, const StreamEntry*> first;
    std::map<std::string, std::vector<std::string>> stream_order;  // payment → event ids
    for (const auto& entry : entries) {
      const auto& id = entry.fields.at("event_id");
      const auto [it, inserted] = first.emplace(id, &entry);
      if (!inserted) {
        EXPECT_TRUE(allow_repeats) << "repeated " << id;
        auto a = it->second->fields;
        auto b = entry.fields;
        EXPECT_EQ(a, b) << "a repeat of " << id << " differs";
        continue;
      }
      const auto pn = entry.fields.count("payment_no") ? entry.fields.at("payment_no") : "";
      stream_order[pn].push_back(id);
    }
    std::map<std::string, std::vector<std::string>> outbox_order;
    for (const auto& event : events) {
      ASSERT_TRUE(first.count(event.event_id)) << "never published: " << event.event_id;
      const auto& fields = first.at(event.event_id)->fields;
      EXPECT_EQ(fields.at("type"), event.type);
      EXPECT_EQ(fields.at("order_no"), event.order_no);
      EXPECT_EQ(fields.at("amount_cents"), std::to_string(event.amount_cents));
      EXPECT_EQ(fields.at("occurred_at"), event.occurred_at);
      outbox_order[event.payment_no].push_back(event.event_id);
    }
    EXPECT_EQ(first.size(), events.size()) << "the stream holds events the outbox does not";
    EXPECT_EQ(stream_order, outbox_order);
  }

  testing::PrivateDatabase db_;
  testing::Stores s_{db_.dsn()};
  testing::RedisServer redis_;
  Writers w_{db_.dsn()};
};

TEST_F(EventRelayTest, EventsWaitWhileRedisIsDownAndAllGoOutInOrderWhenItReturns) {
  Relay relay(db_.dsn(), db_.slot(), redis_.endpoint(), 7);
  std::vector<std::string> payments;
  for (int i = 0; i < 12; ++i) {
    payments.push_back(pending("p" + std::to_string(i)));
  }
  for (int i = 0; i < 4; ++i) {
    pay(payments[i], "s" + std::to_string(i), CallbackKind::success);
  }
  EXPECT_EQ(relay.drain(), 8u);

  redis_.stop();
  // While Redis is down: failures, retried successes, closes and refunds all commit.
  for (int i = 4; i < 12; ++i) {
    pay(payments[i], "f" + std::to_string(i), CallbackKind::failure);
  }
  for (int i = 4; i < 8; ++i) {
    pay(payments[i], "s" + std::to_string(i), CallbackKind::success);
  }
  for (int i = 8; i < 12; ++i) {
    ASSERT_EQ(testing::done(w_.orders.close_payment(payments[i])), persistence::Done::ok);
  }
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(testing::done(w_.orders.refund_payment(payments[i])), persistence::Done::ok);
  }
  const auto down = relay.relay.relay_once();
  EXPECT_EQ(down.status, RelayStatus::redis_unavailable);
  EXPECT_EQ(down.published, 0u);
  EXPECT_GE(down.lag_seconds, 0.0);
  relay.relay.disconnect();
  // Nothing was confirmed past an event that is not on the stream: a peek from the confirmed point
  // finds every event of the outage. (The confirmed LSN itself is no measure: a keepalive confirms
  // WAL that other databases of this server wrote, decoded before the outage's first commit.)
  const auto waiting = unpublished();
  // failures 8, successes 4 × 2, closes 4 × 2, refunds 2 × 2.
  EXPECT_EQ(waiting, 8u + 8u + 8u + 4u);

  ASSERT_TRUE(redis_.start());
  EXPECT_EQ(relay.drain(), waiting);
  relay.relay.disconnect();
  EXPECT_EQ(unpublished(), 0u);
  expect_stream_matches_outbox(false);
  const auto idle = relay.relay.relay_once();
  EXPECT_EQ(idle.status, RelayStatus::idle);
  EXPECT_EQ(idle.lag_seconds, 0.0);
}

// Several engines each run a relay; the slot streams to one of them at a time, so nothing is
// published twice and no payment's events are reordered while callbacks keep committing.
TEST_F(EventRelayTest, TwoRelaysAtOnceNeitherLoseNorReorder) {
  constexpr int kPayments = 30;
  std::vector<std::string> payments;
  for (int i = 0; i < kPayments; ++i) {
    payments.push_back(pending("p" + std::to_string(i)));
  }
  std::atomic<bool> writing{true};
  auto relay_loop = [&] {
    Relay relay(db_.dsn(), db_.slot(), redis_.endpoint(), 3);
    while (writing.load()) {
      (void)relay.relay.relay_once();
    }
    (void)relay.drain();
  };
  std::thread r1(relay_loop);
  std::thread r2(relay_loop);
  for (int i = 0; i < kPayments; ++i) {
    pay(payments[i], "f" + std::to_string(i), CallbackKind::failure);
    pay(payments[i], "s" + std::to_string(i), CallbackKind::success);
    ASSERT_EQ(testing::done(w_.orders.refund_payment(payments[i])), persistence::Done::ok);
  }
  writing = false;
  r1.join();
  r2.join();
  EXPECT_EQ(unpublished(), 0u);
  EXPECT_EQ(s_.all_events().size(), static_cast<std::size_t>(kPayments * 5));
  expect_stream_matches_outbox(false);
}

// The relay died between XADD and the slot's confirm (the failpoint stands in for the crash): the
// batch goes out again with the same event ids, and consumers de-duplicate by them.
TEST_F(EventRelayTest, APublishWhoseConfirmIsLostIsRepeatedWithTheSameEventIds) {
  const auto p = pending("p");
  pay(p, "s", CallbackKind::success);
  auto failpoints = testing::failpoints("relay_mark=error");
  {
    Relay crashing(db_.dsn(), db_.slot(), redis_.endpoint(), 10, &failpoints);
    EXPECT_NE(crashing.relay.relay_once().status, RelayStatus::published);
  }
  EXPECT_EQ(unpublished(), 2u);
  EXPECT_EQ(read_stream(redis_.endpoint()).size(), 2u);
  Relay relay(db_.dsn(), db_.slot(), redis_.endpoint(), 10);
  EXPECT_EQ(relay.drain(), 2u);
  const auto entries = read_stream(redis_.endpoint());
  ASSERT_EQ(entries.size(), 4u);
  EXPECT_EQ(entries[0].fields, entries[2].fields);
  EXPECT_EQ(entries[1].fields, entries[3].fields);
  expect_stream_matches_outbox(true);
}

// XADD MAXLEN ~ keeps the stream near its configured length (Redis trims whole nodes of up to 100
// entries, so it may hold up to one node more).
TEST_F(EventRelayTest, TheStreamStaysBoundedByItsMaxlen) {
  {
    pqxx::work tx(s_.pg());
    // One transaction of 2000 events: the relay never splits it, whatever its batch.
    tx.exec_params(
        "SELECT pg_logical_emit_message(true, 'seatflow', json_build_object("
        "  'event_id', 'payment.failed:' || $1 || g, 'type', 'payment.failed', "
        "  'payment_no', $1 || g, 'order_no', $1 || g || '-o', 'amount_cents', 100)::text) "
        "FROM generate_series(1, 2000) AS g",
        s_.id("p"));
    tx.commit();
  }
  Relay relay(db_.dsn(), db_.slot(), redis_.endpoint(), 500, nullptr, 200);
  EXPECT_EQ(relay.drain(), 2000u);
  relay.relay.disconnect();
  EXPECT_EQ(unpublished(), 0u);
  persistence::RedisClient redis(redis_.endpoint(), 2000, nullptr);
  const auto length = redis.command({"XLEN", kStream}).integer;
  EXPECT_GE(length, 200);
  EXPECT_LE(length, 300);
  // The newest event is the last entry.
  const auto last = redis.command({"XREVRANGE", kStream, "+", "-", "COUNT", "1"});
  ASSERT_EQ(last.elements.size(), 1u);
  EXPECT_EQ(last.elements[0].elements[1].elements[1].str, "payment.failed:" + s_.id("p") + "2000");
}

// A transaction's events are confirmed together or not at all, and the slot's confirmed point
// moves past every published one: a second poll finds nothing. (The lag in bytes is measured
// against the server's WAL position, which the other tests sharing the server move too, so the
// test checks the confirmed point itself.)
TEST_F(EventRelayTest, APublishedBatchIsConfirmedInTheSlot) {
  const auto p = pending("p");
  const auto before_payment = current_lsn();
  pay(p, "s", CallbackKind::success);
  Relay relay(db_.dsn(), db_.slot(), redis_.endpoint(), 10);
  EXPECT_EQ(unpublished(), 2u);
  EXPECT_LE(confirmed_lsn(), before_payment);
  const auto first = relay.relay.relay_once();
  EXPECT_EQ(first.status, RelayStatus::published);
  EXPECT_EQ(first.published, 2u);
  EXPECT_GT(first.lag_bytes, 0);
  relay.relay.disconnect();
  EXPECT_EQ(unpublished(), 0u);
  EXPECT_GT(confirmed_lsn(), before_payment);
  const auto second = relay.relay.relay_once();
  EXPECT_EQ(second.status, RelayStatus::idle);
  EXPECT_EQ(second.published, 0u);
  EXPECT_GE(second.lag_bytes, 0);
  EXPECT_EQ(read_stream(redis_.endpoint()).size(), 2u);
}

// A poll that stopped at its batch says more may be waiting, so the relay actor polls again at
// once; one that read everything there was says not, and the actor waits its busy interval. (A
// full batch that said nothing more capped the relay at one batch per interval: 500 events per
// 20 ms, ~11 000 paid callbacks/s, past which the slot's lag grew without bound.)
TEST_F(EventRelayTest, APollThatFillsItsBatchSaysMoreMayBeWaiting) {
  constexpr std::size_t kBatch = 3;  // each payment's move is one transaction of 2 events
  Relay relay(db_.dsn(), db_.slot(), redis_.endpoint(), kBatch);
  relay.drain();  // the stream is open and caught up: `more` speaks of the batch alone
  for (const auto* name : {"p1", "p2", "p3"}) {
    pay(pending(name), std::string(name) + "-s", CallbackKind::success);
  }
  wait_until_sent(current_lsn());  // all three transactions are on the socket, none on its way
  const auto first = relay.relay.relay_once();
  EXPECT_EQ(first.status, RelayStatus::published);
  EXPECT_EQ(first.published, 4u);  // whole transactions up to the batch: two of the three
  EXPECT_TRUE(first.more);
  const auto second = relay.relay.relay_once();
  EXPECT_EQ(second.status, RelayStatus::published);
  EXPECT_EQ(second.published, 2u);
  EXPECT_FALSE(second.more);
  EXPECT_EQ(read_stream(redis_.endpoint()).size(), 6u);
}

// The slot is streamed by one walsender at a time: a second relay is busy (not an error) until
// the first lets go, and then takes over.
TEST_F(EventRelayTest, ASecondRelayIsBusyWhileTheFirstStreams) {
  const auto p = pending("p");
  Relay first(db_.dsn(), db_.slot(), redis_.endpoint(), 10);
  Relay second(db_.dsn(), db_.slot(), redis_.endpoint(), 10);
  EXPECT_EQ(first.relay.relay_once().status, RelayStatus::idle);
  EXPECT_EQ(second.relay.relay_once().status, RelayStatus::busy);
  EXPECT_EQ(second.relay.relay_once().status, RelayStatus::busy);  // backing off: no connect
  first.relay.disconnect();
  pay(p, "s", CallbackKind::success);
  EXPECT_EQ(second.drain(), 2u);
  EXPECT_EQ(read_stream(redis_.endpoint()).size(), 2u);
}

// The walsender is terminated mid-stream (a failover or an operator does the same): the relay
// reconnects after its backoff and continues from the confirmed point; nothing is lost, and a
// repeat carries the same event id.
TEST_F(EventRelayTest, AReconnectAfterTheWalsenderIsTerminatedLosesNothing) {
  std::vector<std::string> payments;
  for (int i = 0; i < 10; ++i) {
    payments.push_back(pending("p" + std::to_string(i)));
  }
  Relay relay(db_.dsn(), db_.slot(), redis_.endpoint(), 3);
  for (int i = 0; i < 5; ++i) {
    pay(payments[i], "s" + std::to_string(i), CallbackKind::success);
  }
  (void)relay.relay.relay_once();
  {
    pqxx::nontransaction tx(s_.pg());
    EXPECT_EQ(tx.exec_params1("SELECT count(pg_terminate_backend(active_pid)) "
                              "FROM pg_replication_slots WHERE slot_name = $1 AND active",
                              db_.slot())[0]
                  .as<int>(),
              1);
  }
  for (int i = 5; i < 10; ++i) {
    pay(payments[i], "s" + std::to_string(i), CallbackKind::success);
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (read_stream(redis_.endpoint()).size() < 20 &&
         std::chrono::steady_clock::now() < deadline) {
    (void)relay.relay.relay_once();
  }
  (void)relay.drain();
  relay.relay.disconnect();
  EXPECT_EQ(unpublished(), 0u);
  expect_stream_matches_outbox(true);
}

// Whether SIGTERM waits in the pending signals of process `pid` (a stopped process acts on it
// only when continued).
bool termination_pending(int pid) {
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.starts_with("ShdPnd:") || line.starts_with("SigPnd:")) {
      const auto mask = std::stoull(line.substr(line.find_first_not_of(" \t", 7)), nullptr, 16);
      if ((mask & (1ULL << (SIGTERM - 1))) != 0) {
        return true;
      }
    }
  }
  return false;
}

// The relay loses its stream while the server never sees the connection close (a partition that
// answers the client with resets; here the walsender is stopped, so it reads nothing the relay
// sends): the slot stays active for that walsender. The relay's next connect finds the slot busy,
// sees by its application_name that the holder is its own previous stream, ends it, and then reads
// the slot again; nothing is lost.
TEST_F(EventRelayTest, TheRelayEndsItsOwnLostStreamThatStillHoldsTheSlot) {
  const auto p = pending("p");
  persistence::PgLimits limits;
  limits.statement_ms_max = 500;
  limits.call_ms_max = 1'000;  // how long the relay waits for the stopped walsender to end
  Relay stopped(db_.dsn(), redis_.endpoint(),
                persistence::RelaySettings{kStream, 1'000'000, 10, db_.slot()}, limits);
  auto& relay = stopped.relay;
  ASSERT_EQ(relay.relay_once().status, RelayStatus::idle);
  const int walsender = slot_holder();
  ASSERT_GT(walsender, 0);
  ASSERT_FALSE(termination_pending(walsender));
  ASSERT_EQ(::kill(walsender, SIGSTOP), 0) << "cannot stop the walsender: errno " << errno;
  struct Resume {
    int pid;
    ~Resume() { (void)::kill(pid, SIGCONT); }
  } resume{walsender};
  relay.disconnect();  // never answered: the relay gives up after call_ms_max and closes
  EXPECT_EQ(slot_holder(), walsender) << "the server saw the stream close";

  const auto taken = relay.relay_once();
  EXPECT_EQ(taken.status, RelayStatus::busy);
  EXPECT_EQ(taken.streams_taken_back, 1U);
  EXPECT_TRUE(termination_pending(walsender)) << "the walsender was not told to end";
  ASSERT_EQ(::kill(walsender, SIGCONT), 0);  // only now can it act on the termination
  pay(p, "s", CallbackKind::success);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (read_stream(redis_.endpoint()).size() < 2 && std::chrono::steady_clock::now() < deadline) {
    if (relay.relay_once().status == RelayStatus::busy) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  EXPECT_NE(slot_holder(), walsender);
  relay.disconnect();
  EXPECT_EQ(unpublished(), 0U);
  expect_stream_matches_outbox(false);
}

// A relay that finds the slot busy ends nothing when the holder is not its own previous stream:
// another engine's relay keeps reading.
TEST_F(EventRelayTest, AnotherRelaysStreamIsNeverEnded) {
  Relay first(db_.dsn(), db_.slot(), redis_.endpoint(), 10);
  Relay second(db_.dsn(), db_.slot(), redis_.endpoint(), 10);
  ASSERT_EQ(first.relay.relay_once().status, RelayStatus::idle);
  first.relay.disconnect();  // the first relay now has a previous stream to look for
  ASSERT_EQ(second.relay.relay_once().status, RelayStatus::idle);
  const int holder = slot_holder();
  ASSERT_GT(holder, 0);
  const auto result = first.relay.relay_once();
  EXPECT_EQ(result.status, RelayStatus::busy);
  EXPECT_EQ(result.streams_taken_back, 0U);
  EXPECT_EQ(slot_holder(), holder);
  EXPECT_EQ(second.relay.relay_once().status, RelayStatus::idle)
      << "the second relay's stream broke";
}

// Without events, the relay still confirms the slot up to the server's position (from its
// keepalives), so an idle slot does not hold WAL.
TEST_F(EventRelayTest, AnIdleSlotIsConfirmedFromKeepalives) {
  Relay relay(db_.dsn(), db_.slot(), redis_.endpoint(), 10);
  (void)relay.relay.relay_once();
  {
    pqxx::work tx(s_.pg());
    tx.exec("CREATE TEMP TABLE wal_filler AS SELECT generate_series(1, 100) AS g");
    tx.exec("SELECT pg_logical_emit_message(true, 'not-seatflow', 'x')");
    tx.commit();
  }
  const auto written = current_lsn();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (confirmed_lsn() < written && std::chrono::steady_clock::now() < deadline) {
    EXPECT_NE(relay.relay.relay_once().status, RelayStatus::pg_unavailable);
  }
  EXPECT_GE(confirmed_lsn(), written);
  EXPECT_EQ(read_stream(redis_.endpoint()).size(), 0u);
}

// The relay sets wal_sender_timeout on its stream's session (the server's default is 60 s). With
// a short one the server asks for a status update within half of it; a relay that polls answers
// at once, so its stream survives several timeouts.
TEST_F(EventRelayTest, KeepalivesThatAskForAReplyAreAnswered) {
  Relay relay(db_.dsn(), redis_.endpoint(), short_sender_timeout(), persistence::PgLimits{});
  EXPECT_EQ(relay.relay.relay_once().status, RelayStatus::idle);
  const auto pid = slot_holder();
  ASSERT_NE(pid, 0);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(4);
  while (std::chrono::steady_clock::now() < until) {
    EXPECT_EQ(relay.relay.relay_once().status, RelayStatus::idle);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  EXPECT_EQ(slot_holder(), pid);
}

// A relay that stops polling (its engine died, or was cut off without the server seeing the
// connection close) holds the slot only for its session's sender timeout, not the server's 60 s.
TEST_F(EventRelayTest, AStreamWhoseRelayStopsPollingEndsAfterItsSenderTimeout) {
  Relay relay(db_.dsn(), redis_.endpoint(), short_sender_timeout(), persistence::PgLimits{});
  EXPECT_EQ(relay.relay.relay_once().status, RelayStatus::idle);
  const auto pid = slot_holder();
  ASSERT_NE(pid, 0);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (slot_holder() == pid && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_NE(slot_holder(), pid) << "the walsender outlived its session's sender timeout";
}

// How many slots of the server are named `name` (0 or 1), whether made or still being made.
int slots_named(pqxx::connection& conn, const std::string& name) {
  pqxx::nontransaction tx(conn);
  return tx.exec_params1("SELECT count(*) FROM pg_replication_slots WHERE slot_name = $1", name)[0]
      .as<int>();
}

// A missing slot (a failover, a dropped slot) is made again by the relay at once and counted in
// the poll's result; the next poll finds it. A slot of that name on another database of the server
// cannot be made: reported as missing, nothing created or touched.
TEST_F(EventRelayTest, AMissingSlotIsMadeAgainUnlessItsNameIsTaken) {
  const std::string slot = db_.slot() + "_remade";
  {
    Relay relay(db_.dsn(), slot, redis_.endpoint(), 10);
    const auto first = relay.relay.relay_once();
    EXPECT_EQ(first.status, RelayStatus::idle);
    EXPECT_TRUE(first.slot_created);
    EXPECT_EQ(slots_named(s_.pg(), slot), 1);
    const auto second = relay.relay.relay_once();
    EXPECT_EQ(second.status, RelayStatus::idle);
    EXPECT_FALSE(second.slot_created);
  }
  {
    pqxx::nontransaction tx(s_.pg());
    tx.exec_params("SELECT pg_drop_replication_slot($1)", slot);
  }

  testing::PrivateDatabase other;
  {
    pqxx::connection conn(other.dsn());
    pqxx::nontransaction tx(conn);
    tx.exec_params("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot);
  }
  {
    Relay relay(db_.dsn(), slot, redis_.endpoint(), 10);
    const auto taken = relay.relay.relay_once();
    EXPECT_EQ(taken.status, RelayStatus::slot_missing);
    EXPECT_FALSE(taken.slot_created);
    EXPECT_EQ(slots_named(s_.pg(), slot), 1);
  }
  pqxx::nontransaction tx(s_.pg());
  tx.exec_params("SELECT pg_drop_replication_slot($1)", slot);
}

// Emits a message of no event through migration 11's guard and commits.
void emit_no_event(pqxx::connection& conn) {
  pqxx::work tx(conn);
  tx.exec("SELECT seatflow_emit_events('[]')");
  tx.commit();
}

// The expectation on a statement that emits while the recorded slot is unusable: SQLSTATE SF001,
// which the engine treats as retryable (503; the gateway sends again), naming why.
void expect_refused_emit(pqxx::connection& conn, const std::string& why) {
  try {
    emit_no_event(conn);
    ADD_FAILURE() << "an event was emitted without a usable slot";
  } catch (const pqxx::sql_error& error) {
    EXPECT_EQ(error.sqlstate(), persistence::kSqlStateEventSlotUnusable) << error.what();
    EXPECT_EQ(persistence::classify(error), persistence::PgErrorClass::retryable);
    EXPECT_NE(std::string(error.what()).find(why), std::string::npos) << error.what();
  }
}

// Migration 11's guard: an event is emitted only into the slot recorded for the database
// (bind_event_slot: `seatflow migrate` and the engine's start), and only while that slot exists.
TEST_F(EventRelayTest, AnEventIsEmittedOnlyWhileTheRecordedSlotExists) {
  EXPECT_NO_THROW(emit_no_event(s_.pg()));
  ASSERT_TRUE(persistence::bind_event_slot(s_.pg(), "seatflow_no_such_slot"));
  expect_refused_emit(s_.pg(), "event slot seatflow_no_such_slot is missing");
  ASSERT_TRUE(persistence::bind_event_slot(s_.pg(), db_.slot()));
  EXPECT_NO_THROW(emit_no_event(s_.pg()));
  {
    pqxx::work tx(s_.pg());
    tx.exec("DELETE FROM event_slot");
    tx.commit();
  }
  expect_refused_emit(s_.pg(), "no event slot is recorded");
  ASSERT_TRUE(persistence::bind_event_slot(s_.pg(), db_.slot()));
  EXPECT_NO_THROW(emit_no_event(s_.pg()));
}

// Migration 12: while pg_create_logical_replication_slot waits for the transactions running when
// it began, the slot is listed but would never decode them. A transaction that emits in that window
// is refused; once the slot is made, an emit passes (and is decoded: the relay tests above).
TEST_F(EventRelayTest, AnEventIsNotEmittedIntoASlotStillBeingCreated) {
  const std::string slot = db_.slot() + "_new";
  ASSERT_TRUE(persistence::bind_event_slot(s_.pg(), slot));
  pqxx::connection running_conn(db_.dsn());
  pqxx::work running(running_conn);
  running.exec("SELECT txid_current()");  // a transaction with an id: the slot waits for its end
  std::thread creator([&] {
    pqxx::connection conn(db_.dsn());
    pqxx::nontransaction tx(conn);
    tx.exec_params("SELECT pg_create_logical_replication_slot($1, 'pgoutput')", slot);
  });
  const auto listed = [&] { return slots_named(s_.pg(), slot) == 1; };
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!listed() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_TRUE(listed());
  try {
    running.exec("SELECT seatflow_emit_events('[]')");
    ADD_FAILURE() << "an event was emitted into a slot still being created";
  } catch (const pqxx::sql_error& error) {
    EXPECT_EQ(error.sqlstate(), persistence::kSqlStateEventSlotUnusable) << error.what();
    EXPECT_NE(std::string(error.what()).find("is still being created"), std::string::npos)
        << error.what();
  }
  running.abort();  // the slot's wait ends with the transaction
  creator.join();
  EXPECT_NO_THROW(emit_no_event(s_.pg()));
  {
    pqxx::nontransaction tx(s_.pg());
    tx.exec_params("SELECT pg_drop_replication_slot($1)", slot);
  }
  ASSERT_TRUE(persistence::bind_event_slot(s_.pg(), db_.slot()));
}

// max_slot_wal_keep_size reached: PostgreSQL invalidates the slot (wal_status = 'lost') and the
// WAL it needed, with its events, is gone. The relay reports it and publishes nothing, and the slot
// check of `seatflow migrate` and of the engine's start reports it too and leaves it as it is.
TEST(EventSlotTest, AnInvalidatedSlotIsReportedAndNeverReplaced) {
  testing::PgServer server;
  ASSERT_TRUE(server.start({"max_slot_wal_keep_size=1MB", "wal_keep_size=0"}));
  const std::string slot(persistence::events::kDefaultSlot);
  const auto wal_status = [&] {
    pqxx::connection conn(server.dsn());
    pqxx::nontransaction tx(conn);
    const auto rows = tx.exec_params(
        "SELECT COALESCE(wal_status, '') FROM pg_replication_slots WHERE slot_name = $1", slot);
    return rows.empty() ? std::string("none") : rows[0][0].as<std::string>();
  };
  {
    pqxx::connection conn(server.dsn());
    ASSERT_EQ(persistence::ensure_event_slot(conn, slot, nullptr), persistence::SlotCheck::created);
    (void)persistence::apply_migrations(conn);
    pqxx::nontransaction tx(conn);
    tx.exec("SELECT pg_logical_emit_message(true, 'seatflow', '{\"event_id\": \"lost:1\"}')");
    tx.exec("CREATE TABLE filler (g INT)");
    for (int i = 0; i < 3; ++i) {
      tx.exec("INSERT INTO filler SELECT generate_series(1, 1000)");
      tx.exec("SELECT pg_switch_wal()");
    }
    tx.exec("CHECKPOINT");
  }
  ASSERT_EQ(wal_status(), "lost");
  testing::RedisServer redis;
  ASSERT_TRUE(redis.start());
  Relay relay(server.dsn(), slot, redis.endpoint(), 10);
  const auto result = relay.relay.relay_once();
  EXPECT_EQ(result.status, RelayStatus::slot_lost);
  EXPECT_EQ(result.published, 0u);
  EXPECT_EQ(read_stream(redis.endpoint()).size(), 0u);
  pqxx::connection conn(server.dsn());
  EXPECT_EQ(persistence::ensure_event_slot(conn, slot, nullptr), persistence::SlotCheck::lost);
  EXPECT_EQ(wal_status(), "lost");
  // No move commits with an event the invalidated slot would never give (the migration recorded
  // the slot it found: the only one of the database).
  expect_refused_emit(conn, "event slot seatflow_events was invalidated");
}

// Without wal_level=logical there is no slot to read: the check says so and creates nothing.
TEST(EventSlotTest, WalLevelReplicaIsRefused) {
  testing::PgServer server;
  ASSERT_TRUE(server.start({"wal_level=replica"}));
  pqxx::connection conn(server.dsn());
  std::string level;
  EXPECT_EQ(persistence::ensure_event_slot(conn, "seatflow_events", &level),
            persistence::SlotCheck::not_logical);
  EXPECT_EQ(level, "replica");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
