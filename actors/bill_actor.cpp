// The bill actor: runs on request, and the daily schedule's tick.
#include "actors/bill_actor.hpp"

#include <algorithm>

#include "actors/log.hpp"

namespace seatflow::actors {
namespace {

// One tick: yesterday's bill of every channel whose day is due, once the time of day has come.
void schedule_tick(BillState& st) {
  const auto& settings = st.runner->settings();
  const auto clock = st.store->local_clock(settings.timezone);
  if (!clock.ok() || clock.value().second < settings.schedule_at) {
    return;
  }
  for (const auto channel : st.runner->channels()) {
    // A channel's yesterday is its bill zone's (the dialect says: Stripe's is UTC's, SPEC §13);
    // the time of day is the configured zone's.
    auto date = clock.value().first;
    if (const auto zone = st.runner->zone_of(channel); zone != settings.timezone) {
      const auto local = st.store->local_clock(zone);
      if (!local.ok()) {
        continue;
      }
      date = local.value().first;
    }
    // The schedule's yesterday has ended at its time of day unless SEATFLOW_BILL_EDGE_MS reaches
    // past it: the run waits for a later tick then (BillRunner::open would refuse it).
    const auto end = st.store->day_end(date, st.runner->zone_of(channel), settings.edge_ms);
    if (!end.ok() || !end.value().ended) {
      continue;
    }
    const auto due = st.store->due(std::string(domain::to_string(channel)), date,
                                   kBillScheduleAttemptsMax, settings.retry_ms);
    if (due.ok() && due.value()) {
      (void)run_bill(*st.runner, *st.store, channel, date, [](const BillRunResult&) {});
    }
  }
}

}  // namespace

StoreSettings bill_store_settings(StoreSettings store, const BillSettings& bill) {
  auto& pg = store.pg;
  pg.statement_ms_max = std::max(pg.statement_ms_max, kBillStatementMsMax);
  pg.call_ms_max = std::max(pg.call_ms_max, kBillStatementMsMax + 60'000);
  pg.connection_check_ms = kBillConnectionCheckMs;
  pg.idle_in_transaction_ms_max =
      std::max(pg.idle_in_transaction_ms_max, bill.fetch_timeout_ms + 60'000);
  return store;
}

BillRunResult run_bill(BillRunner& runner, persistence::BillStore& store, domain::Channel channel,
                       const std::string& date,
                       const std::function<void(const BillRunResult&)>& opened) {
  auto open = runner.open(store, channel, date);
  opened(open);
  if (open.end != BillEnd::done || !open.run) {
    logger().warn("event=bill_run_refused channel={} bill_date={} detail={}",
                  domain::to_string(channel), quoted_value(date), quoted_value(open.detail));
    return open;
  }
  return runner.execute(store, *open.run);
}

BillActor::behavior_type bill_actor(BillActor::stateful_pointer<BillState> self,
                                    StoreSettings settings, std::shared_ptr<BillRunner> runner) {
  auto& st = self->state;
  st.pg = open_pg(bill_store_settings(std::move(settings), runner->settings()));
  st.store = std::make_unique<persistence::BillStore>(*st.pg);
  st.runner = std::move(runner);
  const auto tick = std::chrono::milliseconds(kBillTickMs);
  if (st.runner->settings().schedule) {
    // The first look at once: an engine started after the time of day still runs yesterday's.
    self->send(self, bill_tick_atom::value);
  }
  return {
      [self](BillJob& job) -> BillRunResult {
        auto& st = self->state;
        if (job.run) {
          return st.runner->execute(*st.store, *job.run);
        }
        return run_bill(*st.runner, *st.store, job.channel, job.date, [](const BillRunResult&) {});
      },
      [self, tick](bill_tick_atom) {
        schedule_tick(self->state);
        self->delayed_send(self, tick, bill_tick_atom::value);
      },
  };
}

}  // namespace seatflow::actors
