// Persistence actor: runs CallbackStore for each request whose deadline has not passed.
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
  return {
      [self](PersistRequest& request) -> domain::CallbackOutcome {
        // A request that waited past its deadline was already answered 503 by the payment actor's
        // timeout; running it now would only add load while the gateway retries anyway.
        if (std::chrono::steady_clock::now() > request.deadline) {
          return {domain::CallbackResult::unavailable, "expired while queued"};
        }
        return self->state.store->process(request.callback);
      },
  };
}

}  // namespace seatflow::actors
