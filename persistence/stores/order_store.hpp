// Orders, payments and discrepancies as the API and the sweeper change them (SPEC §7). Every move
// is a CAS; the payment row is locked before the order row, as in the callback path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "persistence/drivers/errc.hpp"
#include "persistence/drivers/pg.hpp"
#include "persistence/stores/callback_log.hpp"
#include "persistence/stores/seat_scripts.hpp"
#include "persistence/stores/status_sql.hpp"

namespace seatflow::persistence {

// How a call that did what was asked ended; the HTTP layer answers 201 for `created`.
enum class Done : std::uint8_t {
  ok,       // done now
  already,  // already in the requested state (idempotent repeat)
  created,  // a new row
};

// A store call that did what was asked: how, and the row it answers. Its refusals are failures
// of persistence::errc, a log-safe detail, and the key they name for the client, when they name
// one: "orderNo" (an orderNo given twice), "paymentNo" (the order's existing payment, or a
// paymentNo given twice) or "seatId" (the seat another order holds).
template <class Row>
struct Stored {
  Done done = Done::ok;
  Row row{};
};

// An order as the API shows it, with its payment's number (nullopt before it has one).
struct OrderRow {
  std::string order_no;
  std::optional<std::string> user_id;
  std::string show_id;
  std::vector<std::string> seat_ids;
  std::int64_t amount_cents = 0;
  std::int64_t status = 0;  // domain::OrderStatus's value
  TimeText expires_at;
  std::string created_at;
  std::string updated_at;
  std::optional<std::string> payment_no;
};

// A payment as the API shows it, with its order's status.
struct PaymentRow {
  std::string payment_no;
  std::string order_no;
  std::string channel;
  std::int64_t amount_cents = 0;
  std::int64_t status = 0;  // domain::PaymentStatus's value
  std::optional<std::string> channel_trade_no;
  TimeText paid_at;
  std::string created_at;
  std::string updated_at;
  std::int64_t order_status = 0;
  std::optional<std::string> pay;          // SPEC §16: the gateway's "pay" object (JSON text)
  std::optional<std::string> gateway_ref;  // the gateway's own id (Stripe's PaymentIntent)
};

// A discrepancy's refund (table refund, source 'discrepancy'), as the API has always shown it.
struct DiscrepancyRefundRow {
  // "pending" while an attempt is out or was left by a crash, "failed" once the last attempt
  // failed (the refund is still PENDING: a retry reuses its number), "succeeded".
  std::string status;
  std::optional<std::string> reason;  // the gateway's note on a success, else why it failed
  std::string refund_no;
  std::optional<std::string> gateway_refund_no;
  std::int64_t attempts = 0;
  std::string started_at;
  TimeText finished_at;
};

// A discrepancy as the API lists it, with its refund (nullopt when none was tried).
struct DiscrepancyRow {
  std::int64_t id = 0;
  std::string payment_no;
  std::optional<std::string> order_no;
  std::string kind;
  std::string detail;  // a JSON document (the column is JSONB)
  std::string created_at;
  TimeText resolved_at;
  std::optional<DiscrepancyRefundRow> refund;
};

// The columns DiscrepancyRow is read from, with the FROM clause (d the discrepancy, r its refund):
// the list (OrderStore::list_discrepancies) and the refund's answer (RefundStore::discrepancy) add
// their WHERE to it and read each row with discrepancy_row(), so a field is added in one place.
inline constexpr std::string_view kDiscrepancyRowSelect =
    "SELECT d.id, d.payment_no, d.order_no, d.kind, d.detail::text, "
    "  to_json(d.created_at) #>> '{}', to_json(d.resolved_at) #>> '{}', "
    "  r.discrepancy_id IS NOT NULL, r.status, r.attempt_finished_at IS NOT NULL, "
    "  r.failure_reason, r.gateway_note, r.refund_no, r.gateway_refund_id, r.attempts, "
    "  to_json(r.attempt_started_at) #>> '{}', to_json(r.attempt_finished_at) #>> '{}' "
    "FROM payment_discrepancy d LEFT JOIN refund r ON r.discrepancy_id = d.id ";
// A row of a statement that starts with kDiscrepancyRowSelect.
[[nodiscard]] DiscrepancyRow discrepancy_row(const pqxx::row& row);

// A discrepancy that is resolved (now or before).
struct ResolvedDiscrepancy {
  std::int64_t id = 0;
};

struct NewOrder {
  std::string order_no;  // generated when empty
  std::string user_id;
  std::string show_id;
  std::vector<std::string> seat_ids;
  std::int64_t amount_cents = 0;
  std::int64_t timeout_ms = 15 * 60 * 1000;
};

struct NewPayment {
  std::string order_no;
  std::string channel;
  std::string payment_no;  // generated when empty
};

// An expired pending order, and its payment's number when that payment is still pending ("" when
// the order has no pending payment). Orders whose payment's close the sweeper deferred
// (GatewayStore::defer_close) are not listed before their time.
struct ExpiredOrder {
  std::string order_no;
  std::string pending_payment_no;
  std::optional<domain::Channel> channel;  // the pending payment's
  std::int64_t expired_for_ms = 0;         // how long ago the order expired
};

class OrderStore {
 public:
  // `query_first_step_ms`: a new payment's first active query is due that long after it is
  // created (SPEC §10); 0 = active query off, no schedule row.
  OrderStore(PgSession& pg, SeatStore& seats, std::uint32_t query_first_step_ms = 0);

