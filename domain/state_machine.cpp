// Pure state machines for payments, orders and seats, and the per-callback decision table.
#include "domain/state_machine.hpp"

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
  if (value < 0 || value > 3) {
    return std::nullopt;
  }
  return static_cast<OrderStatus>(value);
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
    case OrderEvent::refund:
      if (from == O::paid) {
        return O::refunded;
      }
      return std::nullopt;
  }
  return std::nullopt;
}

bool is_legal_payment_move(PaymentStatus from, PaymentStatus to) {
  for (auto event : {PaymentEvent::success_callback, PaymentEvent::failure_callback,
                     PaymentEvent::close, PaymentEvent::refund}) {
    if (next_payment_status(from, event) == to) {
      return true;
    }
  }
  return false;
}

bool is_legal_order_move(OrderStatus from, OrderStatus to) {
  for (auto event : {OrderEvent::paid, OrderEvent::cancel, OrderEvent::refund}) {
    if (next_order_status(from, event) == to) {
      return true;
    }
  }
  return false;
}

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
      if (seat.state == SeatState::locked && mine) {
        return Seat{};
      }
      // Sold seats and other orders' seats are never touched.
      return seat;
  }
  return std::nullopt;
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
