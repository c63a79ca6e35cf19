// The one-transaction callback flow (SPEC §6) against real PostgreSQL and Redis: every case the
// seeds name, each checking all three stores.
#include <gtest/gtest.h>

#include <algorithm>

#include "http/status.hpp"
#include "persistence/stores/callback_store.hpp"
#include "persistence/stores/sql.hpp"
#include "support/failpoints.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using domain::CallbackKind;
using domain::CallbackResult;
using testing::make_callback;

class CallbackStoreTest : public ::testing::Test {
 protected:
  CallbackStoreTest()
      : pg_(testing::test_pg_dsn(), 5000, &failpoints_, &persistence::prepare_statements),
        redis_(testing::test_redis_endpoint(), 2000, &failpoints_),
        seats_(redis_),
        store_(pg_, seats_, &failpoints_, &http::callback_status) {}

  // A pending payment P with order O holding seats A1, A2 of show S.
  void SetUp() override {
    payment_ = s_.id("pay");
    order_ = s_.id("order");
    show_ = s_.id("show");
    s_.create_pending(payment_, order_, show_, {"A1", "A2"});
  }

  domain::CallbackOutcome process(const std::string& callback_id, CallbackKind kind) {
    return store_.process(make_callback(s_.id(callback_id), payment_, kind));
  }

  void arm(const std::string& spec) { failpoints_ = testing::failpoints(spec); }

  void expect_untouched() {
    EXPECT_EQ(s_.payment_status(payment_), 0);
    EXPECT_FALSE(s_.payment_paid_at_set(payment_));
    EXPECT_EQ(s_.order_status(order_), 0);
    EXPECT_EQ(s_.log_rows_for_payment(payment_), 0);
  }

  void expect_paid() {
    EXPECT_EQ(s_.payment_status(payment_), 1);
    EXPECT_TRUE(s_.payment_paid_at_set(payment_));
    EXPECT_EQ(s_.order_status(order_), 1);
    EXPECT_EQ(s_.seat(show_, "A1"), "2:" + order_);
    EXPECT_EQ(s_.seat(show_, "A2"), "2:" + order_);
  }

  testing::Stores s_;
  persistence::Failpoints failpoints_;
  persistence::PgSession pg_;
  persistence::RedisClient redis_;
  persistence::SeatStore seats_;
  persistence::CallbackStore store_;
  std::string payment_, order_, show_;
};

TEST_F(CallbackStoreTest, FirstDeliveryPaysOrderAndSellsSeats) {
  const auto outcome = process("cb1", CallbackKind::success);
  EXPECT_EQ(outcome.result, CallbackResult::applied);
  expect_paid();
  const auto log = s_.log_row(s_.id("cb1"));
  ASSERT_TRUE(log);
  EXPECT_EQ(log->duplicate_count, 0);
  EXPECT_EQ(log->status, 1);
}

TEST_F(CallbackStoreTest, DuplicateIsCountedAndChangesNothingElse) {
  ASSERT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::applied);
  EXPECT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::duplicate);
  EXPECT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::duplicate);
  expect_paid();
  EXPECT_EQ(s_.log_row(s_.id("cb1"))->duplicate_count, 2);
  EXPECT_EQ(s_.log_rows_for_payment(payment_), 1);
}

TEST_F(CallbackStoreTest, DuplicateHealsASeatThatDriftedBackToLocked) {
  ASSERT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::applied);
  s_.set_seat(show_, "A2", "1:" + order_);  // drift: Redis lost the sale of one seat
  EXPECT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::duplicate);
  EXPECT_EQ(s_.seat(show_, "A2"), "2:" + order_);
}

TEST_F(CallbackStoreTest, FailureThenSuccessEndsPaid) {
  ASSERT_EQ(process("fail", CallbackKind::failure).result, CallbackResult::applied);
  EXPECT_EQ(s_.payment_status(payment_), 2);
  EXPECT_FALSE(s_.payment_paid_at_set(payment_));
  EXPECT_EQ(s_.order_status(order_), 0);
  EXPECT_EQ(s_.seat(show_, "A1"), "1:" + order_);
  ASSERT_EQ(process("ok", CallbackKind::success).result, CallbackResult::applied);
  expect_paid();
}

