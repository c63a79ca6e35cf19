// Reading the mark_sold script's reply: only a reply the script gives names the refused sales;
// anything else fails every sale of the call, so no sale is taken as sold on a reply it did not
// get.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "persistence/stores/seat_scripts.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using persistence::parse_mark_sold_reply;
using persistence::RedisReply;

RedisReply integer(long long v) {
  RedisReply r;
  r.ok = true;
  r.integer = v;
  return r;
}

RedisReply text(std::string v) {
  RedisReply r;
  r.ok = true;
  r.str = std::move(v);
  return r;
}

RedisReply array(std::vector<RedisReply> elements) {
  RedisReply r;
  r.ok = true;
  r.elements = std::move(elements);
  return r;
}

TEST(MarkSoldReply, AnEmptyReplyMeansEverySaleWasSold) {
  std::string why;
  const auto refused = parse_mark_sold_reply(array({}), 3, &why);
  ASSERT_TRUE(refused.has_value()) << why;
  EXPECT_TRUE(refused->empty());
}

TEST(MarkSoldReply, EachRefusalNamesItsSaleSeatAndHolder) {
  std::string why;
  const auto refused = parse_mark_sold_reply(
      array({integer(2), text("A3"), text("1:o9"), integer(3), text("B1"), text("2:o7")}), 3, &why);
  ASSERT_TRUE(refused.has_value()) << why;
  ASSERT_EQ(refused->size(), 2U);
  EXPECT_EQ((*refused)[0].position, 1U);
  EXPECT_EQ((*refused)[0].seat_id, "A3");
  EXPECT_EQ((*refused)[0].holder, "1:o9");
  EXPECT_EQ((*refused)[1].position, 2U);
  EXPECT_EQ((*refused)[1].seat_id, "B1");
  EXPECT_EQ((*refused)[1].holder, "2:o7");
}

TEST(MarkSoldReply, AReplyTheScriptDoesNotGiveFailsTheWholeCall) {
  const std::vector<std::vector<RedisReply>> bad = {
      {integer(0), text("A1"), text("1:o2")},  // below 1
      {integer(4), text("A1"), text("1:o2")},  // past the last
      {integer(2), text("A1"), text("1:o2"), integer(2), text("A2"), text("1:o2")},  // repeated
      {integer(3), text("A1"), text("1:o2"), integer(1), text("A2"), text("1:o2")},  // falling
      {integer(1), text("A1")},                                                      // cut short
  };
  for (const auto& elements : bad) {
    std::string why;
    EXPECT_FALSE(parse_mark_sold_reply(array(elements), 3, &why).has_value())
        << "accepted a reply of " << elements.size() << " elements";
    EXPECT_EQ(why, "unexpected mark_sold reply");
  }
}

TEST(MarkSoldReply, AnErrorReplyFailsTheWholeCallWithItsText) {
  RedisReply error;
  error.is_error_reply = true;
  error.error = "BUSY Redis is busy running a script";
  std::string why;
  EXPECT_FALSE(parse_mark_sold_reply(error, 1, &why).has_value());
  EXPECT_EQ(why, error.error);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
