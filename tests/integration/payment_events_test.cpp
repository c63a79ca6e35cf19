// The payment-event outbox: exactly one event per committed state move, emitted into the WAL in
// the move's own transaction (so a rolled-back callback leaves none), the same from group commit as
// from one callback per transaction; and retention, which removes only log rows past the horizon
// and never an event (those live in the WAL until the relay confirms them).
#include <gtest/gtest.h>

#include "http/status.hpp"
#include "persistence/jobs/retention.hpp"
#include "persistence/stores/batch_store.hpp"
#include "persistence/stores/callback_store.hpp"
#include "persistence/stores/order_store.hpp"
#include "persistence/stores/sql.hpp"
#include "support/failpoints.hpp"
#include "support/store_connections.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using domain::CallbackKind;
using domain::CallbackResult;
using testing::make_callback;
using Ids = std::vector<std::string>;

std::string ev(const std::string& type, const std::string& key) {
  return type + ":" + key;
}

// The stores of one engine, on the database at `dsn`.
struct Engine {
  explicit Engine(const std::string& dsn, persistence::Failpoints* failpoints)
      : pg(dsn, 5000, failpoints, &persistence::prepare_statements),
        redis(testing::test_redis_endpoint(), 2000, failpoints),
        seats(redis),
        single(pg, seats, failpoints, &http::callback_status),
        batch(pg, redis, failpoints, &http::callback_status),
        orders(pg, seats),
        retention(pg) {}
  persistence::PgSession pg;
  persistence::RedisClient redis;
  persistence::SeatStore seats;
  persistence::CallbackStore single;
  persistence::BatchCallbackStore batch;
  persistence::OrderStore orders;
  persistence::RetentionStore retention;
};

class PaymentEventsTest : public ::testing::Test {
 protected:
  // A pending payment "<name>" with order "<name>-o" holding two seats of the test's show.
  std::string pending(const std::string& name) {
    const auto payment = s_.id(name);
    s_.create_pending(payment, s_.id(name + "-o"), s_.id("show"), {name + "-1", name + "-2"});
    return payment;
  }
  std::string order_of(const std::string& payment) { return payment + "-o"; }

  CallbackResult pay(const std::string& payment, const std::string& cb,
                     CallbackKind kind = CallbackKind::success) {
    return e_.single.process(make_callback(s_.id(cb), payment, kind)).result;
  }

  void arm(const std::string& spec) { failpoints_ = testing::failpoints(spec); }

  testing::Stores s_;
  persistence::Failpoints failpoints_;
  Engine e_{testing::test_pg_dsn(), &failpoints_};
};

TEST_F(PaymentEventsTest, ASuccessWritesPaymentSucceededThenOrderPaidOnce) {
  const auto p = pending("p");
  ASSERT_EQ(pay(p, "cb1"), CallbackResult::applied);
  ASSERT_EQ(pay(p, "cb1"), CallbackResult::duplicate);
  ASSERT_EQ(pay(p, "cb2"), CallbackResult::ignored);  // another success for a paid payment
  const auto events = s_.events(p, order_of(p));
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].event_id, ev("payment.succeeded", p));
  EXPECT_EQ(events[0].type, "payment.succeeded");
  EXPECT_EQ(events[0].payment_no, p);
  EXPECT_EQ(events[0].order_no, order_of(p));
  EXPECT_EQ(events[0].amount_cents, 5000);
  EXPECT_EQ(events[0].occurred_at.size(), std::string("2026-01-01T00:00:00.000000Z").size());
  EXPECT_EQ(events[1].event_id, ev("order.paid", order_of(p)));
  EXPECT_EQ(events[1].payment_no, p);
  EXPECT_EQ(events[1].amount_cents, 5000);
}

TEST_F(PaymentEventsTest, FailureThenSuccessWritesThreeEventsInOrder) {
  const auto p = pending("p");
  ASSERT_EQ(pay(p, "f1", CallbackKind::failure), CallbackResult::applied);
  ASSERT_EQ(pay(p, "f2", CallbackKind::failure), CallbackResult::ignored);
  ASSERT_EQ(pay(p, "s1"), CallbackResult::applied);
  ASSERT_EQ(pay(p, "f3", CallbackKind::failure), CallbackResult::ignored);
  EXPECT_EQ(s_.event_ids(p, order_of(p)), (Ids{ev("payment.failed", p), ev("payment.succeeded", p),
                                               ev("order.paid", order_of(p))}));
}