TEST_F(CallbackStoreTest, FailureAfterSuccessIsIgnored) {
  ASSERT_EQ(process("ok", CallbackKind::success).result, CallbackResult::applied);
  EXPECT_EQ(process("late-fail", CallbackKind::failure).result, CallbackResult::ignored);
  expect_paid();
  EXPECT_EQ(s_.log_rows_for_payment(payment_), 2);
}

TEST_F(CallbackStoreTest, SecondDistinctSuccessIsIgnoredButStillHeals) {
  ASSERT_EQ(process("ok", CallbackKind::success).result, CallbackResult::applied);
  s_.set_seat(show_, "A1", "1:" + order_);
  EXPECT_EQ(process("ok-again", CallbackKind::success).result, CallbackResult::ignored);
  expect_paid();
}

TEST_F(CallbackStoreTest, MarkSoldFailureRollsBackEverythingAndRetryIsAFirstDelivery) {
  s_.set_seat(show_, "A2", "2:someone-else");
  const auto outcome = process("cb1", CallbackKind::success);
  EXPECT_EQ(outcome.result, CallbackResult::mark_sold_failed);
  EXPECT_EQ(http::http_status(outcome.result), 503);
  expect_untouched();
  EXPECT_FALSE(s_.log_row(s_.id("cb1")));
  EXPECT_EQ(s_.seat(show_, "A1"), "1:" + order_);  // the script changes all seats or none

  s_.set_seat(show_, "A2", "1:" + order_);
  EXPECT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::applied);
  expect_paid();
  EXPECT_EQ(s_.log_row(s_.id("cb1"))->duplicate_count, 0);
}

TEST_F(CallbackStoreTest, MarkSoldFailpointRollsBack) {
  arm("mark_sold=error");
  EXPECT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::mark_sold_failed);
  expect_untouched();
  EXPECT_EQ(failpoints_.hits(persistence::FailpointId::mark_sold), 1u);
  EXPECT_EQ(s_.seat(show_, "A1"), "1:" + order_);
}

TEST_F(CallbackStoreTest, CommitFailureLeavesNothing) {
  arm("pg_commit=error");
  EXPECT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::unavailable);
  expect_untouched();
}

// pg_commit_unknown: the COMMIT goes through and the connection drops before the engine reads its
// answer. The engine cannot know the outcome, so it answers unavailable (503, never an ACK) and
// does not run the batch again itself; the gateway's resend then finds the committed row and is a
// duplicate: exactly one log row, one move, one event, and no duplicate counted for the lost
// answer.
TEST_F(CallbackStoreTest, CommitOutcomeUnknownAnswersUnavailableAndTheResendIsADuplicate) {
  arm("pg_commit_unknown=error");
  const auto first = process("cb1", CallbackKind::success);
  EXPECT_EQ(first.result, CallbackResult::unavailable);
  EXPECT_EQ(http::http_status(first.result), 503);
  EXPECT_EQ(failpoints_.hits(persistence::FailpointId::pg_commit_unknown), 1u);
  expect_paid();  // the commit did happen
  ASSERT_TRUE(s_.log_row(s_.id("cb1")));
  EXPECT_EQ(s_.log_row(s_.id("cb1"))->duplicate_count, 0);

  failpoints_ = persistence::Failpoints{};
  EXPECT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::duplicate);
  expect_paid();
  EXPECT_EQ(s_.log_rows_for_payment(payment_), 1);
  EXPECT_EQ(s_.log_row(s_.id("cb1"))->duplicate_count, 1);
  const auto ids = s_.event_ids(payment_);
  EXPECT_EQ(std::count(ids.begin(), ids.end(), "payment.succeeded:" + payment_), 1);
}

// The redis failpoint sits on every Redis call: mark_sold fails, nothing of the callback survives.
TEST_F(CallbackStoreTest, RedisFailpointFailsTheSaleAndLeavesNothing) {
  arm("redis=error");
  EXPECT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::mark_sold_failed);
  EXPECT_GE(failpoints_.hits(persistence::FailpointId::redis), 1u);
  expect_untouched();
}

// The pg_connect failpoint sits on (re)connection: the callback answers unavailable.
TEST_F(CallbackStoreTest, PgConnectFailpointAnswersUnavailable) {
  arm("pg_connect=error");
  EXPECT_EQ(process("cb1", CallbackKind::success).result, CallbackResult::unavailable);
  EXPECT_GE(failpoints_.hits(persistence::FailpointId::pg_connect), 1u);
  expect_untouched();
}

