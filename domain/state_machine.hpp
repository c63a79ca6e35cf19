// Payment, order, refund and seat state machines (SPEC §4) and the callback decision, as pure
// functions.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/types.hpp"

namespace seatflow::domain {

enum class PaymentEvent : std::uint8_t { success_callback, failure_callback, close, refund };
// An order's refunds (SPEC §17): partial_refund when some of its seats or money stays with the
// buyer (1→4, 4→4), refund when nothing does (1→3, 4→3).
enum class OrderEvent : std::uint8_t { paid, cancel, partial_refund, refund };
// What is learned about a refund (SPEC §17): the gateway accepted it (0→1), it succeeded
// (0|1|4→2), it failed (0|1|4→3), or the buyer's account could not take it (1→4).
enum class RefundEvent : std::uint8_t { accept, succeed, fail, abnormal };

inline constexpr std::array kPaymentEvents = {PaymentEvent::success_callback,
                                              PaymentEvent::failure_callback, PaymentEvent::close,
                                              PaymentEvent::refund};
inline constexpr std::array kOrderEvents = {OrderEvent::paid, OrderEvent::cancel,
                                            OrderEvent::partial_refund, OrderEvent::refund};
inline constexpr std::array kRefundEvents = {RefundEvent::accept, RefundEvent::succeed,
                                             RefundEvent::fail, RefundEvent::abnormal};

// The status a payment moves to on `event`, or nullopt when the move is illegal.
[[nodiscard]] std::optional<PaymentStatus> next_payment_status(PaymentStatus from,
                                                               PaymentEvent event);
// The status an order moves to on `event`, or nullopt when the move is illegal.
[[nodiscard]] std::optional<OrderStatus> next_order_status(OrderStatus from, OrderEvent event);
// The status a refund moves to on `event`, or nullopt when the move is illegal.
[[nodiscard]] std::optional<RefundStatus> next_refund_status(RefundStatus from, RefundEvent event);

[[nodiscard]] bool is_legal_payment_move(PaymentStatus from, PaymentStatus to);
[[nodiscard]] bool is_legal_order_move(OrderStatus from, OrderStatus to);
[[nodiscard]] bool is_legal_refund_move(RefundStatus from, RefundStatus to);
// SUCCEEDED and FAILED: no event moves a refund out of them.
[[nodiscard]] bool is_final(RefundStatus status);

// One event's move as a CAS statement writes it (persistence/stores/status_sql.hpp): the statuses
// the event is legal from, in code order, and the status it moves to, the same from each of them.
template <class Status>
struct Transition {
  std::vector<Status> from;
  Status to;
};
[[nodiscard]] Transition<PaymentStatus> payment_transition(PaymentEvent event);
[[nodiscard]] Transition<OrderStatus> order_transition(OrderEvent event);
[[nodiscard]] Transition<RefundStatus> refund_transition(RefundEvent event);

// True when the payment's money was taken: SUCCESS, or REFUNDED after it (the statuses whose row
// has paid_at).
[[nodiscard]] bool money_taken(PaymentStatus status);
// SPEC §4's pairs: a PENDING or FAILED payment goes with a PENDING order, SUCCESS with PAID or
// PARTIALLY_REFUNDED, CLOSED with CANCELLED, REFUNDED with REFUNDED; an order without a payment
// (nullopt) is PENDING or CANCELLED.
[[nodiscard]] bool is_legal_status_pair(std::optional<PaymentStatus> payment, OrderStatus order);

// Seats: free, locked by an order, or sold to an order (SPEC §3).
enum class SeatState : std::uint8_t { free = 0, locked = 1, sold = 2 };
struct Seat {
  SeatState state = SeatState::free;
  std::string order_no;  // empty when free
  friend bool operator==(const Seat&, const Seat&) = default;
};

// The state an order's seats are in (SPEC §3, §9): locked while the order is PENDING, sold once it
// is PAID (those a PARTIALLY_REFUNDED order kept: its refunded seats' claims are gone), free once
// it is CANCELLED or REFUNDED. A live order (seats not free) holds their claims.
[[nodiscard]] SeatState seat_state_of(OrderStatus status);

enum class SeatOp : std::uint8_t {
  lock,          // a new order takes its seats
  mark_sold,     // a paid order's seats are sold
  release,       // a closed or expired order gives its locks back
  release_sold,  // a refunded order gives its sold seats back
  // The reconciler's repairs of a seat whose claim (SPEC §9) the order holds, or, for repair_free,
  // of a finished order's seat: the claim decides, whatever Redis holds.
  repair_sold,    // a PAID order's seat: any value → sold to the order
  repair_locked,  // a PENDING order's seat: any value but the order's own → locked by it
  repair_free,    // a CANCELLED or REFUNDED order's seat: its lock or sale → free
};

// The seat after `op` by `order_no`, or nullopt when `op` must fail and change nothing. Only lock
// and mark_sold fail; every other op leaves a seat it does not apply to as it is.
//
// Production code runs the Lua of persistence/stores/seat_scripts.cpp, not this function. It stays
// as the specification of those scripts: tests/integration/seat_table_test.cpp runs every script on
// a real Redis for every seat state, op and order, and asserts the seat this function answers.
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
