// The reconciler and the invariant checker against real PostgreSQL and Redis: drift made on
// purpose (lost seats, another order's seat, locks left by cancelled orders, a flushed show hash),
// the exact repairs and violations, and a repair racing a refund that holds the payment row.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <thread>

#include "persistence/jobs/checker.hpp"
#include "persistence/jobs/reconciler.hpp"
#include "persistence/stores/seat_scripts.hpp"
#include "persistence/stores/sql.hpp"
#include "support/failpoints.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using persistence::ReconcileStats;

class ReconcilerTest : public ::testing::Test {
 protected:
  ReconcilerTest()
      : pg_(testing::test_pg_dsn(), 5000, nullptr, &persistence::prepare_statements),
        redis_(testing::test_redis_endpoint(), 2000, nullptr),
        counters_(metrics_),
        reconciler_(pg_, redis_, options(), &counters_) {
    show_ = s_.id("show");
  }

  persistence::ReconcileOptions options() const {
    persistence::ReconcileOptions out;
    out.batch = 2;  // small, so the keyset pagination crosses batches
    out.scope_prefix = s_.prefix();
    return out;
  }

  // A paid order: payment SUCCESS with paid_at, order PAID, seats `2:<order>`.
  void make_paid(const std::string& name, const std::vector<std::string>& seats) {
    s_.create_order(s_.id("o-" + name), show_, seats, 5000, 1);
    s_.create_payment(s_.id("p-" + name), s_.id("o-" + name), "hmac", 5000, 1);
    pqxx::work tx(s_.pg());
    tx.exec_params("UPDATE payment_order SET paid_at = now() WHERE payment_no = $1",
                   s_.id("p-" + name));
    tx.commit();
    for (const auto& seat : seats) {
      s_.set_seat(show_, seat, "2:" + s_.id("o-" + name));
    }
  }

  // A cancelled order with its payment closed; seats untouched in Redis.
  void make_cancelled(const std::string& name, const std::vector<std::string>& seats) {
    s_.create_order(s_.id("o-" + name), show_, seats, 5000, 2);
    s_.create_payment(s_.id("p-" + name), s_.id("o-" + name), "hmac", 5000, 3);
  }

  void make_pending(const std::string& name, const std::vector<std::string>& seats) {
    s_.create_pending(s_.id("p-" + name), s_.id("o-" + name), show_, seats);
  }

  std::string order(const std::string& name) const { return s_.id("o-" + name); }

  // The order that claims the seat in PostgreSQL ("" when none does).
  std::string claimant(const std::string& seat) {
    pqxx::work tx(s_.pg());
    const auto rows = tx.exec_params(
        "SELECT order_no FROM seat_claim WHERE show_id = $1 AND seat_id = $2", show_, seat);
    return rows.empty() ? std::string() : rows[0][0].as<std::string>();
  }

  ReconcileStats pass() { return reconciler_.run_pass(); }

  std::vector<persistence::Violation> check() {
    persistence::CheckOptions options;
    options.batch = 2;
    options.scope_prefix = s_.prefix();
    std::vector<persistence::Violation> out;
    const auto summary = persistence::check_invariants(
        s_.pg(), redis_, options, [&](const persistence::Violation& v) { out.push_back(v); });
    EXPECT_TRUE(summary.ok()) << summary.detail();
    EXPECT_EQ(summary.ok() ? summary.value().violations : 0, out.size());
    return out;
  }

  static std::vector<std::string> kinds(const std::vector<persistence::Violation>& violations) {
    std::vector<std::string> out;
    for (const auto& v : violations) {
      out.push_back(v.kind + " " + v.subject);
    }
    std::sort(out.begin(), out.end());
    return out;
  }

  testing::Stores s_;
  persistence::PgSession pg_;
  persistence::RedisClient redis_;
  observability::Registry metrics_;
  persistence::ReconcileProbe counters_;
  persistence::Reconciler reconciler_;
  std::string show_;
};

TEST_F(ReconcilerTest, ConsistentStateNeedsNoRepairAndHasNoViolation) {
  make_paid("a", {"A1", "A2"});
  make_pending("b", {"B1"});
  make_cancelled("c", {"C1"});
  const auto stats = pass();
  EXPECT_EQ(stats.orders_scanned, 3u);
  EXPECT_EQ(stats.repairs(), 0u);
  EXPECT_EQ(stats.errors, 0u);
  EXPECT_TRUE(check().empty());
  EXPECT_EQ(counters_.passes.Value(), 1.0);
}

