// Payment actor: one per paymentNo; serialises that payment's callbacks, one in flight at a time.
// Duplicates of the callback in flight are folded into it; duplicates of a callback already
// committed are answered from memory, their counts and self-heal handed to the duplicate flusher.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/settled_memory.hpp"

namespace seatflow::actors {

struct PaymentActorLimits {
  std::size_t mailbox_callbacks_max = 256;
  std::uint32_t passivate_idle_ms = 5'000;
  std::uint32_t persist_timeout_ms = 10'000;
  std::size_t remembered_callbacks = 8;  // committed callback ids kept for memory answers
};

struct PaymentState {
  static inline const char* name = "seatflow.payment";
  using Known = SettledAnswers::Known;
  std::string payment_no;
  RouterActor router;
  CommitBatcherActor committer;
  DuplicateFlusherActor flusher;  // null disables memory answers
  std::shared_ptr<std::atomic<bool>> memory_answers;
  std::shared_ptr<DuplicateLedger> ledger;  // with flusher
  std::shared_ptr<SettledAnswers> settled;  // with flusher: `known`, readable by the HTTP thread
  PaymentActorLimits limits;
  std::deque<CallbackEnvelope> queue;       // front is in flight when `in_flight`
  std::vector<CallbackEnvelope> followers;  // duplicates folded into the one in flight
  std::deque<Known> known;                  // callbacks whose outcome is committed
  std::uint64_t received = 0;               // callbacks the router has forwarded to this actor
  std::uint64_t reported_idle_at = 0;       // `received` when idle was last reported
  bool in_flight = false;
};

struct PaymentActorLinks {
  RouterActor router;
  CommitBatcherActor committer;
  DuplicateFlusherActor flusher;
  std::shared_ptr<std::atomic<bool>> memory_answers;
  std::shared_ptr<DuplicateLedger> ledger;
  std::shared_ptr<SettledAnswers> settled;
};

// PaymentActor: CallbackEnvelope, stop_atom, retire_atom (forget the payment, as when it stops, and
// wait as a spare) and assign_atom (serve another payment); sends idle_atom to the router when its
// queue empties.
[[nodiscard]] PaymentActor::behavior_type payment_actor(
    PaymentActor::stateful_pointer<PaymentState> self, std::string payment_no,
    PaymentActorLinks links, PaymentActorLimits limits);

}  // namespace seatflow::actors
