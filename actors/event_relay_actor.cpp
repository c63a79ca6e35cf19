// The relay loop: one batch per message, so a stop never waits for a backlog.
#include "actors/event_relay_actor.hpp"

namespace seatflow::actors {

caf::behavior event_relay_actor(caf::stateful_actor<EventRelayState>* self, StoreSettings store,
                                EventRelaySettings settings, std::shared_ptr<RelayStats> stats) {
  auto& st = self->state;
  st.pg = open_pg(store);
  st.redis = open_redis(store);
  st.relay = std::make_unique<persistence::EventRelay>(*st.pg, *st.redis, settings.relay,
                                                       store.failpoints);
  self->send(self, relay_atom::value);
  return {
      [self, settings, stats](relay_atom) {
        auto& st = self->state;
        const auto result = [&st] {
          const auto call = watch_stores(*st.pg, *st.redis);
          return st.relay->relay_once();
        }();
        if (result.lag_seconds >= 0) {
          stats->lag_ms.store(static_cast<std::int64_t>(result.lag_seconds * 1000),
                              std::memory_order_relaxed);
        }
        stats->published_total.fetch_add(result.published, std::memory_order_relaxed);
        using persistence::RelayStatus;
        if (result.status == RelayStatus::published && result.published == settings.relay.batch &&
            ++st.batches < settings.batches_per_tick_max) {
          self->send(self, relay_atom::value);
          return;
        }
        st.batches = 0;
        const bool failed = result.status == RelayStatus::pg_unavailable ||
                            result.status == RelayStatus::redis_unavailable;
        // Traffic keeps the relay on the short period, so each tick publishes a small batch; an
        // empty outbox puts it back on the long one.
        const auto delay = failed ? std::max(settings.retry_ms, settings.interval_ms)
                           : result.published > 0
                               ? std::min(settings.busy_interval_ms, settings.interval_ms)
                               : settings.interval_ms;
        self->delayed_send(self, std::chrono::milliseconds(delay), relay_atom::value);
      },
  };
}

}  // namespace seatflow::actors
