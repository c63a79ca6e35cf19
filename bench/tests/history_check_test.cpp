// The history checker judged on hand-made histories and end states: a clean one passes, and each
// kind of wrong end state (a lost ACK, a double apply, other content applied, an illegal or
// uncaused move, a stream that differs from the outbox, a seat held twice) is caught by its oracle;
// with the events partial (a failover) the end statuses are judged instead of the event walk.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "load/history.hpp"

namespace seatflow::bench {
namespace {

constexpr const char* kDigestA = "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";
constexpr const char* kDigestB = "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb";

// One pending payment P1 (order O1, seats R1/R2 of show S1) paid by callback C1: sent once,
// answered 503, resent, ACKed. The snapshot is the right end state.
struct Case {
  History history;
  Snapshot snapshot;

  Case() {
    history.run_prefix = "t";
    history.payments.push_back({"P1", "O1", "S1", {"R1", "R2"}, 0, 0});
    history.exchanges.push_back({"C1", "P1", 1, kDigestA, 1000, 1010, 503});
    history.exchanges.push_back({"C1", "P1", 1, kDigestA, 1100, 1110, 200});
    snapshot.payments["P1"] = {1, 1};
    snapshot.log["C1"] = {"P1", 1, kDigestA, 0};
    snapshot.events.push_back({1, "payment.succeeded:P1", "payment.succeeded", "P1", true});
    snapshot.events.push_back({2, "order.paid:O1", "order.paid", "P1", true});
    snapshot.stream = std::vector<std::pair<std::string, std::string>>{
        {"payment.succeeded:P1", "P1"}, {"order.paid:O1", "P1"}};
    snapshot.live_orders_of_seat["S1/R1"] = {"O1"};
    snapshot.live_orders_of_seat["S1/R2"] = {"O1"};
    snapshot.claim_of_seat["S1/R1"] = "O1";
    snapshot.claim_of_seat["S1/R2"] = "O1";
    snapshot.redis_seat["S1/R1"] = "2:O1";
    snapshot.redis_seat["S1/R2"] = "2:O1";
  }