TEST_F(ReconcilerTest, ACheckWhoseRedisFailsAnswersRedisUnavailable) {
  make_paid("a", {"A-1"});
  auto failing = testing::failpoints("redis=error");
  persistence::RedisClient redis(testing::test_redis_endpoint(), 2000, &failing);
  persistence::CheckOptions options;
  options.scope_prefix = s_.prefix();
  const auto checked =
      persistence::check_invariants(s_.pg(), redis, options, [](const persistence::Violation&) {});
  ASSERT_FALSE(checked.ok());
  EXPECT_EQ(checked.error(), persistence::errc::redis_unavailable);
  EXPECT_EQ(checked.detail().rfind("redis", 0), 0U) << checked.detail();
}

TEST_F(ReconcilerTest, PaidOrderSeatsLockedOrLostBecomeSold) {
  make_paid("a", {"A1", "A2", "A3"});
  s_.set_seat(show_, "A1", "1:" + order("a"));
  s_.delete_seat(show_, "A2");
  EXPECT_EQ(kinds(check()), (std::vector<std::string>{"paid_seat_not_sold " + show_ + "/A1",
                                                      "paid_seat_not_sold " + show_ + "/A2"}));
  const auto stats = pass();
  EXPECT_EQ(stats.seats_sold, 2u);
  EXPECT_EQ(stats.orders_repaired, 1u);
  EXPECT_EQ(counters_.seats_sold.Value(), 2.0);
  for (const auto* seat : {"A1", "A2", "A3"}) {
    EXPECT_EQ(s_.seat(show_, seat), "2:" + order("a")) << seat;
  }
  EXPECT_TRUE(check().empty());
  EXPECT_EQ(pass().repairs(), 0u);  // idempotent
}

TEST_F(ReconcilerTest, CancelledOrdersLocksAndStaleSalesAreReleasedOthersUntouched) {
  make_cancelled("c", {"C1", "C2", "C3"});
  make_pending("b", {"B1"});
  s_.set_seat(show_, "C1", "1:" + order("c"));
  s_.set_seat(show_, "C2", "2:" + order("c"));  // a sale whose commit rolled back
  s_.set_seat(show_, "C3", "1:" + order("b"));  // another order's lock on a seat c listed
  const auto before = kinds(check());
  EXPECT_EQ(before,
            (std::vector<std::string>{"finished_order_holds_seat " + show_ + "/C1",
                                      "finished_order_holds_seat " + show_ + "/C2",
                                      "seat_names_order_without_that_seat " + show_ + "/C3"}));
  const auto stats = pass();
  EXPECT_EQ(stats.seats_released, 2u);
  EXPECT_EQ(s_.seat(show_, "C1"), "");
  EXPECT_EQ(s_.seat(show_, "C2"), "");
  EXPECT_EQ(s_.seat(show_, "C3"), "1:" + order("b"));
  EXPECT_EQ(s_.seat(show_, "B1"), "1:" + order("b"));
  EXPECT_EQ(counters_.seats_released.Value(), 2.0);
}

TEST_F(ReconcilerTest, RefundedOrdersSoldSeatsAreReleased) {
  make_paid("r", {"R1"});
  pqxx::work tx(s_.pg());
  tx.exec_params("UPDATE payment_order SET status = 4 WHERE payment_no = $1", s_.id("p-r"));
  tx.exec_params("UPDATE order_info SET status = 3 WHERE order_no = $1", order("r"));
  tx.commit();
  // Moved by hand, so its claim is still there: a finished order's claim is drift too.
  EXPECT_EQ(kinds(check()),
            (std::vector<std::string>{"claim_of_finished_order " + show_ + "/R1",
                                      "finished_order_holds_seat " + show_ + "/R1"}));
  EXPECT_EQ(pass().seats_released, 1u);
  EXPECT_EQ(s_.seat(show_, "R1"), "");
  EXPECT_EQ(claimant("R1"), "");
  EXPECT_TRUE(check().empty());
}

