// The retention loop: one bounded purge per message, so a stop never waits for a long purge.
#include "actors/retention_actor.hpp"

#include "actors/log.hpp"

namespace seatflow::actors {

RetentionActor::behavior_type retention_actor(RetentionActor::stateful_pointer<RetentionState> self,
                                              StoreSettings store, RetentionSettings settings) {
  auto& st = self->state;
  st.pg = open_pg(store);
  st.store = std::make_unique<persistence::RetentionStore>(*st.pg);
  self->send(self, retain_atom::value);
  return {
      [self, settings](retain_atom) {
        auto& st = self->state;
        const auto purged = [&st, &settings] {
          const auto call = st.pg->watch_call();
          return st.store->purge_once(settings.horizon_ms, settings.batch);
        }();
        if (purged.ok()) {
          st.removed.callback_logs += purged.value().callback_logs;
          const bool more = purged.value().callback_logs == settings.batch;
          if (more && ++st.batches < settings.batches_max) {
            self->send(self, retain_atom::value);
            return;
          }
        }
        if (st.removed.callback_logs > 0) {
          logger().info("event=retention_purged callback_logs={}", st.removed.callback_logs);
        }
        st.removed = {};
        st.batches = 0;
        self->delayed_send(self, std::chrono::milliseconds(settings.interval_ms),
                           retain_atom::value);
      },
  };
}

}  // namespace seatflow::actors
