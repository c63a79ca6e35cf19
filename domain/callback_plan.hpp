// SPEC §6 as one pure function: the rows a transaction has locked plus a verified callback (and
// what its log insert found) → what that callback does: its rejection, its moves, its discrepancy,
// its seat sale and its answer. The persistence executor carries plans out set-based; nothing here
// does I/O, so every case is unit-tested without a database.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "domain/outcome.hpp"
#include "domain/types.hpp"

namespace seatflow::domain {

// The payment row as the transaction locked it (FOR UPDATE).
struct LockedPayment {
  PaymentStatus status = PaymentStatus::pending;
  Channel channel = Channel::hmac;
  std::int64_t amount_cents = 0;
  std::string order_no;
  std::string channel_trade_no;  // "" until a success recorded one
};

// The order row as the transaction locked it (FOR UPDATE), after its payment.
struct LockedOrder {
  OrderStatus status = OrderStatus::pending;
  std::string show_id;
  std::vector<std::string> seat_ids;
};

// Step 0: the checks that reject and leave nothing behind (no log row, no move). nullopt: the
// callback goes on to its log row. `payment` is null when no such payment exists.
[[nodiscard]] std::optional<CallbackOutcome> screen_callback(const VerifiedCallback& callback,
                                                             const LockedPayment* payment);

// What the log insert of step 1 found for the callback id.
enum class LogFinding : std::uint8_t {
  first_delivery,  // a new row
  copy,            // a row with the same digest: duplicate_count + 1, and the callback continues
  conflict,        // a row with another digest: nothing is applied (409)
};

template <class Status>
struct Move {
  Status from;
  Status to;
  friend bool operator==(const Move&, const Move&) = default;
};

// A paid_after_cancel / paid_after_refund record, with the statuses that made it one.
struct DiscrepancyRecord {
  std::string_view kind;
  PaymentStatus payment_status = PaymentStatus::pending;
  OrderStatus order_status = OrderStatus::pending;
};

struct CallbackPlan {
  // The answer once the transaction commits (applied, duplicate, ignored, discrepancy, conflict).
  CallbackOutcome outcome;
  // Each move is one CAS on a locked row (SPEC §4): from the state machines, never a literal.
  std::optional<Move<PaymentStatus>> payment_move;  // into SUCCESS also writes paid_at, trade no
  std::optional<Move<OrderStatus>> order_move;
  std::optional<DiscrepancyRecord> discrepancy;
  bool sell = false;  // mark_sold the order's seats inside the transaction
};

// Steps 1-3 for one callback that passed screen_callback. The rows are locked, so every move it
// plans is certain to match its CAS.
[[nodiscard]] CallbackPlan plan_callback(const VerifiedCallback& callback,
                                         const LockedPayment& payment, const LockedOrder& order,
                                         LogFinding log);

// The `status` column of the callback's log row: 1 success, 2 failure, 0 other.
[[nodiscard]] int log_status_code(CallbackKind kind);

// True when a callback's channel trade number is the one that already paid the payment: a copy of
// that success (e.g. after retention removed its log row), not new money.
[[nodiscard]] bool same_trade(std::string_view callback_trade_no,
                              std::string_view payment_trade_no);

}  // namespace seatflow::domain
