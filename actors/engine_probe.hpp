// The engine's metrics probe: live payment actors, duplicates answered on the io thread, and the
// counters of the store watchdog and the event relay, which the engine reads at each scrape.
#pragma once

#include "observability/registry.hpp"

namespace seatflow::actors {

struct EngineProbe {
  explicit EngineProbe(observability::Registry& registry)
      : payment_actors(registry
                           .gauge("seatflow_payment_actors",
                                  "Payment actors serving a payment (spares not counted).")
                           .Add({})),
        settled_answers(registry
                            .counter("seatflow_duplicates_answered_on_io_thread_total",
                                     "Copies of committed callbacks answered from SettledAnswers "
                                     "without an actor hand-off.")
                            .Add({})),
        store_deadline_cuts(registry
                                .counter("seatflow_store_call_deadline_cuts_total",
                                         "PostgreSQL/Redis calls whose socket the watchdog shut "
                                         "down at their deadline.")
                                .Add({})),
        events_published(registry
                             .counter("seatflow_events_published_total",
                                      "Payment events published to the Redis Stream.")
                             .Add({})),
        event_slots_created(registry
                                .counter("seatflow_event_slots_created_total",
                                         "Event slots the relay made anew because they were "
                                         "missing (a failover, a dropped slot): the old slot's "
                                         "unpublished events were lost.")
                                .Add({})),
        event_streams_taken_back(
            registry
                .counter("seatflow_event_streams_taken_back_total",
                         "Walsenders of the relay's own previous stream that still held the event "
                         "slot after the connection was lost, ended so that the relay could "
                         "read again.")
                .Add({})),
        event_relay_lag(registry
                            .gauge("seatflow_event_relay_lag_seconds",
                                   "Age of the oldest payment event the event slot has not "
                                   "confirmed.")
                            .Add({})),
        event_slot_lag_bytes(registry
                                 .gauge("seatflow_event_slot_lag_bytes",
                                        "WAL bytes the event slot has not confirmed.")
                                 .Add({})),
        event_slot_state(registry.gauge(
            "seatflow_event_slot_state",
            "The event slot at the relay's last poll: 1 for the state it is in (ok; missing: the "
            "relay cannot make it, see seatflow migrate; lost: invalidated, events were "
            "dropped), 0 for the others.")),
        event_slot_ok(event_slot_state.Add({{"state", "ok"}})),
        event_slot_missing(event_slot_state.Add({{"state", "missing"}})),
        event_slot_lost(event_slot_state.Add({{"state", "lost"}})) {}

  prometheus::Gauge& payment_actors;              // set at scrape from the router's gauge
  prometheus::Counter& settled_answers;           // counted by Engine::submit
  prometheus::Counter& store_deadline_cuts;       // synced at scrape from the watchdog
  prometheus::Counter& events_published;          // synced at scrape from the relay's stats
  prometheus::Counter& event_slots_created;       // synced at scrape from the relay's stats
  prometheus::Counter& event_streams_taken_back;  // synced at scrape from the relay's stats
  prometheus::Gauge& event_relay_lag;             // set at scrape from the relay's stats
  prometheus::Gauge& event_slot_lag_bytes;        // set at scrape from the relay's stats
  // One series per slot state, set at scrape from the relay's stats (the alert
  // SeatFlowEventSlotUnusable fires on missing or lost).
  prometheus::Family<prometheus::Gauge>& event_slot_state;
  prometheus::Gauge& event_slot_ok;
  prometheus::Gauge& event_slot_missing;
  prometheus::Gauge& event_slot_lost;
};

}  // namespace seatflow::actors
