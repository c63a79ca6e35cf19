// The outbox relay against a private database and a Redis server of the test's own: events wait
// in PostgreSQL while Redis is down and all go out, in per-payment order, when it is back; two
// relays at once neither lose nor reorder; a publish whose mark is lost is repeated with the same
// event id.
#include <gtest/gtest.h>

#include <map>
#include <thread>

#include "http/status.hpp"
#include "persistence/callback_store.hpp"
#include "persistence/event_relay.hpp"
#include "persistence/order_store.hpp"
#include "support/redis_server.hpp"
#include "support/stores.hpp"
#include "support/streams.hpp"

namespace seatflow {
namespace {

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
      : pg(dsn, 5000, nullptr),
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
  Relay(const std::string& dsn, const persistence::RedisEndpoint& endpoint, std::size_t batch,
        persistence::Failpoints* failpoints = nullptr, std::size_t maxlen = 1'000'000)
      : pg(dsn, 5000, failpoints),
        redis(endpoint, 500, failpoints),
        relay(pg, redis, persistence::RelaySettings{kStream, maxlen, batch}, failpoints) {}
  // Relays until a poll finds nothing; the number of events published (bounded loop).
  std::size_t drain() {
    std::size_t published = 0;
    for (int i = 0; i < 1'000; ++i) {
      const auto result = relay.relay_once();
      published += result.published;
      if (result.status == RelayStatus::idle) {
        return published;
      }
      if (result.status != RelayStatus::published && result.status != RelayStatus::busy) {
        ADD_FAILURE() << "relay failed with status " << static_cast<int>(result.status);
        return published;
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
  std::size_t unpublished() {
    pqxx::work tx(s_.pg());
    return tx.exec1("SELECT count(*) FROM payment_event WHERE published_at IS NULL")[0]
        .as<std::size_t>();
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
      ASSERT_TRUE(event.published) << event.event_id;
      ASSERT_TRUE(first.count(event.event_id)) << "never published: " << event.event_id;
      const auto& fields = first.at(event.event_id)->fields;
      EXPECT_EQ(fields.at("type"), event.type);
      EXPECT_EQ(fields.at("order_no"), event.order_no);
      EXPECT_EQ(fields.at("amount_cents"), std::to_string(event.amount_cents));
      EXPECT_EQ(fields.count("occurred_at"), 1u);
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
  Relay relay(db_.dsn(), redis_.endpoint(), 7);
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
    ASSERT_EQ(w_.orders.close_payment(payments[i]).status, persistence::StoreStatus::ok);
  }
  for (int i = 0; i < 2; ++i) {
    ASSERT_EQ(w_.orders.refund_payment(payments[i]).status, persistence::StoreStatus::ok);
  }
  const auto down = relay.relay.relay_once();
  EXPECT_EQ(down.status, RelayStatus::redis_unavailable);
  EXPECT_EQ(down.published, 0u);
  EXPECT_GE(down.lag_seconds, 0.0);
  const auto waiting = unpublished();
  // failures 8, successes 4 × 2, closes 4 × 2, refunds 2 × 2.
  EXPECT_EQ(waiting, 8u + 8u + 8u + 4u);

  ASSERT_TRUE(redis_.start());
  EXPECT_EQ(relay.drain(), waiting);
  EXPECT_EQ(unpublished(), 0u);
  expect_stream_matches_outbox(false);
  const auto idle = relay.relay.relay_once();
  EXPECT_EQ(idle.status, RelayStatus::idle);
  EXPECT_EQ(idle.lag_seconds, 0.0);
}

// Several engines each run a relay; the relay lock lets one publish at a time, so nothing is
// published twice and no payment's events are reordered while callbacks keep committing.
TEST_F(EventRelayTest, TwoRelaysAtOnceNeitherLoseNorReorder) {
  constexpr int kPayments = 30;
  std::vector<std::string> payments;
  for (int i = 0; i < kPayments; ++i) {
    payments.push_back(pending("p" + std::to_string(i)));
  }
  std::atomic<bool> writing{true};
  auto relay_loop = [&] {
    Relay relay(db_.dsn(), redis_.endpoint(), 3);
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
    ASSERT_EQ(w_.orders.refund_payment(payments[i]).status, persistence::StoreStatus::ok);
  }
  writing = false;
  r1.join();
  r2.join();
  EXPECT_EQ(unpublished(), 0u);
  EXPECT_EQ(s_.all_events().size(), static_cast<std::size_t>(kPayments * 5));
  expect_stream_matches_outbox(false);
}

// The relay died between XADD and the mark (the failpoint stands in for the crash): the batch goes
// out again with the same event ids, and consumers de-duplicate by them.
TEST_F(EventRelayTest, APublishWhoseMarkIsLostIsRepeatedWithTheSameEventIds) {
  const auto p = pending("p");
  pay(p, "s", CallbackKind::success);
  std::string why;
  auto failpoints = persistence::Failpoints::parse("relay_mark=error", &why);
  ASSERT_TRUE(failpoints) << why;
  {
    Relay crashing(db_.dsn(), redis_.endpoint(), 10, &*failpoints);
    EXPECT_NE(crashing.relay.relay_once().status, RelayStatus::published);
  }
  EXPECT_EQ(unpublished(), 2u);
  EXPECT_EQ(read_stream(redis_.endpoint()).size(), 2u);
  Relay relay(db_.dsn(), redis_.endpoint(), 10);
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
    tx.exec_params(
        "INSERT INTO payment_event (event_id, type, payment_no, order_no, amount_cents) "
        "SELECT 'payment.failed:' || $1 || g, 'payment.failed', $1 || g, $1 || g || '-o', 100 "
        "FROM generate_series(1, 2000) AS g",
        s_.id("p"));
    tx.commit();
  }
  Relay relay(db_.dsn(), redis_.endpoint(), 500, nullptr, 200);
  EXPECT_EQ(relay.drain(), 2000u);
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

}  // namespace
}  // namespace seatflow
