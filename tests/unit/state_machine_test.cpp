// Unit tests for the payment, order, refund and seat state machines and the callback decision
// table.
#include "domain/state_machine.hpp"

#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace seatflow::domain {
namespace {
namespace SEATFLOW_UNITY_ID {

using P = PaymentStatus;
using O = OrderStatus;
using PE = PaymentEvent;
using OE = OrderEvent;
using R = RefundStatus;
using RE = RefundEvent;
using A = CallbackAction;

constexpr std::array kPayments = {P::pending, P::success, P::failed, P::closed, P::refunded};
constexpr std::array kOrders = {O::pending, O::paid, O::cancelled, O::refunded,
                                O::partially_refunded};
constexpr std::array kRefunds = {R::pending, R::processing, R::succeeded, R::failed, R::abnormal};
constexpr std::array kPaymentEvents = {PE::success_callback, PE::failure_callback, PE::close,
                                       PE::refund};
constexpr std::array kOrderEvents = {OE::paid, OE::cancel, OE::partial_refund, OE::refund};
constexpr std::array kRefundEvents = {RE::accept, RE::succeed, RE::fail, RE::abnormal};

int as_int(P status) {
  return static_cast<int>(status);
}
int as_int(O status) {
  return static_cast<int>(status);
}
int as_int(R status) {
  return static_cast<int>(status);
}

// ---- Payment -------------------------------------------------------------------------------

TEST(PaymentStateMachine, LegalMovesAreExactlyTheSpecList) {
  // SPEC §4: 0→1, 0→2, 2→1, 0→3, 2→3, 1→4. Nothing else, including staying put.
  const std::set<std::pair<int, int>> legal = {{0, 1}, {0, 2}, {2, 1}, {0, 3}, {2, 3}, {1, 4}};
  int legal_seen = 0;
  for (const auto from : kPayments) {
    for (const auto to : kPayments) {
      const bool expected = legal.contains({as_int(from), as_int(to)});
      EXPECT_EQ(is_legal_payment_move(from, to), expected)
          << "payment " << as_int(from) << "→" << as_int(to);
      legal_seen += is_legal_payment_move(from, to) ? 1 : 0;
    }
  }
  EXPECT_EQ(legal_seen, 6);
}

struct PaymentStep {
  P from;
  PE event;
  std::optional<P> to;
};

TEST(PaymentStateMachine, NextStatusForEveryStatusAndEvent) {
  const std::array<PaymentStep, 20> table = {{
      {P::pending, PE::success_callback, P::success},
      {P::pending, PE::failure_callback, P::failed},
      {P::pending, PE::close, P::closed},
      {P::pending, PE::refund, std::nullopt},
      {P::success, PE::success_callback, std::nullopt},
      {P::success, PE::failure_callback, std::nullopt},
      {P::success, PE::close, std::nullopt},
      {P::success, PE::refund, P::refunded},
      {P::failed, PE::success_callback, P::success},
      {P::failed, PE::failure_callback, std::nullopt},
      {P::failed, PE::close, P::closed},
      {P::failed, PE::refund, std::nullopt},
      {P::closed, PE::success_callback, std::nullopt},
      {P::closed, PE::failure_callback, std::nullopt},
      {P::closed, PE::close, std::nullopt},
      {P::closed, PE::refund, std::nullopt},
      {P::refunded, PE::success_callback, std::nullopt},
      {P::refunded, PE::failure_callback, std::nullopt},
      {P::refunded, PE::close, std::nullopt},
      {P::refunded, PE::refund, std::nullopt},
  }};
  std::set<std::pair<int, int>> covered;
  for (const auto& step : table) {
    SCOPED_TRACE("from " + std::to_string(as_int(step.from)) + " event " +
                 std::to_string(static_cast<int>(step.event)));
    EXPECT_EQ(next_payment_status(step.from, step.event), step.to);
    covered.insert({as_int(step.from), static_cast<int>(step.event)});
  }
  EXPECT_EQ(covered.size(), kPayments.size() * kPaymentEvents.size());
}

TEST(PaymentStateMachine, EveryEventResultIsALegalMove) {
  for (const auto from : kPayments) {
    for (const auto event : kPaymentEvents) {
      const auto to = next_payment_status(from, event);
      if (to) {
        EXPECT_TRUE(is_legal_payment_move(from, *to));
      }
    }
  }
}

TEST(PaymentStateMachine, StatusFromIntAcceptsOnlyStoredValues) {
  EXPECT_EQ(payment_status_from_int(-1), std::nullopt);
  EXPECT_EQ(payment_status_from_int(5), std::nullopt);
  for (int value = 0; value <= 4; ++value) {
    const auto status = payment_status_from_int(value);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(as_int(*status), value);
  }
}

// ---- Order ---------------------------------------------------------------------------------

TEST(OrderStateMachine, LegalMovesAreExactlyTheSpecList) {
  // SPEC §4: 0→1 paid, 0→2 cancelled, 1→4 and 4→4 partly refunded, 1→3 and 4→3 refunded.
  const std::set<std::pair<int, int>> legal = {{0, 1}, {0, 2}, {1, 4}, {4, 4}, {1, 3}, {4, 3}};
  int legal_seen = 0;
  for (const auto from : kOrders) {
    for (const auto to : kOrders) {
      const bool expected = legal.contains({as_int(from), as_int(to)});
      EXPECT_EQ(is_legal_order_move(from, to), expected)
          << "order " << as_int(from) << "→" << as_int(to);
      legal_seen += is_legal_order_move(from, to) ? 1 : 0;
    }
  }
  EXPECT_EQ(legal_seen, 6);
}

struct OrderStep {
  O from;
  OE event;
  std::optional<O> to;
};

TEST(OrderStateMachine, NextStatusForEveryStatusAndEvent) {
  const std::array<OrderStep, 20> table = {{
      {O::pending, OE::paid, O::paid},
      {O::pending, OE::cancel, O::cancelled},
      {O::pending, OE::partial_refund, std::nullopt},
      {O::pending, OE::refund, std::nullopt},
      {O::paid, OE::paid, std::nullopt},
      {O::paid, OE::cancel, std::nullopt},
      {O::paid, OE::partial_refund, O::partially_refunded},
      {O::paid, OE::refund, O::refunded},
      {O::cancelled, OE::paid, std::nullopt},
      {O::cancelled, OE::cancel, std::nullopt},
      {O::cancelled, OE::partial_refund, std::nullopt},
      {O::cancelled, OE::refund, std::nullopt},
      {O::refunded, OE::paid, std::nullopt},
      {O::refunded, OE::cancel, std::nullopt},
      {O::refunded, OE::partial_refund, std::nullopt},
      {O::refunded, OE::refund, std::nullopt},
      {O::partially_refunded, OE::paid, std::nullopt},
      {O::partially_refunded, OE::cancel, std::nullopt},
      {O::partially_refunded, OE::partial_refund, O::partially_refunded},
      {O::partially_refunded, OE::refund, O::refunded},
  }};
  std::set<std::pair<int, int>> covered;
  for (const auto& step : table) {
    SCOPED_TRACE("from " + std::to_string(as_int(step.from)) + " event " +
                 std::to_string(static_cast<int>(step.event)));
    EXPECT_EQ(next_order_status(step.from, step.event), step.to);
    covered.insert({as_int(step.from), static_cast<int>(step.event)});
  }
  EXPECT_EQ(covered.size(), kOrders.size() * kOrderEvents.size());
}

TEST(OrderStateMachine, StatusFromIntAcceptsOnlyStoredValues) {
  EXPECT_EQ(order_status_from_int(-1), std::nullopt);
  EXPECT_EQ(order_status_from_int(5), std::nullopt);
  for (int value = 0; value <= 4; ++value) {
    const auto status = order_status_from_int(value);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(as_int(*status), value);
  }
}

// ---- Refund --------------------------------------------------------------------------------

TEST(RefundStateMachine, LegalMovesAreExactlyTheSpecList) {
  // SPEC §4: 0→1|2|3, 1→2|3|4, 4→2|3. Nothing else, including staying put.
  const std::set<std::pair<int, int>> legal = {{0, 1}, {0, 2}, {0, 3}, {1, 2},
                                               {1, 3}, {1, 4}, {4, 2}, {4, 3}};
  int legal_seen = 0;
  for (const auto from : kRefunds) {
    for (const auto to : kRefunds) {
      const bool expected = legal.contains({as_int(from), as_int(to)});
      EXPECT_EQ(is_legal_refund_move(from, to), expected)
          << "refund " << as_int(from) << "→" << as_int(to);
      legal_seen += is_legal_refund_move(from, to) ? 1 : 0;
    }
  }
  EXPECT_EQ(legal_seen, 8);
}

struct RefundStep {
  R from;
  RE event;
  std::optional<R> to;
};

TEST(RefundStateMachine, NextStatusForEveryStatusAndEvent) {
  const std::array<RefundStep, 20> table = {{
      {R::pending, RE::accept, R::processing},   {R::pending, RE::succeed, R::succeeded},
      {R::pending, RE::fail, R::failed},         {R::pending, RE::abnormal, std::nullopt},
      {R::processing, RE::accept, std::nullopt}, {R::processing, RE::succeed, R::succeeded},
      {R::processing, RE::fail, R::failed},      {R::processing, RE::abnormal, R::abnormal},
      {R::succeeded, RE::accept, std::nullopt},  {R::succeeded, RE::succeed, std::nullopt},
      {R::succeeded, RE::fail, std::nullopt},    {R::succeeded, RE::abnormal, std::nullopt},
      {R::failed, RE::accept, std::nullopt},     {R::failed, RE::succeed, std::nullopt},
      {R::failed, RE::fail, std::nullopt},       {R::failed, RE::abnormal, std::nullopt},
      {R::abnormal, RE::accept, std::nullopt},   {R::abnormal, RE::succeed, R::succeeded},
      {R::abnormal, RE::fail, R::failed},        {R::abnormal, RE::abnormal, std::nullopt},
  }};
  std::set<std::pair<int, int>> covered;
  for (const auto& step : table) {
    SCOPED_TRACE("from " + std::to_string(as_int(step.from)) + " event " +
                 std::to_string(static_cast<int>(step.event)));
    EXPECT_EQ(next_refund_status(step.from, step.event), step.to);
    covered.insert({as_int(step.from), static_cast<int>(step.event)});
  }
  EXPECT_EQ(covered.size(), kRefunds.size() * kRefundEvents.size());
}

TEST(RefundStateMachine, SucceededAndFailedAreFinal) {
  for (const auto status : kRefunds) {
    const bool final = status == R::succeeded || status == R::failed;
    EXPECT_EQ(is_final(status), final) << as_int(status);
  }
}

TEST(RefundStateMachine, StatusFromIntAcceptsOnlyStoredValues) {
  EXPECT_EQ(refund_status_from_int(-1), std::nullopt);
  EXPECT_EQ(refund_status_from_int(5), std::nullopt);
  for (int value = 0; value <= 4; ++value) {
    const auto status = refund_status_from_int(value);
    ASSERT_TRUE(status.has_value());
    EXPECT_EQ(as_int(*status), value);
  }
  EXPECT_EQ(kRefundStatuses, kRefunds);
}

// ---- Seat ----------------------------------------------------------------------------------

constexpr std::string_view kMine = "O-mine";
const Seat kFree{SeatState::free, ""};
const Seat kLockedMine{SeatState::locked, std::string(kMine)};
const Seat kLockedOther{SeatState::locked, "O-other"};
const Seat kSoldMine{SeatState::sold, std::string(kMine)};
const Seat kSoldOther{SeatState::sold, "O-other"};

struct SeatStep {
  const char* name;
  Seat before;
  SeatOp op;
  std::optional<Seat> after;  // nullopt: the op fails and changes nothing
};

TEST(SeatStateMachine, EveryStateOwnerAndOperation) {
  const std::array<SeatStep, 15> table = {{
      {"free lock", kFree, SeatOp::lock, kLockedMine},
      {"free mark_sold (a seat Redis lost; the claim is the order's)", kFree, SeatOp::mark_sold,
       kSoldMine},
      {"free release", kFree, SeatOp::release, kFree},
      {"locked-mine lock (idempotent)", kLockedMine, SeatOp::lock, kLockedMine},
      {"locked-mine mark_sold", kLockedMine, SeatOp::mark_sold, kSoldMine},
      {"locked-mine release", kLockedMine, SeatOp::release, kFree},
      {"locked-other lock", kLockedOther, SeatOp::lock, std::nullopt},
      {"locked-other mark_sold", kLockedOther, SeatOp::mark_sold, std::nullopt},
      {"locked-other release", kLockedOther, SeatOp::release, kLockedOther},
      {"sold-mine lock", kSoldMine, SeatOp::lock, std::nullopt},
      {"sold-mine mark_sold (idempotent)", kSoldMine, SeatOp::mark_sold, kSoldMine},
      {"sold-mine release", kSoldMine, SeatOp::release, kSoldMine},
      {"sold-other lock", kSoldOther, SeatOp::lock, std::nullopt},
      {"sold-other mark_sold", kSoldOther, SeatOp::mark_sold, std::nullopt},
      {"sold-other release", kSoldOther, SeatOp::release, kSoldOther},
  }};
  for (const auto& step : table) {
    SCOPED_TRACE(step.name);
    const auto after = next_seat(step.before, step.op, kMine);
    ASSERT_EQ(after.has_value(), step.after.has_value());
    if (after) {
      EXPECT_EQ(after->state, step.after->state);
      EXPECT_EQ(after->order_no, step.after->order_no);
    }
  }
}

TEST(SeatStateMachine, ReleasedSeatHasNoOwner) {
  const auto after = next_seat(kLockedMine, SeatOp::release, kMine);
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->state, SeatState::free);
  EXPECT_TRUE(after->order_no.empty());
}

// The refund's release and the reconciler's repairs never fail: each moves the order's seat or
// leaves the seat as it is.
TEST(SeatStateMachine, ReleaseSoldAndRepairsForEveryStateAndOwner) {
  const std::array<SeatStep, 20> table = {{
      {"free release_sold", kFree, SeatOp::release_sold, kFree},
      {"locked-mine release_sold (a lock is release's)", kLockedMine, SeatOp::release_sold,
       kLockedMine},
      {"locked-other release_sold", kLockedOther, SeatOp::release_sold, kLockedOther},
      {"sold-mine release_sold", kSoldMine, SeatOp::release_sold, kFree},
      {"sold-other release_sold", kSoldOther, SeatOp::release_sold, kSoldOther},
      {"free repair_sold", kFree, SeatOp::repair_sold, kSoldMine},
      {"locked-mine repair_sold", kLockedMine, SeatOp::repair_sold, kSoldMine},
      {"locked-other repair_sold (the claim is the order's)", kLockedOther, SeatOp::repair_sold,
       kSoldMine},
      {"sold-mine repair_sold", kSoldMine, SeatOp::repair_sold, kSoldMine},
      {"sold-other repair_sold (the claim is the order's)", kSoldOther, SeatOp::repair_sold,
       kSoldMine},
      {"free repair_locked", kFree, SeatOp::repair_locked, kLockedMine},
      {"locked-mine repair_locked", kLockedMine, SeatOp::repair_locked, kLockedMine},
      {"locked-other repair_locked", kLockedOther, SeatOp::repair_locked, kLockedMine},
      {"sold-mine repair_locked (never 2→1)", kSoldMine, SeatOp::repair_locked, kSoldMine},
      {"sold-other repair_locked", kSoldOther, SeatOp::repair_locked, kLockedMine},
      {"free repair_free", kFree, SeatOp::repair_free, kFree},
      {"locked-mine repair_free", kLockedMine, SeatOp::repair_free, kFree},
      {"locked-other repair_free", kLockedOther, SeatOp::repair_free, kLockedOther},
      {"sold-mine repair_free", kSoldMine, SeatOp::repair_free, kFree},
      {"sold-other repair_free", kSoldOther, SeatOp::repair_free, kSoldOther},
  }};
  for (const auto& step : table) {
    SCOPED_TRACE(step.name);
    EXPECT_EQ(next_seat(step.before, step.op, kMine), step.after);
  }
}

TEST(SeatStateMachine, AnOrdersSeatsFollowItsStatus) {
  EXPECT_EQ(seat_state_of(O::pending), SeatState::locked);
  EXPECT_EQ(seat_state_of(O::paid), SeatState::sold);
  EXPECT_EQ(seat_state_of(O::cancelled), SeatState::free);
  EXPECT_EQ(seat_state_of(O::refunded), SeatState::free);
  // The seats it kept: its refunded seats' claims are gone (SPEC §17).
  EXPECT_EQ(seat_state_of(O::partially_refunded), SeatState::sold);
}

// ---- Derived tables ------------------------------------------------------------------------

TEST(Transitions, EachEventsSourcesAndTargetAreNextStatusOverEveryStatus) {
  for (const auto event : kPaymentEvents) {
    const auto move = payment_transition(event);
    std::vector<P> from;
    for (const auto status : kPayments) {
      if (const auto to = next_payment_status(status, event)) {
        from.push_back(status);
        EXPECT_EQ(*to, move.to);
      }
    }
    EXPECT_EQ(move.from, from);
  }
  for (const auto event : kOrderEvents) {
    const auto move = order_transition(event);
    std::vector<O> from;
    for (const auto status : kOrders) {
      if (const auto to = next_order_status(status, event)) {
        from.push_back(status);
        EXPECT_EQ(*to, move.to);
      }
    }
    EXPECT_EQ(move.from, from);
  }
  for (const auto event : kRefundEvents) {
    const auto move = refund_transition(event);
    std::vector<R> from;
    for (const auto status : kRefunds) {
      if (const auto to = next_refund_status(status, event)) {
        from.push_back(status);
        EXPECT_EQ(*to, move.to);
      }
    }
    EXPECT_EQ(move.from, from);
  }
  // SPEC §4 as written: close 0/2→3, refund 1→4, cancel 0→2, order refund 1/4→3, order partial
  // refund 1/4→4, refund succeeded 0/1/4→2.
  EXPECT_EQ(payment_transition(PE::close).from, (std::vector{P::pending, P::failed}));
  EXPECT_EQ(payment_transition(PE::close).to, P::closed);
  EXPECT_EQ(payment_transition(PE::refund).from, (std::vector{P::success}));
  EXPECT_EQ(order_transition(OE::cancel).from, (std::vector{O::pending}));
  EXPECT_EQ(order_transition(OE::refund).to, O::refunded);
  EXPECT_EQ(order_transition(OE::refund).from, (std::vector{O::paid, O::partially_refunded}));
  EXPECT_EQ(order_transition(OE::partial_refund).from,
            (std::vector{O::paid, O::partially_refunded}));
  EXPECT_EQ(order_transition(OE::partial_refund).to, O::partially_refunded);
  EXPECT_EQ(refund_transition(RE::succeed).from,
            (std::vector{R::pending, R::processing, R::abnormal}));
  EXPECT_EQ(refund_transition(RE::accept).from, (std::vector{R::pending}));
  EXPECT_EQ(refund_transition(RE::abnormal).from, (std::vector{R::processing}));
}

TEST(Transitions, MoneyIsTakenOnSuccessAndStaysTakenAfterARefund) {
  const std::set<P> taken = {P::success, P::refunded};
  for (const auto status : kPayments) {
    EXPECT_EQ(money_taken(status), taken.contains(status)) << as_int(status);
  }
}

TEST(Transitions, LegalStatusPairsAreExactlyTheSpecList) {
  // SPEC §4: none/0/2 ↔ 0, 1 ↔ 1|4, 3 ↔ 2, 4 ↔ 3; an order without a payment is 0 or 2.
  const std::set<std::pair<int, int>> legal = {{-1, 0}, {-1, 2}, {0, 0}, {2, 0},
                                               {1, 1},  {1, 4},  {3, 2}, {4, 3}};
  for (const auto order : kOrders) {
    EXPECT_EQ(is_legal_status_pair(std::nullopt, order), legal.contains({-1, as_int(order)}));
    for (const auto payment : kPayments) {
      EXPECT_EQ(is_legal_status_pair(payment, order),
                legal.contains({as_int(payment), as_int(order)}))
          << as_int(payment) << " with " << as_int(order);
    }
  }
}

// ---- Callback decision ---------------------------------------------------------------------

struct DecisionRow {
  P payment;
  O order;
  A action;
  std::optional<P> expected_payment;
  std::string_view discrepancy;
};

void expect_decision(const DecisionRow& row, CallbackKind kind) {
  SCOPED_TRACE("payment " + std::to_string(as_int(row.payment)) + " order " +
               std::to_string(as_int(row.order)) + " kind " +
               std::to_string(static_cast<int>(kind)));
  const auto decision = decide_callback(row.payment, row.order, kind);
  EXPECT_EQ(decision.action, row.action);
  EXPECT_EQ(decision.expected_payment, row.expected_payment);
  EXPECT_EQ(decision.discrepancy_kind, row.discrepancy);
}

TEST(DecideCallback, SuccessForEveryPaymentAndOrder) {
  constexpr std::string_view kCancel = "paid_after_cancel";
  constexpr std::string_view kRefund = "paid_after_refund";
  const std::array<DecisionRow, 25> table = {{
      {P::pending, O::pending, A::apply_success, P::pending, {}},
      {P::pending, O::paid, A::apply_success, P::pending, {}},
      {P::pending, O::cancelled, A::discrepancy, std::nullopt, kCancel},
      {P::pending, O::refunded, A::discrepancy, std::nullopt, kRefund},
      {P::success, O::pending, A::heal_paid, std::nullopt, {}},
      {P::success, O::paid, A::heal_paid, std::nullopt, {}},
      {P::success, O::cancelled, A::discrepancy, std::nullopt, kCancel},
      {P::success, O::refunded, A::discrepancy, std::nullopt, kRefund},
      {P::failed, O::pending, A::apply_success, P::failed, {}},
      {P::failed, O::paid, A::apply_success, P::failed, {}},
      {P::failed, O::cancelled, A::discrepancy, std::nullopt, kCancel},
      {P::failed, O::refunded, A::discrepancy, std::nullopt, kRefund},
      {P::closed, O::pending, A::discrepancy, std::nullopt, kCancel},
      {P::closed, O::paid, A::discrepancy, std::nullopt, kCancel},
      {P::closed, O::cancelled, A::discrepancy, std::nullopt, kCancel},
      {P::closed, O::refunded, A::discrepancy, std::nullopt, kRefund},
      {P::refunded, O::pending, A::discrepancy, std::nullopt, kRefund},
      {P::refunded, O::paid, A::discrepancy, std::nullopt, kRefund},
      {P::refunded, O::cancelled, A::discrepancy, std::nullopt, kRefund},
      {P::refunded, O::refunded, A::discrepancy, std::nullopt, kRefund},
      // A partly refunded order keeps its payment SUCCESS: a success again is a duplicate.
      {P::pending, O::partially_refunded, A::apply_success, P::pending, {}},
      {P::success, O::partially_refunded, A::heal_paid, std::nullopt, {}},
      {P::failed, O::partially_refunded, A::apply_success, P::failed, {}},
      {P::closed, O::partially_refunded, A::discrepancy, std::nullopt, kCancel},
      {P::refunded, O::partially_refunded, A::discrepancy, std::nullopt, kRefund},
  }};
  for (const auto& row : table) {
    expect_decision(row, CallbackKind::success);
  }
}

TEST(DecideCallback, FailureMovesOnlyAPendingPayment) {
  for (const auto payment : kPayments) {
    for (const auto order : kOrders) {
      const bool pending = payment == P::pending;
      const DecisionRow row{payment,
                            order,
                            pending ? A::apply_failure : A::ignore,
                            pending ? std::optional<P>(P::pending) : std::nullopt,
                            {}};
      expect_decision(row, CallbackKind::failure);
    }
  }
}

TEST(DecideCallback, FailureAfterSuccessIsIgnored) {
  const auto decision = decide_callback(P::success, O::paid, CallbackKind::failure);
  EXPECT_EQ(decision.action, A::ignore);
  EXPECT_FALSE(decision.expected_payment.has_value());
}

TEST(DecideCallback, OtherKindIsAlwaysIgnored) {
  for (const auto payment : kPayments) {
    for (const auto order : kOrders) {
      expect_decision({payment, order, A::ignore, std::nullopt, {}}, CallbackKind::other);
    }
  }
}

TEST(DecideCallback, ApplyDecisionsExpectAStatusTheMoveIsLegalFrom) {
  for (const auto payment : kPayments) {
    for (const auto order : kOrders) {
      const auto success = decide_callback(payment, order, CallbackKind::success);
      if (success.action == A::apply_success) {
        ASSERT_TRUE(success.expected_payment.has_value());
        EXPECT_TRUE(is_legal_payment_move(*success.expected_payment, P::success));
      }
      const auto failure = decide_callback(payment, order, CallbackKind::failure);
      if (failure.action == A::apply_failure) {
        ASSERT_TRUE(failure.expected_payment.has_value());
        EXPECT_TRUE(is_legal_payment_move(*failure.expected_payment, P::failed));
      }
    }
  }
}

// ---- Channel names -------------------------------------------------------------------------

TEST(ChannelNames, RoundTripAndRejectUnknown) {
  for (const auto channel :
       {Channel::hmac, Channel::alipay, Channel::wechat, Channel::stripe, Channel::standard}) {
    EXPECT_EQ(parse_channel(to_string(channel)), channel);
  }
  EXPECT_EQ(to_string(Channel::hmac), "hmac");
  EXPECT_EQ(to_string(Channel::alipay), "alipay");
  EXPECT_EQ(to_string(Channel::wechat), "wechat");
  EXPECT_EQ(to_string(Channel::stripe), "stripe");
  EXPECT_EQ(to_string(Channel::standard), "standard");
  EXPECT_EQ(static_cast<std::size_t>(Channel::standard) + 1, kChannelCount);
  EXPECT_EQ(parse_channel("HMAC"), std::nullopt);
  EXPECT_EQ(parse_channel(""), std::nullopt);
  EXPECT_EQ(parse_channel("paypal"), std::nullopt);
  EXPECT_EQ(parse_channel("Stripe"), std::nullopt);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::domain
