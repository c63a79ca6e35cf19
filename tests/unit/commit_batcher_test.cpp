// Unit tests for the commit batcher's fill wait: while a batch is in flight, a free persistence
// actor gathers callbacks instead of committing them one by one, but only as many as the recent
// peak of callbacks held at once leaves to come; with nothing in flight, or once the oldest has
// waited its fill wait, a small batch goes at once. The persistence actors are
// stand-ins that record the batches they get (no store is involved: the batcher only routes).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include <caf/all.hpp>

#include "actors/commit_batcher.hpp"
#include "actors/messages.hpp"
#include "support/engine_fixture.hpp"

namespace seatflow::actors {
namespace {
namespace SEATFLOW_UNITY_ID {

using release_atom = caf::atom_constant<caf::atom("release")>;

// The batch sizes each stand-in received, in order; waited on from the test thread.
struct Seen {
  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::vector<std::size_t>> sizes;  // per worker

  void record(std::size_t worker, std::size_t size) {
    const std::lock_guard<std::mutex> lock(mutex);
    sizes[worker].push_back(size);
    changed.notify_all();
  }

  // The sizes `worker` has seen once it has seen `count` batches (a bound so a broken batcher
  // fails the test instead of hanging it, not a timing claim).
  std::vector<std::size_t> await(std::size_t worker, std::size_t count) {
    std::unique_lock<std::mutex> lock(mutex);
    changed.wait_for(lock, std::chrono::seconds(10), [&] { return sizes[worker].size() >= count; });
    return sizes[worker];
  }
};

BatchOutcome applied(const PersistBatch& batch) {
  return BatchOutcome{std::vector<domain::CallbackOutcome>(
      batch.callbacks.size(), domain::CallbackOutcome{domain::CallbackResult::applied, ""})};
}

// A stand-in persistence actor: answers each batch at once, or (hold) only on release_atom. It
// takes no flush (the batcher sends none).
using StandInWorker = PersistenceActor::extend<caf::reacts_to<release_atom>>;
struct WorkerState {
  std::vector<std::pair<caf::typed_response_promise<BatchOutcome>, BatchOutcome>> held;
};
StandInWorker::behavior_type worker(StandInWorker::stateful_pointer<WorkerState> self,
                                    std::shared_ptr<Seen> seen, std::size_t index, bool hold) {
  return {
      [=](PersistBatch& batch) -> caf::result<BatchOutcome> {
        seen->record(index, batch.callbacks.size());
        if (!hold) {
          return applied(batch);
        }
        auto promise = self->make_response_promise<BatchOutcome>();
        self->state.held.emplace_back(promise, applied(batch));
        return promise;
      },
      [=](release_atom) {
        for (auto& [promise, outcome] : self->state.held) {
          promise.deliver(std::move(outcome));
        }
        self->state.held.clear();
      },
      [](FlushJob&) -> persistence::FlushResult {
        ADD_FAILURE() << "the commit batcher sent a flush";
        return {};
      },
  };
}

PersistRequest request(int n) {
  PersistRequest r;
  r.callback.callback_id = "cb-" + std::to_string(n);
  r.callback.payment_no = "P" + std::to_string(n);
  r.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  return r;
}

// Which stand-ins hold their batches until released.
enum class Workers { held_then_quick, quick_then_held, both_held };

struct Fixture {
  // First, so that it outlives the actor system and the batcher's probe that unregisters from it.
  observability::Registry metrics;
  caf::actor_system_config config;
  caf::actor_system system{config};
  std::shared_ptr<Seen> seen = std::make_shared<Seen>();
  std::vector<StandInWorker> workers;
  std::shared_ptr<BatcherProbe> probe = std::make_shared<BatcherProbe>(metrics);
  CommitBatcherActor batcher;

