// API actors: detached owners of an OrderStore.
#include "actors/api_actor.hpp"

#include "actors/log.hpp"

namespace seatflow::actors {

void open_api_stores(ApiState& st, const StoreSettings& settings,
                     std::uint32_t query_first_step_ms) {
  st.pg = open_pg(settings);
  st.redis = open_redis(settings);
  st.seats = std::make_unique<persistence::SeatStore>(*st.redis);
  st.store = std::make_unique<persistence::OrderStore>(*st.pg, *st.seats, query_first_step_ms);
}

ApiActor::behavior_type api_actor(ApiActor::stateful_pointer<ApiState> self, StoreSettings settings,
                                  std::uint32_t query_first_step_ms) {
  open_api_stores(self->state, settings, query_first_step_ms);
  return {
      [self](ApiJob& job) {
        auto& st = self->state;
        const auto call = watch_stores(*st.pg, *st.redis);
        job.run(*st.store);
      },
  };
}

}  // namespace seatflow::actors
