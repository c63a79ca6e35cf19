// API and sweeper actors: detached owners of an OrderStore.
#include "actors/api_actor.hpp"

#include "actors/log.hpp"

namespace seatflow::actors {
namespace {

void open_stores(ApiState& st, const StoreSettings& settings, std::uint32_t query_first_step_ms) {
  st.pg = open_pg(settings);
  st.redis = open_redis(settings);
  st.seats = std::make_unique<persistence::SeatStore>(*st.redis);
  st.store = std::make_unique<persistence::OrderStore>(*st.pg, *st.seats, query_first_step_ms);
}

// SPEC §10: whether the sweeper may cancel the order of this pending payment now. Paid at the
// gateway: applied through the pipeline, never cancelled. Unreachable (or an answer that failed
// verification): the cancel waits once, one step. Anything else: cancel as before. A store failure
// ends the sweep's batch.
domain::Result<bool> may_cancel(ApiState& st, PaymentQuerier& querier,
                                const std::string& payment_no, std::uint32_t postpone_ms) {
  const auto payment = st.queries->load(payment_no);
  if (payment.error() == persistence::errc::not_found) {
    return true;
  }
  if (!payment.ok()) {
    return payment.failure();
  }
  if (!payment.value().pending || !querier.has_dialect(payment.value().channel)) {
    return true;
  }
  const auto run = querier.run(payment.value(), true);
  switch (run.result) {
    case QueryResult::paid:
      logger().info("event=sweep_found_paid payment_no={}", quoted_value(payment_no));
      return false;
    case QueryResult::unreachable:
    case QueryResult::rejected: {
      const auto postponed = st.queries->postpone_expiry(payment_no, postpone_ms);
      if (!postponed.ok()) {
        return postponed.failure();
      }
      return !postponed.value();
    }
    default:
      return true;
  }
}

}  // namespace

ApiActor::behavior_type api_actor(ApiActor::stateful_pointer<ApiState> self, StoreSettings settings,
                                  std::uint32_t query_first_step_ms) {
  open_stores(self->state, settings, query_first_step_ms);
  return {
      [self](ApiJob& job) {
        auto& st = self->state;
        const auto call = watch_stores(*st.pg, *st.redis);
        job.run(*st.store);
      },
  };
}

SweeperActor::behavior_type sweeper_actor(SweeperActor::stateful_pointer<ApiState> self,
                                          StoreSettings settings, SweeperSettings sweeper,
                                          std::shared_ptr<PaymentQuerier> querier) {
  open_stores(self->state, settings, 0);
  if (querier) {
    self->state.queries = std::make_unique<persistence::QueryStore>(*self->state.pg);
  }
  self->delayed_send(self, std::chrono::milliseconds(sweeper.interval_ms), sweep_atom::value);
  return {
      [self, sweeper, querier](sweep_atom) {
        // One batch per message, so a stop (an exit message) never waits for a long sweep.
        auto& st = self->state;
        std::size_t cancelled = 0;
        std::size_t listed = 0;
        try {
          const auto candidates = [&st, &sweeper] {
            const auto call = watch_stores(*st.pg, *st.redis);
            return st.store->list_expired(sweeper.batch);
          }();
          const auto orders =
              candidates.ok() ? candidates.value() : std::vector<persistence::ExpiredOrder>{};
          listed = orders.size();
          for (const auto& order : orders) {
            // The gateway is asked outside any store call: its deadlines are its own.
            if (querier && !order.pending_payment_no.empty()) {
              const auto may =
                  may_cancel(st, *querier, order.pending_payment_no, sweeper.query_postpone_ms);
              if (!may.ok()) {
                logger().warn("event=sweep_failed");
                break;
              }
              if (!may.value()) {
                continue;
              }
            }
            const auto call = watch_stores(*st.pg, *st.redis);
            const auto error = st.store->cancel_if_expired(order.order_no).error();
            if (!error) {
              ++cancelled;
            } else if (persistence::is_unavailable(error)) {
              break;
            }
          }
        } catch (const std::exception& error) {
          st.pg->reset_if_broken(error);
          logger().warn("event=sweep_failed");
        }
        st.swept += cancelled;
        if (listed == sweeper.batch && ++st.batches < sweeper.batches_max) {
          self->send(self, sweep_atom::value);
          return;
        }
        if (st.swept > 0) {
          logger().info("event=orders_expired cancelled={}", st.swept);
        }
        st.swept = 0;
        st.batches = 0;
        self->delayed_send(self, std::chrono::milliseconds(sweeper.interval_ms), sweep_atom::value);
      },
  };
}

}  // namespace seatflow::actors
