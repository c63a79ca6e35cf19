// The memory that answers duplicates of committed callbacks, readable from any thread so the HTTP
// thread answers a storm's copies without handing each one to an actor (docs/ARCHITECTURE.md,
// "Duplicates answered from memory"):
// - SettledAnswers: per payment, the callbacks its payment actor knows are committed. Only that
//   actor writes its payment's entry (after each commit, and it forgets it when it passivates);
//   an entry read after its actor stopped is still true, because a committed callback stays
//   committed.
// - DuplicateLedger: the duplicate_count increments and self-heal requests of duplicates answered
//   from memory, until the duplicate flusher drains them into one transaction.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "domain/types.hpp"

namespace seatflow::actors {

class SettledAnswers {
 public:
  struct Known {
    std::string callback_id;
    std::string digest;  // payload_sha256: a copy must carry the same business content
  };

  // Replaces what is known of `payment_no`, on behalf of the actor `owner`.
  void publish(const std::string& payment_no, std::uint64_t owner, std::vector<Known> known);
  // Forgets `payment_no` unless another actor (its successor after a passivation) owns it now.
  void forget(const std::string& payment_no, std::uint64_t owner);
  // True when (callback_id, digest) of `payment_no` is known to be committed; the entry then
  // records when it last answered a copy.
  [[nodiscard]] bool settled(const std::string& payment_no, std::string_view callback_id,
                             std::string_view digest) const;
  // True when `payment_no`'s entry answered a copy at or after `since`: its payment actor never
  // sees those copies, and must not be passivated while they come (the next copies would go to
  // the database).
  [[nodiscard]] bool answered_since(const std::string& payment_no,
                                    std::chrono::steady_clock::time_point since) const;
  // Payments with an entry (tests, metrics).
  [[nodiscard]] std::size_t size() const;

 private:
  static constexpr std::size_t kShards = 64;
  struct Shard {
    mutable std::shared_mutex mutex;
    struct Entry {
      std::uint64_t owner = 0;
      std::vector<Known> known;
      // When a copy was last answered from it (steady clock, ns since its epoch); written by
      // readers under the shared lock, hence atomic (and the entry never moves).
      mutable std::atomic<std::int64_t> answered_at_ns{0};
    };
    std::unordered_map<std::string, Entry> payments;
  };
  Shard& shard_of(const std::string& payment_no) const;
  mutable std::array<Shard, kShards> shards_;
};

class DuplicateLedger {
 public:
  // Beyond `entries_max` distinct callback ids waiting, `memory_answers` is switched off (copies
  // then take the database path) until the flusher has written them.
  DuplicateLedger(std::size_t entries_max, std::shared_ptr<std::atomic<bool>> memory_answers);

  // Adds `count` copies of `callback_id`; `heal` asks for the payment's seats to be re-sold.
  // Returns true when the ledger was drained since the last note: the caller wakes the flusher.
  bool note(const std::string& callback_id, const std::string& payment_no, std::int64_t count,
            bool heal);

  struct Drained {
    std::vector<std::pair<std::string, std::pair<std::string, std::int64_t>>> counts;
    std::vector<std::string> heal_payments;
  };
  // Takes everything noted so far; the next note wakes the flusher again.
  Drained drain();
  [[nodiscard]] bool empty() const { return entries_.load(std::memory_order_acquire) == 0; }

 private:
  static constexpr std::size_t kStripes = 16;
  struct Stripe {
    std::mutex mutex;
    std::unordered_map<std::string, std::pair<std::string, std::int64_t>> counts;
    std::unordered_set<std::string> heal;
  };
  std::array<Stripe, kStripes> stripes_;
  std::atomic<std::size_t> entries_{0};
  std::atomic<bool> armed_{false};
  std::size_t max_entries_;
  std::shared_ptr<std::atomic<bool>> memory_answers_;
};

// Notes `count` copies of a committed callback answered from memory, waking `flusher` (ledger_atom)
// when the ledger had been drained since. Any thread.
void note_duplicates(DuplicateLedger& ledger, const DuplicateFlusherActor& flusher,
                     const domain::VerifiedCallback& callback, std::int64_t count);

}  // namespace seatflow::actors
