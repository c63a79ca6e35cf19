// Every seat script against domain::next_seat, its specification, on the test Redis: for each op
// (lock, mark_sold, release, release_sold and the reconciler's three repairs) and each state of a
// seat (free, or locked or sold by the calling order or another), the script leaves the seat as
// next_seat answers, a free seat in the same call as next_seat answers for a free seat, and a seat
// outside the call untouched; when next_seat refuses, the script refuses and changes no seat.
#include <gtest/gtest.h>

#include <array>
#include <string>
#include <vector>

#include "domain/state_machine.hpp"
#include "persistence/stores/seat_scripts.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using domain::Seat;
using domain::SeatOp;
using domain::SeatState;

constexpr std::array kOps = {SeatOp::lock,         SeatOp::mark_sold,   SeatOp::release,
                             SeatOp::release_sold, SeatOp::repair_sold, SeatOp::repair_locked,
                             SeatOp::repair_free};

const char* name_of(SeatOp op) {
  switch (op) {
    case SeatOp::lock:
      return "lock";
    case SeatOp::mark_sold:
      return "mark_sold";
    case SeatOp::release:
      return "release";
    case SeatOp::release_sold:
      return "release_sold";
    case SeatOp::repair_sold:
      return "repair_sold";
    case SeatOp::repair_locked:
      return "repair_locked";
    case SeatOp::repair_free:
      return "repair_free";
  }
  return "?";
}

// The seat's value in the hash ("" for a free seat, whose field is absent).
std::string value_of(const Seat& seat) {
  switch (seat.state) {
    case SeatState::free:
      return "";
    case SeatState::locked:
      return persistence::locked_seat(seat.order_no);
    case SeatState::sold:
      return persistence::sold_seat(seat.order_no);
  }
  return "?";
}

class SeatTableTest : public ::testing::Test {
 protected:
  // Runs `op`'s script for `order` on `seats` of `show`, as production calls it; false when the
  // script refused (Redis must answer).
  bool run(SeatOp op, const std::string& show, const std::string& order,
           const std::vector<std::string>& seats) {
    persistence::Result<std::int64_t> result = std::int64_t{0};
    switch (op) {
      case SeatOp::lock:
        result = store_.lock(show, order, seats);
        break;
      case SeatOp::mark_sold:
        result = testing::mark_sold(store_, show, order, seats);
        break;
      case SeatOp::release:
        result = store_.release(show, order, seats);
        break;
      case SeatOp::release_sold:
        result = store_.release_sold(show, order, seats);
        break;
      case SeatOp::repair_sold:
      case SeatOp::repair_locked:
      case SeatOp::repair_free: {
        const auto repaired = store_.repair(op, show, order, seats);
        EXPECT_TRUE(repaired.ok()) << "redis did not answer the repair: " << repaired.detail();
        return true;
      }
    }
    if (!result.ok()) {
      EXPECT_EQ(result.error(), persistence::errc::conflict) << result.detail();
    }
    return result.ok();
  }

  testing::Stores s_;
  persistence::SeatStore store_{s_.redis()};
};

TEST_F(SeatTableTest, EveryScriptMovesEverySeatAsNextSeatSays) {
  const std::string mine = s_.id("mine");
  const std::string other = s_.id("other");
  const std::array<Seat, 5> states = {Seat{}, Seat{SeatState::locked, mine},
                                      Seat{SeatState::locked, other}, Seat{SeatState::sold, mine},
                                      Seat{SeatState::sold, other}};
  int cases = 0;
  for (const auto op : kOps) {
    for (const auto& before : states) {
      const auto show = s_.id("show-" + std::to_string(cases++));
      SCOPED_TRACE(std::string(name_of(op)) + " by the order, seat was '" + value_of(before) + "'");
      // S: the seat under test; F: a free seat in the same call; X: another order's seat outside
      // the call (it also registers the show's hash for clean-up).
      if (before.state != SeatState::free) {
        s_.set_seat(show, "S", value_of(before));
      }
      s_.set_seat(show, "X", persistence::locked_seat(other));
      const auto after = domain::next_seat(before, op, mine);
      const auto free_after = domain::next_seat(Seat{}, op, mine);
      ASSERT_TRUE(free_after.has_value()) << "every op accepts a free seat";

      const bool done = run(op, show, mine, {"S", "F"});

      EXPECT_EQ(done, after.has_value());
      if (after) {
        EXPECT_EQ(s_.seat(show, "S"), value_of(*after));
        EXPECT_EQ(s_.seat(show, "F"), value_of(*free_after));
      } else {
        EXPECT_EQ(s_.seat(show, "S"), value_of(before)) << "a refused op changed its seat";
        EXPECT_EQ(s_.seat(show, "F"), "") << "a refused op changed a seat beside it";
      }
      EXPECT_EQ(s_.seat(show, "X"), persistence::locked_seat(other))
          << "a script touched a seat outside its call";
    }
  }
  EXPECT_EQ(cases, static_cast<int>(kOps.size() * states.size()));
}

// The repairs also name each seat they took from another order, with that order's value.
TEST_F(SeatTableTest, RepairsNameTheSeatsTheyTookFromAnotherOrder) {
  const std::string mine = s_.id("mine");
  const std::string other = s_.id("other");
  const auto show = s_.id("show");
  for (const auto op : {SeatOp::repair_sold, SeatOp::repair_locked}) {
    SCOPED_TRACE(name_of(op));
    s_.set_seat(show, "A", persistence::sold_seat(other));
    s_.set_seat(show, "B", persistence::locked_seat(mine));
    s_.delete_seat(show, "C");
    const auto repaired = store_.repair(op, show, mine, {"A", "B", "C"});
    ASSERT_TRUE(repaired.ok()) << repaired.detail();
    ASSERT_EQ(repaired.value().taken.size(), 1u);
    EXPECT_EQ(repaired.value().taken[0].first, "A");
    EXPECT_EQ(repaired.value().taken[0].second, persistence::sold_seat(other));
    // repair_sold changes A, B and C; repair_locked A and C (B is already the order's).
    EXPECT_EQ(repaired.value().changed, op == SeatOp::repair_sold ? 3 : 2);
  }
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
