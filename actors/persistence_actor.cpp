// Persistence actor: runs the group-commit store (BatchCallbackStore) for the commit batcher.
#include "actors/persistence_actor.hpp"

#include "persistence/stores/sql.hpp"

namespace seatflow::actors {

std::unique_ptr<persistence::PgSession> open_pg(const StoreSettings& settings) {
  return std::make_unique<persistence::PgSession>(settings.pg_dsn, settings.pg, settings.failpoints,
                                                  settings.watchdog,
                                                  &persistence::prepare_statements);
}

std::unique_ptr<persistence::RedisClient> open_redis(const StoreSettings& settings) {
  return std::make_unique<persistence::RedisClient>(settings.redis, settings.redis_timeout_ms,
                                                    settings.failpoints, settings.watchdog);
}

StoreCall watch_stores(persistence::PgSession& pg, persistence::RedisClient& redis,
                       persistence::CallWatchdog::Clock::time_point deadline) {
  return {pg.watch_call(deadline), redis.watch_call(deadline)};
}

StoreCall watch_stores(persistence::PgSession& pg, persistence::RedisClient& redis) {
  return watch_stores(
      pg, redis,
      persistence::CallWatchdog::Clock::now() + std::chrono::milliseconds(pg.limits().call_ms_max));
}

PersistenceActor::behavior_type persistence_actor(
    PersistenceActor::stateful_pointer<PersistenceState> self, StoreSettings settings) {
  auto& st = self->state;
  st.pg = open_pg(settings);
  st.redis = open_redis(settings);
  st.batch = std::make_unique<persistence::BatchCallbackStore>(
      *st.pg, *st.redis, settings.failpoints, settings.callback_status);
  // Before the first batch: this actor runs on its own thread (detached), and the call is bounded
  // like a batch's.
  {
    const auto call = watch_stores(*st.pg, *st.redis);
    (void)st.batch->warm_up();
  }
  return {
      [self](PersistBatch& batch) -> BatchOutcome {
        auto& st = self->state;
        const auto call = watch_stores(*st.pg, *st.redis);
        return {st.batch->process(batch.callbacks, batch.deadlines)};
      },
      [self](FlushJob& job) -> persistence::FlushResult {
        auto& st = self->state;
        const auto call = watch_stores(*st.pg, *st.redis);
        std::vector<persistence::DuplicateCount> counts;
        counts.reserve(job.counts.size());
        for (auto& [id, entry] : job.counts) {
          counts.push_back({id, entry.first, entry.second});
        }
        return self->state.batch->flush_duplicates(counts, job.heal_payments, job.doubtful);
      },
  };
}

}  // namespace seatflow::actors