TEST_F(PaymentEventsTest, CloseAndItsRepeatWriteOneClosedAndOneCancelled) {
  const auto p = pending("p");
  ASSERT_EQ(testing::done(e_.orders.close_payment(p)), persistence::Done::ok);
  ASSERT_EQ(testing::done(e_.orders.close_payment(p)), persistence::Done::already);
  EXPECT_EQ(s_.event_ids(p, order_of(p)),
            (Ids{ev("payment.closed", p), ev("order.cancelled", order_of(p))}));
}

TEST_F(PaymentEventsTest, RefundWritesRefundedEventsAfterThePaidOnes) {
  const auto p = pending("p");
  ASSERT_EQ(pay(p, "cb1"), CallbackResult::applied);
  ASSERT_EQ(testing::done(e_.orders.refund_payment(p)), persistence::Done::ok);
  ASSERT_EQ(testing::done(e_.orders.refund_payment(p)), persistence::Done::already);
  EXPECT_EQ(s_.event_ids(p, order_of(p)),
            (Ids{ev("payment.succeeded", p), ev("order.paid", order_of(p)),
                 ev("payment.refunded", p), ev("order.refunded", order_of(p))}));
}

TEST_F(PaymentEventsTest, SweeperTimeoutWritesClosedAndCancelled) {
  const auto p = pending("p");
  {
    pqxx::work tx(s_.pg());
    tx.exec_params(
        "UPDATE order_info SET expires_at = now() - interval '1 second' "
        "WHERE order_no = $1",
        order_of(p));
    tx.commit();
  }
  // Other tests' expired orders may be in the way; sweep until none is left.
  while (testing::sweep_expired(e_.orders, 100) == 100) {
  }
  ASSERT_EQ(s_.order_status(order_of(p)), 2);
  EXPECT_EQ(s_.event_ids(p, order_of(p)),
            (Ids{ev("payment.closed", p), ev("order.cancelled", order_of(p))}));
}

TEST_F(PaymentEventsTest, PaidAfterCancelRecordsOneDiscrepancyEventAndResolveAnother) {
  const auto p = pending("p");
  ASSERT_EQ(testing::done(e_.orders.close_payment(p)), persistence::Done::ok);
  ASSERT_EQ(pay(p, "late"), CallbackResult::discrepancy);
  ASSERT_EQ(pay(p, "late"), CallbackResult::duplicate);
  ASSERT_EQ(pay(p, "late2"), CallbackResult::discrepancy);  // the open row absorbs it
  const auto events = s_.events(p, order_of(p));
  ASSERT_EQ(events.size(), 3u);
  EXPECT_EQ(events[2].type, "discrepancy.recorded");
  EXPECT_EQ(events[2].detail, "paid_after_cancel");
  EXPECT_EQ(events[2].payment_no, p);
  EXPECT_EQ(events[2].amount_cents, 5000);
  const auto id = events[2].event_id.substr(std::string("discrepancy.recorded:").size());
  ASSERT_EQ(testing::done(e_.orders.resolve_discrepancy(std::stoll(id))), persistence::Done::ok);
  ASSERT_EQ(testing::done(e_.orders.resolve_discrepancy(std::stoll(id))),
            persistence::Done::already);
  const auto after = s_.events(p, order_of(p));
  ASSERT_EQ(after.size(), 4u);
  EXPECT_EQ(after[3].event_id, ev("discrepancy.resolved", id));
}

TEST_F(PaymentEventsTest, RolledBackCallbacksLeaveNoEvent) {
  const auto failing = pending("failing");
  arm("mark_sold=error");
  EXPECT_EQ(pay(failing, "cb1"), CallbackResult::mark_sold_failed);
  failpoints_ = persistence::Failpoints{};
  // A seat sold to another order: mark_sold refuses, the transaction rolls back.
  const auto taken = pending("taken");
  s_.set_seat(s_.id("show"), "taken-2", "2:someone-else");
  EXPECT_EQ(pay(taken, "cb2"), CallbackResult::mark_sold_failed);
  arm("pg_commit=error");
  EXPECT_EQ(pay(pending("uncommitted"), "cb3"), CallbackResult::unavailable);
  failpoints_ = persistence::Failpoints{};
  EXPECT_TRUE(s_.all_events().empty());
  // The retry after the fault is a first delivery, and writes its events once.
  ASSERT_EQ(pay(failing, "cb1"), CallbackResult::applied);
  EXPECT_EQ(s_.event_ids(failing, order_of(failing)),
            (Ids{ev("payment.succeeded", failing), ev("order.paid", order_of(failing))}));
}