  explicit Fixture(BatcherLimits limits, Workers kind = Workers::held_then_quick) {
    seen->sizes.resize(2);
    workers.push_back(system.spawn(worker, seen, std::size_t{0}, kind != Workers::quick_then_held));
    workers.push_back(system.spawn(worker, seen, std::size_t{1}, kind != Workers::held_then_quick));
    batcher =
        system.spawn(commit_batcher, std::vector<PersistenceActor>(workers.begin(), workers.end()),
                     limits, probe);
  }
  ~Fixture() {
    for (const auto& w : workers) {
      caf::anon_send(w, release_atom::value);
    }
    caf::anon_send_exit(batcher, caf::exit_reason::user_shutdown);
    for (const auto& w : workers) {
      caf::anon_send_exit(w, caf::exit_reason::user_shutdown);
    }
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;

  // Both workers hold one callback each, then six more queue behind them: eight held at once.
  void eight_held_at_once() {
    caf::anon_send(batcher, request(0));
    ASSERT_EQ(seen->await(0, 1), (std::vector<std::size_t>{1}));
    caf::anon_send(batcher, request(1));
    ASSERT_EQ(seen->await(1, 1), (std::vector<std::size_t>{1}));
    for (int n = 2; n <= 7; ++n) {
      caf::anon_send(batcher, request(n));
    }
  }
  // Worker 1's batch commits, and the batcher has (almost surely) seen it before what the test
  // sends next: the pause orders the test's messages, no result depends on its length.
  void release_worker_1() {
    caf::anon_send(workers[1], release_atom::value);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
};

constexpr std::uint32_t kLongWaitUs = 60'000'000;  // longer than Seen::await's bound

BatcherLimits fill(std::size_t min, std::uint32_t wait_us, std::uint32_t window_ms = 600'000) {
  BatcherLimits limits;
  limits.batch_fill_callbacks_min = min;
  limits.batch_fill_wait_us_max = wait_us;
  limits.fill_peak_window_ms = window_ms;
  return limits;
}

TEST(CommitBatcher, TheFillTargetIsTheFillSizeBoundedByWhatThePeakLeavesToCome) {
  EXPECT_EQ(fill_target(32, 64, 32), 32U);  // 64 clients, half in flight: a full 32
  EXPECT_EQ(fill_target(32, 16, 8), 8U);    // 16 clients: the 8 not in flight
  EXPECT_EQ(fill_target(32, 5, 8), 0U);     // the peak is stale: wait for nothing
  EXPECT_EQ(fill_target(0, 100, 0), 0U);    // no fill size: never wait
}

// Eight were held at once and one is in flight: a freed worker waits for seven, not the six
// queued (a fill size of 8), and no more than seven even when its fill size is 64 and its wait
// longer than the test (only the peak's bound lets the batch go).
TEST(CommitBatcher, AFreeWorkerGathersOnlyTheCallbacksTheLoadHasBrought) {
  for (const std::size_t fill_size : {8U, 64U}) {
    Fixture f(fill(fill_size, kLongWaitUs), Workers::both_held);
    f.eight_held_at_once();
    f.release_worker_1();
    caf::anon_send(f.batcher, request(8));
    EXPECT_EQ(f.seen->await(1, 2), (std::vector<std::size_t>{1, 7})) << "fill size " << fill_size;
  }
}

TEST(CommitBatcher, APeakOlderThanTwoWindowsNoLongerHoldsAWorker) {
  Fixture f(fill(64, kLongWaitUs, /*window_ms=*/1), Workers::both_held);
  f.eight_held_at_once();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the peak's windows pass
  f.release_worker_1();
  EXPECT_EQ(f.seen->await(1, 2), (std::vector<std::size_t>{1, 6}))
      << "the six queued must go without waiting for a seventh";
}

TEST(CommitBatcher, WithoutAFillSizeAFreeWorkerTakesWhatIsThere) {
  Fixture f(fill(0, 50'000));
  caf::anon_send(f.batcher, request(0));
  ASSERT_EQ(f.seen->await(0, 1), (std::vector<std::size_t>{1}));
  caf::anon_send(f.batcher, request(1));
  EXPECT_EQ(f.seen->await(1, 1), (std::vector<std::size_t>{1}));
}

TEST(CommitBatcher, ASmallBatchGoesOnceItsOldestCallbackHasWaitedItsFillWait) {
  Fixture f(fill(64, 2'000), Workers::both_held);
  f.eight_held_at_once();
  f.release_worker_1();
  // The seventh never comes: the fill timer, not a full batch, must send the six.
  EXPECT_EQ(f.seen->await(1, 2), (std::vector<std::size_t>{1, 6})) << "the fill wait never ended";
}

TEST(CommitBatcher, NothingInFlightMeansNoWaitAndTheAnswerComesBack) {
  Fixture f(fill(64, 50'000), Workers::quick_then_held);
  caf::scoped_actor self{f.system};
  domain::CallbackOutcome outcome;
  self->request(f.batcher, std::chrono::seconds(10), request(0))
      .receive([&](domain::CallbackOutcome& answer) { outcome = std::move(answer); },
               [&](const caf::error& error) { FAIL() << f.system.render(error); });
  EXPECT_EQ(outcome.result, domain::CallbackResult::applied);
  EXPECT_EQ(f.seen->await(0, 1), (std::vector<std::size_t>{1}));
}

// Three transactions (1, 1 and 6 callbacks), eight callbacks through the queue: the probe counts
// each transaction's size once it is handed off, its duration once its outcome is back, and each
// callback's queue wait.
TEST(CommitBatcher, TheProbeObservesEachTransactionAndEachCallbacksQueueWait) {
  Fixture f(fill(0, 0), Workers::both_held);
  f.eight_held_at_once();
  f.release_worker_1();
  ASSERT_EQ(f.seen->await(1, 2), (std::vector<std::size_t>{1, 6}));
  auto text = f.metrics.serialize();
  EXPECT_EQ(testing::metric_value(text, "seatflow_commit_batch_callbacks_count"), 3);
  EXPECT_EQ(testing::metric_value(text, "seatflow_commit_batch_callbacks_sum"), 8);
  EXPECT_EQ(testing::metric_value(text, R"(seatflow_commit_batch_callbacks_bucket{le="1"})"), 2);
  EXPECT_EQ(testing::metric_value(text, R"(seatflow_commit_batch_callbacks_bucket{le="4"})"), 2);
  EXPECT_EQ(testing::metric_value(text, R"(seatflow_commit_batch_callbacks_bucket{le="8"})"), 3);
  EXPECT_EQ(testing::metric_value(text, "seatflow_commit_queue_wait_seconds_count"), 8);
  EXPECT_EQ(testing::metric_value(text, "seatflow_commit_batch_duration_seconds_count"), 1)
      << "only worker 1's first transaction has its outcome";

  caf::anon_send(f.workers[0], release_atom::value);
  caf::anon_send(f.workers[1], release_atom::value);
  // A bound so a broken probe fails the test instead of hanging it, not a timing claim.
  for (int i = 0;
       i < 1000 && testing::metric_value(text, "seatflow_commit_batch_duration_seconds_count") < 3;
       ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    text = f.metrics.serialize();
  }
  EXPECT_EQ(testing::metric_value(text, "seatflow_commit_batch_duration_seconds_count"), 3);
  EXPECT_EQ(
      testing::metric_value(text, R"(seatflow_commit_batch_duration_seconds_bucket{le="+Inf"})"),
      3);
  EXPECT_EQ(testing::metric_value(text, "seatflow_commit_batch_callbacks_count"), 3)
      << "no batch came after";
}

}  // namespace SEATFLOW_UNITY_ID
}  // namespace
}  // namespace seatflow::actors
