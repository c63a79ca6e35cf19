// Health actor: answers readiness probes by pinging PostgreSQL and Redis (detached: it blocks).
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/persistence_actor.hpp"

namespace seatflow::actors {

struct HealthState {
  static inline const char* name = "seatflow.health";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RedisClient> redis;
  std::chrono::steady_clock::time_point checked_at{};
  bool ready = false;
  std::string reason;
};

// Handles ReadyProbe; results are reused for 250 ms so probes cannot hammer the stores.
[[nodiscard]] caf::behavior health_actor(caf::stateful_actor<HealthState>* self,
                                         StoreSettings settings);

}  // namespace seatflow::actors