// Every kind of callback through the group-commit path gives the events the one-by-one path gives,
// and a mark_sold failure inside the batch leaves none for its own callback only.
TEST_F(PaymentEventsTest, GroupCommitWritesTheSameEventsAsOneByOne) {
  const auto paid = pending("paid");
  const auto failed = pending("failed");
  const auto retried = pending("retried");
  ASSERT_EQ(pay(retried, "r-fail", CallbackKind::failure), CallbackResult::applied);
  const auto closed = pending("closed");
  ASSERT_EQ(testing::done(e_.orders.close_payment(closed)), persistence::Done::ok);
  const auto again = pending("again");
  ASSERT_EQ(pay(again, "again-cb"), CallbackResult::applied);
  const auto taken = pending("taken");
  s_.set_seat(s_.id("show"), "taken-1", "2:someone-else");

  const std::vector<domain::VerifiedCallback> batch = {
      make_callback(s_.id("paid-cb"), paid, CallbackKind::success),
      make_callback(s_.id("failed-cb"), failed, CallbackKind::failure),
      make_callback(s_.id("retried-cb"), retried, CallbackKind::success),
      make_callback(s_.id("closed-cb"), closed, CallbackKind::success),
      make_callback(s_.id("again-cb"), again, CallbackKind::success),
      make_callback(s_.id("taken-cb"), taken, CallbackKind::success),
  };
  const auto outcomes = e_.batch.process(batch);
  ASSERT_EQ(outcomes.size(), batch.size());
  EXPECT_EQ(outcomes[0].result, CallbackResult::applied);
  EXPECT_EQ(outcomes[1].result, CallbackResult::applied);
  EXPECT_EQ(outcomes[2].result, CallbackResult::applied);
  EXPECT_EQ(outcomes[3].result, CallbackResult::discrepancy);
  EXPECT_EQ(outcomes[4].result, CallbackResult::duplicate);
  EXPECT_EQ(outcomes[5].result, CallbackResult::mark_sold_failed);
  // A replay of the whole batch commits nothing new.
  (void)e_.batch.process(batch);

  EXPECT_EQ(s_.event_ids(paid, order_of(paid)),
            (Ids{ev("payment.succeeded", paid), ev("order.paid", order_of(paid))}));
  EXPECT_EQ(s_.event_ids(failed, order_of(failed)), (Ids{ev("payment.failed", failed)}));
  EXPECT_EQ(s_.event_ids(retried, order_of(retried)),
            (Ids{ev("payment.failed", retried), ev("payment.succeeded", retried),
                 ev("order.paid", order_of(retried))}));
  const auto closed_events = s_.events(closed, order_of(closed));
  ASSERT_EQ(closed_events.size(), 3u);
  EXPECT_EQ(closed_events[2].type, "discrepancy.recorded");
  EXPECT_EQ(closed_events[2].detail, "paid_after_cancel");
  EXPECT_EQ(s_.event_ids(again, order_of(again)),
            (Ids{ev("payment.succeeded", again), ev("order.paid", order_of(again))}));
  EXPECT_TRUE(s_.events(taken, order_of(taken)).empty());
}

// A statement error (here a trade number bound to another payment) aborts the batch transaction
// and the batch runs again one callback per transaction: only the moves that commit there have
// events, each once.
TEST_F(PaymentEventsTest, AGroupCommitThatFallsBackToOneByOneWritesEachEventOnce) {
  const auto x = s_.id("x");
  const auto y = s_.id("y");
  s_.create_pending(x, x + "-o", s_.id("show"), {"x-1"}, 100, "alipay");
  s_.create_pending(y, y + "-o", s_.id("show"), {"y-1"}, 100, "alipay");
  const auto f = pending("f");
  const auto trade = s_.id("trade");
  const auto outcomes = e_.batch.process(
      {make_callback(s_.id("x-cb"), x, CallbackKind::success, 100, trade, domain::Channel::alipay),
       make_callback(s_.id("y-cb"), y, CallbackKind::success, 100, trade, domain::Channel::alipay),
       make_callback(s_.id("f-cb"), f, CallbackKind::failure)});
  ASSERT_EQ(outcomes.size(), 3u);
  EXPECT_EQ(outcomes[0].result, CallbackResult::applied);
  EXPECT_EQ(outcomes[1].result, CallbackResult::conflict);
  EXPECT_EQ(outcomes[2].result, CallbackResult::applied);
  EXPECT_EQ(s_.event_ids(x, x + "-o"),
            (Ids{ev("payment.succeeded", x), ev("order.paid", x + "-o")}));
  EXPECT_TRUE(s_.events(y, y + "-o").empty());
  EXPECT_EQ(s_.event_ids(f, order_of(f)), (Ids{ev("payment.failed", f)}));
}

