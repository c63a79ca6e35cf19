// The order timeout sweeper (SPEC §7): cancels expired pending orders, each after its payment's
// gateway confirmed the close (SPEC §16) or, for a channel that is only queried, after asking it
// (SPEC §10); gateway calls are paced per channel.
#include <algorithm>

#include "actors/api_actor.hpp"
#include "actors/log.hpp"

namespace seatflow::actors {
namespace {

// Whether the sweeper may cancel now, or must leave the order for a later pass.
using SweepMayCancel = domain::Result<bool>;

// SPEC §10: paid at the gateway → applied through the pipeline, never cancelled. Unreachable (or
// an answer that failed verification): the cancel waits once, one step. Anything else: cancel.
SweepMayCancel after_query(ApiState& st, PaymentQuerier& querier,
                           const persistence::DueQuery& payment, std::uint32_t postpone_ms) {
  const auto run = querier.run(payment, true);
  switch (run.result) {
    case QueryResult::paid:
      logger().info("event=sweep_found_paid payment_no={}", quoted_value(payment.payment_no));
      return false;
    case QueryResult::unreachable:
    case QueryResult::rejected: {
      const auto postponed = st.queries->postpone_expiry(payment.payment_no, postpone_ms);
      if (!postponed.ok()) {
        return postponed.failure();
      }
      return !postponed.value();
    }
    default:
      return true;
  }
}

// SPEC §16: closed at the gateway → cancel; paid → applied, never cancelled; anything else → try
// again on a later pass, until the grace after the order's expiry has passed: then cancel anyway.
SweepMayCancel after_close(ApiState& st, PaymentGatewayCaller& closer,
                           const persistence::GatewaySubject& subject,
                           const persistence::ExpiredOrder& order, const SweeperSettings& sweeper) {
  const auto run = closer.close(subject);
  if (run.result == GatewayResult::ok) {
    return true;
  }
  if (run.result == GatewayResult::paid) {
    logger().info("event=sweep_found_paid payment_no={}", quoted_value(order.pending_payment_no));
    return false;
  }
  if (order.expired_for_ms >= static_cast<std::int64_t>(sweeper.close_grace_ms)) {
    logger().warn("event=close_unconfirmed payment_no={} order_no={} result={} detail={}",
                  quoted_value(order.pending_payment_no), quoted_value(order.order_no),
                  to_string(run.result), quoted_value(run.detail));
    closer.probe().close_unconfirmed(subject.payment.channel);
    return true;
  }
  const auto deferred = st.gateway->defer_close(order.pending_payment_no, sweeper.interval_ms);
  if (!deferred.ok()) {
    return deferred.failure();
  }
  return false;
}

SweepMayCancel may_cancel(ApiState& st, const SweeperGateways& gateways,
                          const persistence::ExpiredOrder& order, const SweeperSettings& sweeper) {
  const auto subject = st.gateway->subject(order.pending_payment_no);
  if (subject.error() == persistence::errc::not_found) {
    return true;
  }
  if (!subject.ok()) {
    return subject.failure();
  }
  const auto& found = subject.value();
  if (!found.payment.pending) {
    return true;
  }
  if (gateways.closer && gateways.closer->has_dialect(found.payment.channel)) {
    return after_close(st, *gateways.closer, found, order, sweeper);
  }
  if (gateways.querier && gateways.querier->has_dialect(found.payment.channel)) {
    return after_query(st, *gateways.querier, found.payment, sweeper.query_postpone_ms);
  }
  return true;
}

// The gateway calls an order's cancel may make: a query and a close, or a query alone; none when
// its channel has no gateway here.
int calls_of(const SweeperGateways& gateways, const persistence::ExpiredOrder& order) {
  if (order.pending_payment_no.empty() || !order.channel) {
    return 0;
  }
  const int close = gateways.closer && gateways.closer->has_dialect(*order.channel) ? 1 : 0;
  const int query = gateways.querier && gateways.querier->has_dialect(*order.channel) ? 1 : 0;
  return close + query;
}

// How one batch ended.
struct SweepBatch {
  std::size_t listed = 0;
  std::size_t cancelled = 0;
  bool paced = false;  // a channel's calls ran out of tokens: the sweep goes on after a pause
};

SweepBatch sweep_batch(ApiState& st, const SweeperSettings& sweeper,
                       const SweeperGateways& gateways) {
  SweepBatch batch;
  const auto candidates = [&st, &sweeper] {
    const auto call = watch_stores(*st.pg, *st.redis);
    return st.store->list_expired(sweeper.batch);
  }();
  const auto orders =
      candidates.ok() ? candidates.value() : std::vector<persistence::ExpiredOrder>{};
  batch.listed = orders.size();
  for (const auto& order : orders) {
    // The gateway is asked outside any store call: its deadlines are its own.
    if (const int calls = calls_of(gateways, order); calls > 0) {
      st.tokens->refill();
      if (!st.tokens->take(*order.channel, calls)) {
        batch.paced = true;
        break;
      }
      const auto may = may_cancel(st, gateways, order, sweeper);
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
      ++batch.cancelled;
    } else if (persistence::is_unavailable(error)) {
      break;
    }
  }
  return batch;
}

}  // namespace

SweeperActor::behavior_type sweeper_actor(SweeperActor::stateful_pointer<ApiState> self,
                                          StoreSettings settings, SweeperSettings sweeper,
                                          SweeperGateways gateways) {
  auto& st = self->state;
  open_api_stores(st, settings, 0);
  st.queries = std::make_unique<persistence::QueryStore>(*st.pg);
  st.gateway = std::make_unique<persistence::GatewayStore>(*st.pg);
  // A bucket holds at least one order's two calls.
  st.tokens.emplace(std::max<std::uint32_t>(1, sweeper.rate_per_s),
                    static_cast<double>(std::max<std::uint32_t>(2, sweeper.rate_per_s)));
  self->delayed_send(self, std::chrono::milliseconds(sweeper.interval_ms), sweep_atom::value);
  return {
      [self, sweeper, gateways](sweep_atom) {
        // One batch per message, so a stop (an exit message) never waits for a long sweep.
        auto& st = self->state;
        SweepBatch batch;
        try {
          batch = sweep_batch(st, sweeper, gateways);
        } catch (const std::exception& error) {
          st.pg->reset_if_broken(error);
          logger().warn("event=sweep_failed");
        }
        st.swept += batch.cancelled;
        if (batch.paced) {
          // The tokens of one order's calls come back within this pause.
          const auto rate = std::max<std::uint32_t>(1, sweeper.rate_per_s);
          self->delayed_send(self, std::chrono::milliseconds(std::max(10U, 2000U / rate)),
                             sweep_atom::value);
          return;
        }
        if (batch.listed == sweeper.batch && ++st.batches < sweeper.batches_max) {
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
