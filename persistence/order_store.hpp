// Orders, payments and discrepancies as the API and the sweeper change them (SPEC §7). Every move
// is a CAS; the payment row is locked before the order row, as in the callback path.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "persistence/pg.hpp"
#include "persistence/seat_scripts.hpp"

namespace seatflow::persistence {

// What an API operation came to; the HTTP layer maps each to a status code.
enum class StoreStatus : std::uint8_t {
  ok,           // done now
  already,      // already in the requested state (idempotent repeat)
  created,      // a new row
  not_found,    // no such order/payment/discrepancy
  conflict,     // the state forbids it (detail says why)
  unavailable,  // PostgreSQL or Redis unreachable or failing
};

struct StoreResult {
  StoreStatus status = StoreStatus::unavailable;
  std::string detail;   // log-safe reason for conflict/unavailable
  nlohmann::json body;  // the resource, or extra fields (e.g. the taken seat, existing payment)
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
// the order has no pending payment).
struct ExpiredOrder {
  std::string order_no;
  std::string pending_payment_no;
};

class OrderStore {
 public:
  // `query_first_step_ms`: a new payment's first active query is due that long after it is
  // created (SPEC §10); 0 = active query off, no schedule row.
  OrderStore(PgSession& pg, SeatStore& seats, std::uint32_t query_first_step_ms = 0);

  [[nodiscard]] StoreResult create_order(const NewOrder& order);
  [[nodiscard]] StoreResult create_payment(const NewPayment& payment);
  [[nodiscard]] StoreResult get_order(const std::string& order_no);
  [[nodiscard]] StoreResult get_payment(const std::string& payment_no);
  // CAS payment 0/2→3 and order 0→2, commit, then release the locked seats.
  [[nodiscard]] StoreResult close_payment(const std::string& payment_no);
  // CAS payment 1→4 and order 1→3, commit, then release the sold seats.
  [[nodiscard]] StoreResult refund_payment(const std::string& payment_no);
  [[nodiscard]] StoreResult list_discrepancies(bool open_only, std::size_t limit);
  [[nodiscard]] StoreResult resolve_discrepancy(std::int64_t id);
  // Cancels up to `batch` expired pending orders (and closes their payments); returns how many.
  [[nodiscard]] std::size_t sweep_expired(std::size_t batch);
  // The sweeper's two steps, for a sweeper that asks the gateway in between (SPEC §10): up to
  // `batch` expired pending orders with their pending payment (nullopt: store unavailable), then
  // one order cancelled unless a callback won first (ok, conflict, not_found or unavailable).
  [[nodiscard]] std::optional<std::vector<ExpiredOrder>> list_expired(std::size_t batch);
  [[nodiscard]] StoreStatus cancel_if_expired(const std::string& order_no);
  // The session this store runs on, for the other read-only stores of an API actor.
  [[nodiscard]] PgSession& session() { return pg_; }

 private:
  template <class Fn>
  StoreResult guarded(const char* operation, Fn&& fn);
  // How close and refund end a payment: the same lock order, CAS pair, commit and seat release
  // after the commit, with their own statuses and statements.
  struct PaymentEnd {
    const char* operation;
    int target_status;  // already there: answered `already`, nothing moves
    // Why the move cannot start from `status` ("" when it can): answered 409.
    std::string_view (*refusal)(int status);
    const std::string& payment_cas;
    const std::string& order_cas;
    bool seats_sold;  // release sold (2:order) seats rather than locked (1:order) ones
  };
  StoreResult end_payment(const std::string& payment_no, const PaymentEnd& end);
  // Cancels one expired pending order and closes its payment, unless a callback won first.
  StoreResult cancel_expired(const std::string& order_no);

  PgSession& pg_;
  SeatStore& seats_;
  std::uint32_t query_first_step_ms_;
};

[[nodiscard]] std::string new_id(std::string_view prefix);

}  // namespace seatflow::persistence
