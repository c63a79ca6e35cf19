// The refund status's names and the bill run's state machine (see records.hpp).
#include "domain/records.hpp"

#include <initializer_list>

namespace seatflow::domain {
namespace {

constexpr std::array<std::string_view, kRefundStatuses.size()> kRefundNames = {
    "pending", "processing", "succeeded", "failed", "abnormal"};
constexpr std::array<std::string_view, kBillRunStates.size()> kBillRunNames = {
    "running", "done", "failed", "not_ready"};

template <class State, std::size_t N>
std::optional<State> parse_name(const std::array<std::string_view, N>& names,
                                const std::array<State, N>& states, std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) {
      return states[i];
    }
  }
  return std::nullopt;
}

}  // namespace

std::string_view to_string(RefundStatus status) {
  return kRefundNames.at(static_cast<std::size_t>(status));
}

std::optional<RefundStatus> parse_refund_status(std::string_view name) {
  return parse_name(kRefundNames, kRefundStatuses, name);
}

std::string_view to_string(BillRunState state) {
  return kBillRunNames.at(static_cast<std::size_t>(state));
}

std::optional<BillRunState> parse_bill_run_state(std::string_view name) {
  return parse_name(kBillRunNames, kBillRunStates, name);
}

bool is_legal_bill_run_move(BillRunState from, BillRunState to) {
  return from == BillRunState::running && to != BillRunState::running;
}

bool is_final(BillRunState state) {
  return state != BillRunState::running;
}

}  // namespace seatflow::domain
