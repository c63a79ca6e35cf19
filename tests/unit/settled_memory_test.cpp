// SettledAnswers (what the HTTP thread may answer from memory) and DuplicateLedger (what it owes
// the database): ownership across passivation, digests, draining and the entry limit.
#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "actors/settled_memory.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using actors::DuplicateLedger;
using actors::SettledAnswers;

TEST(SettledAnswersTest, AnswersOnlyAPublishedIdWithItsDigest) {
  SettledAnswers answers;
  EXPECT_FALSE(answers.settled("P1", "cb1", "d1"));
  answers.publish("P1", 7, {{"cb1", "d1"}, {"cb2", "d2"}});
  EXPECT_TRUE(answers.settled("P1", "cb1", "d1"));
  EXPECT_TRUE(answers.settled("P1", "cb2", "d2"));
  EXPECT_FALSE(answers.settled("P1", "cb1", "d2"));  // same id, other content: a conflict
  EXPECT_FALSE(answers.settled("P2", "cb1", "d1"));  // another payment
  EXPECT_EQ(answers.size(), 1u);
}

TEST(SettledAnswersTest, PublishReplacesTheList) {
  SettledAnswers answers;
  answers.publish("P1", 7, {{"cb1", "d1"}});
  answers.publish("P1", 7, {{"cb2", "d2"}});
  EXPECT_FALSE(answers.settled("P1", "cb1", "d1"));
  EXPECT_TRUE(answers.settled("P1", "cb2", "d2"));
}

TEST(SettledAnswersTest, APassivatedActorDoesNotForgetItsSuccessorsEntry) {
  SettledAnswers answers;
  answers.publish("P1", 7, {{"cb1", "d1"}});
  answers.publish("P1", 8, {{"cb1", "d1"}, {"cb2", "d2"}});  // successor actor, same payment
  answers.forget("P1", 7);                                   // the old actor's late stop
  EXPECT_TRUE(answers.settled("P1", "cb2", "d2"));
  answers.forget("P1", 8);
  EXPECT_FALSE(answers.settled("P1", "cb1", "d1"));
  EXPECT_EQ(answers.size(), 0u);
}

TEST(SettledAnswersTest, ReadersAndAWriterAtOnce) {
  SettledAnswers answers;
  answers.publish("P0", 1, {{"cb", "d"}});
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> misses{0};
  std::thread reader([&] {
    while (!stop.load()) {
      if (!answers.settled("P0", "cb", "d")) {
        misses.fetch_add(1);
      }
    }
  });
  for (int i = 1; i <= 20'000; ++i) {
    const auto payment = "P" + std::to_string(i);
    answers.publish(payment, 1, {{"cb", "d"}});
    answers.forget(payment, 1);
  }
  stop = true;
  reader.join();
  EXPECT_EQ(misses.load(), 0u);  // P0 was never touched, so it was never missing
  EXPECT_EQ(answers.size(), 1u);
}

TEST(DuplicateLedgerTest, SumsCountsAndWakesTheFlusherOncePerDrain) {
  auto flag = std::make_shared<std::atomic<bool>>(true);
  DuplicateLedger ledger(100, flag);
  EXPECT_TRUE(ledger.empty());
  EXPECT_TRUE(ledger.note("cb1", "P1", 1, false));  // first note since the last drain
  EXPECT_FALSE(ledger.note("cb1", "P1", 2, true));  // already woken
  EXPECT_FALSE(ledger.note("cb2", "P2", 5, false));
  EXPECT_FALSE(ledger.empty());
  auto drained = ledger.drain();
  std::sort(drained.counts.begin(), drained.counts.end());
  ASSERT_EQ(drained.counts.size(), 2u);
  EXPECT_EQ(drained.counts[0].first, "cb1");
  EXPECT_EQ(drained.counts[0].second.first, "P1");
  EXPECT_EQ(drained.counts[0].second.second, 3);
  EXPECT_EQ(drained.counts[1].second.second, 5);
  EXPECT_EQ(drained.heal_payments, std::vector<std::string>{"P1"});
  EXPECT_TRUE(ledger.empty());
  EXPECT_TRUE(ledger.note("cb1", "P1", 1, false));  // drained: the next note wakes it again
  EXPECT_TRUE(flag->load());
}

TEST(DuplicateLedgerTest, TooManyWaitingIdsSwitchMemoryAnswersOff) {
  auto flag = std::make_shared<std::atomic<bool>>(true);
  DuplicateLedger ledger(3, flag);
  ledger.note("cb1", "P1", 1, false);
  ledger.note("cb2", "P1", 1, false);
  ledger.note("cb1", "P1", 1, false);  // a repeat is not a new entry
  EXPECT_TRUE(flag->load());
  ledger.note("cb3", "P1", 1, false);
  EXPECT_FALSE(flag->load());
  EXPECT_EQ(ledger.drain().counts.size(), 3u);
}

TEST(DuplicateLedgerTest, NothingIsLostUnderConcurrentNotesAndDrains) {
  auto flag = std::make_shared<std::atomic<bool>>(true);
  DuplicateLedger ledger(1'000'000, flag);
  constexpr int kThreads = 3;
  constexpr int kNotes = 20'000;
  std::atomic<int> done{0};
  std::int64_t total = 0;
  std::vector<std::thread> writers;
  for (int t = 0; t < kThreads; ++t) {
    writers.emplace_back([&, t] {
      for (int i = 0; i < kNotes; ++i) {
        ledger.note("cb" + std::to_string((i + t) % 50), "P", 1, false);
      }
      done.fetch_add(1);
    });
  }
  while (done.load() < kThreads) {
    for (const auto& entry : ledger.drain().counts) {
      total += entry.second.second;
    }
  }
  for (auto& writer : writers) {
    writer.join();
  }
  for (const auto& entry : ledger.drain().counts) {
    total += entry.second.second;
  }
  EXPECT_EQ(total, static_cast<std::int64_t>(kThreads) * kNotes);
  EXPECT_TRUE(ledger.empty());
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
