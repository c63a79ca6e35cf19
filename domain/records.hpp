// The names of SeatFlow's records' states beside payments and orders: a refund's status as the API
// shows it (its machine is domain/state_machine.hpp; refund.status stores its code), and the bill
// run's machine (SPEC §13), stored by its name. Pure code; the SQL that stores and moves them is
// built from these tables (persistence/stores/status_sql.hpp), never written as literals.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

#include "domain/types.hpp"

namespace seatflow::domain {

// A refund status's name ("pending", "processing", "succeeded", "failed", "abnormal"): the API's
// word for it, and the text discrepancy_refund stored before migration 17 moved its rows into
// refund.
[[nodiscard]] std::string_view to_string(RefundStatus status);
[[nodiscard]] std::optional<RefundStatus> parse_refund_status(std::string_view name);

// A bill run (SPEC §13): RUNNING → DONE | FAILED | NOT_READY, each final. A run whose holder
// stopped renewing its lease is failed by the next run of its channel and day. Stored by its name.
enum class BillRunState : std::uint8_t {
  running = 0,
  done = 1,
  failed = 2,
  not_ready = 3,
};
inline constexpr std::array kBillRunStates = {BillRunState::running, BillRunState::done,
                                              BillRunState::failed, BillRunState::not_ready};

[[nodiscard]] std::string_view to_string(BillRunState state);
[[nodiscard]] std::optional<BillRunState> parse_bill_run_state(std::string_view name);
[[nodiscard]] bool is_legal_bill_run_move(BillRunState from, BillRunState to);
[[nodiscard]] bool is_final(BillRunState state);

}  // namespace seatflow::domain
