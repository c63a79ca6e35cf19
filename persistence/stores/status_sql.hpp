// SQL built from the domain's state machines (SPEC §4): status conditions as text, and the CAS
// statements of the moves the API and the sweeper make (the callback path passes its moves, from
// domain::plan_callback, as parameters). No payment or order status is written as a literal in
// persistence/: tests/unit/status_sql_test.cpp checks each move statement against the domain's
// tables for every status, and scans the sources for literals.
#pragma once

#include <array>
#include <cassert>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "domain/records.hpp"
#include "domain/state_machine.hpp"

namespace seatflow::persistence {
namespace status_sql {

// A status's stored value (the status columns are SMALLINT).
template <class Status>
[[nodiscard]] std::int64_t code(Status status) {
  return static_cast<std::int64_t>(status);
}

// Its SQL literal.
template <class Status>
[[nodiscard]] std::string literal(Status status) {
  return std::to_string(code(status));
}

// The stored values, in the order given (a ::smallint[] parameter through to_pg_array).
template <class Status>
[[nodiscard]] std::vector<std::int64_t> codes(const std::vector<Status>& statuses) {
  std::vector<std::int64_t> out;
  out.reserve(statuses.size());
  for (const auto status : statuses) {
    out.push_back(code(status));
  }
  return out;
}

// "<column> = 1" for one status, "<column> IN (0, 2)" for several, in the order given; with
// `negated`, "<column> <> 1" and "<column> NOT IN (0, 2)".
template <class Status>
[[nodiscard]] std::string in(std::string_view column, const std::vector<Status>& statuses,
                             bool negated = false) {
  assert(!statuses.empty() && "a status condition names at least one status");
  std::string out(column);
  if (statuses.size() == 1) {
    return out + (negated ? " <> " : " = ") + literal(statuses.front());
  }
  out += negated ? " NOT IN (" : " IN (";
  for (std::size_t i = 0; i < statuses.size(); ++i) {
    if (i > 0) {
      out += ", ";
    }
    out += literal(statuses[i]);
  }
  return out + ")";
}

template <class Status>
[[nodiscard]] std::string not_in(std::string_view column, const std::vector<Status>& statuses) {
  return in(column, statuses, true);
}

// Every status of `all` that `keep` holds for, in code order.
template <class Status, std::size_t N, class Keep>
[[nodiscard]] std::vector<Status> where(const std::array<Status, N>& all, Keep keep) {
  std::vector<Status> out;
  for (const auto status : all) {
    if (keep(status)) {
      out.push_back(status);
    }
  }
  return out;
}

// A state stored by its name (a refund's, a bill run's: domain/records.hpp): its SQL string.
template <class State>
[[nodiscard]] std::string named(State state) {
  return "'" + std::string(domain::to_string(state)) + "'";
}

// "<column> = 'a'" for one state, "<column> IN ('a', 'b')" for several, in the order given.
template <class State>
[[nodiscard]] std::string named_in(std::string_view column, const std::vector<State>& states) {
  assert(!states.empty() && "a state condition names at least one state");
  std::string out(column);
  if (states.size() == 1) {
    return out + " = " + named(states.front());
  }
  out += " IN (";
  for (std::size_t i = 0; i < states.size(); ++i) {
    out += (i > 0 ? ", " : "") + named(states[i]);
  }
  return out + ")";
}

// The order statuses whose seats are in `state` (domain::seat_state_of), in code order.
[[nodiscard]] std::vector<domain::OrderStatus> orders_with_seats(domain::SeatState state);
// The live order statuses, whose seats are held (locked or sold) and claimed (SPEC §9).
[[nodiscard]] std::vector<domain::OrderStatus> live_orders();
// The payment statuses whose money was taken (domain::money_taken).
[[nodiscard]] std::vector<domain::PaymentStatus> money_taken_payments();

}  // namespace status_sql

// A status column's value as the domain's status (the CHECK constraints bound the columns, so a
// value outside the enum is a programmer error).
[[nodiscard]] domain::PaymentStatus stored_payment_status(int code);
[[nodiscard]] domain::OrderStatus stored_order_status(int code);
[[nodiscard]] domain::RefundStatus stored_refund_status(int code);

// How close and refund end a payment (OrderStore; the sweeper's cancel is close's pair of moves):
// the payment's move and its order's, each one CAS statement that emits its event, with the
// statuses of the domain's transition tables.
struct PaymentEnd {
  const char* operation;
  domain::PaymentEvent payment_event;
  domain::OrderEvent order_event;
  // The payment_event's target: a payment already there is answered `already`, nothing moves.
  domain::PaymentStatus target;
  // $1 the payment_no: one row when the payment moved.
  std::string payment_cas;
  // $1 the order_no: one row when the order moved.
  std::string order_cas;
  // Why the payment cannot move from `status` (payment_event illegal from it, and not already at
  // the target): answered 409.
  std::string_view (*refusal)(domain::PaymentStatus status);
  bool seats_sold;  // release sold (2:order) seats rather than locked (1:order) ones
};

// Close: payment 0/2→3 and order 0→2, the locked seats released.
[[nodiscard]] const PaymentEnd& close_end();
// Refund: payment 1→4 and order 1→3, the sold seats released.
[[nodiscard]] const PaymentEnd& refund_end();

}  // namespace seatflow::persistence
