// API and sweeper actors: detached owners of an OrderStore.
#include "actors/api_actor.hpp"

#include <spdlog/spdlog.h>

namespace seatflow::actors {
namespace {

void open_stores(ApiState& st, const StoreSettings& settings) {
  st.pg = open_pg(settings);
  st.redis = open_redis(settings);
  st.seats = std::make_unique<persistence::SeatStore>(*st.redis);
  st.store = std::make_unique<persistence::OrderStore>(*st.pg, *st.seats);
}

}  // namespace

caf::behavior api_actor(caf::stateful_actor<ApiState>* self, StoreSettings settings) {
  open_stores(self->state, settings);
  return {
      [self](ApiJob& job) {
        auto& st = self->state;
        const auto call = watch_stores(*st.pg, *st.redis);
        job.run(*st.store);
      },
  };
}

caf::behavior sweeper_actor(caf::stateful_actor<ApiState>* self, StoreSettings settings,
                            SweeperSettings sweeper) {
  open_stores(self->state, settings);
  self->delayed_send(self, std::chrono::milliseconds(sweeper.interval_ms), sweep_atom::value);
  return {
      [self, sweeper](sweep_atom) {
        // One batch per message, so a stop (an exit message) never waits for a long sweep.
        auto& st = self->state;
        const auto cancelled = [&st, &sweeper] {
          const auto call = watch_stores(*st.pg, *st.redis);
          return st.store->sweep_expired(sweeper.batch);
        }();
        st.swept += cancelled;
        if (cancelled == sweeper.batch && ++st.batches < sweeper.max_batches) {
          self->send(self, sweep_atom::value);
          return;
        }
        if (st.swept > 0) {
          spdlog::info("event=orders_expired cancelled={}", st.swept);
        }
        st.swept = 0;
        st.batches = 0;
        self->delayed_send(self, std::chrono::milliseconds(sweeper.interval_ms), sweep_atom::value);
      },
  };
}

}  // namespace seatflow::actors
