// Router: one payment actor per paymentNo, bounded in number.
#include <algorithm>
#include <cassert>

#include "actors/router.hpp"
#include "domain/assert.hpp"
#include "domain/ids.hpp"

namespace seatflow::actors {

namespace {

using RouterSelf = caf::stateful_actor<RouterState, RouterActor::base>;

void arm_passivation_sweep(RouterSelf* self) {
  auto& st = self->state;
  if (st.sweep_armed) {
    return;
  }
  st.sweep_armed = true;
  const auto interval_ms = std::clamp<std::uint32_t>(st.limits.payment.passivate_idle_ms / 4, 1,
                                                     st.limits.passivation_sweep_ms_max);
  self->delayed_send(self, std::chrono::milliseconds(interval_ms), passivate_atom::value);
}

// Forgets the actors idle for passivate_idle_ms (reported idle that long ago, and forwarded nothing
// since) and retires them to the spares, or stops them when the spares are full. One reported idle
// again while queued goes to the back with its new time.
void passivate_idle(RouterSelf* self) {
  auto& st = self->state;
  const auto now = RouterState::Clock::now();
  const auto idle_for = std::chrono::milliseconds(st.limits.payment.passivate_idle_ms);
  std::size_t passivated = 0;  // retired or stopped in this turn
  while (!st.idle.empty()) {
    if (passivated == st.limits.passivations_per_turn_max) {
      // The rest after the callbacks already in the mailbox: a message, not a timer.
      st.live_gauge->store(st.payments.size(), std::memory_order_relaxed);
      st.sweep_armed = true;
      self->send(self, passivate_atom::value);
      return;
    }
    auto mark = std::move(st.idle.front());
    st.idle.pop_front();
    const auto it = st.payments.find(mark.payment_no);
    if (it == st.payments.end()) {
      continue;
    }
    auto& entry = it->second;
    if (entry.idle_since > mark.since) {
      st.idle.push_back({std::move(mark.payment_no), entry.idle_since});
      continue;
    }
    if (now - mark.since < idle_for) {
      st.idle.push_front(std::move(mark));
      break;
    }
    // Copies answered from memory on the io threads never reach the actor: while they come, it
    // stays, and is looked at again after another idle period.
    if (st.links.settled && st.links.settled->answered_since(mark.payment_no, now - idle_for)) {
      entry.idle_since = now;
      st.idle.push_back({std::move(mark.payment_no), now});
      continue;
    }
    entry.queued = false;
    // Only when every forwarded callback has reached the actor is it safe to forget it;
    // otherwise callbacks are still in its mailbox and it will report idle again later.
    if (entry.forwarded == entry.idle_received) {
      if (st.spare.size() < st.limits.spare_payment_actors_max) {
        self->send(entry.actor, retire_atom::value);
        st.spare.push_back(std::move(entry.actor));
      } else {
        self->send(entry.actor, stop_atom::value);
      }
      st.payments.erase(it);
      ++passivated;
    }
  }
  st.live_gauge->store(st.payments.size(), std::memory_order_relaxed);
  if (!st.idle.empty()) {
    arm_passivation_sweep(self);
  }
}

// A callback to its payment's actor: the live one, a spare re-assigned, or a new one; refused
// (unavailable) when the payment actors are at their limit.
void route_callback(RouterSelf* self, CallbackEnvelope& envelope) {
  // A verified callback names its payment and itself (each dialect checks its ids).
  SEATFLOW_ASSERT(domain::is_id(envelope.callback.payment_no));
  SEATFLOW_ASSERT(domain::is_id(envelope.callback.callback_id));
  SEATFLOW_ASSERT(static_cast<bool>(envelope.reply));
  auto& st = self->state;
  auto it = st.payments.find(envelope.callback.payment_no);
  if (it == st.payments.end()) {
    if (st.payments.size() >= st.limits.payment_actors_max) {
      envelope.reply({domain::CallbackResult::unavailable, "too many active payments"});
      return;
    }
    const auto& key = envelope.callback.payment_no;
    PaymentActor actor;
    if (st.spare.empty()) {
      actor = self->spawn(payment_actor, key, st.links, st.limits.payment);
    } else {
      // A spare has processed (or will, first: one sender's messages arrive in order) its
      // retire_atom, so it starts this payment knowing nothing of its last one.
      actor = std::move(st.spare.back());
      st.spare.pop_back();
      self->send(actor, assign_atom::value, key);
    }
    it = st.payments.emplace(key, RouterState::Entry{std::move(actor)}).first;
    st.live_gauge->store(st.payments.size(), std::memory_order_relaxed);
  }
  ++it->second.forwarded;
  self->send(it->second.actor, std::move(envelope));
}

}  // namespace

RouterActor::behavior_type router_actor(RouterSelf* self, PaymentActorLinks links,
                                        RouterLimits limits,
                                        std::shared_ptr<std::atomic<std::size_t>> live_gauge) {
  assert(links.committer);
  auto& st = self->state;
  st.links = std::move(links);
  st.links.router = caf::actor_cast<RouterActor>(self);
  st.limits = limits;
  st.live_gauge = std::move(live_gauge);
  // Payment actors are not linked to the router: CAF 0.17 removes a link by scanning the
  // attachables of both sides, which made every passivation cost O(live actors). The router keeps
  // their handles and stops them itself when it is told to exit.
  self->set_exit_handler([self](const caf::exit_msg& msg) {
    auto& st = self->state;
    for (auto& [key, entry] : st.payments) {
      self->send_exit(entry.actor, msg.reason);
    }
    for (auto& actor : st.spare) {
      self->send_exit(actor, msg.reason);
    }
    st.payments.clear();
    st.spare.clear();
    st.live_gauge->store(0, std::memory_order_relaxed);
    self->quit(msg.reason);
  });
  return {
      [self](CallbackEnvelope& envelope) { route_callback(self, envelope); },
      [self](idle_atom, const std::string& payment_no, std::uint64_t received) {
        auto& st = self->state;
        const auto it = st.payments.find(payment_no);
        if (it == st.payments.end()) {
          return;
        }
        auto& entry = it->second;
        entry.idle_received = received;
        entry.idle_since = RouterState::Clock::now();
        if (!entry.queued) {
          entry.queued = true;
          st.idle.push_back({payment_no, entry.idle_since});
          arm_passivation_sweep(self);
        }
      },
      [self](passivate_atom) {
        self->state.sweep_armed = false;
        passivate_idle(self);
      },
  };
}

}  // namespace seatflow::actors
