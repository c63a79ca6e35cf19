// The actor pipeline (router → payment actor → persistence actors) against real stores:
// concurrency, ordering, limits and passivation.
#include <gtest/gtest.h>

#include <condition_variable>
#include <map>
#include <mutex>
#include <random>
#include <thread>

#include "actors/engine.hpp"
#include "http/status.hpp"
#include "support/failpoints.hpp"
#include "support/stores.hpp"

namespace seatflow {
namespace {
namespace SEATFLOW_UNITY_ID {

using domain::CallbackKind;
using domain::CallbackResult;
using testing::make_callback;

constexpr auto kWaitLimit = std::chrono::seconds(60);

// Collects replies from actor threads and lets the test wait for a number of them.
class Replies {
 public:
  actors::ReplyFn slot(std::string tag = {}) {
    return [this, tag](const domain::CallbackOutcome& outcome) {
      std::lock_guard lock(mutex_);
      results_.emplace_back(tag, outcome.result);
      changed_.notify_all();
    };
  }
  // Waits until `n` replies arrived; false on timeout (the test then fails, it never hangs).
  bool wait_for(std::size_t n) {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, kWaitLimit, [&] { return results_.size() >= n; });
  }
  std::size_t count(CallbackResult result) {
    std::lock_guard lock(mutex_);
    return static_cast<std::size_t>(
        std::count_if(results_.begin(), results_.end(),
                      [&](const auto& entry) { return entry.second == result; }));
  }
  std::size_t size() {
    std::lock_guard lock(mutex_);
    return results_.size();
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<std::pair<std::string, CallbackResult>> results_;
};

actors::EngineSettings settings(persistence::Failpoints* failpoints) {
  actors::EngineSettings out;
  out.store.pg_dsn = testing::test_pg_dsn();
  out.store.redis = testing::test_redis_endpoint();
  out.store.failpoints = failpoints;
  out.store.callback_status = &http::callback_status;
  out.scheduler_threads = 2;
  out.pg_pool_size = 4;
  // These tests watch the callback path alone: no background actor writes beside it.
  out.event_relay.enabled = false;
  out.retention.enabled = false;
  out.reconciler.interval_ms = 0;
  return out;
}

// One pending payment holding seat A1 of its own show, and its success callback "cb"; ids unique
// to the test.
struct OnePending {
  explicit OnePending(testing::Stores& s)
      : payment(s.id("pay")),
        order(s.id("order")),
        show(s.id("show")),
        callback(make_callback(s.id("cb"), payment, CallbackKind::success)) {
    s.create_pending(payment, order, show, {"A1"});
  }
  std::string payment;
  std::string order;
  std::string show;
  domain::VerifiedCallback callback;
};

// Submits `callback` as the first callback `replies` sees and waits until it is applied.
::testing::AssertionResult apply_first(actors::Engine& engine, Replies& replies,
                                       const domain::VerifiedCallback& callback) {
  engine.submit(callback, replies.slot());
  if (!replies.wait_for(1)) {
    return ::testing::AssertionFailure() << "no reply within the wait limit";
  }
  if (replies.count(CallbackResult::applied) != 1) {
    return ::testing::AssertionFailure() << "the first callback was not applied";
  }
  return ::testing::AssertionSuccess();
}

// Waits (bounded) until every payment actor has passivated; the live count at the end.
std::size_t await_no_payment_actors(const actors::Engine& engine) {
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  while (engine.live_payment_actors() > 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return engine.live_payment_actors();
}

TEST(EngineTest, TwoHundredIdenticalCallbacksAtOnceApplyOnce) {
  testing::Stores s;
  const auto payment = s.id("pay");
  const auto order = s.id("order");
  s.create_pending(payment, order, s.id("show"), {"A1", "A2", "A3"});
  actors::Engine engine(settings(nullptr));
  Replies replies;
  const auto callback = make_callback(s.id("storm"), payment, CallbackKind::success);
  constexpr std::size_t kCopies = 200;
  std::vector<std::thread> senders;
  for (int t = 0; t < 4; ++t) {
    senders.emplace_back([&] {
      for (std::size_t i = 0; i < kCopies / 4; ++i) {
        engine.submit(callback, replies.slot());
      }
    });
  }
  for (auto& sender : senders) {
    sender.join();
  }
  ASSERT_TRUE(replies.wait_for(kCopies));
  EXPECT_EQ(replies.count(CallbackResult::applied), 1u);
  EXPECT_EQ(replies.count(CallbackResult::duplicate), kCopies - 1);
  // Copies folded into the one in flight, or answered from memory, are counted at the flush.
  ASSERT_TRUE(engine.flush_duplicates(std::chrono::seconds(10)));
  EXPECT_EQ(s.log_row(s.id("storm"))->duplicate_count, static_cast<int>(kCopies - 1));
  EXPECT_EQ(s.payment_status(payment), 1);
  EXPECT_EQ(s.order_status(order), 1);
  EXPECT_EQ(s.seat(s.id("show"), "A3"), "2:" + order);
}

TEST(EngineTest, InterleavedFailuresAndSuccessesEndInLegalStates) {
  testing::Stores s;
  constexpr int kPayments = 40;
  std::mt19937 rng(7);
  struct Plan {
    std::string payment, order, seat;
    bool any_success = false;
  };
  std::vector<Plan> plans(kPayments);
  std::vector<domain::VerifiedCallback> all;
  const auto show = s.id("show");
  for (int p = 0; p < kPayments; ++p) {
    auto& plan = plans[p];
    plan.payment = s.id("pay" + std::to_string(p));
    plan.order = s.id("order" + std::to_string(p));
    plan.seat = "S" + std::to_string(p);
    s.create_pending(plan.payment, plan.order, show, {plan.seat});
    const int events = 1 + static_cast<int>(rng() % 5);
    for (int e = 0; e < events; ++e) {
      const bool success = rng() % 3 == 0;
      plan.any_success = plan.any_success || success;
      auto cb =
          make_callback(s.id("cb" + std::to_string(p) + "-" + std::to_string(e)), plan.payment,
                        success ? CallbackKind::success : CallbackKind::failure);
      // Every callback is delivered twice, at shuffled times.
      all.push_back(cb);
      all.push_back(cb);
    }
  }
  std::shuffle(all.begin(), all.end(), rng);
  actors::Engine engine(settings(nullptr));
  Replies replies;
  for (const auto& cb : all) {
    engine.submit(cb, replies.slot());
  }
  ASSERT_TRUE(replies.wait_for(all.size()));
  EXPECT_EQ(replies.count(CallbackResult::unavailable), 0u);
  EXPECT_EQ(replies.count(CallbackResult::mark_sold_failed), 0u);
  for (const auto& plan : plans) {
    const int payment = s.payment_status(plan.payment);
    const int order = s.order_status(plan.order);
    const auto seat = s.seat(show, plan.seat);
    if (plan.any_success) {
      EXPECT_EQ(payment, 1) << plan.payment;
      EXPECT_TRUE(s.payment_paid_at_set(plan.payment));
      EXPECT_EQ(order, 1) << plan.order;
      EXPECT_EQ(seat, "2:" + plan.order);
    } else {
      EXPECT_EQ(payment, 2) << plan.payment;
      EXPECT_FALSE(s.payment_paid_at_set(plan.payment));
      EXPECT_EQ(order, 0) << plan.order;
      EXPECT_EQ(seat, "1:" + plan.order);
    }
  }
}

TEST(EngineTest, DuplicatesAnsweredFromMemoryAreCountedAndHealed) {
  testing::Stores s;
  const OnePending p(s);
  const auto& [payment, order, show, callback] = p;
  auto config = settings(nullptr);
  config.flusher.interval_ms = 50;
  actors::Engine engine(config);
  Replies replies;
  ASSERT_TRUE(apply_first(engine, replies, callback));
  s.set_seat(show, "A1", "1:" + order);  // drift after the sale
  for (int i = 0; i < 30; ++i) {
    engine.submit(callback, replies.slot());
  }
  ASSERT_TRUE(replies.wait_for(31));
  EXPECT_EQ(replies.count(CallbackResult::duplicate), 30u);
  // The payment actor published the commit before its reply: every copy was answered by submit.
  EXPECT_EQ(engine.settled_answers(), 30u);
  // The timer flush (50 ms) writes the counts and re-runs mark_sold without being asked. The
  // heal reaches Redis after the count's commit, so both are awaited: a row showing 30 while
  // the seat is still drifted is the moment between the two, not a failure.
  const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
  while ((s.log_row(s.id("cb"))->duplicate_count < 30 || s.seat(show, "A1") != "2:" + order) &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_EQ(s.log_row(s.id("cb"))->duplicate_count, 30);
  EXPECT_EQ(s.seat(show, "A1"), "2:" + order);
  // A copy with the same id but other content is not a duplicate: it goes to the database.
  engine.submit(make_callback(s.id("cb"), payment, CallbackKind::failure), replies.slot());
  ASSERT_TRUE(replies.wait_for(32));
  EXPECT_EQ(replies.count(CallbackResult::conflict), 1u);
}

// Every duplicate-count flush loses its COMMIT's answer (flush_commit_unknown): each one commits,
// and the flush after it must learn that from PostgreSQL instead of writing its counts again.
// Regression: the flusher kept an in-doubt flush's counts for the next tick, so each flush wrote
// them once more (a chaos run with PostgreSQL black-holed counted a duplicate 7 times after 5
// requests).
TEST(EngineTest, ADuplicateFlushInDoubtIsCountedOnce) {
  testing::Stores s;
  const OnePending p(s);
  const auto& [payment, order, show, callback] = p;
  auto failpoints = testing::failpoints("flush_commit_unknown=error");
  auto config = settings(&failpoints);
  config.flusher.interval_ms = 60'000;  // flushes only when asked
  actors::Engine engine(config);
  Replies replies;
  ASSERT_TRUE(apply_first(engine, replies, callback));
  for (int i = 0; i < 5; ++i) {
    engine.submit(callback, replies.slot());
  }
  ASSERT_TRUE(replies.wait_for(6));
  ASSERT_EQ(engine.settled_answers(), 5u);
  // The first flush commits the 5 and loses the answer; the next ones settle that doubt (committed)
  // and have nothing more to write.
  for (int i = 0; i < 3; ++i) {
    (void)engine.flush_duplicates(kWaitLimit);
  }
  EXPECT_GE(failpoints.hits(persistence::FailpointId::flush_commit_unknown), 1u);
  EXPECT_EQ(s.log_row(s.id("cb"))->duplicate_count, 5);
}

TEST(EngineTest, SelfHealRunsAtMostOncePerHealInterval) {
  testing::Stores s;
  const OnePending p(s);
  const auto& [payment, order, show, callback] = p;
  auto config = settings(nullptr);
  config.flusher.interval_ms = 60'000;  // flushes only when asked
  config.flusher.heal_interval_ms = 3'600'000;
  actors::Engine engine(config);
  Replies replies;
  ASSERT_TRUE(apply_first(engine, replies, callback));
  s.set_seat(show, "A1", "1:" + order);  // drift after the sale
  engine.submit(callback, replies.slot());
  ASSERT_TRUE(replies.wait_for(2));
  ASSERT_TRUE(engine.flush_duplicates(kWaitLimit));
  EXPECT_EQ(s.seat(show, "A1"), "2:" + order) << "the first duplicate heals";
  s.set_seat(show, "A1", "1:" + order);  // drift again, within the heal interval
  for (int i = 0; i < 5; ++i) {
    engine.submit(callback, replies.slot());
  }
  ASSERT_TRUE(replies.wait_for(7));
  ASSERT_TRUE(engine.flush_duplicates(kWaitLimit));
  EXPECT_EQ(s.log_row(s.id("cb"))->duplicate_count, 6) << "counts are still exact";
  EXPECT_EQ(s.seat(show, "A1"), "1:" + order) << "no second heal within the interval";
}

TEST(EngineTest, ZeroHealIntervalHealsOnEveryFlush) {
  testing::Stores s;
  const OnePending p(s);
  const auto& [payment, order, show, callback] = p;
  auto config = settings(nullptr);
  config.flusher.interval_ms = 60'000;
  config.flusher.heal_interval_ms = 0;
  actors::Engine engine(config);
  Replies replies;
  ASSERT_TRUE(apply_first(engine, replies, callback));
  for (int round = 0; round < 2; ++round) {
    s.set_seat(show, "A1", "1:" + order);
    engine.submit(callback, replies.slot());
    ASSERT_TRUE(replies.wait_for(2 + static_cast<std::size_t>(round)));
    ASSERT_TRUE(engine.flush_duplicates(kWaitLimit));
    EXPECT_EQ(s.seat(show, "A1"), "2:" + order) << "round " << round;
  }
}

// Regression: a flusher tick that found a flush still in flight was dropped, and once the traffic
// stopped nothing re-armed the timer, so duplicate counts noted during a slow flush stayed in
// memory until shutdown. The flush commit is slowed (pg_commit delay) and a second duplicate is
// noted while the first flush is in flight; its count must reach the row without a shutdown.
TEST(EngineTest, DuplicateNotedDuringASlowFlushIsFlushedLater) {
  testing::Stores s;
  const OnePending p(s);
  auto failpoints = testing::failpoints("pg_commit=delay:400ms");
  auto config = settings(&failpoints);
  config.flusher.interval_ms = 50;
  actors::Engine engine(config);
  Replies replies;
  const auto& callback = p.callback;
  ASSERT_TRUE(apply_first(engine, replies, callback));
  engine.submit(callback, replies.slot());  // from memory: noted, flushed after 50 ms (slowly)
  ASSERT_TRUE(replies.wait_for(2));
  std::this_thread::sleep_for(std::chrono::milliseconds(150));
  engine.submit(callback, replies.slot());  // noted while that flush is in flight
  ASSERT_TRUE(replies.wait_for(3));
  EXPECT_EQ(replies.count(CallbackResult::duplicate), 2u);
  EXPECT_EQ(s.await_duplicate_count(s.id("cb"), 2), 2);
}

// The commit batcher answers a callback at its deadline (the payment actor sets no timer of its
// own): a commit slower than the persist timeout is answered unavailable, its late outcome is not
// answered a second time, and the gateway's retry finds it committed: a duplicate.
TEST(EngineTest, ACommitSlowerThanItsDeadlineIsAnsweredUnavailableAndTheRetryIsADuplicate) {
  testing::Stores s;
  const OnePending p(s);
  // The deadline leaves time for the callback to reach a persistence worker on a loaded machine
  // (a callback still queued at its deadline is answered without ever running, and this test
  // needs it to run); the commit is slower still.
  auto failpoints = testing::failpoints("pg_commit=delay:2500ms");
  auto config = settings(&failpoints);
  config.router.payment.persist_timeout_ms = 1'000;
  Replies replies;
  {
    actors::Engine engine(config);
    engine.submit(p.callback, replies.slot());
    ASSERT_TRUE(replies.wait_for(1));
    EXPECT_EQ(replies.count(CallbackResult::unavailable), 1u);
    // The slow transaction commits after that answer.
    const auto deadline = std::chrono::steady_clock::now() + kWaitLimit;
    while (s.payment_status(p.payment) != 1 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    ASSERT_EQ(s.payment_status(p.payment), 1);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(replies.size(), 1u) << "the late outcome was answered again";
  }
  actors::Engine engine(settings(nullptr));
  engine.submit(p.callback, replies.slot());
  ASSERT_TRUE(replies.wait_for(2));
  EXPECT_EQ(replies.count(CallbackResult::duplicate), 1u);
  EXPECT_EQ(replies.size(), 2u);
}

TEST(EngineTest, ShutdownFlushesDuplicateCounts) {
  testing::Stores s;
  const OnePending p(s);
  const auto& callback = p.callback;
  auto config = settings(nullptr);
  config.flusher.interval_ms = 60'000;  // only the shutdown flush can write them
  {
    actors::Engine engine(config);
    Replies replies;
    for (int i = 0; i < 50; ++i) {
      engine.submit(callback, replies.slot());
    }
    ASSERT_TRUE(replies.wait_for(50));
    engine.shutdown();
  }
  EXPECT_EQ(s.log_row(s.id("cb"))->duplicate_count, 49);
}

// Copies answered on the callers' threads while shutdown() runs: every `duplicate` answer is in the
// final flush (shutdown waits for the submits in progress before it flushes), and a submit after
// shutdown is refused at once instead of touching stopped actors.
TEST(EngineTest, SubmitsRacingShutdownAreCountedOrRefused) {
  testing::Stores s;
  const OnePending p(s);
  auto config = settings(nullptr);
  config.flusher.interval_ms = 60'000;  // only the shutdown flush writes the counts
  actors::Engine engine(config);
  Replies first;
  ASSERT_TRUE(apply_first(engine, first, p.callback));
  std::atomic<std::int64_t> duplicates{0};
  std::atomic<std::int64_t> refused{0};
  std::atomic<bool> stop{false};
  std::vector<std::thread> senders;
  for (int t = 0; t < 3; ++t) {
    senders.emplace_back([&] {
      // Bounded: each sender stops at its first refusal or after 200 000 submits.
      for (int i = 0; i < 200'000 && !stop.load(); ++i) {
        engine.submit(p.callback, [&](const domain::CallbackOutcome& outcome) {
          if (outcome.result == CallbackResult::duplicate) {
            duplicates.fetch_add(1);
          } else if (outcome.result == CallbackResult::unavailable) {
            refused.fetch_add(1);
            stop = true;
          }
        });
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  engine.shutdown();
  for (auto& sender : senders) {
    sender.join();
  }
  EXPECT_GT(duplicates.load(), 0);
  EXPECT_EQ(s.log_row(s.id("cb"))->duplicate_count, duplicates.load());
  CallbackResult after = CallbackResult::applied;
  engine.submit(p.callback,
                [&](const domain::CallbackOutcome& outcome) { after = outcome.result; });
  EXPECT_EQ(after, CallbackResult::unavailable);  // answered before submit returned
}

TEST(EngineTest, ManyPaymentsAtOnceCommitInBatches) {
  testing::Stores s;
  constexpr int kPayments = 300;
  std::vector<std::string> payments;
  for (int i = 0; i < kPayments; ++i) {
    payments.push_back(s.id("pay" + std::to_string(i)));
    s.create_pending(payments.back(), s.id("order" + std::to_string(i)), s.id("show"),
                     {"S" + std::to_string(i)});
  }
  auto config = settings(nullptr);
  config.pg_pool_size = 1;  // one worker: everything queued behind the first commit is batched
  actors::Engine engine(config);
  Replies replies;
  for (int i = 0; i < kPayments; ++i) {
    engine.submit(make_callback(s.id("cb" + std::to_string(i)), payments[i],
                                i % 5 == 0 ? CallbackKind::failure : CallbackKind::success),
                  replies.slot());
  }
  ASSERT_TRUE(replies.wait_for(kPayments));
  EXPECT_EQ(replies.count(CallbackResult::applied), static_cast<std::size_t>(kPayments));
  for (int i = 0; i < kPayments; ++i) {
    EXPECT_EQ(s.payment_status(payments[i]), i % 5 == 0 ? 2 : 1) << payments[i];
    EXPECT_EQ(s.seat(s.id("show"), "S" + std::to_string(i)),
              (i % 5 == 0 ? "1:" : "2:") + s.id("order" + std::to_string(i)));
  }
}

TEST(EngineTest, PaymentMailboxLimitAnswersUnavailable) {
  testing::Stores s;
  const auto payment = s.id("pay");
  s.create_pending(payment, s.id("order"), s.id("show"), {"A1"});
  auto failpoints = testing::failpoints("pg_commit=delay:300ms");
  auto config = settings(&failpoints);
  config.router.payment.mailbox_callbacks_max = 2;
  actors::Engine engine(config);
  Replies replies;
  for (int i = 0; i < 10; ++i) {
    engine.submit(make_callback(s.id("cb" + std::to_string(i)), payment, CallbackKind::failure),
                  replies.slot());
  }
  ASSERT_TRUE(replies.wait_for(10));
  // One in flight plus one queued fit in a mailbox of two; the other eight are refused at once.
  EXPECT_EQ(replies.count(CallbackResult::unavailable), 8u);
  EXPECT_EQ(replies.count(CallbackResult::applied) + replies.count(CallbackResult::ignored), 2u);
}

TEST(EngineTest, PaymentActorLimitAnswersUnavailable) {
  testing::Stores s;
  auto failpoints = testing::failpoints("pg_commit=delay:300ms");
  auto config = settings(&failpoints);
  config.router.payment_actors_max = 2;
  actors::Engine engine(config);
  Replies replies;
  for (int i = 0; i < 3; ++i) {
    const auto payment = s.id("pay" + std::to_string(i));
    s.create_pending(payment, s.id("order" + std::to_string(i)), s.id("show"),
                     {"A" + std::to_string(i)});
    engine.submit(make_callback(s.id("cb" + std::to_string(i)), payment, CallbackKind::failure),
                  replies.slot());
  }
  ASSERT_TRUE(replies.wait_for(3));
  EXPECT_EQ(replies.count(CallbackResult::unavailable), 1u);
  EXPECT_EQ(replies.count(CallbackResult::applied), 2u);
}

TEST(EngineTest, IdlePaymentActorsArePassivated) {
  testing::Stores s;
  auto config = settings(nullptr);
  config.router.payment.passivate_idle_ms = 50;
  actors::Engine engine(config);
  Replies replies;
  constexpr int kPayments = 20;
  for (int i = 0; i < kPayments; ++i) {
    const auto payment = s.id("pay" + std::to_string(i));
    s.create_pending(payment, s.id("order" + std::to_string(i)), s.id("show"),
                     {"A" + std::to_string(i)});
    engine.submit(make_callback(s.id("cb" + std::to_string(i)), payment, CallbackKind::success),
                  replies.slot());
  }
  ASSERT_TRUE(replies.wait_for(kPayments));
  EXPECT_EQ(replies.count(CallbackResult::applied), static_cast<std::size_t>(kPayments));
  EXPECT_EQ(await_no_payment_actors(engine), 0u);
  // A passivated payment comes back on demand and still knows nothing it should not; its
  // published answers went with it, so the copy takes the database path.
  engine.submit(make_callback(s.id("cb0"), s.id("pay0"), CallbackKind::success), replies.slot());
  ASSERT_TRUE(replies.wait_for(kPayments + 1));
  EXPECT_EQ(replies.count(CallbackResult::duplicate), 1u);
  EXPECT_EQ(engine.settled_answers(), 0u);
}

// Copies answered from memory never reach the payment actor; while they keep coming, it is not
// passivated, so none of them is sent to the database (a storm longer than passivate_idle_ms sent
// every payment's next copy to PostgreSQL at once). Once they stop, it is.
TEST(EngineTest, APaymentWhoseCopiesAreAnsweredFromMemoryStaysAlive) {
  testing::Stores s;
  const OnePending p(s);
  auto config = settings(nullptr);
  config.router.payment.passivate_idle_ms = 300;
  actors::Engine engine(config);
  Replies replies;
  ASSERT_TRUE(apply_first(engine, replies, p.callback));
  constexpr std::size_t kCopies = 200;  // one every 5 ms: a second, three idle periods
  for (std::size_t i = 0; i < kCopies; ++i) {
    engine.submit(p.callback, replies.slot());
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ASSERT_TRUE(replies.wait_for(kCopies + 1));
  EXPECT_EQ(replies.count(CallbackResult::duplicate), kCopies);
  EXPECT_EQ(engine.settled_answers(), kCopies) << "a copy left memory for the database";
  EXPECT_EQ(await_no_payment_actors(engine), 0u);
}

TEST(EngineTest, UnreachableDatabaseAnswersUnavailable) {
  testing::Stores s;
  auto config = settings(nullptr);
  config.store.pg_dsn = "postgresql://postgres@127.0.0.1:1/seatflow?connect_timeout=1";
  config.router.payment.persist_timeout_ms = 5000;
  actors::Engine engine(config);
  Replies replies;
  engine.submit(make_callback(s.id("cb"), s.id("pay"), CallbackKind::success), replies.slot());
  ASSERT_TRUE(replies.wait_for(1));
  EXPECT_EQ(replies.count(CallbackResult::unavailable), 1u);
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow
