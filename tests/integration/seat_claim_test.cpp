// Seat claims (SPEC §9) against real PostgreSQL and a Redis of the test's own, which the tests
// flush to play a Redis that lost its data: a claimed seat stays taken whatever Redis says, one
// order wins a seat however many race for it, finished orders give their claims up, a callback
// heals a seat Redis lost, and migration 3 backfills claims from existing data with conflicts.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "http/status.hpp"
#include "persistence/stores/migrations.hpp"
#include "persistence/stores/sql.hpp"
#include "support/redis_server.hpp"
#include "support/store_connections.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using domain::CallbackKind;
using domain::CallbackResult;
using testing::make_callback;

class SeatClaimTest : public ::testing::Test {
 protected:
  SeatClaimTest() : redis_started_(redis_server_.start()), c_(redis_server_.endpoint()) {}

  void SetUp() override { ASSERT_TRUE(redis_started_) << "the test's redis-server did not start"; }

  [[nodiscard]] std::string show() const { return s_.id("show"); }

  persistence::NewOrder order(const std::string& name, std::vector<std::string> seats) const {
    return testing::test_order(s_, name, std::move(seats));
  }

  // A pending order with a pending hmac payment; returns the payment number.
  std::string pending(const std::string& name, std::vector<std::string> seats) {
    return testing::create_pending_through_api(s_, c_, name, std::move(seats));
  }

  std::string paid(const std::string& name, std::vector<std::string> seats) {
    const auto payment_no = pending(name, std::move(seats));
    EXPECT_EQ(
        c_.callbacks.process(make_callback(s_.id(name + "-ok"), payment_no, CallbackKind::success))
            .result,
        CallbackResult::applied);
    return payment_no;
  }

  void flushall() { ASSERT_TRUE(c_.redis.command({"FLUSHALL"}).ok); }

  // The seat's value in the test's Redis ("" when absent).
  std::string seat(const std::string& seat_id) {
    const auto reply = c_.redis.command({"HGET", persistence::seat_key(show()), seat_id});
    EXPECT_TRUE(reply.ok) << reply.error;
    return reply.is_nil ? std::string() : reply.str;
  }

  // The order that claims the seat ("" when none does).
  std::string claimant(const std::string& seat_id) {
    pqxx::work tx(s_.pg());
    const auto rows = tx.exec_params(
        "SELECT order_no FROM seat_claim WHERE show_id = $1 AND seat_id = $2", show(), seat_id);
    return rows.empty() ? std::string() : rows[0][0].as<std::string>();
  }

  bool order_exists(const std::string& order_no) {
    pqxx::work tx(s_.pg());
    return !tx.exec_params("SELECT 1 FROM order_info WHERE order_no = $1", order_no).empty();
  }

  // Asserts that creating `o` is refused naming `seat_id`, and that nothing of it was kept.
  void expect_refused(const persistence::NewOrder& o, const std::string& seat_id) {
    const auto before = seats_in_redis();
    const auto result = c_.orders.create_order(o);
    EXPECT_EQ(result.error(), persistence::errc::conflict) << o.order_no;
    EXPECT_EQ(testing::named(result, "seatId"), seat_id) << testing::rejection_detail(result);
    EXPECT_FALSE(order_exists(o.order_no));
    pqxx::work tx(s_.pg());
    EXPECT_EQ(tx.exec_params1("SELECT count(*) FROM seat_claim WHERE order_no = $1", o.order_no)[0]
                  .as<int>(),
              0);
    tx.commit();
    EXPECT_EQ(seats_in_redis(), before) << "a refused order changed Redis";
  }

  long long seats_in_redis() {
    const auto reply = c_.redis.command({"HLEN", persistence::seat_key(show())});
    EXPECT_TRUE(reply.ok);
    return reply.integer;
  }

  testing::RedisServer redis_server_;
  bool redis_started_;
  testing::Stores s_;
  testing::StoreConnections c_;
};

