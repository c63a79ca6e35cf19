// The state machines of SeatFlow's records beside payments and orders (SPEC §4): a refund
// (SPEC §17) and a bill run (SPEC §13). Pure code; the SQL that stores and moves them is built
// from these tables (persistence/stores/status_sql.hpp), never written as literals.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace seatflow::domain {

// A refund (SPEC §4): PENDING → PROCESSING | SUCCEEDED | FAILED; PROCESSING → SUCCEEDED | FAILED |
// ABNORMAL; ABNORMAL → SUCCEEDED | FAILED. SUCCEEDED and FAILED are final. Stored by its name.
enum class RefundStatus : std::uint8_t {
  pending = 0,
  processing = 1,
  succeeded = 2,
  failed = 3,
  abnormal = 4,
};
inline constexpr std::array kRefundStatuses = {RefundStatus::pending, RefundStatus::processing,
                                               RefundStatus::succeeded, RefundStatus::failed,
                                               RefundStatus::abnormal};

[[nodiscard]] std::string_view to_string(RefundStatus status);
[[nodiscard]] std::optional<RefundStatus> parse_refund_status(std::string_view name);
[[nodiscard]] bool is_legal_refund_move(RefundStatus from, RefundStatus to);
// SUCCEEDED and FAILED: no move leaves them.
[[nodiscard]] bool is_final(RefundStatus status);

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
