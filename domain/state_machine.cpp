// Pure state machines for payments, orders, refunds and seats, and the per-callback decision table.
#include "domain/state_machine.hpp"

#include <cassert>
#include <utility>

namespace seatflow::domain {

std::string_view to_string(Channel channel) {
  switch (channel) {
    case Channel::hmac:
      return "hmac";
    case Channel::alipay:
      return "alipay";
    case Channel::wechat:
      return "wechat";
    case Channel::stripe:
      return "stripe";
    case Channel::standard:
      return "standard";
  }
  return "unknown";
}

std::optional<Channel> parse_channel(std::string_view name) {
  if (name == "hmac") {
    return Channel::hmac;
  }
  if (name == "alipay") {
    return Channel::alipay;
  }
  if (name == "wechat") {
    return Channel::wechat;
  }
  if (name == "stripe") {
    return Channel::stripe;
  }
  if (name == "standard") {
    return Channel::standard;
  }
  return std::nullopt;
}

std::optional<PaymentStatus> payment_status_from_int(int value) {
  if (value < 0 || value > 4) {
    return std::nullopt;
  }
  return static_cast<PaymentStatus>(value);
}

std::optional<OrderStatus> order_status_from_int(int value) {
  if (value < 0 || value > 4) {
    return std::nullopt;
  }
  return static_cast<OrderStatus>(value);
}

std::optional<RefundStatus> refund_status_from_int(int value) {
  if (value < 0 || value > 4) {
    return std::nullopt;
  }
  return static_cast<RefundStatus>(value);
}

std::optional<PaymentStatus> next_payment_status(PaymentStatus from, PaymentEvent event) {
  using P = PaymentStatus;
  switch (event) {
    case PaymentEvent::success_callback:
      // 0→1, and 2→1 when the user retried after a failure.
      if (from == P::pending || from == P::failed) {
        return P::success;
      }
      return std::nullopt;
    case PaymentEvent::failure_callback:
      if (from == P::pending) {
        return P::failed;
      }
      return std::nullopt;
    case PaymentEvent::close:
      if (from == P::pending || from == P::failed) {
        return P::closed;
      }
      return std::nullopt;
    case PaymentEvent::refund:
      if (from == P::success) {
        return P::refunded;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<OrderStatus> next_order_status(OrderStatus from, OrderEvent event) {
  using O = OrderStatus;
  switch (event) {
    case OrderEvent::paid:
      if (from == O::pending) {
        return O::paid;
      }
      return std::nullopt;
    case OrderEvent::cancel:
      if (from == O::pending) {
        return O::cancelled;
      }
      return std::nullopt;
    case OrderEvent::partial_refund:
      if (from == O::paid || from == O::partially_refunded) {
        return O::partially_refunded;
      }
      return std::nullopt;
    case OrderEvent::refund:
      if (from == O::paid || from == O::partially_refunded) {
        return O::refunded;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

std::optional<RefundStatus> next_refund_status(RefundStatus from, RefundEvent event) {
  using R = RefundStatus;
  switch (event) {
    case RefundEvent::accept:
      if (from == R::pending) {
        return R::processing;
      }
      return std::nullopt;
    case RefundEvent::succeed:
    case RefundEvent::fail:
      // Done at once (from PENDING), or after the gateway accepted it, or after it was ABNORMAL.
      if (from == R::pending || from == R::processing || from == R::abnormal) {
        return event == RefundEvent::succeed ? R::succeeded : R::failed;
      }
      return std::nullopt;
    case RefundEvent::abnormal:
      if (from == R::processing) {
        return R::abnormal;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

namespace {

// True when some event of `events` moves `from` to `to` through `next`.
template <class Status, class Events, class Next>
bool is_legal_move(Status from, Status to, const Events& events, Next next) {
  for (const auto event : events) {
    if (next(from, event) == to) {
      return true;
    }
  }
  return false;
}

// `event`'s move over every status of `all`, in code order.
template <class Status, std::size_t N, class Event, class Next>
Transition<Status> transition_of(const std::array<Status, N>& all, Event event, Next next) {
  std::vector<Status> from;
  std::optional<Status> to;
  for (const auto status : all) {
    if (const auto moved = next(status, event)) {
      // One CAS statement sets one status: every legal source must move to the same one.
      assert(!to || *to == *moved);
      to = moved;
      from.push_back(status);
    }
  }
  assert(to && "every event is legal from some status");
  return {std::move(from), *to};
}

}  // namespace

bool is_legal_payment_move(PaymentStatus from, PaymentStatus to) {
  return is_legal_move(from, to, kPaymentEvents, next_payment_status);
}

bool is_legal_order_move(OrderStatus from, OrderStatus to) {
  return is_legal_move(from, to, kOrderEvents, next_order_status);
}

bool is_legal_refund_move(RefundStatus from, RefundStatus to) {
  return is_legal_move(from, to, kRefundEvents, next_refund_status);
}

bool is_final(RefundStatus status) {
  for (const auto event : kRefundEvents) {
    if (next_refund_status(status, event)) {
      return false;
    }
  }
  return true;
}

Transition<PaymentStatus> payment_transition(PaymentEvent event) {
  return transition_of(kPaymentStatuses, event, next_payment_status);
}

Transition<OrderStatus> order_transition(OrderEvent event) {
  return transition_of(kOrderStatuses, event, next_order_status);
}

Transition<RefundStatus> refund_transition(RefundEvent event) {
  return transition_of(kRefundStatuses, event, next_refund_status);
}

bool money_taken(PaymentStatus status) {
  return status == PaymentStatus::success || status == PaymentStatus::refunded;
}

bool is_legal_status_pair(std::optional<PaymentStatus> payment, OrderStatus order) {
  using P = PaymentStatus;
  using O = OrderStatus;
  if (!payment) {
    return order == O::pending || order == O::cancelled;
  }
  switch (*payment) {
    case P::pending:
    case P::failed:
      return order == O::pending;
    case P::success:
      return order == O::paid || order == O::partially_refunded;
    case P::closed:
      return order == O::cancelled;
    case P::refunded:
      return order == O::refunded;
  }
  return false;
}

SeatState seat_state_of(OrderStatus status) {
  switch (status) {
    case OrderStatus::pending:
      return SeatState::locked;
    case OrderStatus::paid:
    case OrderStatus::partially_refunded:
      return SeatState::sold;
    case OrderStatus::cancelled:
    case OrderStatus::refunded:
      break;
  }
  return SeatState::free;
}

namespace {

// The ops that never fail: each either moves a seat of the order or leaves the seat as it is.
Seat next_seat_unrefused(const Seat& seat, SeatOp op, std::string_view order_no) {
  const bool mine = seat.state != SeatState::free && seat.order_no == order_no;
  switch (op) {
    case SeatOp::release:
      // Sold seats and other orders' seats are never touched.
      return seat.state == SeatState::locked && mine ? Seat{} : seat;
    case SeatOp::release_sold:
      return seat.state == SeatState::sold && mine ? Seat{} : seat;
    case SeatOp::repair_sold:
      return Seat{SeatState::sold, std::string(order_no)};
    case SeatOp::repair_locked:
      // The order's own sale is never taken back (never 2→1).
      return mine ? seat : Seat{SeatState::locked, std::string(order_no)};
    case SeatOp::repair_free:
      return mine ? Seat{} : seat;
    case SeatOp::lock:
    case SeatOp::mark_sold:
      break;
  }
  assert(false && "lock and mark_sold can fail: next_seat answers them");
  return seat;
}

}  // namespace

std::optional<Seat> next_seat(const Seat& seat, SeatOp op, std::string_view order_no) {
  const bool mine = seat.order_no == order_no;
  switch (op) {
    case SeatOp::lock:
      if (seat.state == SeatState::free || (seat.state == SeatState::locked && mine)) {
        return Seat{SeatState::locked, std::string(order_no)};
      }
      return std::nullopt;
    case SeatOp::mark_sold:
      // 1:order → 2:order and 2:order stays; free → 2:order too, because only the order's own
      // claim in PostgreSQL (SPEC §9) lets the caller sell it; never another order's seat.
      if (seat.state == SeatState::free || mine) {
        return Seat{SeatState::sold, std::string(order_no)};
      }
      return std::nullopt;
    case SeatOp::release:
    case SeatOp::release_sold:
    case SeatOp::repair_sold:
    case SeatOp::repair_locked:
    case SeatOp::repair_free:
      break;
  }
  return next_seat_unrefused(seat, op, order_no);
}

CallbackDecision decide_callback(PaymentStatus payment, OrderStatus order, CallbackKind kind) {
  using P = PaymentStatus;
  using O = OrderStatus;
  switch (kind) {
    case CallbackKind::success:
      // Never resurrect: money taken for a refunded or cancelled business object is a discrepancy.
      if (payment == P::refunded || order == O::refunded) {
        return {CallbackAction::discrepancy, std::nullopt, "paid_after_refund"};
      }
      if (payment == P::closed || order == O::cancelled) {
        return {CallbackAction::discrepancy, std::nullopt, "paid_after_cancel"};
      }
      if (payment == P::pending || payment == P::failed) {
        return {CallbackAction::apply_success, payment, {}};
      }
      return {CallbackAction::heal_paid, std::nullopt, {}};
    case CallbackKind::failure:
      if (payment == P::pending) {
        return {CallbackAction::apply_failure, P::pending, {}};
      }
      return {CallbackAction::ignore, std::nullopt, {}};
    case CallbackKind::other:
      return {CallbackAction::ignore, std::nullopt, {}};
  }
  return {CallbackAction::ignore, std::nullopt, {}};
}

}  // namespace seatflow::domain
