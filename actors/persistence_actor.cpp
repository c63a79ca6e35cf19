// Persistence actor: runs CallbackStore / BatchCallbackStore for requests whose deadline holds.
#include "actors/persistence_actor.hpp"

namespace seatflow::actors {

caf::behavior persistence_actor(caf::stateful_actor<PersistenceState>* self,
                                StoreSettings settings) {
  auto& st = self->state;
  st.pg = std::make_unique<persistence::PgSession>(
      settings.pg_dsn, settings.pg_statement_timeout_ms, settings.failpoints);
  st.redis = std::make_unique<persistence::RedisClient>(settings.redis, settings.redis_timeout_ms,
                                                        settings.failpoints);
  st.seats = std::make_unique<persistence::SeatStore>(*st.redis);
  st.store = std::make_unique<persistence::CallbackStore>(*st.pg, *st.seats, settings.failpoints);
  st.batch =
      std::make_unique<persistence::BatchCallbackStore>(*st.pg, *st.redis, settings.failpoints);
  return {
      [self](PersistRequest& request) -> domain::CallbackOutcome {
        // A request that waited past its deadline was already answered 503 by the payment actor's
        // timeout; running it now would only add load while the gateway retries anyway.
        if (std::chrono::steady_clock::now() > request.deadline) {
          return {domain::CallbackResult::unavailable, "expired while queued"};
        }
        return self->state.store->process(request.callback, request.deadline);
      },
      [self](PersistBatch& batch) -> BatchOutcome {
        return {self->state.batch->process(batch.callbacks, batch.deadlines)};
      },
      [self](FlushJob& job) -> bool {
        std::vector<persistence::DuplicateCount> counts;
        counts.reserve(job.counts.size());
        for (auto& [id, entry] : job.counts) {
          counts.push_back({id, entry.first, entry.second});
        }
        return self->state.batch->flush_duplicates(counts, job.heal_payments);
      },
  };
}

}  // namespace seatflow::actors