TEST_F(PaymentEventsTest, AGroupCommitRolledBackByTheCommitFailpointLeavesNoEvent) {
  const auto a = pending("a");
  const auto b = pending("b");
  arm("pg_commit=error");
  const auto outcomes = e_.batch.process({make_callback(s_.id("a-cb"), a, CallbackKind::success),
                                          make_callback(s_.id("b-cb"), b, CallbackKind::failure)});
  failpoints_ = persistence::Failpoints{};
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].result, CallbackResult::unavailable);
  EXPECT_TRUE(s_.all_events().empty());
}

// Retention works on the whole database, so these tests use one of their own.
class RetentionTest : public ::testing::Test {
 protected:
  void age(const std::string& sql, const std::string& key) {
    pqxx::work tx(s_.pg());
    tx.exec_params(sql, key);
    tx.commit();
  }
  std::size_t count(const std::string& sql) {
    pqxx::work tx(s_.pg());
    return tx.exec1(sql)[0].as<std::size_t>();
  }
  std::string pending(const std::string& name) {
    const auto payment = s_.id(name);
    s_.create_pending(payment, s_.id(name + "-o"), s_.id("show"), {name + "-1"});
    return payment;
  }

  static constexpr std::int64_t kThirtyDaysMs = 30LL * 24 * 3600 * 1000;
  testing::PrivateDatabase db_;
  testing::Stores s_{db_.dsn()};
  Engine e_{db_.dsn(), nullptr};
};

TEST_F(RetentionTest, RemovesOnlyLogRowsPastTheHorizonInBoundedBatches) {
  std::vector<std::string> payments;
  for (int i = 0; i < 5; ++i) {
    payments.push_back(pending("p" + std::to_string(i)));
    ASSERT_EQ(e_.single
                  .process(make_callback(s_.id("cb" + std::to_string(i)), payments.back(),
                                         CallbackKind::success))
                  .result,
              CallbackResult::applied);
  }
  // p0..p3: log rows 31 days old. p4: a fresh log row.
  for (int i = 0; i < 4; ++i) {
    age("UPDATE payment_callback_log SET received_at = now() - interval '31 days' "
        "WHERE payment_no = $1",
        payments[i]);
  }

  // One batch removes at most `batch` rows.
  const auto first = e_.retention.purge_once(kThirtyDaysMs, 3);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first.value().callback_logs, 3u);
  const auto second = e_.retention.purge_once(kThirtyDaysMs, 3);
  ASSERT_TRUE(second.ok());
  EXPECT_EQ(second.value().callback_logs, 1u);
  const auto third = e_.retention.purge_once(kThirtyDaysMs, 3);
  ASSERT_TRUE(third.ok());
  EXPECT_EQ(third.value().callback_logs, 0u);

  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(s_.log_rows_for_payment(payments[i]), 0);
  }
  EXPECT_EQ(s_.log_rows_for_payment(payments[4]), 1);
  // Every event is still waiting in the slot: retention has nothing to do with them.
  for (const auto& payment : payments) {
    EXPECT_EQ(s_.events(payment, payment + "-o").size(), 2u) << payment;
  }
}

