// The refund actor's one message: a discrepancy refund, run with the actor's connection.
#include "actors/refund_actor.hpp"

#include "actors/log.hpp"

namespace seatflow::actors {

namespace {

// One pass of automatic refunds: the discrepancies no attempt was made for, each claimed like an
// API refund (one claim per discrepancy in this process; the attempt row's lease across engines).
void refund_new_discrepancies(RefundActorState& st) {
  const auto due = st.store->unrefunded_paid_after_cancel(kAutoRefundBatchMax);
  if (!due.ok()) {
    return;
  }
  for (const auto id : due.value()) {
    if (st.refunder->claim(id) != DiscrepancyRefunder::Claim::taken) {
      continue;
    }
    const auto run = st.refunder->run(*st.store, id);
    st.refunder->release(id);
    logger().info("event=auto_refund discrepancy_id={} refunded={}", id,
                  run.status == RefundStatus::refunded);
  }
}

}  // namespace

RefundActor::behavior_type refund_actor(RefundActor::stateful_pointer<RefundActorState> self,
                                        StoreSettings store,
                                        std::shared_ptr<DiscrepancyRefunder> refunder,
                                        AutoRefundSettings automatic) {
  auto& st = self->state;
  st.pg = open_pg(store);
  st.store = std::make_unique<persistence::RefundStore>(*st.pg);
  st.refunder = std::move(refunder);
  if (automatic.enabled) {
    self->delayed_send(self, std::chrono::milliseconds(automatic.interval_ms),
                       auto_refund_atom::value);
  }
  return {
      [self, automatic](auto_refund_atom) {
        refund_new_discrepancies(self->state);
        self->delayed_send(self, std::chrono::milliseconds(automatic.interval_ms),
                           auto_refund_atom::value);
      },
      [self](RefundJob& job) -> RefundRun {
        auto& st = self->state;
        // Store calls are watched one at a time inside run(); the gateway call has the client's
        // own deadlines.
        auto run = st.refunder->run(*st.store, job.discrepancy_id);
        st.refunder->release(job.discrepancy_id);
        return run;
      },
  };
}

}  // namespace seatflow::actors
