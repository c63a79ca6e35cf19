// The close, cancel and refund statements, their statuses taken from the domain's transition
// tables.
#include "persistence/stores/status_sql.hpp"

#include "persistence/stores/events.hpp"

namespace seatflow::persistence {
namespace status_sql {

std::vector<domain::OrderStatus> orders_with_seats(domain::SeatState state) {
  return where(domain::kOrderStatuses, [state](domain::OrderStatus status) {
    return domain::seat_state_of(status) == state;
  });
}

std::vector<domain::OrderStatus> live_orders() {
  return where(domain::kOrderStatuses, [](domain::OrderStatus status) {
    return domain::seat_state_of(status) != domain::SeatState::free;
  });
}

std::vector<domain::PaymentStatus> money_taken_payments() {
  return where(domain::kPaymentStatuses, domain::money_taken);
}

}  // namespace status_sql

namespace {

// The payment's CAS for `event`, emitting an event of `type`.
std::string payment_cas(domain::PaymentEvent event, std::string_view type) {
  const auto move = domain::payment_transition(event);
  return events::with_event("UPDATE payment_order SET status = " + status_sql::literal(move.to) +
                                ", updated_at = now() "
                                "WHERE payment_no = $1 AND " +
                                status_sql::in("status", move.from) +
                                " RETURNING payment_no AS event_key, payment_no, order_no, "
                                "amount_cents, NULL::text AS detail",
                            type, "payment_no");
}

// The order's CAS for `event`, emitting an event of `type` (with the order's payment, if any).
std::string order_cas(domain::OrderEvent event, std::string_view type) {
  const auto move = domain::order_transition(event);
  return events::with_event(
      "UPDATE order_info o SET status = " + status_sql::literal(move.to) +
          ", updated_at = now() "
          "WHERE o.order_no = $1 AND " +
          status_sql::in("o.status", move.from) +
          " RETURNING o.order_no AS event_key, "
          "  (SELECT p.payment_no FROM payment_order p WHERE p.order_no = o.order_no) AS "
          "payment_no, "
          "  o.order_no, o.amount_cents, NULL::text AS detail",
      type, "order_no");
}

}  // namespace

domain::PaymentStatus stored_payment_status(int code) {
  const auto status = domain::payment_status_from_int(code);
  assert(status && "the CHECK constraint bounds payment_order.status");
  return *status;
}

domain::OrderStatus stored_order_status(int code) {
  const auto status = domain::order_status_from_int(code);
  assert(status && "the CHECK constraint bounds order_info.status");
  return *status;
}

domain::RefundStatus stored_refund_status(int code) {
  const auto status = domain::refund_status_from_int(code);
  assert(status && "the CHECK constraint bounds refund.status");
  return *status;
}

const PaymentEnd& close_end() {
  using E = domain::PaymentEvent;
  static const PaymentEnd end{
      "close_payment",
      E::close,
      domain::OrderEvent::cancel,
      domain::payment_transition(E::close).to,
      payment_cas(E::close, events::kPaymentClosed),
      order_cas(domain::OrderEvent::cancel, events::kOrderCancelled),
      [](domain::PaymentStatus status) -> std::string_view {
        return status == domain::PaymentStatus::success ? "already paid" : "already refunded";
      },
      false};
  return end;
}

const PaymentEnd& refund_end() {
  using E = domain::PaymentEvent;
  static const PaymentEnd end{
      "refund_payment",
      E::refund,
      domain::OrderEvent::refund,
      domain::payment_transition(E::refund).to,
      payment_cas(E::refund, events::kPaymentRefunded),
      order_cas(domain::OrderEvent::refund, events::kOrderRefunded),
      [](domain::PaymentStatus) -> std::string_view { return "the payment is not paid"; },
      true};
  return end;
}

}  // namespace seatflow::persistence
