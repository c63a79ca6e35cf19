// Persistence actor: owns one PostgreSQL connection and one Redis connection and applies callbacks
// (one at a time or a batch per transaction) and duplicate flushes with blocking libpqxx/hiredis
// calls; always spawned detached, off the cooperative scheduler.
#pragma once

#include <string>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "persistence/batch_store.hpp"
#include "persistence/callback_store.hpp"
#include "persistence/redis.hpp"

namespace seatflow::actors {

struct StoreSettings {
  std::string pg_dsn;
  persistence::RedisEndpoint redis;
  std::uint32_t pg_statement_timeout_ms = 5'000;
  std::uint32_t redis_timeout_ms = 2'000;
  persistence::Failpoints* failpoints = nullptr;  // shared, outlives the actor system
};

struct PersistenceState {
  static inline const char* name = "seatflow.persistence";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RedisClient> redis;
  std::unique_ptr<persistence::SeatStore> seats;
  std::unique_ptr<persistence::CallbackStore> store;
  std::unique_ptr<persistence::BatchCallbackStore> batch;
};

// Handles PersistRequest → CallbackOutcome, PersistBatch → BatchOutcome, FlushJob → bool.
[[nodiscard]] caf::behavior persistence_actor(caf::stateful_actor<PersistenceState>* self,
                                              StoreSettings settings);

}  // namespace seatflow::actors