TEST_F(SeatClaimTest, AfterFlushallClaimedSeatsAreRefusedAndNothingIsWritten) {
  (void)paid("sold", {"Z1"});
  (void)pending("held", {"Z2"});
  ASSERT_EQ(seat("Z1"), "2:" + s_.id("sold"));
  flushall();
  ASSERT_EQ(seat("Z1"), "");
  expect_refused(order("late-sold", {"Z1"}), "Z1");
  expect_refused(order("late-held", {"Z2"}), "Z2");
  // A free seat beside a sold one: the whole order is refused and the free seat stays free.
  expect_refused(order("mixed", {"Z3", "Z1"}), "Z1");
  EXPECT_EQ(claimant("Z3"), "");
  EXPECT_EQ(seat("Z3"), "");
  EXPECT_EQ(claimant("Z1"), s_.id("sold"));
  EXPECT_EQ(claimant("Z2"), s_.id("held"));
  // The free seat alone is still for sale.
  EXPECT_EQ(testing::done(c_.orders.create_order(order("free", {"Z3"}))),
            persistence::Done::created);
  EXPECT_EQ(claimant("Z3"), s_.id("free"));
}

// Redis is still a second arbiter: a seat no order claims but that Redis holds for another order
// is refused too, and the claim the order had just written is rolled back.
TEST_F(SeatClaimTest, ARedisHoldOfAnotherOrderAlsoRefusesAndTheClaimIsRolledBack) {
  ASSERT_TRUE(c_.redis.command({"HSET", persistence::seat_key(show()), "R1", "1:elsewhere"}).ok);
  expect_refused(order("o", {"R0", "R1"}), "R1");
  EXPECT_EQ(claimant("R0"), "");
  EXPECT_EQ(claimant("R1"), "");
  EXPECT_EQ(seat("R1"), "1:elsewhere");
}

TEST_F(SeatClaimTest, SixteenConcurrentOrdersForOneSeatCreateExactlyOne) {
  constexpr int kRacers = 16;
  for (const bool redis_empty_after : {false, true}) {
    flushall();
    const auto round = redis_empty_after ? std::string("b") : std::string("a");
    const auto seat_id = "S" + round;
    std::atomic<int> created{0};
    std::atomic<int> refused{0};
    std::atomic<int> other{0};
    std::vector<std::thread> racers;
    for (int i = 0; i < kRacers; ++i) {
      racers.emplace_back([&, i] {
        testing::StoreConnections own(redis_server_.endpoint());
        const auto result =
            own.orders.create_order(order(round + "-racer-" + std::to_string(i), {seat_id}));
        (testing::done(result) == persistence::Done::created ? created
         : result.error() == persistence::errc::conflict     ? refused
                                                             : other)
            .fetch_add(1);
      });
    }
    for (auto& t : racers) {
      t.join();
    }
    EXPECT_EQ(created.load(), 1) << "round " << round;
    EXPECT_EQ(refused.load(), kRacers - 1) << "round " << round;
    EXPECT_EQ(other.load(), 0) << "round " << round;
    const auto winner = claimant(seat_id);
    EXPECT_TRUE(order_exists(winner));
    EXPECT_EQ(seat(seat_id), "1:" + winner);
    if (redis_empty_after) {
      // Redis loses the winner's lock; a second wave of 16 finds the claim and gets nothing.
      flushall();
      std::atomic<int> late_created{0};
      racers.clear();
      for (int i = 0; i < kRacers; ++i) {
        racers.emplace_back([&, i] {
          testing::StoreConnections own(redis_server_.endpoint());
          if (testing::done(own.orders.create_order(order(
                  "late-racer-" + std::to_string(i), {seat_id}))) == persistence::Done::created) {
            late_created.fetch_add(1);
          }
        });
      }
      for (auto& t : racers) {
        t.join();
      }
      EXPECT_EQ(late_created.load(), 0);
      EXPECT_EQ(claimant(seat_id), winner);
    }
  }
}

