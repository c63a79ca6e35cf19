// SettledAnswers and DuplicateLedger: sharded maps, short critical sections, no allocation under a
// reader's lock.
#include "actors/settled_memory.hpp"

#include <algorithm>

#include "actors/messages.hpp"

namespace seatflow::actors {

SettledAnswers::Shard& SettledAnswers::shard_of(const std::string& payment_no) const {
  return shards_[std::hash<std::string>{}(payment_no) % kShards];
}

void SettledAnswers::publish(const std::string& payment_no, std::uint64_t owner,
                             std::vector<Known> known) {
  auto& shard = shard_of(payment_no);
  std::unique_lock lock(shard.mutex);
  auto& entry = shard.payments[payment_no];
  entry.owner = owner;
  entry.known = std::move(known);
}

void SettledAnswers::forget(const std::string& payment_no, std::uint64_t owner) {
  auto& shard = shard_of(payment_no);
  std::unique_lock lock(shard.mutex);
  const auto it = shard.payments.find(payment_no);
  if (it != shard.payments.end() && it->second.owner == owner) {
    shard.payments.erase(it);
  }
}

bool SettledAnswers::settled(const std::string& payment_no, std::string_view callback_id,
                             std::string_view digest) const {
  const auto& shard = shard_of(payment_no);
  std::shared_lock lock(shard.mutex);
  const auto it = shard.payments.find(payment_no);
  if (it == shard.payments.end()) {
    return false;
  }
  const auto& known_list = it->second.known;
  const bool found = std::any_of(known_list.begin(), known_list.end(), [&](const Known& known) {
    return known.callback_id == callback_id && known.digest == digest;
  });
  if (found) {
    it->second.answered_at_ns.store(std::chrono::steady_clock::now().time_since_epoch().count(),
                                    std::memory_order_relaxed);
  }
  return found;
}

bool SettledAnswers::answered_since(const std::string& payment_no,
                                    std::chrono::steady_clock::time_point since) const {
  const auto& shard = shard_of(payment_no);
  std::shared_lock lock(shard.mutex);
  const auto it = shard.payments.find(payment_no);
  return it != shard.payments.end() && it->second.answered_at_ns.load(std::memory_order_relaxed) >=
                                           since.time_since_epoch().count();
}

std::size_t SettledAnswers::size() const {
  std::size_t total = 0;
  for (const auto& shard : shards_) {
    std::shared_lock lock(shard.mutex);
    total += shard.payments.size();
  }
  return total;
}

DuplicateLedger::DuplicateLedger(std::size_t entries_max,
                                 std::shared_ptr<std::atomic<bool>> memory_answers)
    : max_entries_(entries_max), memory_answers_(std::move(memory_answers)) {}

bool DuplicateLedger::note(const std::string& callback_id, const std::string& payment_no,
                           std::int64_t count, bool heal) {
  auto& stripe = stripes_[std::hash<std::string>{}(callback_id) % kStripes];
  {
    std::lock_guard lock(stripe.mutex);
    auto [it, inserted] = stripe.counts.try_emplace(callback_id, payment_no, 0);
    it->second.second += count;
    if (heal) {
      stripe.heal.insert(payment_no);
    }
    if (inserted && entries_.fetch_add(1, std::memory_order_acq_rel) + 1 >= max_entries_) {
      memory_answers_->store(false, std::memory_order_relaxed);
    }
  }
  // Read first: while armed (nearly always in a storm) no write touches the shared line.
  return !armed_.load(std::memory_order_acquire) &&
         !armed_.exchange(true, std::memory_order_acq_rel);
}

DuplicateLedger::Drained DuplicateLedger::drain() {
  // Disarmed first: a note racing with the drain either lands in it or wakes the flusher again.
  armed_.store(false, std::memory_order_release);
  Drained drained;
  for (auto& stripe : stripes_) {
    std::unordered_map<std::string, std::pair<std::string, std::int64_t>> counts;
    std::unordered_set<std::string> heal;
    {
      std::lock_guard lock(stripe.mutex);
      counts.swap(stripe.counts);
      heal.swap(stripe.heal);
      entries_.fetch_sub(counts.size(), std::memory_order_acq_rel);
    }
    for (auto& entry : counts) {
      drained.counts.emplace_back(entry.first, std::move(entry.second));
    }
    drained.heal_payments.insert(drained.heal_payments.end(), heal.begin(), heal.end());
  }
  return drained;
}

void note_duplicates(DuplicateLedger& ledger, const DuplicateFlusherActor& flusher,
                     const domain::VerifiedCallback& callback, std::int64_t count) {
  if (ledger.note(callback.callback_id, callback.payment_no, count,
                  callback.kind == domain::CallbackKind::success)) {
    caf::anon_send(flusher, ledger_atom::value);
  }
}

}  // namespace seatflow::actors
