// Payment, order and seat state machines (SPEC §4) and the callback decision, as pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "domain/types.hpp"

namespace seatflow::domain {

enum class PaymentEvent : std::uint8_t { success_callback, failure_callback, close, refund };
enum class OrderEvent : std::uint8_t { paid, cancel, refund };

// The status a payment moves to on `event`, or nullopt when the move is illegal.
[[nodiscard]] std::optional<PaymentStatus> next_payment_status(PaymentStatus from,
                                                               PaymentEvent event);
// The status an order moves to on `event`, or nullopt when the move is illegal.
[[nodiscard]] std::optional<OrderStatus> next_order_status(OrderStatus from, OrderEvent event);

[[nodiscard]] bool is_legal_payment_move(PaymentStatus from, PaymentStatus to);
[[nodiscard]] bool is_legal_order_move(OrderStatus from, OrderStatus to);

// Seats: free, locked by an order, or sold to an order (SPEC §3).
enum class SeatState : std::uint8_t { free = 0, locked = 1, sold = 2 };
struct Seat {
  SeatState state = SeatState::free;
  std::string order_no;  // empty when free
  friend bool operator==(const Seat&, const Seat&) = default;
};
enum class SeatOp : std::uint8_t { lock, mark_sold, release };

// The seat after `op` by `order_no`, or nullopt when `op` must fail and change nothing.
// release of a seat the order does not hold leaves it as it is (success, no change).
[[nodiscard]] std::optional<Seat> next_seat(const Seat& seat, SeatOp op, std::string_view order_no);

// What one verified callback must do, given the current payment and order (SPEC §6 steps 2–3).
enum class CallbackAction : std::uint8_t {
  apply_success,  // payment CAS 0→1 or 2→1, order CAS 0→1, mark_sold
  heal_paid,      // already paid: re-run mark_sold (the duplicate self-heal), nothing moves
  apply_failure,  // payment CAS 0→2
  ignore,         // late or out-of-order: nothing moves
  discrepancy,    // money taken for a closed/refunded payment or cancelled/refunded order
};

struct CallbackDecision {
  CallbackAction action = CallbackAction::ignore;
  // The payment status the CAS expects (apply_success / apply_failure).
  std::optional<PaymentStatus> expected_payment;
  // For discrepancy: "paid_after_cancel" or "paid_after_refund".
  std::string_view discrepancy_kind;
};

[[nodiscard]] CallbackDecision decide_callback(PaymentStatus payment, OrderStatus order,
                                               CallbackKind kind);

}  // namespace seatflow::domain
