// Payment actor: memory answers, folding, then queue → commit batcher → reply; reports idle to
// the router, which passivates it: retires it to its spares (to serve another payment later) or
// stops it.
#include <cassert>

#include "actors/payment_actor.hpp"
#include "domain/assert.hpp"

namespace seatflow::actors {
namespace {

using PaymentSelf = caf::stateful_actor<PaymentState, PaymentActor::base>;
using domain::CallbackResult;

bool same_callback(const domain::VerifiedCallback& a, const domain::VerifiedCallback& b) {
  return a.callback_id == b.callback_id && a.payload_sha256 == b.payload_sha256;
}

// An outcome after which the callback is settled in the database: later copies are duplicates.
bool settled(CallbackResult result) {
  return result == CallbackResult::applied || result == CallbackResult::duplicate ||
         result == CallbackResult::ignored || result == CallbackResult::discrepancy;
}

void note_copies(PaymentSelf* self, const domain::VerifiedCallback& callback, std::int64_t count) {
  auto& st = self->state;
  note_duplicates(*st.ledger, st.flusher, callback, count);
}

// Answers `envelope` from memory when its callback is known to be committed.
bool answer_from_memory(PaymentSelf* self, CallbackEnvelope& envelope) {
  auto& st = self->state;
  if (!st.flusher || !st.memory_answers->load(std::memory_order_relaxed)) {
    return false;
  }
  for (const auto& known : st.known) {
    if (known.callback_id == envelope.callback.callback_id &&
        known.digest == envelope.callback.payload_sha256) {
      // The note is in the ledger before the reply, so whoever sees the reply and then asks the
      // flusher to flush (graceful stop) finds the count already in its mailbox.
      note_copies(self, envelope.callback, 1);
      envelope.reply({CallbackResult::duplicate, {}});
      return true;
    }
  }
  return false;
}

// Tells the router this actor has nothing queued, once per batch of callbacks received; the
// router stops it when nothing reached it for passivate_idle_ms (one router timer for all actors
// instead of one per actor, docs/BENCHMARKS.md).
void report_idle(PaymentSelf* self) {
  auto& st = self->state;
  if (st.reported_idle_at == st.received) {
    return;
  }
  st.reported_idle_at = st.received;
  self->send(st.router, idle_atom::value, st.payment_no, st.received);
}

void start_next(PaymentSelf* self);

// Passivation, whether the actor stops or is retired: its payment's entry leaves SettledAnswers
// (unless a successor owns it now), so later copies come through the router again.
void forget_settled(PaymentSelf* self) {
  if (self->state.flusher) {
    self->state.settled->forget(self->state.payment_no, self->id());
  }
}

void finish_front(PaymentSelf* self, const domain::CallbackOutcome& outcome) {
  auto& st = self->state;
  assert(st.in_flight && !st.queue.empty());
  auto leader = std::move(st.queue.front());
  st.queue.pop_front();
  st.in_flight = false;
  auto followers = std::move(st.followers);
  st.followers.clear();
  if (settled(outcome.result)) {
    st.known.push_back({leader.callback.callback_id, leader.callback.payload_sha256});
    if (st.known.size() > st.limits.remembered_callbacks) {
      st.known.pop_front();
    }
    // Published before the leader's reply: whoever sees that reply and sends a copy finds it.
    if (st.flusher) {
      st.settled->publish(st.payment_no, self->id(), {st.known.begin(), st.known.end()});
    }
    leader.reply(outcome);
    // Folded copies never reached the database: they are duplicates of a committed callback.
    // Noted before they are answered (see answer_from_memory).
    if (!followers.empty()) {
      note_copies(self, leader.callback, static_cast<std::int64_t>(followers.size()));
    }
    for (auto& follower : followers) {
      follower.reply({CallbackResult::duplicate, {}});
    }
  } else {
    // Not committed (503, 409, 4xx): every copy gets the same answer, and the gateway retries.
    leader.reply(outcome);
    for (auto& follower : followers) {
      follower.reply(outcome);
    }
  }
  start_next(self);
}

void start_next(PaymentSelf* self) {
  auto& st = self->state;
  while (!st.in_flight && !st.queue.empty() && answer_from_memory(self, st.queue.front())) {
    st.queue.pop_front();
  }
  if (st.in_flight) {
    return;
  }
  if (st.queue.empty()) {
    report_idle(self);
    return;
  }
  st.in_flight = true;
  // The deadline travels with the request and the batcher answers at it: no timer per callback
  // here (CAF 0.17 queues every request timeout on its clock thread, docs/BENCHMARKS.md).
  const auto timeout = std::chrono::milliseconds(st.limits.persist_timeout_ms);
  PersistRequest request{st.queue.front().callback, std::chrono::steady_clock::now() + timeout};
  self->request(st.committer, caf::infinite, std::move(request))
      .then([self](const domain::CallbackOutcome& outcome) { finish_front(self, outcome); },
            [self](const caf::error&) {
              finish_front(self, {CallbackResult::unavailable, "commit batcher unavailable"});
            });
}

}  // namespace

PaymentActor::behavior_type payment_actor(PaymentSelf* self, std::string payment_no,
                                          PaymentActorLinks links, PaymentActorLimits limits) {
  auto& st = self->state;
  st.payment_no = std::move(payment_no);
  st.router = std::move(links.router);
  st.committer = std::move(links.committer);
  st.flusher = std::move(links.flusher);
  st.memory_answers = std::move(links.memory_answers);
  st.ledger = std::move(links.ledger);
  st.settled = std::move(links.settled);
  st.limits = limits;
  return {
      [self](CallbackEnvelope& envelope) {
        auto& st = self->state;
        // The router hands this actor its own payment's callbacks only.
        SEATFLOW_ASSERT(envelope.callback.payment_no == st.payment_no);
        ++st.received;
        if (answer_from_memory(self, envelope)) {
          // Idle still: the router must learn the new count, or it never stops this actor.
          if (!st.in_flight && st.queue.empty()) {
            report_idle(self);
          }
          return;
        }
        if (st.queue.size() + st.followers.size() >= st.limits.mailbox_callbacks_max) {
          envelope.reply({CallbackResult::unavailable, "payment queue full"});
          return;
        }
        if (st.in_flight && st.flusher &&
            same_callback(st.queue.front().callback, envelope.callback)) {
          st.followers.push_back(std::move(envelope));
          return;
        }
        st.queue.push_back(std::move(envelope));
        start_next(self);
      },
      [self](stop_atom) {
        forget_settled(self);
        self->quit();
      },
      [self](retire_atom) {
        auto& st = self->state;
        // The router retires an actor only when every callback it forwarded was answered here.
        assert(!st.in_flight && st.queue.empty() && st.followers.empty());
        forget_settled(self);
        st.payment_no.clear();
        st.known.clear();
        st.received = 0;
        st.reported_idle_at = 0;
      },
      [self](assign_atom, std::string& payment_no) {
        self->state.payment_no = std::move(payment_no);
      },
  };
}

}  // namespace seatflow::actors
