// The bill load's keys (persistence/stores/bill_keys.hpp): a repeated (kind, paymentNo) is seen,
// a payment and its refund are two keys, and a row found through its trade may repeat any.
#include <gtest/gtest.h>

#include <string>

#include "persistence/stores/bill_keys.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using persistence::BillKeys;

TEST(BillKeys, DistinctKeysDoNotRepeat) {
  BillKeys keys;
  for (int i = 0; i < 100'000; ++i) {
    keys.add("payment", "P-" + std::to_string(i));
  }
  // A payment and its refund: one paymentNo, two keys.
  keys.add("refund", "P-7");
  EXPECT_FALSE(keys.unresolved());
  EXPECT_FALSE(keys.may_repeat());
}

TEST(BillKeys, ARepeatedKeyIsSeenWhereverItComes) {
  for (const int at : {0, 1, 50'000, 99'999}) {
    BillKeys keys;
    for (int i = 0; i < 100'000; ++i) {
      keys.add("payment", "P-" + std::to_string(i));
    }
    keys.add("payment", "P-" + std::to_string(at));
    EXPECT_TRUE(keys.may_repeat()) << at;
  }
  BillKeys refunds;
  refunds.add("refund", "P-1");
  refunds.add("payment", "P-1");
  refunds.add("refund", "P-1");
  EXPECT_TRUE(refunds.may_repeat());
}

TEST(BillKeys, ARowWithoutItsPaymentMayRepeatAny) {
  BillKeys keys;
  keys.add("payment", "P-1");
  keys.add("refund", "");
  EXPECT_TRUE(keys.unresolved());
  EXPECT_TRUE(keys.may_repeat());
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
