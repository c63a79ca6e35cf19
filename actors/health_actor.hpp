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

struct ProberSettings {
  std::uint32_t interval_ms = 500;  // between the end of a probe and the next
  std::uint32_t probe_ms_max = 1'000;
};

struct HealthState {
  static inline const char* name = "seatflow.health";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RedisClient> redis;
};

// Handles probe_atom (its own timer); never answers requests: /readyz reads `readiness`.
[[nodiscard]] caf::behavior health_actor(caf::stateful_actor<HealthState>* self,
                                         StoreSettings settings, ProberSettings prober,
                                         std::shared_ptr<Readiness> readiness);

}  // namespace seatflow::actors
