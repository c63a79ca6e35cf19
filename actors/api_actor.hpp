// API actor: runs order/payment API jobs with blocking libpqxx/hiredis calls; spawned detached,
// in a small pool, one PostgreSQL and one Redis connection each.
#pragma once

#include <memory>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "actors/persistence_actor.hpp"
#include "persistence/order_store.hpp"

namespace seatflow::actors {

struct ApiState {
  static inline const char* name = "seatflow.api";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RedisClient> redis;
  std::unique_ptr<persistence::SeatStore> seats;
  std::unique_ptr<persistence::OrderStore> store;
  std::size_t swept = 0;    // sweeper: orders cancelled in the current sweep
  std::size_t batches = 0;  // sweeper: batches run in the current sweep
};

// Handles ApiJob.
[[nodiscard]] caf::behavior api_actor(caf::stateful_actor<ApiState>* self, StoreSettings settings);

struct SweeperSettings {
  bool enabled = true;
  std::uint32_t interval_ms = 5'000;
  std::size_t batch = 200;       // orders per batch
  std::size_t max_batches = 10;  // batches per sweep, so one sweep is bounded
};

// Handles sweep_atom: cancels expired pending orders, then schedules the next sweep.
[[nodiscard]] caf::behavior sweeper_actor(caf::stateful_actor<ApiState>* self,
                                          StoreSettings settings, SweeperSettings sweeper);

}  // namespace seatflow::actors
