// Commit batcher: collects callbacks from payment actors and hands each idle persistence actor up
// to `batch_callbacks_max` of them for one transaction (group commit). Under light load (no batch
// in flight) a batch holds one callback and nothing waits; under load batches grow while the
// workers are busy, and a worker that frees up while another batch is in flight waits up to
// `batch_fill_wait_us_max` for more callbacks, so it does not commit a transaction of one or two
// (the idea of PostgreSQL's commit_delay/commit_siblings). It waits only for as many as the load
// has recently brought: at most `batch_fill_callbacks_min`, and at most the peak number of
// callbacks held at once (queued and in flight) in the last one or two `fill_peak_window_ms` minus
// those in flight now. With few clients the wait then ends as soon as all that can come has come.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/settled_memory.hpp"
#include "observability/registry.hpp"

namespace seatflow::actors {

struct BatcherLimits {
  std::size_t batch_callbacks_max = 256;
  std::size_t queued_callbacks_max = 100'000;  // callbacks waiting for a worker; more → 503 at once
  // While another batch is in flight, a free worker takes fewer than this many callbacks (or
  // fewer than the recent peak allows, see above) only after the oldest of them has waited
  // batch_fill_wait_us_max; 0 or 1: never wait. Chosen by measurement (docs/BENCHMARKS.md, "The
  // fill wait sized by the load").
  std::size_t batch_fill_callbacks_min = 32;
  std::uint32_t batch_fill_wait_us_max = 3'000;
  // The window of the peak of callbacks held at once that bounds the fill target.
  std::uint32_t fill_peak_window_ms = 250;
  // A callback still queued or in flight at its deadline is answered unavailable within this:
  // one timer for the batcher instead of one per callback (docs/BENCHMARKS.md, "Timers").
  std::uint32_t deadline_check_ms = 20;
};
static_assert(BatcherLimits{}.batch_fill_callbacks_min <= BatcherLimits{}.batch_callbacks_max,
              "a batch can reach its fill size");

// Upper bounds of the callbacks-per-transaction histogram's buckets.
inline constexpr std::array<double, 9> kBatchCallbacksBuckets = {1, 2, 4, 8, 16, 32, 64, 128, 256};

// The group commit's metrics, observed by the batcher (relaxed atomics) and brought up to date at
// each scrape: how many callbacks each transaction holds, how long each takes at its persistence
// actor (hand-off to outcome: the statements, the seat script, the commit), and how long each
// callback waited in the batcher's queue before its transaction started (for a free persistence
// actor, and the fill wait). A callback's latency is its queue wait plus its transaction's time
// plus the hops between the io thread and the batcher.
class BatcherProbe {
 public:
  explicit BatcherProbe(observability::Registry& registry);
  BatcherProbe(const BatcherProbe&) = delete;
  BatcherProbe& operator=(const BatcherProbe&) = delete;

  observability::AtomicHistogram batch_callbacks;
  observability::AtomicHistogram batch_duration;
  observability::AtomicHistogram queue_wait;

 private:
  observability::ScrapeHook hook_;
};

struct BatcherState {
  static inline const char* name = "seatflow.commit_batcher";
  struct Pending {
    PersistRequest request;
    caf::typed_response_promise<domain::CallbackOutcome> promise;
    std::chrono::steady_clock::time_point queued_at;
  };
  // One worker's batch in flight: its callbacks' promises and deadlines, in batch order. A
  // promise answered at its deadline is reset, so the commit's late outcome is not sent twice.
  struct InFlight {
    std::vector<caf::typed_response_promise<domain::CallbackOutcome>> promises;
    std::vector<std::chrono::steady_clock::time_point> deadlines;
    std::chrono::steady_clock::time_point started_at;  // handed to its persistence actor
  };
  std::deque<Pending> queue;  // in arrival order, so in deadline order (one persist timeout)
  std::vector<PersistenceActor> workers;
  std::vector<bool> busy;
  std::vector<InFlight> in_flight;  // one per worker, empty while the worker is free
  bool fill_timer_armed = false;    // a fill_atom is on its way
  // The most callbacks held at once (queued plus in flight) in the current window of
  // limits.fill_peak_window_ms, which started at peak_window_start, and in the one before it.
  std::size_t peak_current = 0;
  std::size_t peak_previous = 0;
  std::chrono::steady_clock::time_point peak_window_start{};
  bool deadline_timer_armed = false;  // a deadline_atom is on its way
  BatcherLimits limits;
  std::shared_ptr<BatcherProbe> probe;  // null: nothing is observed
};

// How many queued callbacks a free worker waits for while another batch is in flight: the
// configured fill size, bounded by the callbacks the recent peak says are still to come (the peak
// minus those in flight now). Below 2 nothing waits.
[[nodiscard]] std::size_t fill_target(std::size_t fill_callbacks_min, std::size_t recent_peak,
                                      std::size_t in_flight);

// CommitBatcherActor: PersistRequest → CallbackOutcome (delivered when its batch commits, or
// unavailable once the request's deadline has passed), fill_atom and deadline_atom (its own
// timers). `probe` may be null.
[[nodiscard]] CommitBatcherActor::behavior_type commit_batcher(
    CommitBatcherActor::stateful_pointer<BatcherState> self, std::vector<PersistenceActor> workers,
    BatcherLimits limits, std::shared_ptr<BatcherProbe> probe);

struct FlusherSettings {
  std::uint32_t interval_ms = 1'000;  // counts are exact within this after the last duplicate
  std::size_t entries_max = 200'000;  // distinct callback ids held; beyond, memory answers stop
  // A payment's seats are re-sold (self-heal mark_sold) for its duplicates at most once per this
  // interval; drift that appears later within it is the reconciler's to repair.
  std::uint32_t heal_interval_ms = 10'000;
};

struct FlusherState {
  static inline const char* name = "seatflow.duplicate_flusher";
  std::unordered_map<std::string, std::pair<std::string, std::int64_t>> counts;
  std::unordered_set<std::string> heal;
  // Flushes whose commit is in doubt, settled by the next flush (persistence::FlushResult).
  std::vector<persistence::DoubtfulFlush> doubtful;
  // When each payment was last queued for a heal; bounded by entries_max (pruned on overflow).
  std::unordered_map<std::string, std::chrono::steady_clock::time_point> healed_at;
  std::vector<PersistenceActor> workers;
  std::size_t next_worker = 0;
  bool flushing = false;
  bool timer_armed = false;
  // flush_atom requests answered after the flush.
  std::vector<caf::typed_response_promise<bool>> waiting;
  FlusherSettings settings;
  std::shared_ptr<std::atomic<bool>> memory_answers;  // duplicates may be answered from memory
  std::shared_ptr<DuplicateLedger> ledger;            // where those answers are noted
};

// DuplicateFlusherActor: ledger_atom (the ledger has new notes: arm the timer) and (flush_atom,
// wait): the timer sends wait=false; a caller that needs the counts written (graceful shutdown)
// sends wait=true and gets the flush's success. Each flush drains `ledger` first.
[[nodiscard]] DuplicateFlusherActor::behavior_type duplicate_flusher(
    DuplicateFlusherActor::stateful_pointer<FlusherState> self,
    std::vector<PersistenceActor> workers, FlusherSettings settings,
    std::shared_ptr<std::atomic<bool>> memory_answers, std::shared_ptr<DuplicateLedger> ledger);

}  // namespace seatflow::actors