// Redis names order x on a seat that paid order a claims: the claim decides (SPEC §9), so the seat
// is sold to a, and x, which lists the seat without holding its claim, gets one seat_conflict.
TEST_F(ReconcilerTest, SeatClaimedByAnotherOrderIsRecordedOnceAndNeverTaken) {
  make_paid("a", {"A1", "A2"});
  make_paid("x", {"X1"});
  {
    pqxx::work tx(s_.pg());
    tx.exec_params("UPDATE order_info SET seat_ids = '{X1,A1}' WHERE order_no = $1", order("x"));
    tx.commit();
  }
  s_.set_seat(show_, "A1", "2:" + order("x"));
  s_.delete_seat(show_, "A2");
  EXPECT_EQ(kinds(check()),
            (std::vector<std::string>{
                "live_order_seat_not_claimed " + show_ + "/A1",
                "paid_seat_not_sold " + show_ + "/A1", "paid_seat_not_sold " + show_ + "/A2",
                "seat_sold_twice " + show_ + "/A1", "seat_without_live_claim " + show_ + "/A1"}));
  const auto stats = pass();
  EXPECT_EQ(stats.seat_conflicts, 1u);
  EXPECT_EQ(stats.seats_sold, 2u);  // A1 taken back from x's value, A2 lost
  EXPECT_EQ(s_.seat(show_, "A1"), "2:" + order("a"));
  EXPECT_EQ(s_.seat(show_, "A2"), "2:" + order("a"));
  EXPECT_EQ(s_.seat(show_, "X1"), "2:" + order("x"));
  EXPECT_EQ(claimant("A1"), order("a"));
  EXPECT_EQ(s_.discrepancies(s_.id("p-x"), "seat_conflict"), 1);
  EXPECT_EQ(s_.discrepancies(s_.id("p-a"), "seat_conflict"), 0);
  {
    pqxx::work tx(s_.pg());
    const auto detail = tx.exec_params1(
        "SELECT detail->'seats'->0->>'seat_id', detail->'seats'->0->>'holder', order_no "
        "FROM payment_discrepancy WHERE payment_no = $1 AND kind = 'seat_conflict'",
        s_.id("p-x"));
    EXPECT_EQ(detail[0].as<std::string>(), "A1");
    EXPECT_EQ(detail[1].as<std::string>(), order("a"));
    EXPECT_EQ(detail[2].as<std::string>(), order("x"));
  }
  // Still unhealable: the next pass records nothing new and never hands A1 to x.
  EXPECT_EQ(pass().seat_conflicts, 0u);
  EXPECT_EQ(s_.seat(show_, "A1"), "2:" + order("a"));
  EXPECT_EQ(s_.discrepancies(s_.id("p-x"), "seat_conflict"), 1);
  EXPECT_EQ(counters_.seat_conflicts.Value(), 1.0);
  EXPECT_EQ(kinds(check()),
            (std::vector<std::string>{"live_order_seat_not_claimed " + show_ + "/A1",
                                      "paid_seat_not_sold " + show_ + "/A1",
                                      "seat_sold_twice " + show_ + "/A1"}));
}

// A live order whose claim was lost (deleted by hand) takes it back when nobody else holds it.
TEST_F(ReconcilerTest, LiveOrderTakesBackAClaimNobodyHolds) {
  make_pending("b", {"B1", "B2"});
  {
    pqxx::work tx(s_.pg());
    tx.exec_params("DELETE FROM seat_claim WHERE order_no = $1 AND seat_id = 'B2'", order("b"));
    tx.commit();
  }
  EXPECT_EQ(kinds(check()),
            (std::vector<std::string>{"live_order_seat_not_claimed " + show_ + "/B2",
                                      "seat_without_live_claim " + show_ + "/B2"}));
  const auto stats = pass();
  EXPECT_EQ(stats.errors, 0u);
  EXPECT_EQ(claimant("B2"), order("b"));
  EXPECT_EQ(s_.seat(show_, "B2"), "1:" + order("b"));
  EXPECT_TRUE(check().empty());
}

TEST_F(ReconcilerTest, FlushedShowHashIsRebuiltFromPostgres) {
  make_paid("a", {"A1", "A2"});
  make_paid("d", {"D1"});
  make_pending("b", {"B1", "B2"});
  make_cancelled("c", {"C1"});
  ASSERT_TRUE(redis_.command({"DEL", persistence::seat_key(show_)}).ok);
  EXPECT_EQ(kinds(check()),
            (std::vector<std::string>{
                "paid_seat_not_sold " + show_ + "/A1", "paid_seat_not_sold " + show_ + "/A2",
                "paid_seat_not_sold " + show_ + "/D1", "pending_seat_not_locked " + show_ + "/B1",
                "pending_seat_not_locked " + show_ + "/B2"}));
  const auto stats = pass();
  EXPECT_EQ(stats.seats_sold, 3u);
  EXPECT_EQ(stats.seats_relocked, 2u);
  EXPECT_EQ(stats.seats_released, 0u);
  EXPECT_EQ(s_.seat(show_, "A1"), "2:" + order("a"));
  EXPECT_EQ(s_.seat(show_, "D1"), "2:" + order("d"));
  EXPECT_EQ(s_.seat(show_, "B2"), "1:" + order("b"));
  EXPECT_EQ(s_.seat(show_, "C1"), "");
  EXPECT_TRUE(check().empty());
}

// The claims decide a rebuild, not the phase order: a paid order that lists a seat a pending order
// claimed first (a conflict only pre-claim data can hold) does not get it, and is recorded.
TEST_F(ReconcilerTest, RebuildGivesSeatsToTheirClaimHolders) {
  make_pending("a-pending", {"S1", "S2"});
  make_paid("z-paid", {"S1", "S3"});
  ASSERT_TRUE(redis_.command({"DEL", persistence::seat_key(show_)}).ok);
  const auto stats = pass();
  EXPECT_EQ(s_.seat(show_, "S1"), "1:" + order("a-pending"));
  EXPECT_EQ(s_.seat(show_, "S2"), "1:" + order("a-pending"));
  EXPECT_EQ(s_.seat(show_, "S3"), "2:" + order("z-paid"));
  EXPECT_EQ(stats.seat_conflicts, 1u);
  EXPECT_EQ(s_.discrepancies(s_.id("p-z-paid"), "seat_conflict"), 1);
}

