// Unit tests for the commit batcher's fill wait: while a batch is in flight, a free persistence
// actor gathers callbacks instead of committing them one by one; with nothing in flight, or once
// the oldest has waited its fill wait, a small batch goes at once. The persistence actors are
// stand-ins that record the batches they get (no store is involved: the batcher only routes).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <vector>

#include <caf/all.hpp>

#include "actors/commit_batcher.hpp"
#include "actors/messages.hpp"

namespace seatflow::actors {
namespace {

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

// A stand-in persistence actor: answers each batch at once, or (hold) only on release_atom.
struct WorkerState {
  std::vector<std::pair<caf::response_promise, BatchOutcome>> held;
};
caf::behavior worker(caf::stateful_actor<WorkerState>* self, std::shared_ptr<Seen> seen,
                     std::size_t index, bool hold) {
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
  };
}

PersistRequest request(int n) {
  PersistRequest r;
  r.callback.callback_id = "cb-" + std::to_string(n);
  r.callback.payment_no = "P" + std::to_string(n);
  r.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  return r;
}

struct Fixture {
  caf::actor_system_config config;
  caf::actor_system system{config};
  std::shared_ptr<Seen> seen = std::make_shared<Seen>();
  caf::actor held;
  caf::actor quick;
  caf::actor batcher;

  // Worker 0 is the one that holds its batches, unless quick_first.
  explicit Fixture(BatcherLimits limits, bool quick_first = false) {
    seen->sizes.resize(2);
    held = system.spawn(worker, seen, std::size_t{quick_first ? 1U : 0U}, true);
    quick = system.spawn(worker, seen, std::size_t{quick_first ? 0U : 1U}, false);
    batcher = system.spawn(
        commit_batcher,
        quick_first ? std::vector<caf::actor>{quick, held} : std::vector<caf::actor>{held, quick},
        limits);
  }
  ~Fixture() {
    caf::anon_send(held, release_atom::value);
    for (const auto& a : {batcher, held, quick}) {
      caf::anon_send_exit(a, caf::exit_reason::user_shutdown);
    }
  }
  Fixture(const Fixture&) = delete;
  Fixture& operator=(const Fixture&) = delete;
};

BatcherLimits fill(std::size_t min, std::uint32_t wait_us) {
  BatcherLimits limits;
  limits.batch_fill_callbacks_min = min;
  limits.batch_fill_wait_us_max = wait_us;
  return limits;
}

TEST(CommitBatcher, AFreeWorkerGathersCallbacksWhileAnotherBatchIsInFlight) {
  Fixture f(fill(4, 50'000));
  caf::anon_send(f.batcher, request(0));  // nothing in flight: worker 0 takes it alone, and holds
  ASSERT_EQ(f.seen->await(0, 1), (std::vector<std::size_t>{1}));
  for (int n = 1; n <= 4; ++n) {
    caf::anon_send(f.batcher, request(n));
  }
  EXPECT_EQ(f.seen->await(1, 1), (std::vector<std::size_t>{4}))
      << "worker 1 must take the four callbacks as one batch, not one by one";
}

TEST(CommitBatcher, WithoutAFillSizeAFreeWorkerTakesWhatIsThere) {
  Fixture f(fill(0, 50'000));
  caf::anon_send(f.batcher, request(0));
  ASSERT_EQ(f.seen->await(0, 1), (std::vector<std::size_t>{1}));
  caf::anon_send(f.batcher, request(1));
  EXPECT_EQ(f.seen->await(1, 1), (std::vector<std::size_t>{1}));
}

TEST(CommitBatcher, ASmallBatchGoesOnceItsOldestCallbackHasWaitedItsFillWait) {
  Fixture f(fill(64, 2'000));
  caf::anon_send(f.batcher, request(0));
  ASSERT_EQ(f.seen->await(0, 1), (std::vector<std::size_t>{1}));
  caf::anon_send(f.batcher, request(1));
  caf::anon_send(f.batcher, request(2));
  // Far fewer than 64 ever come: the fill timer, not a full batch, must send them (as one batch
  // of two, or as two of one when the second came after the first's wait ended).
  auto sizes = f.seen->await(1, 1);
  ASSERT_FALSE(sizes.empty()) << "the fill wait never ended";
  if (sizes[0] == 1) {
    sizes = f.seen->await(1, 2);
  }
  std::size_t total = 0;
  for (const auto s : sizes) {
    total += s;
  }
  EXPECT_EQ(total, 2U);
}

TEST(CommitBatcher, NothingInFlightMeansNoWaitAndTheAnswerComesBack) {
  Fixture f(fill(64, 50'000), /*quick_first=*/true);
  caf::scoped_actor self{f.system};
  domain::CallbackOutcome outcome;
  self->request(f.batcher, std::chrono::seconds(10), request(0))
      .receive([&](domain::CallbackOutcome& answer) { outcome = std::move(answer); },
               [&](const caf::error& error) { FAIL() << f.system.render(error); });
  EXPECT_EQ(outcome.result, domain::CallbackResult::applied);
  EXPECT_EQ(f.seen->await(0, 1), (std::vector<std::size_t>{1}));
}

}  // namespace
}  // namespace seatflow::actors
