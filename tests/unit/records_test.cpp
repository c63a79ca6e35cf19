// The refund's and the bill run's state machines (SPEC §4, §13, §17): every pair of states
// against the table the SPEC writes, names both ways.
#include "domain/records.hpp"

#include <gtest/gtest.h>

#include <set>
#include <utility>

namespace seatflow::domain {
namespace {
namespace SEATFLOW_UNITY_ID {

using R = RefundStatus;

TEST(RefundMachine, OnlyTheSpecsMovesAreLegal) {
  const std::set<std::pair<R, R>> legal = {
      {R::pending, R::processing},   {R::pending, R::succeeded}, {R::pending, R::failed},
      {R::processing, R::succeeded}, {R::processing, R::failed}, {R::processing, R::abnormal},
      {R::abnormal, R::succeeded},   {R::abnormal, R::failed}};
  for (const auto from : kRefundStatuses) {
    for (const auto to : kRefundStatuses) {
      EXPECT_EQ(is_legal_refund_move(from, to), legal.contains({from, to}))
          << to_string(from) << " -> " << to_string(to);
    }
  }
}

TEST(RefundMachine, SucceededAndFailedAreFinal) {
  for (const auto status : kRefundStatuses) {
    const bool final = status == R::succeeded || status == R::failed;
    EXPECT_EQ(is_final(status), final) << to_string(status);
    if (final) {
      for (const auto to : kRefundStatuses) {
        EXPECT_FALSE(is_legal_refund_move(status, to)) << to_string(status);
      }
    }
  }
}

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
  EXPECT_EQ(to_string(R::succeeded), "succeeded");
  EXPECT_EQ(to_string(BillRunState::not_ready), "not_ready");
  EXPECT_FALSE(parse_refund_status("SUCCEEDED"));
  EXPECT_FALSE(parse_bill_run_state("abandoned"));
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::domain
