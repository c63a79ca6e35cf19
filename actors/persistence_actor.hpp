// Persistence actor: owns one PostgreSQL connection and one Redis connection and applies callbacks
// (one at a time or a batch per transaction) and duplicate flushes with blocking libpqxx/hiredis
// calls; always spawned detached, off the cooperative scheduler.
#pragma once

#include <memory>
#include <string>

#include <caf/all.hpp>

#include "actors/messages.hpp"
#include "persistence/drivers/redis.hpp"
#include "persistence/stores/batch_store.hpp"

namespace seatflow::actors {

struct StoreSettings {
  std::string pg_dsn;
  persistence::RedisEndpoint redis;
  persistence::PgLimits pg;
  std::uint32_t redis_timeout_ms = 2'000;
  persistence::Failpoints* failpoints = nullptr;  // shared, outlives the actor system
  // The status a logged callback records (SPEC §12): the HTTP layer's table, set by main.
  persistence::StatusOf callback_status = nullptr;
  // Shared by every store connection of the engine; Engine::shutdown aborts it.
  std::shared_ptr<persistence::CallWatchdog> watchdog;
};

// A PostgreSQL session and a Redis client with the engine's limits, failpoints and watchdog.
[[nodiscard]] std::unique_ptr<persistence::PgSession> open_pg(const StoreSettings& settings);
[[nodiscard]] std::unique_ptr<persistence::RedisClient> open_redis(const StoreSettings& settings);

// The client-side deadline of one unit of work on both connections of an actor.
struct StoreCall {
  persistence::CallScope pg;
  persistence::CallScope redis;
};
[[nodiscard]] StoreCall watch_stores(persistence::PgSession& pg, persistence::RedisClient& redis,
                                     persistence::CallWatchdog::Clock::time_point deadline);
// The same with the deadline now + the PostgreSQL call bound.
[[nodiscard]] StoreCall watch_stores(persistence::PgSession& pg, persistence::RedisClient& redis);

struct PersistenceState {
  static inline const char* name = "seatflow.persistence";
  std::unique_ptr<persistence::PgSession> pg;
  std::unique_ptr<persistence::RedisClient> redis;
  std::unique_ptr<persistence::BatchCallbackStore> batch;
};

// PersistenceActor: PersistBatch → BatchOutcome (from the commit batcher) and FlushJob →
// FlushResult (from the duplicate flusher).
[[nodiscard]] PersistenceActor::behavior_type persistence_actor(
    PersistenceActor::stateful_pointer<PersistenceState> self, StoreSettings settings);

}  // namespace seatflow::actors
