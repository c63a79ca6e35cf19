// Event relay actor: publishes the payment events of the WAL's event slot to the Redis Stream, one
// bounded batch per message; spawned detached (blocking libpqxx/hiredis calls) with its own
// connections.
#pragma once

#include <atomic>
#include <memory>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/persistence_actor.hpp"
#include "persistence/jobs/event_relay.hpp"

namespace seatflow::actors {

// What /metrics shows of the relay; written by the relay actor, read by the HTTP layer.
struct RelayStats {
  std::atomic<std::uint64_t> published_total{0};
  // Slots the relay made anew because they were missing (a failover, a dropped slot).
  std::atomic<std::uint64_t> slots_created_total{0};
  // Walsenders of the relay's own previous stream it ended because they still held the slot.
  std::atomic<std::uint64_t> streams_taken_back_total{0};
  // Age of the oldest unconfirmed event message at the last poll, in milliseconds.
  std::atomic<std::int64_t> lag_ms{0};
  // WAL bytes the event slot has not confirmed at the last poll.
  std::atomic<std::int64_t> lag_bytes{0};
  // The slot's state at the last poll that could read it: readiness reports a missing or
  // invalidated slot, because the relay can publish nothing from it.
  enum class Slot : std::uint8_t { ok, missing, lost };
  std::atomic<Slot> slot{Slot::ok};
};

struct EventRelaySettings {
  bool enabled = true;  // SEATFLOW_EVENT_RELAY
  persistence::RelaySettings relay;
  std::uint32_t interval_ms = 200;        // poll period when the outbox was empty
  std::uint32_t busy_interval_ms = 20;    // poll period after a tick that published (≤ interval)
  std::uint32_t retry_ms = 1'000;         // wait after PostgreSQL or Redis failed
  std::size_t batches_per_tick_max = 20;  // full batches in a row before yielding to the timer
};

struct EventRelayState {
  static inline const char* name = "seatflow.event_relay";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RedisClient> redis;
  std::unique_ptr<persistence::EventRelay> relay;
  std::size_t batches = 0;  // full batches run since the last timer tick
  persistence::RelayStatus last = persistence::RelayStatus::idle;  // for logging a change once
};

// EventRelayActor: relay_atom; publishes one batch, then schedules the next one (at once after a
// full batch, so a backlog drains quickly; after interval_ms otherwise).
[[nodiscard]] EventRelayActor::behavior_type event_relay_actor(
    EventRelayActor::stateful_pointer<EventRelayState> self, StoreSettings store,
    EventRelaySettings settings, std::shared_ptr<RelayStats> stats);

}  // namespace seatflow::actors