TEST_F(CallbackStoreTest, RedisDownAnswersTransientAndLeavesNothing) {
  persistence::RedisEndpoint closed = testing::test_redis_endpoint();
  closed.port = 1;  // nothing listens there
  persistence::RedisClient dead(closed, 200, nullptr);
  persistence::SeatStore dead_seats(dead);
  persistence::CallbackStore store(pg_, dead_seats, nullptr, &http::callback_status);
  const auto outcome = store.process(make_callback(s_.id("cb1"), payment_, CallbackKind::success));
  EXPECT_EQ(outcome.result, CallbackResult::mark_sold_failed);
  expect_untouched();
}

TEST_F(CallbackStoreTest, PaidAfterCancelRecordsADiscrepancyAndMovesNothing) {
  const auto payment = s_.id("pay-c");
  const auto order = s_.id("order-c");
  s_.create_order(order, show_, {"B1"}, 5000, 2);
  s_.create_payment(payment, order, "hmac", 5000, 3);
  const auto cb = make_callback(s_.id("late"), payment, CallbackKind::success);
  EXPECT_EQ(store_.process(cb).result, CallbackResult::discrepancy);
  EXPECT_EQ(s_.payment_status(payment), 3);
  EXPECT_EQ(s_.order_status(order), 2);
  EXPECT_EQ(s_.seat(show_, "B1"), "");
  EXPECT_EQ(s_.discrepancies(payment, "paid_after_cancel"), 1);
  // Another success for the same payment: still one open discrepancy.
  const auto again = make_callback(s_.id("late-2"), payment, CallbackKind::success);
  EXPECT_EQ(store_.process(again).result, CallbackResult::discrepancy);
  EXPECT_EQ(s_.discrepancies(payment, "paid_after_cancel"), 1);
}

TEST_F(CallbackStoreTest, CancelledOrderWithPendingPaymentIsADiscrepancy) {
  const auto payment = s_.id("pay-c");
  const auto order = s_.id("order-c");
  s_.create_order(order, show_, {"B1"}, 5000, 2);
  s_.create_payment(payment, order, "hmac", 5000, 0);
  const auto cb = make_callback(s_.id("late"), payment, CallbackKind::success);
  EXPECT_EQ(store_.process(cb).result, CallbackResult::discrepancy);
  EXPECT_EQ(s_.payment_status(payment), 0);
  EXPECT_EQ(s_.order_status(order), 2);
}

TEST_F(CallbackStoreTest, PaidAfterRefundRecordsADiscrepancy) {
  const auto payment = s_.id("pay-r");
  const auto order = s_.id("order-r");
  s_.create_order(order, show_, {"C1"}, 5000, 3);
  s_.create_payment(payment, order, "hmac", 5000, 4);
  const auto cb = make_callback(s_.id("late"), payment, CallbackKind::success);
  EXPECT_EQ(store_.process(cb).result, CallbackResult::discrepancy);
  EXPECT_EQ(s_.payment_status(payment), 4);
  EXPECT_EQ(s_.order_status(order), 3);
  EXPECT_EQ(s_.discrepancies(payment, "paid_after_refund"), 1);
  EXPECT_EQ(s_.discrepancies(payment, "paid_after_cancel"), 0);
}

TEST_F(CallbackStoreTest, ReplayOfTheOriginalSuccessAfterARefundIsNoDiscrepancy) {
  ASSERT_EQ(process("ok", CallbackKind::success).result, CallbackResult::applied);
  {
    pqxx::work tx(s_.pg());
    tx.exec_params("UPDATE payment_order SET status = 4 WHERE payment_no = $1", payment_);
    tx.exec_params("UPDATE order_info SET status = 3 WHERE order_no = $1", order_);
    tx.commit();
  }
  // The same callback again: the money was taken once, so nothing is owed to anyone.
  EXPECT_EQ(process("ok", CallbackKind::success).result, CallbackResult::duplicate);
  EXPECT_EQ(s_.discrepancies(payment_, "paid_after_refund"), 0);
  EXPECT_EQ(s_.log_row(s_.id("ok"))->duplicate_count, 1);
  // A different success callback after the refund is new money: a discrepancy.
  EXPECT_EQ(process("other", CallbackKind::success).result, CallbackResult::discrepancy);
  EXPECT_EQ(s_.discrepancies(payment_, "paid_after_refund"), 1);
}

