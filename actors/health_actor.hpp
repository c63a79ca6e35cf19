// Readiness prober: a detached actor that probes PostgreSQL (writable primary?) and Redis on a
// timer, each probe under its own deadline, and publishes the verdict into Readiness.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/persistence_actor.hpp"
#include "actors/readiness.hpp"

namespace seatflow::actors {

struct HealthState {
  static inline const char* name = "seatflow.health";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RedisClient> redis;
};

// HealthActor: probe_atom (its own timer); never answers requests: /readyz reads `readiness`.
[[nodiscard]] HealthActor::behavior_type health_actor(
    HealthActor::stateful_pointer<HealthState> self, StoreSettings settings, ProberSettings prober,
    std::shared_ptr<Readiness> readiness);

}  // namespace seatflow::actors
