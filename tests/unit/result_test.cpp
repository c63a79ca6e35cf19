// domain::Result: a value or a failure, each read back as it went in; misuse is an assertion.
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "channels/errc.hpp"
#include "domain/result.hpp"
#include "persistence/drivers/errc.hpp"

namespace seatflow::domain {
namespace {
namespace SEATFLOW_UNITY_ID {

Result<int> half(int n) {
  if (n % 2 != 0) {
    return Result<int>::failure(channels::errc::malformed, "odd");
  }
  return n / 2;
}

// A failure handed on as another Result's, unchanged.
Result<std::string> half_text(int n) {
  auto halved = half(n);
  if (!halved.ok()) {
    return std::move(halved).failure();
  }
  return std::to_string(halved.value());
}

TEST(ResultTest, AValueIsOkAndHasNoError) {
  const auto result = half(8);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result.value(), 4);
  EXPECT_FALSE(result.error());
}

TEST(ResultTest, AFailureKeepsItsCodeDetailAndName) {
  const auto result = Result<std::string>::failure(persistence::errc::conflict, "seat A-1 is taken",
                                                   {"seatId", "A-1"});
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error(), persistence::errc::conflict);
  EXPECT_NE(result.error(), channels::errc::malformed);
  EXPECT_EQ(result.detail(), "seat A-1 is taken");
  EXPECT_EQ(result.named().key, "seatId");
  EXPECT_EQ(result.named().value, "A-1");
}

TEST(ResultTest, AFailureWithoutANameNamesNothing) {
  const auto result = half(3);
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.error(), channels::errc::malformed);
  EXPECT_EQ(result.detail(), "odd");
  EXPECT_TRUE(result.named().key.empty());
}

TEST(ResultTest, AFailureIsHandedOnUnchanged) {
  const auto passed = half_text(5);
  ASSERT_FALSE(passed.ok());
  EXPECT_EQ(passed.error(), channels::errc::malformed);
  EXPECT_EQ(passed.detail(), "odd");
  const auto value = half_text(10);
  ASSERT_TRUE(value.ok());
  EXPECT_EQ(value.value(), "5");
}

TEST(ResultTest, AValueIsMadeInPlaceFromItsParts) {
  struct Parts {
    int count = 0;
    std::string name;
  };
  const Result<Parts> made = {2, std::string("two")};
  ASSERT_TRUE(made.ok());
  EXPECT_EQ(made.value().count, 2);
  EXPECT_EQ(made.value().name, "two");
}

TEST(ResultTest, AValueMovesOut) {
  Result<std::unique_ptr<int>> result(std::make_unique<int>(7));
  ASSERT_TRUE(result.ok());
  const auto owned = std::move(result).value();
  ASSERT_NE(owned, nullptr);
  EXPECT_EQ(*owned, 7);
}

TEST(ResultTest, VoidIsDoneUnlessItFailed) {
  const Result<void> done;
  EXPECT_TRUE(done.ok());
  EXPECT_FALSE(done.error());
  EXPECT_TRUE(Result<void>::success().ok());
  const auto failed = Result<void>::failure(persistence::errc::pg_unavailable, "down");
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.error(), persistence::errc::pg_unavailable);
  EXPECT_EQ(failed.detail(), "down");
  const Result<void> handed_on = Failure(failed.failure());
  EXPECT_EQ(handed_on.error(), persistence::errc::pg_unavailable);
}

TEST(ResultTest, AValueOfAFailureIsAnAssertion) {
  // The unit binary has run threads before this test: re-execute rather than fork a copy of them.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH((void)half(3).value(), "value\\(\\) of a failure");
  EXPECT_DEATH((void)half(4).detail(), "failure\\(\\) of a value");
  EXPECT_DEATH((void)Result<int>::failure(std::error_code{}), "a failure carries an error code");
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::domain