TEST_F(ReconcilerTest, CheckReportsDoubleSalesLogRowsAndIllegalStates) {
  make_paid("a", {"A1"});
  make_paid("b", {"B1"});
  // b's row also lists A1: two PAID orders hold one seat.
  {
    pqxx::work tx(s_.pg());
    tx.exec_params("UPDATE order_info SET seat_ids = '{B1,A1}' WHERE order_no = $1", order("b"));
    tx.commit();
  }
  make_pending("p", {"P1"});
  make_pending("q", {"Q1"});
  make_pending("w", {"W1"});
  {
    pqxx::work tx(s_.pg());
    // A success callback logged for a payment that stayed pending, with no discrepancy.
    tx.exec_params(
        "INSERT INTO payment_callback_log (callback_id, channel, payment_no, status, "
        "payload_sha256) VALUES ($1, 'hmac', $2, 1, 'x')",
        s_.id("cb-lost"), s_.id("p-p"));
    // A log row whose payment does not exist.
    tx.exec_params(
        "INSERT INTO payment_callback_log (callback_id, channel, payment_no, status, "
        "payload_sha256) VALUES ($1, 'hmac', $2, 2, 'x')",
        s_.id("cb-orphan"), s_.id("p-ghost"));
    // SUCCESS payment, PENDING order; a FAILED payment with paid_at.
    tx.exec_params("UPDATE payment_order SET status = 1, paid_at = now() WHERE payment_no = $1",
                   s_.id("p-q"));
    tx.exec_params("UPDATE payment_order SET status = 2, paid_at = now() WHERE payment_no = $1",
                   s_.id("p-w"));
    tx.commit();
  }
  s_.set_seat(show_, "G1", "1:" + s_.id("o-ghost"));
  s_.set_seat(show_, "M1", "garbage");
  const auto violations = kinds(check());
  EXPECT_EQ(violations,
            (std::vector<std::string>{
                "live_order_seat_not_claimed " + show_ + "/A1",
                "log_row_without_payment " + s_.id("cb-orphan"), "paid_at_mismatch " + s_.id("p-w"),
                "paid_seat_not_sold " + show_ + "/A1", "seat_names_unknown_order " + show_ + "/G1",
                "seat_sold_twice " + show_ + "/A1", "seat_value_malformed " + show_ + "/M1",
                "success_callback_not_applied " + s_.id("cb-lost"),
                "success_payment_order_not_paid " + order("q")}));
}

// A refund holds the payment row (FOR UPDATE) and commits while the reconciler, which saw the
// order PAID with a seat missing, waits on its share lock: the reconciler re-reads REFUNDED under
// the lock and releases instead of selling the seat back to a refunded order.
TEST_F(ReconcilerTest, RepairWaitsForARefundInFlightAndFollowsItsOutcome) {
  make_paid("a", {"A1", "A2"});
  s_.delete_seat(show_, "A1");
  pqxx::connection refund_conn(testing::test_pg_dsn());
  pqxx::work refund(refund_conn);
  refund.exec_params("SELECT 1 FROM payment_order WHERE payment_no = $1 FOR UPDATE", s_.id("p-a"));
  refund.exec_params("UPDATE payment_order SET status = 4 WHERE payment_no = $1", s_.id("p-a"));
  refund.exec_params("UPDATE order_info SET status = 3 WHERE order_no = $1", order("a"));

  auto running = std::async(std::launch::async, [this] { return pass(); });
  // Wait (bounded) until the reconciler's backend is blocked on the refund's row lock.
  pqxx::connection probe(testing::test_pg_dsn());
  bool blocked = false;
  for (int i = 0; i < 500 && !blocked; ++i) {
    pqxx::nontransaction q(probe);
    blocked = q.exec1(
                   "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'seatflow' "
                   "AND wait_event_type = 'Lock'")[0]
                  .as<int>() > 0;
    if (!blocked) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ASSERT_TRUE(blocked) << "the reconciler never waited for the refund's lock";
  refund.commit();
  const auto stats = running.get();
  EXPECT_EQ(stats.errors, 0u);
  EXPECT_EQ(stats.seats_sold, 0u);
  EXPECT_EQ(stats.seats_released, 1u);
  EXPECT_EQ(s_.seat(show_, "A1"), "");
  EXPECT_EQ(s_.seat(show_, "A2"), "");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
