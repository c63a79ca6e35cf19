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
  const auto refused = parse_mark_sold_reply(array({}), 3);
  ASSERT_TRUE(refused.ok()) << refused.detail();
  EXPECT_TRUE(refused.value().empty());
}

TEST(MarkSoldReply, EachRefusalNamesItsSaleSeatAndHolder) {
  const auto parsed = parse_mark_sold_reply(
      array({integer(2), text("A3"), text("1:o9"), integer(3), text("B1"), text("2:o7")}), 3);
  ASSERT_TRUE(parsed.ok()) << parsed.detail();
  const auto* refused = &parsed.value();
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
    const auto parsed = parse_mark_sold_reply(array(elements), 3);
    ASSERT_FALSE(parsed.ok()) << "accepted a reply of " << elements.size() << " elements";
    EXPECT_EQ(parsed.error(), persistence::errc::redis_unavailable);
    EXPECT_EQ(parsed.detail(), "unexpected mark_sold reply");
  }
}

TEST(MarkSoldReply, AnErrorReplyFailsTheWholeCallWithItsText) {
  RedisReply error;
  error.is_error_reply = true;
  error.error = "BUSY Redis is busy running a script";
  const auto parsed = parse_mark_sold_reply(error, 1);
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.detail(), error.error);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
