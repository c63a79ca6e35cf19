// The query scheduler's tick (take due rows, rate-limit per channel, query, record the next step)
// and the sync request.
#include "actors/query_actor.hpp"

#include <algorithm>

#include "actors/log.hpp"

namespace seatflow::actors {
namespace {

using QuerySelf = QueryActor::stateful_pointer<QueryActorState>;

void tick(QuerySelf self, const QuerySettings& settings) {
  auto& st = self->state;
  st.tokens->refill();
  const auto due = st.store->claim_due(settings.batch, settings.lease_ms);
  if (!due.ok()) {
    logger().warn("event=query_schedule_unavailable");
    return;
  }
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (const auto& payment : due.value()) {
    domain::Result<void> recorded;
    if (!payment.pending) {
      recorded = st.store->record(payment.payment_no, "finished", std::nullopt);
    } else if (!st.tokens->take(payment.channel, 1.0)) {
      recorded = st.store->defer(payment.payment_no, settings.rate_deferral_ms);
    } else {
      const auto run = st.querier->run(payment, false);
      recorded =
          st.store->record(payment.payment_no, to_string(run.result),
                           run.result == QueryResult::no_channel
                               ? std::nullopt
                               : next_query_delay_ms(settings, payment.attempts + 1, unit(st.rng)));
    }
    if (!recorded.ok()) {
      // The lease brings the row back; the next rows wait for the next tick.
      logger().warn("event=query_record_failed payment_no={}", quoted_value(payment.payment_no));
      return;
    }
  }
}

}  // namespace

std::optional<std::uint32_t> next_query_delay_ms(const QuerySettings& settings, int attempts,
                                                 double jitter_unit) {
  if (attempts < 0 || static_cast<std::size_t>(attempts) >= settings.schedule_ms.size()) {
    return std::nullopt;
  }
  const auto base = settings.schedule_ms[static_cast<std::size_t>(attempts)];
  const double jitter = std::clamp(jitter_unit, 0.0, 1.0) * settings.jitter_percent / 100.0;
  return static_cast<std::uint32_t>(static_cast<double>(base) * (1.0 + jitter));
}

QueryActor::behavior_type query_actor(QuerySelf self, StoreSettings store, QuerySettings settings,
                                      std::shared_ptr<PaymentQuerier> querier) {
  auto& st = self->state;
  st.pg = open_pg(store);
  st.store = std::make_unique<persistence::QueryStore>(*st.pg);
  st.querier = std::move(querier);
  st.tokens.emplace(settings.rate_per_s,
                    static_cast<double>(std::max<std::uint32_t>(1, settings.rate_per_s)));
  if (settings.enabled) {
    self->delayed_send(self, std::chrono::milliseconds(settings.tick_ms), query_tick_atom::value);
  }
  return {
      [self, settings](query_tick_atom) {
        tick(self, settings);
        self->delayed_send(self, std::chrono::milliseconds(settings.tick_ms),
                           query_tick_atom::value);
      },
      [self](SyncJob& job) -> caf::result<bool, QueryRun> {
        auto& st = self->state;
        const auto payment = st.store->load(job.payment_no);
        if (payment.error() == persistence::errc::not_found) {
          return {false, QueryRun{}};
        }
        if (!payment.ok()) {
          return {true, QueryRun{QueryResult::unreachable, "storage unavailable", {}}};
        }
        return {true, st.querier->run(payment.value(), true)};
      },
  };
}

}  // namespace seatflow::actors
