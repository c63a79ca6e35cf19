// The reconciler actor: a detached owner of one PostgreSQL and one Redis connection.
#include "actors/reconciler_actor.hpp"

#include "actors/log.hpp"

namespace seatflow::actors {

ReconcilerActor::behavior_type reconciler_actor(
    ReconcilerActor::stateful_pointer<ReconcilerState> self, StoreSettings settings,
    ReconcilerSettings reconciler) {
  auto& st = self->state;
  st.pg = open_pg(settings);
  st.redis = open_redis(settings);
  persistence::ReconcileOptions options;
  options.batch = reconciler.batch;
  st.reconciler =
      std::make_unique<persistence::Reconciler>(*st.pg, *st.redis, options, reconciler.counters);
  const auto interval = std::chrono::milliseconds(reconciler.interval_ms);
  self->delayed_send(self, interval, reconcile_atom::value);
  return {
      [self, interval](reconcile_atom) {
        // One batch per message, so a stop (an exit message) never waits for a long pass.
        auto& st = self->state;
        const auto stats = [&st] {
          const auto call = watch_stores(*st.pg, *st.redis);
          return st.reconciler->step(st.cursor);
        }();
        st.pass.add(stats);
        if (stats.errors == 0 && st.cursor.phase != persistence::ReconcilePhase::done) {
          self->send(self, reconcile_atom::value);
          return;
        }
        if (st.pass.repairs() > 0 || st.pass.pending_conflicts > 0) {
          logger().info(
              "event=reconcile_pass orders={} repaired={} seats_sold={} seats_released={} "
              "seats_relocked={} seat_conflicts={} pending_conflicts={}",
              st.pass.orders_scanned, st.pass.orders_repaired, st.pass.seats_sold,
              st.pass.seats_released, st.pass.seats_relocked, st.pass.seat_conflicts,
              st.pass.pending_conflicts);
        }
        // After an error the cursor stays, so the next pass resumes with the batch that failed.
        st.pass = {};
        if (stats.errors == 0) {
          st.cursor = {};
        }
        self->delayed_send(self, interval, reconcile_atom::value);
      },
  };
}

}  // namespace seatflow::actors