  // Refusals: already_exists (an orderNo given twice, named), conflict (a seat taken, named),
  // redis_unavailable, pg_unavailable.
  [[nodiscard]] Result<Stored<OrderRow>> create_order(const NewOrder& order);
  // Refusals: not_found (no such order), conflict (the order's payment, named; the order not
  // pending or short of its seats), already_exists (a paymentNo given twice), pg_unavailable.
  [[nodiscard]] Result<Stored<PaymentRow>> create_payment(const NewPayment& payment);
  [[nodiscard]] Result<Stored<OrderRow>> get_order(const std::string& order_no);
  [[nodiscard]] Result<Stored<PaymentRow>> get_payment(const std::string& payment_no);
  // CAS payment 0/2→3 and order 0→2, commit, then release the locked seats.
  [[nodiscard]] Result<Stored<PaymentRow>> close_payment(const std::string& payment_no);
  // CAS payment 1→4 and order 1→3, commit, then release the sold seats.
  [[nodiscard]] Result<Stored<PaymentRow>> refund_payment(const std::string& payment_no);
  // Newest first.
  [[nodiscard]] Result<Stored<std::vector<DiscrepancyRow>>> list_discrepancies(bool open_only,
                                                                               std::size_t limit);
  [[nodiscard]] Result<Stored<ResolvedDiscrepancy>> resolve_discrepancy(std::int64_t id);
  // The sweeper's two steps, with its gateway query in between (SPEC §10): up to `batch` expired
  // pending orders with their pending payment (errc::pg_unavailable when the store failed), then
  // one order cancelled unless a callback won first (done; conflict, not_found, or a code
  // is_unavailable answers true for).
  [[nodiscard]] Result<std::vector<ExpiredOrder>> list_expired(std::size_t batch);
  [[nodiscard]] Result<void> cancel_if_expired(const std::string& order_no);
  // The session this store runs on, for the other read-only stores of an API actor.
  [[nodiscard]] PgSession& session() { return pg_; }

 private:
  // Runs `fn`, its exceptions classified into a refusal (the connection reset when broken).
  template <class Fn>
  auto guarded(const char* operation, Fn&& fn) -> decltype(fn());
  [[nodiscard]] Failure failure(const char* operation, const std::exception& error);
  // Close and refund: the same lock order, CAS pair, commit and seat release after the commit,
  // with their own statuses and statements.
  Result<Stored<PaymentRow>> end_payment(const std::string& payment_no, const PaymentEnd& end);
  // Cancels one expired pending order and closes its payment, unless a callback won first.
  Result<void> cancel_expired(const std::string& order_no);

  PgSession& pg_;
  SeatStore& seats_;
  std::uint32_t query_first_step_ms_;
};

[[nodiscard]] std::string new_id(std::string_view prefix);

}  // namespace seatflow::persistence
