// SPEC §6 as a pure function: every case the spec and the seeds name, and the ones the integration
// tests found (a replayed callback never records a new discrepancy; alipay/wechat copies after a
// refund are recognised by trade number), as a table — no database, no Redis.
#include <gtest/gtest.h>

#include <array>
#include <optional>
#include <string>

#include "domain/callback_plan.hpp"
#include "domain/state_machine.hpp"

namespace seatflow::domain {
namespace {
namespace SEATFLOW_UNITY_ID {

using P = PaymentStatus;
using O = OrderStatus;
using K = CallbackKind;
using L = LogFinding;
using R = CallbackResult;

constexpr std::array kPayments = {P::pending, P::success, P::failed, P::closed, P::refunded};
constexpr std::array kOrders = {O::pending, O::paid, O::cancelled, O::refunded};

VerifiedCallback callback(K kind, std::string trade = {}) {
  VerifiedCallback cb;
  cb.callback_id = "cb-1";
  cb.payment_no = "pay-1";
  cb.channel = Channel::alipay;
  cb.kind = kind;
  cb.amount_cents = 5000;
  cb.channel_trade_no = std::move(trade);
  cb.payload_sha256 = "digest";
  return cb;
}

LockedPayment payment(P status, std::string trade = {}) {
  return {status, Channel::alipay, 5000, "ord-1", std::move(trade)};
}

LockedOrder order(O status) {
  return {status, "show-1", {"A1", "A2"}};
}

struct PlanRow {
  const char* name;
  P payment;
  O order;
  K kind;
  L log;
  const char* callback_trade;
  const char* payment_trade;
  R result;
  std::optional<Move<P>> payment_move;
  std::optional<Move<O>> order_move;
  std::string_view discrepancy;  // "" for none
  bool sell;
};

TEST(PlanCallback, EveryCaseOfSpecSix) {
  using MP = Move<P>;
  using MO = Move<O>;
  constexpr std::string_view kCancel = "paid_after_cancel";
  constexpr std::string_view kRefund = "paid_after_refund";
  const std::array<PlanRow, 21> table = {{
      {"first success",
       P::pending,
       O::pending,
       K::success,
       L::first_delivery,
       "T1",
       "",
       R::applied,
       MP{P::pending, P::success},
       MO{O::pending, O::paid},
       {},
       true},
      {"success after a failure (user retried)",
       P::failed,
       O::pending,
       K::success,
       L::first_delivery,
       "T1",
       "",
       R::applied,
       MP{P::failed, P::success},
       MO{O::pending, O::paid},
       {},
       true},
      {"success with the order already paid: no order move, seats sold",
       P::pending,
       O::paid,
       K::success,
       L::first_delivery,
       "T1",
       "",
       R::applied,
       MP{P::pending, P::success},
       std::nullopt,
       {},
       true},
      {"a duplicate of the applied success heals the seats",
       P::success,
       O::paid,
       K::success,
       L::copy,
       "T1",
       "T1",
       R::duplicate,
       std::nullopt,
       std::nullopt,
       {},
       true},
      {"a late TRADE_FINISHED (new id) on a paid payment",
       P::success,
       O::paid,
       K::success,
       L::first_delivery,
       "T1",
       "T1",
       R::ignored,
       std::nullopt,
       std::nullopt,
       {},
       true},
      {"success on a SUCCESS payment whose order is not paid sells nothing",
       P::success,
       O::pending,
       K::success,
       L::first_delivery,
       "T1",
       "T1",
       R::ignored,
       std::nullopt,
       std::nullopt,
       {},
       false},
      {"paid after cancel", P::closed, O::cancelled, K::success, L::first_delivery, "T1", "",
       R::discrepancy, std::nullopt, std::nullopt, kCancel, false},
      {"paid after cancel, the order cancelled first", P::pending, O::cancelled, K::success,
       L::first_delivery, "T1", "", R::discrepancy, std::nullopt, std::nullopt, kCancel, false},
      {"a replayed paid-after-cancel records no new discrepancy",
       P::closed,
       O::cancelled,
       K::success,
       L::copy,
       "T1",
       "",
       R::duplicate,
       std::nullopt,
       std::nullopt,
       {},
       false},
      {"paid after refund, another trade", P::refunded, O::refunded, K::success, L::first_delivery,
       "T2", "T1", R::discrepancy, std::nullopt, std::nullopt, kRefund, false},
      {"a copy of the paying trade after a refund (log row gone) is recognised",
       P::refunded,
       O::refunded,
       K::success,
       L::first_delivery,
       "T1",
       "T1",
       R::ignored,
       std::nullopt,
       std::nullopt,
       {},
       false},
      {"a replay of the original success after a refund",
       P::refunded,
       O::refunded,
       K::success,
       L::copy,
       "T1",
       "T1",
       R::duplicate,
       std::nullopt,
       std::nullopt,
       {},
       false},
      {"no trade number (hmac) after a refund is new money", P::refunded, O::refunded, K::success,
       L::first_delivery, "", "", R::discrepancy, std::nullopt, std::nullopt, kRefund, false},
      {"first failure",
       P::pending,
       O::pending,
       K::failure,
       L::first_delivery,
       "",
       "",
       R::applied,
       MP{P::pending, P::failed},
       std::nullopt,
       {},
       false},
      {"a failure after a failure",
       P::failed,
       O::pending,
       K::failure,
       L::first_delivery,
       "",
       "",
       R::ignored,
       std::nullopt,
       std::nullopt,
       {},
       false},
      {"a failure after success changes nothing",
       P::success,
       O::paid,
       K::failure,
       L::first_delivery,
       "",
       "",
       R::ignored,
       std::nullopt,
       std::nullopt,
       {},
       false},
      {"a failure after close",
       P::closed,
       O::cancelled,
       K::failure,
       L::first_delivery,
       "",
       "",
       R::ignored,
       std::nullopt,
       std::nullopt,
       {},
       false},
      {"a duplicate walks the same path as a first delivery",
       P::pending,
       O::pending,
       K::failure,
       L::copy,
       "",
       "",
       R::duplicate,
       MP{P::pending, P::failed},
       std::nullopt,
       {},
       false},
      {"a state the channel reports and SeatFlow ignores",
       P::pending,
       O::pending,
       K::other,
       L::first_delivery,
       "",
       "",
       R::ignored,
       std::nullopt,
       std::nullopt,
       {},
       false},
      {"same callback id, other content",
       P::pending,
       O::pending,
       K::success,
       L::conflict,
       "T1",
       "",
       R::conflict,
       std::nullopt,
       std::nullopt,
       {},
       false},
      {"a conflict on a paid payment sells nothing",
       P::success,
       O::paid,
       K::success,
       L::conflict,
       "T1",
       "T1",
       R::conflict,
       std::nullopt,
       std::nullopt,
       {},
       false},
  }};
  for (const auto& row : table) {
    SCOPED_TRACE(row.name);
    const auto plan =
        plan_callback(callback(row.kind, row.callback_trade),
                      payment(row.payment, row.payment_trade), order(row.order), row.log);
    EXPECT_EQ(plan.outcome.result, row.result);
    EXPECT_EQ(plan.payment_move, row.payment_move);
    EXPECT_EQ(plan.order_move, row.order_move);
    EXPECT_EQ(plan.discrepancy ? plan.discrepancy->kind : std::string_view(), row.discrepancy);
    if (plan.discrepancy) {
      EXPECT_EQ(plan.discrepancy->payment_status, row.payment);
      EXPECT_EQ(plan.discrepancy->order_status, row.order);
    }
    EXPECT_EQ(plan.sell, row.sell);
  }
}

// Whatever the rows and the log say, a plan only makes legal moves from the locked statuses, never
// resurrects a finished order, and sells only seats of an order that is or becomes PAID.
TEST(PlanCallback, EveryPlanMovesLegallyFromTheLockedRows) {
  for (const auto p : kPayments) {
    for (const auto o : kOrders) {
      for (const auto kind : {K::success, K::failure, K::other}) {
        for (const auto log : {L::first_delivery, L::copy, L::conflict}) {
          SCOPED_TRACE(std::to_string(static_cast<int>(p)) + "/" +
                       std::to_string(static_cast<int>(o)) + "/" +
                       std::to_string(static_cast<int>(kind)) + "/" +
                       std::to_string(static_cast<int>(log)));
          const auto plan = plan_callback(callback(kind, "T9"), payment(p), order(o), log);
          if (plan.payment_move) {
            EXPECT_EQ(plan.payment_move->from, p);
            EXPECT_TRUE(is_legal_payment_move(p, plan.payment_move->to));
          }
          if (plan.order_move) {
            EXPECT_EQ(plan.order_move->from, o);
            EXPECT_TRUE(is_legal_order_move(o, plan.order_move->to));
            // An order moves only together with its payment's move into SUCCESS (SPEC §4).
            ASSERT_TRUE(plan.payment_move.has_value());
            EXPECT_EQ(plan.payment_move->to, P::success);
          }
          if (o == O::cancelled || o == O::refunded) {
            EXPECT_FALSE(plan.order_move.has_value());
            EXPECT_FALSE(plan.sell);
          }
          if (plan.sell) {
            EXPECT_TRUE(o == O::paid || plan.order_move.has_value());
          }
          if (log == L::conflict) {
            EXPECT_EQ(plan.outcome.result, R::conflict);
            EXPECT_FALSE(plan.payment_move || plan.order_move || plan.discrepancy || plan.sell);
          }
          if (log == L::copy) {
            EXPECT_EQ(plan.outcome.result, R::duplicate);
            EXPECT_FALSE(plan.discrepancy.has_value());
          }
        }
      }
    }
  }
}

TEST(ScreenCallback, RejectionsLeaveNothingBehind) {
  const auto pay = payment(P::pending);
  EXPECT_EQ(screen_callback(callback(K::success), nullptr)->result, R::unknown_payment);
  auto other_channel = callback(K::success);
  other_channel.channel = Channel::wechat;
  EXPECT_EQ(screen_callback(other_channel, &pay)->result, R::rejected_param);
  auto other_amount = callback(K::success);
  other_amount.amount_cents = 4999;
  EXPECT_EQ(screen_callback(other_amount, &pay)->result, R::rejected_param);
  EXPECT_EQ(screen_callback(other_amount, &pay)->detail, "amount does not match the payment");
  auto no_amount = callback(K::success);
  no_amount.amount_cents.reset();  // dialects that carry none (hmac)
  EXPECT_FALSE(screen_callback(no_amount, &pay).has_value());
  EXPECT_FALSE(screen_callback(callback(K::success), &pay).has_value());
}

TEST(LogStatusCode, MatchesTheCallbackKind) {
  EXPECT_EQ(log_status_code(K::success), 1);
  EXPECT_EQ(log_status_code(K::failure), 2);
  EXPECT_EQ(log_status_code(K::other), 0);
}

TEST(SameTrade, NeedsATradeNumberOnBothSides) {
  EXPECT_TRUE(same_trade("T1", "T1"));
  EXPECT_FALSE(same_trade("T1", "T2"));
  EXPECT_FALSE(same_trade("", ""));
  EXPECT_FALSE(same_trade("T1", ""));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::domain
