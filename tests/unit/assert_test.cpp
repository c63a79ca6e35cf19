// SEATFLOW_ASSERT: a true condition costs nothing and changes nothing; a false one aborts the
// process after naming the expression and its place, in every build type.
#include "domain/assert.hpp"

#include <gtest/gtest.h>

namespace seatflow::domain {
namespace {
namespace SEATFLOW_UNITY_ID {

int checked_half(int even) {
  SEATFLOW_ASSERT(even % 2 == 0);
  return even / 2;
}

TEST(SeatflowAssert, ATrueConditionLetsTheCallRun) {
  EXPECT_EQ(checked_half(8), 4);
}

TEST(SeatflowAssertDeathTest, AFalseConditionAbortsNamingTheExpressionAndItsPlace) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)checked_half(7),
               "seatflow: assertion failed: even % 2 == 0 at .*assert_test.cpp:[0-9]+ in "
               "checked_half");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::domain