  // The names of the oracles that failed.
  [[nodiscard]] std::vector<std::string> failures(const HistoryCheckOptions& options = {}) const {
    std::vector<std::string> out;
    for (const auto& item : check_history(history, snapshot, options).items) {
      if (!item.ok) {
        out.push_back(item.name + ": " + item.detail);
      }
    }
    return out;
  }
};

bool any_starts_with(const std::vector<std::string>& failures, std::string_view prefix) {
  for (const auto& f : failures) {
    if (f.starts_with(prefix)) {
      return true;
    }
  }
  return false;
}

TEST(HistoryCheckTest, CleanHistoryPasses) {
  const Case c;
  EXPECT_TRUE(c.failures().empty()) << c.failures().front();
  EXPECT_TRUE(check_history(c.history, c.snapshot).ok());
}

TEST(HistoryCheckTest, AckedCallbackWithoutLogRowIsCaught) {
  Case c;
  c.snapshot.log.clear();
  EXPECT_TRUE(any_starts_with(c.failures(), "every ACKed callback durable"));
}

TEST(HistoryCheckTest, AckedCallbackWhoseEffectIsLostIsCaught) {
  Case c;  // the log row survived, the move did not
  c.snapshot.payments["P1"] = {0, 0};
  c.snapshot.events.clear();
  c.snapshot.stream->clear();
  const auto f = c.failures();
  EXPECT_TRUE(any_starts_with(f, "every ACKed callback durable")) << f.size();
}

TEST(HistoryCheckTest, UnAckedCallbackMayBeAbsent) {
  Case c;  // only the 503 was seen: nothing applied is as right as applied
  c.history.exchanges.pop_back();
  c.snapshot = Snapshot{};
  c.snapshot.payments["P1"] = {0, 0};
  c.snapshot.stream = std::vector<std::pair<std::string, std::string>>{};
  c.snapshot.live_orders_of_seat["S1/R1"] = {"O1"};
  c.snapshot.claim_of_seat["S1/R1"] = "O1";
  c.snapshot.redis_seat["S1/R1"] = "1:O1";
  EXPECT_TRUE(c.failures().empty()) << c.failures().front();
}

TEST(HistoryCheckTest, DoubleApplyIsCaught) {
  Case c;  // two requests, but the row counts three applications
  c.snapshot.log["C1"].duplicate_count = 2;
  EXPECT_TRUE(any_starts_with(c.failures(), "each callback id applied at most once"));
}

TEST(HistoryCheckTest, RowOfAnIdNeverSentIsCaught) {
  Case c;
  c.snapshot.log["C9"] = {"P1", 1, kDigestA, 0};
  EXPECT_TRUE(any_starts_with(c.failures(), "each callback id applied at most once"));
}

TEST(HistoryCheckTest, OtherContentAppliedIsCaught) {
  Case c;  // the row holds content never sent under C1
  c.snapshot.log["C1"].sha256 = kDigestB;
  EXPECT_TRUE(any_starts_with(c.failures(), "same callback id with other content"));
  Case d;  // a second content of C1 was answered 200 although the first is the one applied
  d.history.exchanges.push_back({"C1", "P1", 1, kDigestB, 1200, 1210, 200});
  EXPECT_TRUE(any_starts_with(d.failures(), "same callback id with other content"));
}

TEST(HistoryCheckTest, IllegalMoveIsCaught) {
  Case c;  // success -> failed is no move of the payment state machine
  c.history.exchanges.push_back({"C2", "P1", 2, kDigestB, 1200, 1210, 200});
  c.snapshot.log["C2"] = {"P1", 2, kDigestB, 0};
  c.snapshot.payments["P1"] = {2, 1};
  c.snapshot.events.push_back({3, "payment.failed:P1", "payment.failed", "P1", true});
  c.snapshot.stream->push_back({"payment.failed:P1", "P1"});
  EXPECT_TRUE(any_starts_with(c.failures(), "every payment's moves legal"));
}

TEST(HistoryCheckTest, MoveWithoutACausingCallbackIsCaught) {
  Case c;  // paid although the gateway only ever sent a failure
  c.history.exchanges = {{"C1", "P1", 2, kDigestA, 1000, 1010, 503}};
  c.snapshot.log["C1"] = {"P1", 2, kDigestA, 0};
  EXPECT_TRUE(any_starts_with(c.failures(), "every payment's moves legal"));
}

TEST(HistoryCheckTest, EventsThatDisagreeWithTheRowsAreCaught) {
  Case c;  // the row says paid, the outbox has no order.paid
  c.snapshot.events.pop_back();
  c.snapshot.stream->pop_back();
  EXPECT_TRUE(any_starts_with(c.failures(), "every payment's moves legal"));
}

TEST(HistoryCheckTest, StreamOutOfOrderOrMissingIsCaught) {
  Case c;
  std::swap(c.snapshot.stream->front(), c.snapshot.stream->back());
  EXPECT_TRUE(any_starts_with(c.failures(), "event stream equal"));
  Case d;
  d.snapshot.stream->pop_back();
  EXPECT_TRUE(any_starts_with(d.failures(), "event stream equal"));
  // With Redis data lost, a missing entry is allowed but an uncommitted one never is.
  EXPECT_TRUE(d.failures({true}).empty()) << d.failures({true}).front();
  d.snapshot.stream->push_back({"payment.refunded:P1", "P1"});
  EXPECT_TRUE(any_starts_with(d.failures({true}), "event stream a per-payment subsequence"));
  Case e;  // committed but not yet marked published: the relay has not got to it
  e.snapshot.events.back().published = false;
  e.snapshot.stream->pop_back();
  EXPECT_TRUE(e.failures().empty()) << e.failures().front();
}

TEST(HistoryCheckTest, RepeatedStreamEntriesAreAtLeastOnce) {
  Case c;
  c.snapshot.stream->push_back({"payment.succeeded:P1", "P1"});
  EXPECT_TRUE(c.failures().empty()) << c.failures().front();
}

// After a PostgreSQL failover the witness slot is new: the events before it are not in it.
TEST(HistoryCheckTest, PartialEventsJudgeTheEndStatusesInstead) {
  const HistoryCheckOptions partial{false, true};
  Case c;  // paid before the failover: no event witnessed, none streamed
  c.snapshot.events.clear();
  c.snapshot.stream->clear();
  EXPECT_TRUE(any_starts_with(c.failures(), "every payment's moves legal"));
  EXPECT_TRUE(c.failures(partial).empty()) << c.failures(partial).front();
  Case d;  // paid although the gateway only ever sent a failure: no callback caused it
  d.history.exchanges = {{"C1", "P1", 2, kDigestA, 1000, 1010, 503}};
  d.snapshot.log["C1"] = {"P1", 2, kDigestA, 0};
  d.snapshot.events.clear();
  EXPECT_TRUE(any_starts_with(d.failures(partial), "every payment's end reachable"));
  Case e;  // back to pending: no legal move leads there from the seed's success
  e.history.payments.front().seed_payment_status = 1;
  e.history.payments.front().seed_order_status = 1;
  e.snapshot.payments["P1"] = {0, 1};
  EXPECT_TRUE(any_starts_with(e.failures(partial), "every payment's end reachable"));
  Case f;  // a move the witness saw twice is still a second move
  f.snapshot.events.push_back({3, "payment.succeeded:P1", "payment.succeeded", "P1", true});
  EXPECT_TRUE(any_starts_with(f.failures(partial), "each callback id applied at most once"));
}

TEST(HistoryCheckTest, SeatHeldByTwoLiveOrdersIsCaught) {
  Case c;
  c.snapshot.live_orders_of_seat["S1/R2"].push_back("O2");
  EXPECT_TRUE(any_starts_with(c.failures(), "no seat held by two live orders"));
  Case d;  // Redis sold the seat to another order
  d.snapshot.redis_seat["S1/R1"] = "2:O7";
  EXPECT_TRUE(any_starts_with(d.failures(), "no seat held by two live orders"));
}

TEST(HistoryCheckTest, HistoryFileRoundTripsAndToleratesACutLastLine) {
  const std::string path = ::testing::TempDir() + "history_check_test.jsonl";
  std::remove(path.c_str());
  const Case c;
  {
    HistoryWriter writer(path);
    writer.run(c.history.run_prefix);
    writer.payment(c.history.payments.front());
    for (const auto& e : c.history.exchanges) {
      writer.exchange(e);
    }
  }
  { std::ofstream(path, std::ios::app) << R"({"t":"x","cb":"C1","pay)"; }
  const auto read = read_history(path);
  EXPECT_EQ(read.run_prefix, "t");
  ASSERT_EQ(read.payments.size(), 1u);
  EXPECT_EQ(read.payments.front().seats, (std::vector<std::string>{"R1", "R2"}));
  ASSERT_EQ(read.exchanges.size(), 2u);
  EXPECT_EQ(read.exchanges.back().http, 200);
  EXPECT_EQ(read.exchanges.back().sha256, kDigestA);
  EXPECT_TRUE(check_history(read, c.snapshot).ok());
  // A malformed line in the middle is an error, not silently skipped.
  {
    std::ofstream(path, std::ios::app) << "\n"
                                       << R"({"t":"run","prefix":"t"})"
                                       << "\n";
  }
  EXPECT_THROW((void)read_history(path), std::runtime_error);
  std::remove(path.c_str());
}

}  // namespace
}  // namespace seatflow::bench