TEST_F(SeatClaimTest, ClosedRefundedAndSweptOrdersFreeTheirClaims) {
  const auto closed = pending("closed", {"C1"});
  const auto refunded = paid("refunded", {"F1"});
  const auto swept = pending("swept", {"W1"});
  (void)swept;
  ASSERT_EQ(testing::done(c_.orders.close_payment(closed)), persistence::Done::ok);
  ASSERT_EQ(testing::done(c_.orders.refund_payment(refunded)), persistence::Done::ok);
  {
    pqxx::work tx(s_.pg());
    tx.exec_params(
        "UPDATE order_info SET expires_at = now() - interval '1 second' "
        "WHERE order_no = $1",
        s_.id("swept"));
    tx.commit();
  }
  // The sweeper takes expired orders of every test; this test's order must be among them.
  for (int i = 0; i < 50 && s_.order_status(s_.id("swept")) == 0; ++i) {
    (void)testing::sweep_expired(c_.orders, 100);
  }
  ASSERT_EQ(s_.order_status(s_.id("swept")), 2);
  for (const auto* seat_id : {"C1", "F1", "W1"}) {
    EXPECT_EQ(claimant(seat_id), "") << seat_id;
    EXPECT_EQ(seat(seat_id), "") << seat_id;
  }
  for (const auto* seat_id : {"C1", "F1", "W1"}) {
    const auto next = "next-" + std::string(seat_id);
    EXPECT_EQ(testing::done(c_.orders.create_order(order(next, {seat_id}))),
              persistence::Done::created);
    EXPECT_EQ(claimant(seat_id), s_.id(next));
  }
}

TEST_F(SeatClaimTest, ALateSuccessForACancelledOrderNeverTouchesTheNewOwnersSeat) {
  const auto first = pending("first", {"L1"});
  ASSERT_EQ(testing::done(c_.orders.close_payment(first)), persistence::Done::ok);
  const auto second = pending("second", {"L1"});
  const auto late =
      c_.callbacks.process(make_callback(s_.id("late"), first, CallbackKind::success));
  EXPECT_EQ(late.result, CallbackResult::discrepancy);
  EXPECT_EQ(s_.discrepancies(first, "paid_after_cancel"), 1);
  EXPECT_EQ(claimant("L1"), s_.id("second"));
  EXPECT_EQ(seat("L1"), "1:" + s_.id("second"));
  // And the new owner's own payment sells it.
  EXPECT_EQ(
      c_.callbacks.process(make_callback(s_.id("second-ok"), second, CallbackKind::success)).result,
      CallbackResult::applied);
  EXPECT_EQ(seat("L1"), "2:" + s_.id("second"));
}

// SPEC §3: the order the callback's transaction has locked holds its claims, so mark_sold may take
// a seat Redis lost; the callback and a later duplicate heal the seat instead of answering 503.
TEST_F(SeatClaimTest, ACallbackOrDuplicateAfterRedisLostItsDataHealsTheSeat) {
  const auto payment = pending("o", {"H1", "H2"});
  flushall();
  const auto callback = make_callback(s_.id("ok"), payment, CallbackKind::success);
  EXPECT_EQ(c_.callbacks.process(callback).result, CallbackResult::applied);
  EXPECT_EQ(seat("H1"), "2:" + s_.id("o"));
  EXPECT_EQ(seat("H2"), "2:" + s_.id("o"));
  flushall();
  EXPECT_EQ(c_.callbacks.process(callback).result, CallbackResult::duplicate);
  EXPECT_EQ(seat("H1"), "2:" + s_.id("o"));
  // The group-commit path too.
  const auto other = pending("b", {"H3"});
  flushall();
  persistence::BatchCallbackStore batch(c_.pg, c_.redis, nullptr, &http::callback_status);
  const auto outcomes = batch.process({make_callback(s_.id("b-ok"), other, CallbackKind::success)});
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].result, CallbackResult::applied);
  EXPECT_EQ(seat("H3"), "2:" + s_.id("b"));
}

TEST_F(SeatClaimTest, MarkSoldStillFailsOnASeatRedisHoldsForAnotherOrder) {
  const auto payment = pending("o", {"M1"});
  ASSERT_TRUE(c_.redis.command({"HSET", persistence::seat_key(show()), "M1", "1:elsewhere"}).ok);
  EXPECT_EQ(c_.callbacks.process(make_callback(s_.id("ok"), payment, CallbackKind::success)).result,
            CallbackResult::mark_sold_failed);
  EXPECT_EQ(s_.payment_status(payment), 0);
  EXPECT_EQ(seat("M1"), "1:elsewhere");
}

