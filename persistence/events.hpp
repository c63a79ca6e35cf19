// The payment-event outbox: event types, and the SQL that records a move's event in the same
// statement (and so the same transaction) as the move itself.
#pragma once

#include <string>
#include <string_view>

namespace seatflow::persistence::events {

// Every event type; the event id is "<type>:<key>" with the payment number, the order number or
// the discrepancy id as key. Each move happens at most once per key (SPEC §4), so the id is stable
// across replays and a consumer can de-duplicate by it.
inline constexpr std::string_view kPaymentSucceeded = "payment.succeeded";
inline constexpr std::string_view kPaymentFailed = "payment.failed";
inline constexpr std::string_view kPaymentClosed = "payment.closed";
inline constexpr std::string_view kPaymentRefunded = "payment.refunded";
inline constexpr std::string_view kOrderPaid = "order.paid";
inline constexpr std::string_view kOrderCancelled = "order.cancelled";
inline constexpr std::string_view kOrderRefunded = "order.refunded";
inline constexpr std::string_view kDiscrepancyRecorded = "discrepancy.recorded";
inline constexpr std::string_view kDiscrepancyResolved = "discrepancy.resolved";
// A discrepancy's money given back through its gateway (which resolves it); detail = the refund
// number.
inline constexpr std::string_view kDiscrepancyRefunded = "discrepancy.refunded";

// Wraps the data-modifying statement `move`, whose RETURNING list must name the columns
// event_key, payment_no, order_no, amount_cents and detail, so that every row it moves also
// inserts one payment_event of `type`. The result is `result_columns` of the moved rows, so its
// row count is still the CAS proof. A data-modifying CTE runs whether or not it is read, and in the
// same statement: no extra round trip, and a rolled-back move leaves no event.
[[nodiscard]] std::string with_event(std::string_view move, std::string_view type,
                                     std::string_view result_columns);

}  // namespace seatflow::persistence::events