// A gateway copy of a callback whose log row retention removed is a first delivery to the log,
// but the payment CAS finds the payment already moved: answered with the ACK, no second event,
// seats untouched — through both the one-transaction and the group-commit paths.
TEST_F(RetentionTest, ADuplicateAfterItsLogRowIsGoneIsStillAnsweredByTheCas) {
  const auto p = pending("p");
  const auto q = pending("q");
  const auto failed = pending("failed");
  ASSERT_EQ(e_.single.process(make_callback(s_.id("p-cb"), p, CallbackKind::success)).result,
            CallbackResult::applied);
  ASSERT_EQ(e_.single.process(make_callback(s_.id("q-cb"), q, CallbackKind::success)).result,
            CallbackResult::applied);
  ASSERT_EQ(e_.single.process(make_callback(s_.id("f-cb"), failed, CallbackKind::failure)).result,
            CallbackResult::applied);
  age("UPDATE payment_callback_log SET received_at = now() - interval '31 days' "
      "WHERE payment_no LIKE $1",
      s_.prefix() + "%");
  const auto purged = e_.retention.purge_once(kThirtyDaysMs, 100);
  ASSERT_TRUE(purged.ok());
  ASSERT_EQ(purged.value().callback_logs, 3u);
  s_.set_seat(s_.id("show"), "p-1", "2:" + s_.id("p-o"));
  const auto before = s_.all_events();

  const auto again = e_.single.process(make_callback(s_.id("p-cb"), p, CallbackKind::success));
  EXPECT_EQ(again.result, CallbackResult::ignored);  // answered 200 with the channel's ACK
  const auto outcomes =
      e_.batch.process({make_callback(s_.id("q-cb"), q, CallbackKind::success),
                        make_callback(s_.id("f-cb"), failed, CallbackKind::failure)});
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].result, CallbackResult::ignored);
  EXPECT_EQ(outcomes[1].result, CallbackResult::ignored);

  EXPECT_EQ(s_.all_events().size(), before.size());
  EXPECT_EQ(s_.payment_status(p), 1);
  EXPECT_EQ(s_.order_status(s_.id("p-o")), 1);
  EXPECT_EQ(s_.seat(s_.id("show"), "p-1"), "2:" + s_.id("p-o"));
  EXPECT_EQ(s_.payment_status(failed), 2);
  EXPECT_EQ(s_.seat(s_.id("show"), "failed-1"), "1:" + s_.id("failed-o"));
  EXPECT_EQ(s_.log_rows_for_payment(p), 1);  // logged again as the audit trail
}

// After a refund, a copy of the paying success whose log row is gone carries the trade number that
// paid the payment: not new money, so no discrepancy and no event. A success for another trade is.
TEST_F(RetentionTest, ACopyOfThePayingTradeAfterARefundAndRetentionIsNoDiscrepancy) {
  const auto p = s_.id("p");
  const auto q = s_.id("q");
  for (const auto& payment : {p, q}) {
    s_.create_pending(payment, payment + "-o", s_.id("show"), {payment + "-seat"}, 5000, "alipay");
    ASSERT_EQ(e_.single
                  .process(make_callback(payment + "-cb", payment, CallbackKind::success, 5000,
                                         payment + "-trade", domain::Channel::alipay))
                  .result,
              CallbackResult::applied);
    ASSERT_EQ(testing::done(e_.orders.refund_payment(payment)), persistence::Done::ok);
  }
  age("UPDATE payment_callback_log SET received_at = now() - interval '31 days' "
      "WHERE payment_no LIKE $1",
      s_.prefix() + "%");
  ASSERT_EQ(e_.retention.purge_once(kThirtyDaysMs, 100).value().callback_logs, 2u);
  const auto before = s_.all_events().size();

  const auto copy = [&](const std::string& payment, const std::string& trade) {
    return make_callback(payment + "-cb", payment, CallbackKind::success, 5000, trade,
                         domain::Channel::alipay);
  };
  EXPECT_EQ(e_.single.process(copy(p, p + "-trade")).result, CallbackResult::ignored);
  const auto outcomes = e_.batch.process({copy(q, q + "-trade"), copy(p, p + "-trade")});
  ASSERT_EQ(outcomes.size(), 2u);
  EXPECT_EQ(outcomes[0].result, CallbackResult::ignored);
  EXPECT_EQ(outcomes[1].result, CallbackResult::duplicate);
  EXPECT_EQ(s_.discrepancies(p, "paid_after_refund"), 0);
  EXPECT_EQ(s_.discrepancies(q, "paid_after_refund"), 0);
  EXPECT_EQ(s_.all_events().size(), before);

  // Money under another trade number for the refunded payment is a discrepancy.
  const auto other = make_callback(s_.id("other"), p, CallbackKind::success, 5000, "another-trade",
                                   domain::Channel::alipay);
  EXPECT_EQ(e_.single.process(other).result, CallbackResult::discrepancy);
  EXPECT_EQ(s_.discrepancies(p, "paid_after_refund"), 1);
  EXPECT_EQ(s_.all_events().size(), before + 1);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
