// Commit batcher and duplicate flusher: the two actors that turn many small writes into few
// transactions.
#include "actors/commit_batcher.hpp"

#include <algorithm>
#include <cassert>

#include <spdlog/spdlog.h>

namespace seatflow::actors {
namespace {

using Batcher = caf::stateful_actor<BatcherState, CommitBatcherActor::base>;
using Flusher = caf::stateful_actor<FlusherState, DuplicateFlusherActor::base>;

// The callbacks in the batches in flight.
std::size_t in_flight_count(const BatcherState& st) {
  std::size_t count = 0;
  for (std::size_t w = 0; w < st.workers.size(); ++w) {
    if (st.busy[w]) {
      count += st.in_flight[w].promises.size();
    }
  }
  return count;
}

// Records the callbacks held now (the queue plus `in_flight`) in the peak of the current window,
// rotating the windows.
void note_held(BatcherState& st, std::chrono::steady_clock::time_point now, std::size_t in_flight) {
  const auto window = std::chrono::milliseconds(st.limits.fill_peak_window_ms);
  if (now - st.peak_window_start >= window) {
    st.peak_previous = now - st.peak_window_start >= 2 * window ? 0 : st.peak_current;
    st.peak_current = 0;
    st.peak_window_start = now;
  }
  st.peak_current = std::max(st.peak_current, st.queue.size() + in_flight);
}

// Whether a free worker should wait for the queue to fill: only while another batch is in flight
// (so an idle engine never delays a callback), only for the callbacks the recent load promises
// (fill_target), and never past the oldest callback's fill wait, for which a timer is armed.
bool wait_to_fill(Batcher* self, std::chrono::steady_clock::time_point now) {
  auto& st = self->state;
  if (std::find(st.busy.begin(), st.busy.end(), true) == st.busy.end()) {
    return false;
  }
  const auto in_flight = in_flight_count(st);
  note_held(st, now, in_flight);
  const auto target = fill_target(st.limits.batch_fill_callbacks_min,
                                  std::max(st.peak_current, st.peak_previous), in_flight);
  if (target <= 1 || st.queue.size() >= target) {
    return false;
  }
  const auto wait_max = std::chrono::microseconds(st.limits.batch_fill_wait_us_max);
  const auto waited = now - st.queue.front().queued_at;
  if (waited >= wait_max) {
    return false;
  }
  if (!st.fill_timer_armed) {
    st.fill_timer_armed = true;
    self->delayed_send(self, wait_max - waited, fill_atom::value);
  }
  return true;
}

void dispatch(Batcher* self);

void arm_deadline_timer(Batcher* self) {
  auto& st = self->state;
  if (!st.deadline_timer_armed) {
    st.deadline_timer_armed = true;
    self->delayed_send(self, std::chrono::milliseconds(st.limits.deadline_check_ms),
                       deadline_atom::value);
  }
}

// Answers every callback whose deadline has passed, queued or in flight, and keeps the timer
// armed while any callback is left.
void expire(Batcher* self) {
  auto& st = self->state;
  st.deadline_timer_armed = false;
  const auto now = std::chrono::steady_clock::now();
  while (!st.queue.empty() && now > st.queue.front().request.deadline) {
    st.queue.front().promise.deliver(
        domain::CallbackOutcome{domain::CallbackResult::unavailable, "expired while queued"});
    st.queue.pop_front();
  }
  bool waiting = !st.queue.empty();
  for (auto& batch : st.in_flight) {
    for (std::size_t i = 0; i < batch.promises.size(); ++i) {
      auto& promise = batch.promises[i];
      if (!promise.pending()) {
        continue;
      }
      if (now > batch.deadlines[i]) {
        promise.deliver(
            domain::CallbackOutcome{domain::CallbackResult::unavailable, "commit timed out"});
        promise = {};
      } else {
        waiting = true;
      }
    }
  }
  if (waiting) {
    arm_deadline_timer(self);
  }
}

// Answers the callbacks of worker `w`'s batch not answered at their deadline, and frees it.
void finish_batch(Batcher* self, std::size_t w, const BatchOutcome* result) {
  auto& st = self->state;
  if (st.probe != nullptr) {
    st.probe->batch_duration.observe(std::chrono::duration_cast<std::chrono::microseconds>(
        std::chrono::steady_clock::now() - st.in_flight[w].started_at));
  }
  auto batch = std::move(st.in_flight[w]);
  st.in_flight[w] = {};
  st.busy[w] = false;
  assert(result == nullptr || result->outcomes.size() == batch.promises.size());
  for (std::size_t i = 0; i < batch.promises.size(); ++i) {
    if (batch.promises[i].pending()) {
      batch.promises[i].deliver(
          result != nullptr
              ? result->outcomes[i]
              : domain::CallbackOutcome{domain::CallbackResult::unavailable, "persistence failed"});
    }
  }
  dispatch(self);
}

void dispatch(Batcher* self) {
  auto& st = self->state;
  for (std::size_t w = 0; w < st.workers.size() && !st.queue.empty(); ++w) {
    if (st.busy[w]) {
      continue;
    }
    if (wait_to_fill(self, std::chrono::steady_clock::now())) {
      return;
    }
    PersistBatch batch;
    auto& flight = st.in_flight[w];
    const auto now = std::chrono::steady_clock::now();
    while (!st.queue.empty() && batch.callbacks.size() < st.limits.batch_callbacks_max) {
      auto pending = std::move(st.queue.front());
      st.queue.pop_front();
      if (now > pending.request.deadline) {
        pending.promise.deliver(
            domain::CallbackOutcome{domain::CallbackResult::unavailable, "expired while queued"});
        continue;
      }
      if (st.probe != nullptr) {
        st.probe->queue_wait.observe(
            std::chrono::duration_cast<std::chrono::microseconds>(now - pending.queued_at));
      }
      batch.callbacks.push_back(std::move(pending.request.callback));
      batch.deadlines.push_back(pending.request.deadline);
      flight.promises.push_back(std::move(pending.promise));
    }
    if (batch.callbacks.empty()) {
      continue;
    }
    if (st.probe != nullptr) {
      st.probe->batch_callbacks.observe_units(batch.callbacks.size());
    }
    flight.deadlines = batch.deadlines;
    flight.started_at = now;
    st.busy[w] = true;
    arm_deadline_timer(self);
    self->request(st.workers[w], caf::infinite, std::move(batch))
        .then([self, w](BatchOutcome& result) { finish_batch(self, w, &result); },
              [self, w](const caf::error&) { finish_batch(self, w, nullptr); });
  }
}

void arm_timer(Flusher* self) {
  if (!self->state.timer_armed) {
    self->state.timer_armed = true;
    // Anonymous, so the tick's `true` answer is dropped instead of coming back as a message.
    caf::delayed_anon_send(caf::actor_cast<DuplicateFlusherActor>(self),
                           std::chrono::milliseconds(self->state.settings.interval_ms),
                           flush_atom::value, false);
  }
}

// Queues a self-heal for `payment_no` unless it had one within the heal interval.
void queue_heal(Flusher* self, const std::string& payment_no) {
  auto& st = self->state;
  const auto now = std::chrono::steady_clock::now();
  const auto interval = std::chrono::milliseconds(st.settings.heal_interval_ms);
  const auto it = st.healed_at.find(payment_no);
  if (it != st.healed_at.end() && now - it->second < interval) {
    return;
  }
  if (st.healed_at.size() >= st.settings.entries_max) {
    for (auto old = st.healed_at.begin(); old != st.healed_at.end();) {
      old = now - old->second >= interval ? st.healed_at.erase(old) : std::next(old);
    }
    if (st.healed_at.size() >= st.settings.entries_max) {
      st.healed_at.clear();  // forgetting only means a payment may be healed once more
    }
  }
  st.healed_at[payment_no] = now;
  st.heal.insert(payment_no);
}

// Moves the ledger's notes into the flusher's own maps.
void absorb_ledger(Flusher* self) {
  auto& st = self->state;
  auto drained = st.ledger->drain();
  for (auto& [id, entry] : drained.counts) {
    auto& slot = st.counts[id];
    slot.first = std::move(entry.first);
    slot.second += entry.second;
  }
  for (const auto& payment_no : drained.heal_payments) {
    queue_heal(self, payment_no);
  }
  if (st.counts.size() >= st.settings.entries_max) {
    st.memory_answers->store(false);
  }
}

void flush(Flusher* self) {
  auto& st = self->state;
  if (st.flushing) {
    // A tick that finds a flush in flight must not be lost: the notes it came for are not in
    // that flush, and nothing else re-arms the timer once the traffic stops.
    arm_timer(self);
    return;
  }
  absorb_ledger(self);
  if (st.counts.empty() && st.heal.empty() && st.doubtful.empty()) {
    for (auto& promise : st.waiting) {
      promise.deliver(true);
    }
    st.waiting.clear();
    return;
  }
  FlushJob job;
  job.counts.assign(st.counts.begin(), st.counts.end());
  job.heal_payments.assign(st.heal.begin(), st.heal.end());
  job.doubtful = std::move(st.doubtful);
  st.counts.clear();
  st.heal.clear();
  st.doubtful.clear();
  st.flushing = true;
  const auto& worker = st.workers[st.next_worker++ % st.workers.size()];
  auto kept = std::make_shared<FlushJob>(job);
  self->request(worker, caf::infinite, std::move(job))
      .then(
          [self, kept](persistence::FlushResult& result) {
            auto& st = self->state;
            st.flushing = false;
            const bool ok = result.outcome == persistence::FlushOutcome::committed;
            // The flushes still in doubt; an in-doubt flush's counts are among them, so they are
            // not kept again here: the next flush adds them only if PostgreSQL aborted it.
            st.doubtful = std::move(result.doubtful);
            if (result.outcome == persistence::FlushOutcome::failed) {
              // Keep the counts for the next tick: nothing answered from memory is lost.
              for (auto& [id, entry] : kept->counts) {
                auto& slot = st.counts[id];
                slot.first = entry.first;
                slot.second += entry.second;
              }
            }
            if (!ok) {
              st.heal.insert(kept->heal_payments.begin(), kept->heal_payments.end());
              arm_timer(self);
            }
            absorb_ledger(self);  // notes that arrived during this flush
            st.memory_answers->store(st.counts.size() < st.settings.entries_max);
            if (!st.counts.empty() || !st.heal.empty() || !st.doubtful.empty()) {
              arm_timer(self);  // notes that arrived during this flush, or doubts to settle
            }
            // Whoever waits for a flush (shutdown) learns how it went; a failed flush is not
            // retried in a loop, the timer retries it.
            if (ok && !st.waiting.empty() && (!st.counts.empty() || !st.heal.empty())) {
              flush(self);  // notes that arrived during this flush, before answering the waiters
              return;
            }
            for (auto& promise : st.waiting) {
              promise.deliver(ok);
            }
            st.waiting.clear();
          },
          [self, kept](const caf::error&) {
            self->state.flushing = false;
            self->state.doubtful = std::move(kept->doubtful);
            for (auto& promise : self->state.waiting) {
              promise.deliver(false);
            }
            self->state.waiting.clear();
          });
}

}  // namespace

BatcherProbe::BatcherProbe(observability::Registry& registry)
    : batch_callbacks(registry.histogram("seatflow_commit_batch_callbacks",
                                         "Callbacks per group-commit transaction."),
                      {}, kBatchCallbacksBuckets, 1),
      batch_duration(registry.histogram("seatflow_commit_batch_duration_seconds",
                                        "Group-commit transaction, hand-off to a persistence "
                                        "actor to its outcome."),
                     {}, observability::kLatencyBucketsSeconds),
      queue_wait(registry.histogram("seatflow_commit_queue_wait_seconds",
                                    "Callback's wait in the commit batcher's queue before its "
                                    "transaction started."),
                 {}, observability::kLatencyBucketsSeconds),
      hook_(registry.on_scrape([this] {
        batch_callbacks.sync();
        batch_duration.sync();
        queue_wait.sync();
      })) {}

std::size_t fill_target(std::size_t fill_callbacks_min, std::size_t recent_peak,
                        std::size_t in_flight) {
  const auto to_come = recent_peak > in_flight ? recent_peak - in_flight : 0;
  return std::min(fill_callbacks_min, to_come);
}

CommitBatcherActor::behavior_type commit_batcher(Batcher* self,
                                                 std::vector<PersistenceActor> workers,
                                                 BatcherLimits limits,
                                                 std::shared_ptr<BatcherProbe> probe) {
  auto& st = self->state;
  st.workers = std::move(workers);
  st.busy.assign(st.workers.size(), false);
  st.in_flight.resize(st.workers.size());
  st.limits = limits;
  st.probe = std::move(probe);
  return {
      [self](PersistRequest& request) -> caf::result<domain::CallbackOutcome> {
        auto& st = self->state;
        if (st.queue.size() >= st.limits.queued_callbacks_max) {
          return domain::CallbackOutcome{domain::CallbackResult::unavailable, "commit queue full"};
        }
        auto promise = self->make_response_promise<domain::CallbackOutcome>();
        const auto now = std::chrono::steady_clock::now();
        st.queue.push_back({std::move(request), promise, now});
        note_held(st, now, in_flight_count(st));
        dispatch(self);
        if (!st.queue.empty()) {
          arm_deadline_timer(self);
        }
        return promise;
      },
      [self](fill_atom) {
        self->state.fill_timer_armed = false;
        dispatch(self);
      },
      [self](deadline_atom) { expire(self); },
  };
}

DuplicateFlusherActor::behavior_type duplicate_flusher(
    Flusher* self, std::vector<PersistenceActor> workers, FlusherSettings settings,
    std::shared_ptr<std::atomic<bool>> memory_answers, std::shared_ptr<DuplicateLedger> ledger) {
  auto& st = self->state;
  st.workers = std::move(workers);
  st.settings = settings;
  st.memory_answers = std::move(memory_answers);
  st.ledger = std::move(ledger);
  return {
      [self](ledger_atom) { arm_timer(self); },
      [self](flush_atom, bool wait) -> caf::result<bool> {
        auto& st = self->state;
        if (!wait) {  // the timer
          st.timer_armed = false;
          flush(self);
          return true;
        }
        auto promise = self->make_response_promise<bool>();
        st.waiting.push_back(promise);
        flush(self);
        return promise;
      },
  };
}

}  // namespace seatflow::actors
