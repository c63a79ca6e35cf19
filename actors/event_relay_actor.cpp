// The relay loop: one batch per message, so a stop never waits for a backlog.
#include "actors/event_relay_actor.hpp"

#include "actors/log.hpp"

namespace seatflow::actors {
namespace {

// Logs one error when the slot goes missing or is invalidated (not at every poll) and keeps the
// slot's state for readiness; a slot that is usable again is logged once too.
void note_slot(const std::string& slot, persistence::RelayStatus before,
               persistence::RelayStatus now, RelayStats& stats) {
  using persistence::RelayStatus;
  if (now == RelayStatus::slot_lost) {
    stats.slot.store(RelayStats::Slot::lost, std::memory_order_relaxed);
    if (before != now) {
      logger().error(
          "event=event_slot_lost slot={} message=\"the event slot was invalidated "
          "(pg_replication_slots.wal_status=lost, max_slot_wal_keep_size reached): events were "
          "dropped; nothing is published until an operator replaces the slot "
          "(docs/RELIABILITY.md)\"",
          slot);
    }
  } else if (now == RelayStatus::slot_missing) {
    stats.slot.store(RelayStats::Slot::missing, std::memory_order_relaxed);
    if (before != now) {
      logger().error(
          "event=event_slot_missing slot={} message=\"the event slot does not exist and the "
          "relay cannot make it (wal_level is not logical, or a slot of that name belongs to "
          "another database); seatflow migrate says which\"",
          slot);
    }
  } else if (now != RelayStatus::pg_unavailable && now != RelayStatus::busy) {
    if (stats.slot.exchange(RelayStats::Slot::ok, std::memory_order_relaxed) !=
        RelayStats::Slot::ok) {
      logger().info("event=event_slot_usable slot={}", slot);
    }
  }
}

}  // namespace

EventRelayActor::behavior_type event_relay_actor(
    EventRelayActor::stateful_pointer<EventRelayState> self, StoreSettings store,
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
        // The relay arms each store call itself: a poll also waits on its replication stream,
        // which a deadline over the whole poll would charge to the next call.
        const auto result = st.relay->relay_once();
        if (result.lag_seconds >= 0) {
          stats->lag_ms.store(static_cast<std::int64_t>(result.lag_seconds * 1000),
                              std::memory_order_relaxed);
        }
        if (result.lag_bytes >= 0) {
          stats->lag_bytes.store(result.lag_bytes, std::memory_order_relaxed);
        }
        stats->published_total.fetch_add(result.published, std::memory_order_relaxed);
        if (result.slot_created) {
          stats->slots_created_total.fetch_add(1, std::memory_order_relaxed);
        }
        stats->streams_taken_back_total.fetch_add(result.streams_taken_back,
                                                  std::memory_order_relaxed);
        using persistence::RelayStatus;
        note_slot(settings.relay.slot, st.last, result.status, *stats);
        st.last = result.status;
        if (result.status == RelayStatus::published && result.more &&
            ++st.batches < settings.batches_per_tick_max) {
          self->send(self, relay_atom::value);
          return;
        }
        st.batches = 0;
        const bool failed = result.status == RelayStatus::pg_unavailable ||
                            result.status == RelayStatus::redis_unavailable ||
                            result.status == RelayStatus::slot_missing ||
                            result.status == RelayStatus::slot_lost;
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
