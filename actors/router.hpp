// Router: maps paymentNo to its payment actor, spawning on demand and forgetting idle ones.
#pragma once

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/payment_actor.hpp"

namespace seatflow::actors {

struct RouterLimits {
  std::size_t payment_actors_max = 200'000;
  // Idle payment actors are looked for every quarter of passivate_idle_ms, and at least this
  // often, so each sweep has few to stop.
  std::uint32_t passivation_sweep_ms_max = 100;
  // A sweep retires or stops at most this many actors, then lets queued callbacks through first
  // (stopping thousands at once stalled the scheduler thread: the p99 of `unique` tripled).
  std::size_t passivations_per_turn_max = 128;
  // A passivated payment actor is kept as a spare for the next new payment, up to this many
  // (beyond, it stops; 0: every one stops). CAF 0.17 ends an actor by queueing a cancellation on
  // its clock thread, which wakes that thread and preempts the scheduler's: with every payment's
  // actor ending, that was 0.6–0.9 of the engine's ~2 context switches per callback and ~2.5 µs
  // of its CPU (docs/ARCHITECTURE.md, step 4). 4 096 is ~0.4 s of new payments at 10 000/s;
  // every sweep refills them.
  std::size_t spare_payment_actors_max = 4'096;
  PaymentActorLimits payment;
};

struct RouterState {
  static inline const char* name = "seatflow.router";
  using Clock = std::chrono::steady_clock;
  struct Entry {
    PaymentActor actor;
    std::uint64_t forwarded = 0;      // callbacks sent to it; equals its `received` when idle
    std::uint64_t idle_received = 0;  // its `received` in its last idle report
    Clock::time_point idle_since{};   // when that report arrived
    bool queued = false;              // in `idle`
  };
  struct IdleMark {
    std::string payment_no;
    Clock::time_point since;  // the entry's idle_since when it was queued
  };
  std::unordered_map<std::string, Entry> payments;
  // Retired payment actors waiting for a new payment (at most spare_payment_actors_max).
  std::vector<PaymentActor> spare;
  // Payments that reported idle, oldest first, each at most once: bounded by payment_actors_max.
  std::deque<IdleMark> idle;
  bool sweep_armed = false;  // a passivate_atom is on its way
  PaymentActorLinks links;   // committer, flusher and memory switch for new payment actors
  RouterLimits limits;
  std::shared_ptr<std::atomic<std::size_t>> live_gauge;  // actors serving a payment, for /metrics
};

// RouterActor: CallbackEnvelope, idle_atom and passivate_atom. A payment actor idle for
// passivate_idle_ms (no callback forwarded since its idle report) is forgotten by a sweep every
// quarter of that (at most passivation_sweep_ms_max), so it goes between 1 and about 1.25 times
// passivate_idle_ms after its last callback; it is retired to the spares (or stopped when they
// are full), and a new payment takes a spare before it spawns an actor. The gauge counts the
// actors serving a payment, spares not included; it is read by /metrics.
[[nodiscard]] RouterActor::behavior_type router_actor(
    RouterActor::stateful_pointer<RouterState> self, PaymentActorLinks links, RouterLimits limits,
    std::shared_ptr<std::atomic<std::size_t>> live_gauge);

}  // namespace seatflow::actors