// Migration 3 on data made before it, with conflicts: a PAID order keeps a seat before a PENDING
// one, then the older; the others get no claim, those with a payment a seat_conflict.
TEST(SeatClaimMigration, BackfillsClaimsAndRecordsTheConflictsOnce) {
  testing::PrivateDatabase db(2);
  pqxx::connection conn(db.dsn());
  {
    pqxx::work tx(conn);
    const auto add = [&](const std::string& no, const std::string& seats, int status,
                         const std::string& created, int payment_status) {
      tx.exec_params(
          "INSERT INTO order_info (order_no, show_id, seat_ids, amount_cents, status, created_at) "
          "VALUES ($1, 'show', $2::text[], 5000, $3, $4::timestamptz)",
          no, seats, status, created);
      if (payment_status >= 0) {
        tx.exec_params(
            "INSERT INTO payment_order (payment_no, order_no, channel, amount_cents, status) "
            "VALUES ($1, $2, 'hmac', 5000, $3)",
            "p" + no, no, payment_status);
      }
    };
    add("o1", "{A1,A2}", 1, "2026-01-01 10:00Z", 1);  // paid
    add("o2", "{A2,A3}", 0, "2026-01-01 09:00Z", 0);  // pending, older than o1, loses A2
    add("o3", "{A1}", 1, "2026-01-01 11:00Z", 1);     // paid, younger than o1, loses A1
    add("o4", "{A3}", 0, "2026-01-01 12:00Z", -1);    // pending without payment, loses A3
    add("o5", "{A1}", 2, "2026-01-01 08:00Z", 3);     // cancelled: no claim at all
    tx.commit();
  }
  const auto report = persistence::apply_migrations(conn);
  // Every version from 3 on is applied now (later migrations too: only version 3 reports).
  std::vector<int> from_three;
  for (const auto& migration : persistence::migrations()) {
    if (migration.version >= 3) {
      from_three.push_back(migration.version);
    }
  }
  ASSERT_EQ(report.applied, from_three);
  ASSERT_EQ(report.notes.size(), 1u);
  EXPECT_EQ(report.notes[0],
            "version 3: seat claims: 3 seats of 2 live orders claimed; 3 seats listed by more "
            "than one live order; 3 orders left without a claim on them: 2 with a payment, "
            "recorded as seat_conflict, 1 without one");
  pqxx::work tx(conn);
  const auto claims = tx.exec(
      "SELECT string_agg(seat_id || '=' || order_no, ',' ORDER BY seat_id) FROM seat_claim");
  EXPECT_EQ(claims[0][0].as<std::string>(), "A1=o1,A2=o1,A3=o2");
  const auto conflicts = tx.exec(
      "SELECT string_agg(order_no || ':' || (detail->'seats')::text, ' ' ORDER BY order_no), "
      "count(*) FROM payment_discrepancy WHERE kind = 'seat_conflict'");
  EXPECT_EQ(conflicts[0][0].as<std::string>(),
            "o2:[{\"holder\": \"o1\", \"seat_id\": \"A2\"}] "
            "o3:[{\"holder\": \"o1\", \"seat_id\": \"A1\"}]");
  tx.commit();
  std::vector<std::string> recorded;
  for (const auto& event : testing::peek_events(conn, db.slot())) {
    if (event.type == "discrepancy.recorded") {
      recorded.push_back(event.payment_no + ":" + event.detail);
    }
  }
  EXPECT_EQ(recorded, (std::vector<std::string>{"po2:seat_conflict", "po3:seat_conflict"}));
  EXPECT_TRUE(persistence::apply_migrations(conn).applied.empty());
  // The loser without a payment is refused one: it could never sell the seat it lists.
  persistence::PgSession pg(db.dsn(), 5000, nullptr, &persistence::prepare_statements);
  persistence::RedisClient redis(testing::test_redis_endpoint(), 2000, nullptr);
  persistence::SeatStore seats(redis);
  persistence::OrderStore orders(pg, seats);
  const auto refused = orders.create_payment({"o4", "hmac", "po4"});
  EXPECT_EQ(refused.error(), persistence::errc::conflict);
  EXPECT_EQ(testing::rejection_detail(refused),
            "the order does not hold all its seats (seat conflict)");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
