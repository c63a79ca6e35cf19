// The bill run's state machine (SPEC §13): every pair of states against the table the SPEC writes;
// the refund's and the bill run's names both ways (the refund's machine:
// tests/unit/state_machine_test.cpp).
#include "domain/records.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace seatflow::domain {
namespace {
namespace SEATFLOW_UNITY_ID {

TEST(BillRunMachine, ARunEndsOnceInOneFinalState) {
  for (const auto from : kBillRunStates) {
    for (const auto to : kBillRunStates) {
      EXPECT_EQ(is_legal_bill_run_move(from, to),
                from == BillRunState::running && to != BillRunState::running)
          << to_string(from) << " -> " << to_string(to);
    }
    EXPECT_EQ(is_final(from), from != BillRunState::running);
  }
}

TEST(RecordNames, EveryStateParsesFromItsStoredName) {
  std::set<std::string_view> names;
  for (const auto status : kRefundStatuses) {
    EXPECT_EQ(parse_refund_status(to_string(status)), status);
    names.insert(to_string(status));
  }
  EXPECT_EQ(names.size(), kRefundStatuses.size());
  for (const auto state : kBillRunStates) {
    EXPECT_EQ(parse_bill_run_state(to_string(state)), state);
  }
  EXPECT_EQ(to_string(RefundStatus::succeeded), "succeeded");
  EXPECT_EQ(to_string(BillRunState::not_ready), "not_ready");
  EXPECT_FALSE(parse_refund_status("SUCCEEDED"));
  EXPECT_FALSE(parse_bill_run_state("abandoned"));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::domain
