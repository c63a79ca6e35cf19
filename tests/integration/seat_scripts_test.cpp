// The seat scripts against the test Redis, seat by seat. mark_sold: what it accepts (free, locked
// by the order, sold to the order), what it refuses (another order's lock or sale) and that a
// refusal changes no seat, alone and in the callback path's single call for many orders. release
// and release_sold: what each frees and what neither touches.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "persistence/stores/seat_scripts.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using persistence::SeatSale;
using persistence::SeatStore;

class SeatScriptsTest : public ::testing::Test {
 protected:
  [[nodiscard]] std::string key() const { return persistence::seat_key(s_.id("show")); }

  void set(const std::string& seat, const std::string& value) {
    ASSERT_TRUE(s_.redis().command({"HSET", key(), seat, value}).ok);
  }
  // Every seat of a show's hash and its value.
  std::map<std::string, std::string> seats(const std::string& show = "show") {
    const auto reply = s_.redis().command({"HGETALL", persistence::seat_key(s_.id(show))});
    std::map<std::string, std::string> out;
    for (std::size_t i = 0; i + 1 < reply.elements.size(); i += 2) {
      out[reply.elements[i].str] = reply.elements[i + 1].str;
    }
    return out;
  }

  testing::Stores s_;
  SeatStore store_{s_.redis()};
};

TEST_F(SeatScriptsTest, FreeLockedAndAlreadySoldSeatsAreSoldToTheOrder) {
  set("A2", "1:o1");
  set("A3", "2:o1");
  const auto result = testing::mark_sold(store_, s_.id("show"), "o1", {"A1", "A2", "A3"});
  EXPECT_TRUE(result.ok()) << result.detail();
  EXPECT_EQ(seats(),
            (std::map<std::string, std::string>{{"A1", "2:o1"}, {"A2", "2:o1"}, {"A3", "2:o1"}}));
}

TEST_F(SeatScriptsTest, AnotherOrdersSeatIsNamedAndNoSeatChanges) {
  for (const std::string holder : {"1:o2", "2:o2"}) {
    ASSERT_TRUE(s_.redis().command({"DEL", key()}).ok);
    set("A1", "1:o1");
    set("A3", holder);
    const auto result = testing::mark_sold(store_, s_.id("show"), "o1", {"A1", "A2", "A3", "A4"});
    ASSERT_EQ(result.error(), persistence::errc::conflict) << holder;
    EXPECT_EQ(result.named().key, "seatId");
    EXPECT_EQ(result.named().value, "A3");
    EXPECT_EQ(result.detail(), "seat A3 is held as " + holder);
    EXPECT_EQ(seats(), (std::map<std::string, std::string>{{"A1", "1:o1"}, {"A3", holder}}))
        << "a refused sale changed a seat";
  }
}

// release frees the order's locks only, release_sold (a refund) its sold seats only; neither
// touches the other state of the order nor any seat of another order.
TEST_F(SeatScriptsTest, ReleaseFreesTheOrdersLocksAndReleaseSoldItsSoldSeatsOnly) {
  const std::map<std::string, std::string> before{
      {"A1", "1:o1"}, {"A2", "2:o1"}, {"A3", "1:o2"}, {"A4", "2:o2"}, {"A5", "1:o1x"}};
  const std::vector<std::string> all{"A1", "A2", "A3", "A4", "A5", "A6"};
  for (const auto& [seat, value] : before) {
    set(seat, value);
  }
  const auto released = store_.release(s_.id("show"), "o1", all);
  ASSERT_TRUE(released.ok()) << released.detail();
  EXPECT_EQ(released.value(), 1);
  auto expected = before;
  expected.erase("A1");
  EXPECT_EQ(seats(), expected);

  const auto given_back = store_.release_sold(s_.id("show"), "o1", all);
  ASSERT_TRUE(given_back.ok()) << given_back.detail();
  EXPECT_EQ(given_back.value(), 1);
  expected.erase("A2");
  EXPECT_EQ(seats(), expected);
}

TEST_F(SeatScriptsTest, AnOrderWithoutSeatsSellsNothing) {
  EXPECT_TRUE(testing::mark_sold(store_, s_.id("show"), "o1", {}).ok());
  EXPECT_TRUE(seats().empty());
}

TEST_F(SeatScriptsTest, OneCallNamesTheFailedSalesAndSellsTheOthers) {
  set("B1", "1:o9");
  const std::vector<std::string> first = {"A1", "A2"};
  const std::vector<std::string> taken = {"B2", "B1"};
  const std::vector<std::string> last = {"C1"};
  const auto show = s_.id("show");
  const auto failed = store_.mark_sold_all(
      {SeatSale{show, "o1", &first}, SeatSale{show, "o2", &taken}, SeatSale{show, "o3", &last}});
  EXPECT_EQ(failed, (std::vector<std::size_t>{1}));
  EXPECT_EQ(seats(), (std::map<std::string, std::string>{
                         {"A1", "2:o1"}, {"A2", "2:o1"}, {"B1", "1:o9"}, {"C1", "2:o3"}}));
}

TEST_F(SeatScriptsTest, OneCallSellsSeveralShowsAndAnEarlierSaleWinsASharedSeat) {
  const std::vector<std::string> a1 = {"A1"};
  const std::vector<std::string> a1a2 = {"A1", "A2"};
  const std::vector<std::string> none;
  const auto show = s_.id("show");
  const auto other = s_.id("other");
  const auto failed = store_.mark_sold_all(
      {SeatSale{show, "o1", &a1}, SeatSale{other, "o2", &a1}, SeatSale{show, "o3", &a1a2},
       SeatSale{show, "o4", &none}, SeatSale{other, "o5", &a1a2}});
  // o3 wants o1's seat (sold one sale earlier in the same call): o3 changes nothing, A2 included.
  // o5 wants o2's seat in the other show. The same seat id in another show is another seat.
  EXPECT_EQ(failed, (std::vector<std::size_t>{2, 4}));
  EXPECT_EQ(seats(), (std::map<std::string, std::string>{{"A1", "2:o1"}}));
  EXPECT_EQ(seats("other"), (std::map<std::string, std::string>{{"A1", "2:o2"}}));
}

TEST_F(SeatScriptsTest, AnOrderOfManySeatsIsAllOrNothingAcrossTheScriptsChunks) {
  // 150 seats are read and written in three chunks of at most 64; the taken one is in the second.
  std::vector<std::string> many;
  for (int i = 0; i < 150; ++i) {
    many.push_back("M" + std::to_string(i));
  }
  set("M100", "2:o9");
  set("M7", "1:o1");
  const auto show = s_.id("show");
  EXPECT_EQ(store_.mark_sold_all({SeatSale{show, "o1", &many}}), (std::vector<std::size_t>{0}));
  EXPECT_EQ(seats(), (std::map<std::string, std::string>{{"M100", "2:o9"}, {"M7", "1:o1"}}))
      << "a refused sale changed a seat of an earlier chunk";

  ASSERT_TRUE(s_.redis().command({"HDEL", key(), "M100"}).ok);
  EXPECT_TRUE(store_.mark_sold_all({SeatSale{show, "o1", &many}}).empty());
  const auto sold = seats();
  EXPECT_EQ(sold.size(), many.size());
  for (const auto& seat : many) {
    EXPECT_EQ(sold.at(seat), "2:o1") << seat;
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