TEST_F(CallbackStoreTest, SameIdWithDifferentContentIsAConflict) {
  ASSERT_EQ(process("cb1", CallbackKind::failure).result, CallbackResult::applied);
  const auto outcome = process("cb1", CallbackKind::success);
  EXPECT_EQ(outcome.result, CallbackResult::conflict);
  EXPECT_EQ(http::http_status(outcome.result), 409);
  EXPECT_EQ(s_.payment_status(payment_), 2);
  EXPECT_EQ(s_.log_row(s_.id("cb1"))->duplicate_count, 0);
  EXPECT_EQ(s_.log_row(s_.id("cb1"))->status, 2);
}

TEST_F(CallbackStoreTest, UnknownPaymentLeavesNoLogRow) {
  const auto cb = make_callback(s_.id("cb1"), s_.id("nope"), CallbackKind::success);
  EXPECT_EQ(store_.process(cb).result, CallbackResult::unknown_payment);
  EXPECT_FALSE(s_.log_row(s_.id("cb1")));
}

TEST_F(CallbackStoreTest, ChannelMismatchIsRejectedWithoutSideEffects) {
  const auto cb = make_callback(s_.id("cb1"), payment_, CallbackKind::success, 5000, "T1",
                                domain::Channel::alipay);
  EXPECT_EQ(store_.process(cb).result, CallbackResult::rejected_param);
  expect_untouched();
}

TEST_F(CallbackStoreTest, AmountMismatchIsRejectedWithoutSideEffects) {
  const auto payment = s_.id("pay-a");
  s_.create_pending(payment, s_.id("order-a"), show_, {"D1"}, 5000, "alipay");
  const auto wrong = make_callback(s_.id("cb1"), payment, CallbackKind::success, 4999, "T1",
                                   domain::Channel::alipay);
  EXPECT_EQ(store_.process(wrong).result, CallbackResult::rejected_param);
  EXPECT_EQ(s_.payment_status(payment), 0);
  EXPECT_FALSE(s_.log_row(s_.id("cb1")));
  const auto right = make_callback(s_.id("cb2"), payment, CallbackKind::success, 5000, "T1",
                                   domain::Channel::alipay);
  EXPECT_EQ(store_.process(right).result, CallbackResult::applied);
  EXPECT_EQ(s_.channel_trade_no(payment), "T1");
}

TEST_F(CallbackStoreTest, TradeNumberBoundToAnotherPaymentIsAConflict) {
  const auto first = s_.id("pay-t1");
  const auto second = s_.id("pay-t2");
  s_.create_pending(first, s_.id("order-t1"), show_, {"E1"}, 100, "alipay");
  s_.create_pending(second, s_.id("order-t2"), show_, {"E2"}, 100, "alipay");
  const auto trade = s_.id("trade");
  ASSERT_EQ(store_
                .process(make_callback(s_.id("n1"), first, CallbackKind::success, 100, trade,
                                       domain::Channel::alipay))
                .result,
            CallbackResult::applied);
  const auto outcome = store_.process(make_callback(s_.id("n2"), second, CallbackKind::success, 100,
                                                    trade, domain::Channel::alipay));
  EXPECT_EQ(outcome.result, CallbackResult::conflict);
  EXPECT_EQ(s_.payment_status(second), 0);
  EXPECT_EQ(s_.order_status(s_.id("order-t2")), 0);
  EXPECT_FALSE(s_.log_row(s_.id("n2")));
}

TEST_F(CallbackStoreTest, ReconnectsAfterTheConnectionIsKilled) {
  ASSERT_EQ(process("cb1", CallbackKind::failure).result, CallbackResult::applied);
  const int backend = pg_.connection().backendpid();
  {
    pqxx::work tx(s_.pg());
    EXPECT_TRUE(tx.exec_params1("SELECT pg_terminate_backend($1)", backend)[0].as<bool>());
    tx.commit();
  }
  EXPECT_EQ(process("cb2", CallbackKind::success).result, CallbackResult::applied);
  expect_paid();
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
