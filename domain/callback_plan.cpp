// The SPEC §6 decision for one callback, built on the state machines of domain/state_machine.
#include "domain/callback_plan.hpp"

#include <cassert>

#include "domain/state_machine.hpp"

namespace seatflow::domain {

std::optional<CallbackOutcome> screen_callback(const VerifiedCallback& callback,
                                               const LockedPayment* payment) {
  if (payment == nullptr) {
    return CallbackOutcome{CallbackResult::unknown_payment, "unknown payment"};
  }
  if (payment->channel != callback.channel) {
    return CallbackOutcome{CallbackResult::rejected_param, "channel does not match the payment"};
  }
  if (callback.amount_cents && *callback.amount_cents != payment->amount_cents) {
    return CallbackOutcome{CallbackResult::rejected_param, "amount does not match the payment"};
  }
  return std::nullopt;
}

int log_status_code(CallbackKind kind) {
  switch (kind) {
    case CallbackKind::success:
      return 1;
    case CallbackKind::failure:
      return 2;
    case CallbackKind::other:
      return 0;
  }
  return 0;
}

bool same_trade(std::string_view callback_trade_no, std::string_view payment_trade_no) {
  return !callback_trade_no.empty() && callback_trade_no == payment_trade_no;
}

CallbackPlan plan_callback(const VerifiedCallback& callback, const LockedPayment& payment,
                           const LockedOrder& order, LogFinding log) {
  CallbackPlan plan;
  if (log == LogFinding::conflict) {
    plan.outcome = {CallbackResult::conflict, "callback id reused with different content"};
    return plan;
  }
  const bool copy = log == LogFinding::copy;
  const auto decision = decide_callback(payment.status, order.status, callback.kind);
  CallbackResult result = CallbackResult::ignored;
  switch (decision.action) {
    case CallbackAction::discrepancy:
      // A copy of a logged callback is the same payment event, not new money: the gateway
      // replaying its original success after a refund records nothing. Neither does a success for
      // the very trade that paid this payment, whose log row retention removed.
      if (!copy && !same_trade(callback.channel_trade_no, payment.channel_trade_no)) {
        plan.discrepancy =
            DiscrepancyRecord{decision.discrepancy_kind, payment.status, order.status};
        result = CallbackResult::discrepancy;
      }
      break;
    case CallbackAction::apply_failure: {
      const auto to = next_payment_status(payment.status, PaymentEvent::failure_callback);
      assert(to && "decide_callback planned an illegal failure move");
      plan.payment_move = Move<PaymentStatus>{payment.status, *to};
      result = CallbackResult::applied;
      break;
    }
    case CallbackAction::apply_success: {
      const auto to = next_payment_status(payment.status, PaymentEvent::success_callback);
      assert(to && "decide_callback planned an illegal success move");
      plan.payment_move = Move<PaymentStatus>{payment.status, *to};
      if (order.status == OrderStatus::pending) {
        const auto paid = next_order_status(order.status, OrderEvent::paid);
        assert(paid);
        plan.order_move = Move<OrderStatus>{order.status, *paid};
      }
      // decide_callback sends a cancelled or refunded order to discrepancy, so the order is paid
      // now or was before.
      assert(order.status == OrderStatus::pending || order.status == OrderStatus::paid);
      plan.sell = true;
      result = CallbackResult::applied;
      break;
    }
    case CallbackAction::heal_paid:
      // Already paid: nothing moves, but the seats are sold again (the duplicate self-heal). Not
      // those of a partly refunded order: some of them went back with its refunds (SPEC §17).
      plan.sell = order.status == OrderStatus::paid;
      break;
    case CallbackAction::ignore:
      break;
  }
  plan.outcome = {copy ? CallbackResult::duplicate : result, {}};
  return plan;
}

}  // namespace seatflow::domain
