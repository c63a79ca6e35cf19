// Reconciler actor: runs the reconciler (blocking libpqxx/hiredis calls, so always detached) one
// bounded batch per message, a full pass every interval.
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/persistence_actor.hpp"
#include "persistence/jobs/reconciler.hpp"

namespace seatflow::actors {

struct ReconcilerSettings {
  std::uint32_t interval_ms = 60'000;  // between full passes; 0 = the actor is not spawned
  std::size_t batch = 500;             // orders per batch
  persistence::ReconcileProbe* counters = nullptr;  // shared, outlives the actor system
};

struct ReconcilerState {
  static inline const char* name = "seatflow.reconciler";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RedisClient> redis;
  std::unique_ptr<persistence::Reconciler> reconciler;
  persistence::ReconcileCursor cursor;
  persistence::ReconcileStats pass;  // what the pass in progress has done so far
};

// ReconcilerActor: reconcile_atom; one batch, then the next batch at once or the next pass after
// the interval (also after a store error, so a down store is not hammered).
[[nodiscard]] ReconcilerActor::behavior_type reconciler_actor(
    ReconcilerActor::stateful_pointer<ReconcilerState> self, StoreSettings settings,
    ReconcilerSettings reconciler);

}  // namespace seatflow::actors
